"""The "joint" Δ of the regression coefficients' release (issue 37): the exact L1 diameter.

The release is Σ_records c ⊙ φ(x) (:mod:`workbench.criteria.regression`). Replacing one
record moves it by c ⊙ (φ(x′) − φ(x)), so the smallest valid replace-one L1 Δ is the diameter
max_{x, x′} ‖c ⊙ (φ(x) − φ(x′))‖₁ over every record the public codecs allow; the entrywise
Σ_e c_e·ρ_e takes each entry's extremes at once, though they need different records.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from workbench.criteria import sensitivity


def record_universe(blocks: list[np.ndarray], target: np.ndarray) -> np.ndarray | None:
    """φ(x) for every combination of feature codes × the target's two extreme values, or None
    when there are more than :data:`~workbench.criteria.sensitivity.MAX_DIAMETER_POINTS`.

    Public (codecs only). Other target values need not be listed: for fixed features of x and
    x′, ‖c ⊙ (φ(x) − φ(x′))‖₁ is convex in (t, t′) (absolute values of affine maps), so its
    maximum over [t_min, t_max]² sits at a corner. ``blocks``: each feature's scaled codes
    (one row per code), ``target``: the target's scaled values (the caller's design)."""
    sizes = [b.shape[0] for b in blocks]
    if 2 * math.prod(sizes) > sensitivity.MAX_DIAMETER_POINTS:
        return None
    grids = np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij")
    z = np.hstack([b[g.ravel()] for b, g in zip(blocks, grids, strict=True)] or
                  [np.zeros((1, 0))])
    zt = np.hstack([np.ones((z.shape[0], 1)), z])
    i, j = np.triu_indices(z.shape[1] + 1)
    a = (zt[:, i] * zt[:, j])[:, 1:]
    t = target
    return np.vstack([np.hstack([a, zt * v]) for v in (float(t.min()), float(t.max()))])


def joint_delta(blocks: list[np.ndarray], target: np.ndarray, weights: np.ndarray,
                entrywise: float) -> float:
    """Exact L1 Δ = max_{x, x′} ‖c ⊙ (φ(x) − φ(x′))‖₁ over the public record universe.

    The released vector is Σ_records c ⊙ φ(x) (entries with ρ_e = 0 are the same for every
    record and drop out of every difference), so replacing one record moves it by exactly one
    such difference: the diameter is the smallest valid Δ and is attained by a pair of
    records (:func:`~workbench.criteria.sensitivity.l1_diameter`). Falls back to the
    entrywise bound (≥ the diameter) when the universe is too large to scan."""
    points = record_universe(blocks, target)
    if points is None:
        return entrywise
    weighted = points * weights
    return min(entrywise, _diameter(weighted.tobytes(), weighted.shape))


@functools.lru_cache(maxsize=16)
def _diameter(data: bytes, shape: tuple[int, int]) -> float:
    """:func:`~workbench.criteria.sensitivity.l1_diameter`, cached per public design."""
    return sensitivity.l1_diameter(np.frombuffer(data, dtype=np.float64).reshape(shape))
