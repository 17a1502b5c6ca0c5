"""The survey weight check before the loop: a DP total of the base weights against each N.

**Why.** The weighted criteria are Horvitz–Thompson estimates with the PUBLIC population N of
the margins. Base weights that describe another population (e.g. they sum to N/2) make every
candidate fail — a weighted mean of age off by half the mean — and nothing else says that the
weights, not the design, are wrong. So every survey run first releases one cheap DP number,
the total of the base weights, and refuses before the selection loop if it is not within
``survey.weight_check_tolerance`` of every margin's N (only ε_w is then spent).

**The mechanism** (ε_w = ``survey.weight_check_epsilon``). Each base weight is clipped to the
spec's public bounds [w_L, w_U] (``survey.weight.bounds``, never the data) and counted in
integer units of the public step g = w_U/K, K = :data:`UNITS`: u(w) = rint(clip(w)·(K/w_U)).
The released total is g·(Σᵢ u(wᵢ) + Z), Z discrete Laplace(Δ/ε_w) from the run's
PrivacyContext (OpenDP's integer sampler: no float lattice, exact on integers); ×g, the ratio
to N and the comparison are post-processing.

**Sensitivity** (L1 of the integer total T = Σᵢ u(wᵢ)). u is a composition of clip, a product
by a constant and rint, each monotone non-decreasing in binary64, so every record contributes
an integer in [u(w_L), u(w_U)] (computed by the same function, hence float-exact bounds).
Replace-one changes one summand within that interval: |T(D) − T(D′)| ≤ u(w_U) − u(w_L).
Add/remove adds or drops one summand in [0, u(w_U)]: |T(D) − T(D′)| ≤ u(w_U). Both bounds are
attained (one record at w_L replaced by one at w_U; one at w_U added); ``tests/test_survey_
weight_check.py`` checks them on neighbouring datasets. Δ ≥ 1 is used when w_L = w_U under
replace-one (then T is public given the public n, and the noise is just unneeded).

**Accuracy** (public). The noise in value units has scale g·Δ/ε_w ≤ w_U/ε_w, so the ratio's
noise is ≈ w_U/(ε_w·N) and correctly scaled weights are refused with probability about
exp(−tolerance·ε_w·N/(g·Δ)) (:func:`false_refusal`); the validator refuses a spec where that
exceeds 1% and names the ε_w that brings it to 0.1% (:func:`needed_epsilon`). The rounding to
units moves the total by at most n·g/2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.survey import Survey

#: K: integer units per upper weight bound (the public step is g = w_U/K).
UNITS = 2 ** 16
PURPOSE = "survey weight check"


class WeightCheckFailed(ValueError):
    """The DP weight total misses a margin's N by more than the declared tolerance."""


