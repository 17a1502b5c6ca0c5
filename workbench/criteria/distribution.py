"""Distribution errors of one numeric column between R and S, from its 1-way counts: the
average squared ECDF gap, means and quantiles on the column's public values.

Values are the codes' numbers (bin-to-number rule; for a ``number`` column, the grid), sorted,
so every function works the same on bins and on numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


def sorted_counts(pc: PairedCells, table: TableCodec, column: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values ascending, R counts, S counts) of one column."""
    numbers = np.asarray(table.codec(column).numbers(), dtype=np.float64)
    order = np.argsort(numbers, kind="stable")
    real = pc.marginal((column,), "real")[order].astype(np.float64)
    synth = pc.marginal((column,), "synth")[order].astype(np.float64)
    return numbers[order], real, synth


def avg_ecdf(real: np.ndarray, synth: np.ndarray) -> float:
    """Woo et al.'s U_a: the mean over the pooled records of (F_R(x) − F_S(x))².

    >>> avg_ecdf(np.array([2.0, 0.0]), np.array([0.0, 2.0]))
    0.5
    """
    n = real.sum()
    gap = (np.cumsum(real) - np.cumsum(synth)) / n
    return float(np.sum((real + synth) / (2 * n) * gap * gap))


def mean_of(values: np.ndarray, counts: np.ndarray) -> float:
    """The mean of a column from its counts on sorted values."""
    return float(np.dot(values, counts) / counts.sum())


def quantile_of(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The smallest value whose ECDF reaches q (the inverse-CDF quantile).

    >>> quantile_of(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 2.0]), 0.5)
    2.0
    """
    cdf = np.cumsum(counts) / counts.sum()
    return float(values[min(int(np.searchsorted(cdf, q - 1e-12)), len(values) - 1)])


def quantile_scores(values: np.ndarray, counts: np.ndarray, grid: np.ndarray, q: float
                    ) -> np.ndarray:
    """Exponential-mechanism utility of each public grid point g as R's q-quantile:
    −|#{r ≤ g} − q·n|. Replacing one record moves #{r ≤ g} by at most 1: Δ = 1."""
    below = np.searchsorted(values, grid, side="right")
    cum = np.concatenate([[0.0], np.cumsum(counts)])
    return -np.abs(cum[below] - q * counts.sum())


def public_grid(values: np.ndarray, points: int | None) -> np.ndarray:
    """The quantile mechanism's candidates: every public value, or ``points`` evenly spaced
    between the smallest and largest (both public: from the spec, never the data)."""
    if points is None or points >= len(values):
        return values
    return np.linspace(values[0], values[-1], points)
