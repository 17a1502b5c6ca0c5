"""P(false pass) of the regression coefficient criterion, and the ε that keeps it equal.

The criterion's DP value is ‖w(R) + e − w(S)‖₁ (standardised coefficients, e the release's
noise mapped through the noisy normal equations), not one Laplace draw, so the kinds' closed
form does not apply (``noise_note``). A false pass is judged as for every kind
(:mod:`workbench.criteria.false_pass`): the true gap d = w(R) − w(S) has ‖d‖₁ = 1.1·T, and the
release passes when ‖d + e‖₁ < T. Its chance depends on the direction of d, so two numbers are
given, both from seeded releases of the statistics of a PUBLIC sample (the proxy at the
design's n; e depends on the data only through its second moments):

* ``worst``: the largest over the 2p axis directions d = ±1.1·T·u_j (the gap all in one
  coefficient) and, for p ≤ :data:`MAX_SPREAD_P`, the 2^p spread ones d = 1.1·T·s/p with
  s ∈ {±1}^p (the gap in every coefficient, where the noise's sum s·e can cancel it);
* ``bound``: P(‖e‖₁ > 0.1·T) ≥ P(false pass) for every direction (triangle inequality).

The release adds Laplace noise of scale (Δ/ε)/c_e to entry e, so the law of e depends on Δ and
ε only through Δ/ε: a release with Δ′ has the same law, hence the same P(false pass) for every
direction, at ε′ = ε·Δ′/Δ (:func:`equal_false_pass_epsilon`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from workbench.criteria.false_pass import FALSE_PASS_MARGIN
from workbench.criteria.regression import RegressionDesign, dp_coefficients_from_cells
from workbench.criteria.regression_fit import feature_sd, ols_from_cells
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification.model import Criterion

#: Spread gap directions are tried for up to this many coefficients (2^p of them).
MAX_SPREAD_P = 10


@dataclass(frozen=True)
class FalsePass:
    """P(false pass) of one regression release: worst axis direction and the direction-free
    bound, from ``draws`` seeded releases."""

    worst: float
    bound: float
    draws: int


def equal_false_pass_epsilon(epsilon: float, delta: float, new_delta: float) -> float:
    """ε′ = ε·Δ′/Δ: the noise scale Δ/ε, hence the law of the release and every P(false pass),
    is unchanged (module docstring)."""
    if not (epsilon > 0 and delta > 0 and new_delta > 0):
        raise ValueError("epsilon, delta and new_delta must be > 0")
    return epsilon * new_delta / delta


def coefficient_noise(design: RegressionDesign, criterion: Criterion, cells: np.ndarray,
                      counts: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """(draws, p) standardised coefficient noise e = w^ε − w of seeded releases on PUBLIC cells
    (the proxy's: this is a forecast, never a release of R)."""
    n = int(counts.sum())
    _, coef = ols_from_cells(design, cells, counts)
    sd = feature_sd(design, cells, counts)
    out = np.empty((draws, design.p))
    for d in range(draws):
        ctx = PrivacyContext.simulation(seed=seed + d, noise=SeededNoise(seed + d))
        release = dp_coefficients_from_cells(design, cells, counts, n, criterion, ctx)
        out[d] = (release.coef - coef) * sd
    return out


def gap_directions(p: int, threshold: float) -> np.ndarray:
    """The true gaps d (rows, ‖d‖₁ = 1.1·T) a false pass is judged at (module docstring)."""
    gap = (1.0 + FALSE_PASS_MARGIN) * threshold
    rows = [sign * gap * np.eye(p)[j] for j in range(p) for sign in (-1.0, 1.0)]
    if 1 < p <= MAX_SPREAD_P:
        grid = np.array(np.meshgrid(*[[-1.0, 1.0]] * p, indexing="ij")).reshape(p, -1).T
        rows.extend(grid * gap / p)
    return np.array(rows)


def false_pass(noise: np.ndarray, threshold: float) -> FalsePass:
    """P(‖d + e‖₁ < T) at the worst gap of :func:`gap_directions`, and P(‖e‖₁ > 0.1·T)."""
    if noise.ndim != 2 or noise.shape[0] == 0 or threshold <= 0:
        raise ValueError("noise must be a non-empty (draws, p) matrix and threshold > 0")
    worst = max(float(np.mean(np.abs(noise + d).sum(axis=1) < threshold))
                for d in gap_directions(noise.shape[1], threshold))
    bound = float(np.mean(np.abs(noise).sum(axis=1) > FALSE_PASS_MARGIN * threshold))
    return FalsePass(worst, bound, int(noise.shape[0]))


def regression_false_pass(design: RegressionDesign, criterion: Criterion, cells: np.ndarray,
                          counts: np.ndarray, draws: int = 400, seed: int = 0) -> FalsePass:
    """P(false pass) of the criterion's release at its ε on PUBLIC cells (module docstring)."""
    noise = coefficient_noise(design, criterion, cells, counts, draws, seed)
    return false_pass(noise, float(criterion.threshold))


def at_epsilon(criterion: Criterion, epsilon: float) -> Criterion:
    """The same criterion at another ε (for pricing, never for a run)."""
    return dataclasses.replace(criterion, epsilon=float(epsilon))
