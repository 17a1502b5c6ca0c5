"""Criteria built from marginal counts: relative 1-way error, max ECDF gap, k-way total variation.

All three are exact functions of the paired cell counts (:class:`PairedCells`); their DP
releases add Laplace noise calibrated in :mod:`workbench.criteria.sensitivity`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from workbench.transform import TableCodec
from workbench.transform.cells import PairedCells


def one_way_counts(pc: PairedCells) -> tuple[np.ndarray, np.ndarray]:
    """All 1-way counts of R and of S, every column's cells concatenated (zeros included)."""
    names = pc.domain.names
    r = np.concatenate([pc.marginal((c,), "real") for c in names])
    s = np.concatenate([pc.marginal((c,), "synth") for c in names])
    return r, s


def smallest_one_way_count(pc: PairedCells) -> int:
    """s_min: the smallest 1-way count of the public S over every column and code (Prop. 5)."""
    return int(min(pc.marginal((c,), "synth").min() for c in pc.domain.names))


def relative_one_way_error(pc: PairedCells, lam: float, smoothing: float = 1.0) -> float:
    """Exact E_rel^λ = max over 1-way cells of clip(max(r̂/ŝ, ŝ/r̂), 1, λ), r̂ = r + c (Prop. 5).

    >>> from workbench.transform import Domain
    >>> dom = Domain(("a",), (2,))
    >>> pc = PairedCells.from_codes(np.array([[0], [0], [0]]), np.array([[0], [1], [1]]), dom)
    >>> relative_one_way_error(pc, 2.0)
    2.0
    """
    r, s = one_way_counts(pc)
    r_hat = r.astype(np.float64) + smoothing
    s_hat = s.astype(np.float64) + smoothing
    ratio = np.maximum(r_hat / s_hat, s_hat / r_hat)
    return float(np.clip(ratio, 1.0, lam).max())


def _ordered_numbers(table: TableCodec, column: str) -> np.ndarray:
    """Code order by the bin-to-number rule, so the ECDF runs along the column's values."""
    return np.argsort(table.codec(column).numbers(), kind="stable")


def max_ecdf_error(pc: PairedCells, table: TableCodec, column: str) -> float:
    """Exact max over values x of |F_R(x) − F_S(x)| for one numeric column (KS distance).

    >>> from workbench.transform import BinsCodec
    >>> t = TableCodec((("x", BinsCodec((1, 2))),))
    >>> pc = PairedCells.from_codes(np.array([[0], [1]]), np.array([[2], [1]]), t.domain)
    >>> max_ecdf_error(pc, t, "x")
    0.5
    """
    order = _ordered_numbers(table, column)
    diff = pc.marginal((column,), "real") - pc.marginal((column,), "synth")
    return float(np.abs(np.cumsum(diff[order])).max()) / pc.n


def tv_marginals_error(pc: PairedCells, way: int = 2, aggregate: str = "mean") -> float:
    """Exact mean (or max) over all ``way``-column subsets of the TV distance ½Σ|p_R − p_S|.

    >>> from workbench.transform import Domain
    >>> dom = Domain(("a", "b"), (2, 2))
    >>> pc = PairedCells.from_codes(np.array([[0, 0], [1, 1]]), np.array([[0, 1], [1, 0]]), dom)
    >>> tv_marginals_error(pc, 1), tv_marginals_error(pc, 2)
    (0.0, 1.0)
    """
    d = len(pc.domain)
    if not 1 <= way <= d:
        raise ValueError(f"way must lie in [1, {d}]")
    if aggregate not in ("mean", "max"):
        raise ValueError("aggregate must be 'mean' or 'max'")
    diff = (pc.real - pc.synth).astype(np.float64)
    sizes = np.asarray(pc.domain.sizes, dtype=np.int64)
    values = []
    for subset in itertools.combinations(range(d), way):
        shape = tuple(int(x) for x in sizes[list(subset)])
        flat = np.ravel_multi_index(tuple(pc.cells[:, list(subset)].T), shape)
        summed = np.bincount(flat, weights=diff, minlength=math.prod(shape))
        values.append(0.5 * float(np.abs(summed).sum()) / pc.n)
    return float(np.mean(values)) if aggregate == "mean" else float(np.max(values))
