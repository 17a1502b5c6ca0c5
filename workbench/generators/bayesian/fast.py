"""The clamped total log-likelihood of the normal linear model in O(cells · log n) per θ.

Within one predictor cell every record shares the mean μ and σ, and the term
a − (y − μ)²/(2σ²) (a = −log σ − ½ log 2π) is clamped to [lo, hi]: records with
|y − μ| ≤ r_hi sit at hi, records with |y − μ| ≥ r_lo at lo, and the sum over the records in
between needs only their count, Σy and Σy². With each cell's targets sorted once and their
prefix sums kept, a θ costs four binary searches per cell, whatever n is; the value equals
the record-by-record sum (``tests/test_bayesian.py`` compares them). The interval (−∞, ∞)
gives the unclamped total (the plain posterior of the risk view and the warm start's guide).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.generators.bayesian.models import ModelData

_HALF_LOG_2PI = 0.5 * float(np.log(2 * np.pi))
#: Keys are cell·STRIDE + (y − ymin): cells never overlap.
_PAD = 1.0


@dataclass(frozen=True)
class SortedCells:
    """Targets sorted by (cell, y) as one key array, with prefix counts, sums and squares."""

    keys: np.ndarray
    s1: np.ndarray
    s2: np.ndarray
    ymin: float
    stride: float
    n_cells: int
    starts: np.ndarray  # first record of each cell
    ends: np.ndarray  # one past the last

    @classmethod
    def build(cls, data: ModelData) -> SortedCells:
        y = np.asarray(data.y, dtype=np.float64)
        ymin = float(y.min()) if len(y) else 0.0
        stride = (float(y.max()) - ymin if len(y) else 0.0) + 2 * _PAD
        order = np.lexsort((y, data.cells))
        ys = y[order]
        keys = data.cells[order] * stride + (ys - ymin + _PAD)
        s1 = np.concatenate([[0.0], np.cumsum(ys)])
        s2 = np.concatenate([[0.0], np.cumsum(ys * ys)])
        n_cells = data.design.shape[0]
        bounds = np.searchsorted(keys, np.arange(n_cells + 1) * stride)
        return cls(keys, s1, s2, ymin, stride, n_cells, bounds[:-1], bounds[1:])

    def index(self, y: np.ndarray) -> np.ndarray:
        """Records with key < (cell, y) for y of shape (…, cells), clipped to each cell."""
        local = np.minimum(np.maximum(y - (self.ymin - _PAD), 0.0), self.stride)
        return self.keys.searchsorted(local + np.arange(self.n_cells) * self.stride)


def clamped_total(theta: np.ndarray, data: ModelData, interval: tuple[float, float],
                  cells: SortedCells) -> np.ndarray:
    """Σᵢ clamp(log N(yᵢ; μ_cell, σ²), lo, hi) for a stack of θ = (β, log σ): (k, p) → (k,)."""
    t = np.atleast_2d(theta)
    lo, hi = interval
    mu = t[:, :-1] @ data.design.T  # (k, C)
    log_sigma = t[:, -1:]  # (k, 1)
    sigma2 = np.exp(2 * log_sigma)
    a = -log_sigma - _HALF_LOG_2PI
    r_hi = np.sqrt(np.maximum(2 * sigma2 * (a - hi), 0.0))  # inner radius: term ≥ hi
    r_lo = np.sqrt(np.maximum(2 * sigma2 * (a - lo), 0.0))  # outer radius: term ≤ lo
    # records at y == μ ± r sit on the clamp, where both sides agree: ties need no care
    a1, a2, b1, b2 = cells.index(np.stack([mu - r_lo, mu - r_hi, mu + r_hi, mu + r_lo]))
    i0, i1 = cells.starts, cells.ends
    outer = (a1 - i0) + (i1 - b2)
    inner = b1 - a2
    m = (a2 - a1) + (b2 - b1)
    sy = (cells.s1[a2] - cells.s1[a1]) + (cells.s1[b2] - cells.s1[b1])
    syy = (cells.s2[a2] - cells.s2[a1]) + (cells.s2[b2] - cells.s2[b1])
    middle = m * a - (syy - 2 * mu * sy + m * mu * mu) / (2 * sigma2)
    # an infinite end (the unclamped total) has no record beyond it: skip ∞·0
    ends = (lo * outer if np.isfinite(lo) else 0.0) + (hi * inner if np.isfinite(hi) else 0.0)
    return (ends + middle).sum(axis=1)
