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


def tuned_joint_weights(points: np.ndarray, g2: np.ndarray, rounds: int = 8) -> np.ndarray:
    """Weights c minimising the coefficients' noise Σ_e g_e²/c_e² at joint Δ(c) = 1 (public).

    Laplace noise of scale Δ(c)/ε on c ⊙ s, divided back by c, gives the coefficients a
    variance ∝ Δ(c)²·Σ_e g_e²/c_e² (g_e: the proxy's sensitivity of the standardised
    coefficients to entry e). Under the entrywise Δ = Σ_e c_e·ρ_e the minimiser is
    c_e ∝ (g_e²/ρ_e)^⅓; under the joint Δ(c) = max over record pairs of c·|φ(x) − φ(x′)| it
    is a convex problem (a convex objective under a maximum of linear constraints), solved by
    cutting planes: minimise over the pairs found so far, add the pair that attains the exact
    diameter at the solution, stop when it is already in (or after ``rounds``: on the
    births design 3 rounds take 80% of the gain, 8 rounds 98%). Only the
    weights' shape is chosen here; the released Δ is always the exact diameter at the
    weights actually used (:func:`joint_delta`). ``points``: the unweighted universe
    (:func:`record_universe`) restricted to the entries with g2 > 0."""
    from scipy.optimize import minimize

    g2 = np.asarray(g2, dtype=np.float64) / float(np.sum(g2))
    c = np.cbrt(g2 / np.ptp(points, axis=0))  # the entrywise optimum: the start
    cuts: list[np.ndarray] = []
    for _ in range(rounds):
        value, i, j = sensitivity.l1_diameter_pair(points * c)
        c = c / value
        cut = np.abs(points[i] - points[j])
        if any(np.array_equal(cut, k) for k in cuts):
            break
        cuts.append(cut)
        a = np.vstack(cuts)
        u0 = np.log(c)
        res = minimize(lambda u: float(g2 @ np.exp(-2 * u)), u0,
                       jac=lambda u: -2 * g2 * np.exp(-2 * u), method="SLSQP",
                       bounds=[(x - 5.0, x + 5.0) for x in u0],
                       constraints=[{"type": "ineq", "fun": lambda u, a=a: 1.0 - a @ np.exp(u),
                                     "jac": lambda u, a=a: -a * np.exp(u)}],
                       options={"maxiter": 200, "ftol": 1e-10})
        if np.all(np.isfinite(res.x)):
            c = np.exp(res.x)
    return c / sensitivity.l1_diameter(points * c)