def weight_units(weights: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """u(w) = rint(clip(w, w_L, w_U)·(K/w_U)) as int64: each record's integer contribution."""
    lo, hi = (float(b) for b in bounds)
    clipped = np.clip(np.asarray(weights, dtype=np.float64), lo, hi)
    return np.rint(clipped * (UNITS / hi)).astype(np.int64)


def unit_sensitivity(bounds: tuple[float, float], neighbour: str) -> int:
    """Δ of the integer total (module docstring): u(w_U) − u(w_L) under replace-one, u(w_U)
    under add/remove, at least 1."""
    u_lo, u_hi = (int(u) for u in weight_units(np.array([bounds[0], bounds[1]]), bounds))
    return max(1, u_hi if neighbour == "add_remove" else u_hi - u_lo)


def step(bounds: tuple[float, float]) -> float:
    """g = w_U/K: the value of one unit."""
    return float(bounds[1]) / UNITS


def false_refusal(survey: Survey) -> float:
    """≈ P(refuse | the clipped weights sum exactly to N): the discrete Laplace tail beyond
    tolerance·N (public numbers only; the smallest margin total is the worst)."""
    n_pop = min(math.fsum(m.totals) for m in survey.margins)
    delta = unit_sensitivity(survey.weight_bounds, survey.neighbour)
    units = survey.weight_check_tolerance * n_pop / step(survey.weight_bounds)
    return min(1.0, math.exp(-survey.weight_check_epsilon * (units - 1) / delta))


def needed_epsilon(survey: Survey, probability: float) -> float:
    """The ε_w at which :func:`false_refusal` is ``probability`` (public numbers only)."""
    n_pop = min(math.fsum(m.totals) for m in survey.margins)
    delta = unit_sensitivity(survey.weight_bounds, survey.neighbour)
    units = survey.weight_check_tolerance * n_pop / step(survey.weight_bounds)
    return math.log(1.0 / probability) * delta / max(units - 1, 1e-300)


@dataclass(frozen=True)
class WeightCheck:
    """The DP total of the clipped base weights and its ratio to every margin's N (public)."""

    total: float
    ratios: dict[str, float]
    epsilon: float
    tolerance: float

    def failing(self) -> dict[str, float]:
        """The margins whose ratio lies outside 1 ± tolerance."""
        return {k: r for k, r in self.ratios.items() if abs(r - 1.0) > self.tolerance}

    def message(self, weight_column: str, spent: float | None = None) -> str:
        """What the operator reads on a refusal: each failing margin and its ratio, the fix,
        and what was spent (``spent``: the ε a run would spend, for the exact proxy check)."""
        bad = self.failing()
        worst = min(bad.values(), key=lambda r: -abs(r - 1.0))
        where = "; ".join(f"margin {k!r}: ratio {r:.3g}" for k, r in bad.items())
        exact = self.epsilon == 0  # the exact check of a dry run on PUBLIC proxy data
        what = "an exact total on the public proxy" if exact else "a DP total"
        text = (f"survey weight check: the base weights ({weight_column!r}, clipped to "
                f"survey.weight.bounds) sum to {what} of {self.total:.4g}, outside "
                f"1 ± {self.tolerance:g} (survey.weight_check_tolerance) times the margins' "
                f"population N — {where}. The weighted criteria divide by N, so every "
                "candidate would fail: rescale the weight column to the margins' population "
                f"(multiply it by about {1.0 / worst:.3g}) or correct the margins' totals. ")
        if exact:
            return text + ("A run on data like these stops here, before its selection loop, "
                           f"having spent only the check's ε = {spent:g} "
                           "(survey.weight_check_epsilon)")
        return text + (f"Only the check's ε = {self.epsilon:g} (survey.weight_check_epsilon) "
                       "was spent; the selection loop did not run")


def release_weight_check(survey: Survey, base_weights: np.ndarray,
                         ctx: PrivacyContext) -> WeightCheck:
    """Release the DP total (charged ε_w through ``ctx``) and compare it with each N."""
    bounds = survey.weight_bounds
    total_units = int(np.sum(weight_units(base_weights, bounds)))
    noisy = ctx.discrete_laplace(total_units, epsilon=survey.weight_check_epsilon,
                                 sensitivity=unit_sensitivity(bounds, survey.neighbour),
                                 purpose=PURPOSE)
    total = float(np.asarray(noisy.value).ravel()[0]) * step(bounds)
    ratios = {m.name: total / math.fsum(m.totals) for m in survey.margins}
    return WeightCheck(total, ratios, survey.weight_check_epsilon,
                       survey.weight_check_tolerance)


def proxy_check(survey: Survey, base_weights: np.ndarray, size: int | None = None
                ) -> WeightCheck:
    """The exact check on PUBLIC proxy weights (no noise, no ε), scaled to ``size`` records
    when a dry run rehearses at another n (the expected total of a resample)."""
    lo, hi = survey.weight_bounds
    clipped = np.clip(np.asarray(base_weights, dtype=np.float64), lo, hi)
    total = float(np.mean(clipped)) * (len(clipped) if size is None else int(size)) \
        if clipped.size else 0.0
    return WeightCheck(total, {m.name: total / math.fsum(m.totals) for m in survey.margins},
                       0.0, survey.weight_check_tolerance)


def check_weights(survey: Survey, base_weights: np.ndarray, ctx: PrivacyContext
                  ) -> WeightCheck:
    """:func:`release_weight_check`, raising :class:`WeightCheckFailed` outside the band."""
    check = release_weight_check(survey, base_weights, ctx)
    if check.failing():
        raise WeightCheckFailed(check.message(survey.weight_column))
    return check
