"""Audits of the smooth-sensitivity releases: the generalized Cauchy primitive and the kNN mean.

What is audited is the release as published: clamped to a public range and snapped to its
grid (:mod:`workbench.privacy.lattice`); the events include the range's two end points, where
the clamped tails pile up, and :func:`exact_loss` is computed over the grid's points.

Why a module of its own: the noise scale of a smooth release is S(D)/α, a function of the data,
so D and D′ are noised at *different* scales and the Laplace harness (one Δ for both) does not
apply. Here a scenario is the pair of calls the context made — (value, scale, γ) on D and on
D′, captured at the noise seam through the public API — and the audit replays them with the
seeded source at the captured scales (and at a fraction of them), with events fixed in advance
from the two values and scales. The densities are known, so each scenario's exact privacy loss
is computed too (:func:`exact_loss`).

What "flagged at Δ/2" means here: halving the scale is using S/2, a bound half the size. The
NRS calibration spends ε/2 on the shift and ε/2 on the change of scale, and no pair attains
both at one output, so the exact worst-case loss at the calibrated scale is ≈ 0.72–0.85ε
(γ = 4). For the primitive at ε = 1 the NRS worst-case pair at half scale loses 1.27ε and is
flagged. For the kNN mean (ε ≥ 2 ln 2 per step) even the worst pair of the NRS family loses
< ε at half scale (0.94–0.96ε by the grid of ``tests/test_smooth.py``; 0.73ε for the audited
pair once clamped to the target's bounds, ``tests/test_audits.py``): no audit can flag it
there, so its power is shown at a quarter of the scale, where the kNN pair loses 1.22ε (at
the range's lower end point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.criteria.knn_impute import Features, impute, smooth_bound
from workbench.privacy import PrivacyContext, lattice, smooth
from workbench.privacy.audit import AllOf, AuditResult, Event, Threshold, audit_events
from workbench.privacy.lattice import SnapGrid
from workbench.privacy.noise import SeededNoise

TRIALS = 200_000  # heavy tails: more draws than the Laplace audits
CONFIDENCE = 0.999


@dataclass(frozen=True)
class SmoothCall:
    """One generalized Cauchy release as the context made it (snapped to ``grid``)."""

    value: float
    scale: float
    gamma: float
    grid: SnapGrid


@dataclass(frozen=True)
class SmoothScenario:
    """A smooth release on D and on its neighbour D′ (ε is what the release claims)."""

    name: str
    neighbours: str
    epsilon: float
    d: SmoothCall
    d_prime: SmoothCall

    def __post_init__(self) -> None:
        """γ is a public parameter: it must not change between D and D′."""
        if self.d.gamma != self.d_prime.gamma:
            raise ValueError(f"{self.name}: D and D′ were noised with different γ")
        if self.d.grid != self.d_prime.grid:
            raise ValueError(f"{self.name}: D and D′ were snapped to different grids")


def exact_loss(scn: SmoothScenario, factor: float = 1.0) -> float:
    """max over the released grid points of |ln p_D(o)/p_D′(o)| with both scales times
    ``factor``: the ideal cell probabilities of the snapped release (clamped to the public
    range, the uniform floor mixed in; :mod:`workbench.privacy.lattice`), which the float
    release matches within a factor 1 ± κ."""

    def cells(call: SmoothCall) -> np.ndarray:
        grid = call.grid
        x = float(grid.centre(np.array([call.value]))[0])
        sigma = lattice.grid_sigma(call.scale * factor, grid)
        cdf = smooth.cauchy_cdf((np.arange(grid.cells) + 0.5 - x) / sigma, call.gamma)
        ideal = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        return (1 - lattice.FLOOR) * ideal + lattice.FLOOR / (grid.cells + 1)

    return float(np.abs(np.log(cells(scn.d)) - np.log(cells(scn.d_prime))).max())


def smooth_events(scn: SmoothScenario) -> list[Event]:
    """Tails beyond and windows around each value, in units of its scale, and the two end
    points of the public range (where the clamped tails pile up), fixed in advance."""
    grid = scn.d.grid
    events: list[Event] = [Threshold(grid.low, "<="), Threshold(grid.high, ">=")]
    for call in (scn.d, scn.d_prime):
        for k in (0.5, 1.0, 2.0, 4.0):
            events += [Threshold(call.value - k * call.scale, "<="),
                       Threshold(call.value + k * call.scale, ">=")]
        for w in (0.25, 0.5):
            events.append(AllOf((Threshold(call.value - w * call.scale, ">="),
                                 Threshold(call.value + w * call.scale, "<="))))
    return events


def audit_smooth(scn: SmoothScenario, factor: float = 1.0, *, trials: int = TRIALS,
                 seed: int = 0, confidence: float = CONFIDENCE) -> AuditResult:
    """Replay both calls at ``factor`` × their scales with seeded noise and audit ε."""
    samples = []
    for k, call in enumerate((scn.d, scn.d_prime)):
        source = SeededNoise(np.random.default_rng([seed, k, 0x736D]))
        samples.append(source.generalized_cauchy_vector(np.full(trials, call.value),
                                                        call.scale * factor, call.gamma,
                                                        call.grid))
    return audit_events(samples[0], samples[1], smooth_events(scn), scn.epsilon,
                        confidence=confidence)


def _captured(run) -> SmoothCall:
    """The last generalized Cauchy call ``run(ctx)`` makes, through a capturing context."""
    from workbench.audits.harness import Capture

    cap = Capture()
    run(PrivacyContext.simulation(0, noise=cap))
    values, scale, gamma, grid = cap.cauchy_calls[-1]
    return SmoothCall(float(values[0]), scale, gamma, grid)


#: the primitive's public range: ±64 around the values, 1/32 per grid step (σ̃ ≈ 146 steps)
PRIMITIVE_RANGE = (-64.0, 64.0)


def primitive_scenario() -> SmoothScenario:
    """NRS's worst case at ε = 1, γ = 4: f moves by S(D) = 1 and S(D′) = e^β·S(D)."""
    cal = smooth.calibrate(1.0)

    def release(value: float, bound: float):
        return lambda ctx: ctx.smooth_cauchy(value, epsilon=1.0, purpose="audit",
                                             bounds=PRIMITIVE_RANGE,
                                             smooth_sensitivity=bound, beta=cal.beta)

    return SmoothScenario("smooth Cauchy (primitive)", "f: 0 → −1, S: 1 → e^β", 1.0,
                          _captured(release(0.0, 1.0)),
                          _captured(release(-1.0, math.exp(cal.beta))))


#: the kNN audit design: one ordinal feature (codes 0..2), target in [0, 10], s public
KNN_DONEES, KNN_HIGH = 20, 10.0
KNN_EPSILON = 6 * math.log(2)  # one add/remove step; γ = 4, β = ln 2 exactly


def knn_tables() -> tuple[np.ndarray, np.ndarray]:
    """D: a donor (y = 10) with 20 donees in class 0 and one (y = 0) with 20 in class 2."""
    m = KNN_DONEES
    codes = np.array([[0]] * (m + 1) + [[2]] * (m + 1), dtype=np.int64)
    y = np.array([KNN_HIGH] + [np.nan] * m + [0.0] + [np.nan] * m)
    return codes, y


def knn_release(codes: np.ndarray, y: np.ndarray, size: float):
    """run(ctx): the kNN mean's smooth release on one table (the kind's own functions)."""
    features = Features.of_codecs([np.array([0.0, 1.0, 2.0])], [3])
    gamma = smooth.gamma_for_smoothness(KNN_EPSILON, math.log(2))

    def run(ctx: PrivacyContext) -> None:
        imp = impute(features, codes, y, np.ones(y.size, dtype=bool), fill=0.0)
        bound = smooth_bound(imp.donee_bound, 0.0, KNN_HIGH, size)
        ctx.smooth_cauchy(float(imp.values.sum()) / size, epsilon=KNN_EPSILON,
                          purpose="audit", bounds=(0.0, KNN_HIGH),
                          smooth_sensitivity=bound, beta=math.log(2),
                          gamma=gamma)

    return run


def knn_scenario() -> SmoothScenario:
    """Removing the y = 10 donor: its 20 donees move to the y = 0 donor. The mean falls by
    exactly S(D) = (10 + 20·10)/s and N̂ doubles (20 → 40): both NRS worst cases at once."""
    codes, y = knn_tables()
    size = float(y.size)  # the public subgroup size (the kind releases it with Laplace)
    return SmoothScenario("knn_imputed_mean (smooth release)", "remove the y = 10 donor of "
                          "20 donees (add/remove step)", KNN_EPSILON,
                          _captured(knn_release(codes, y, size)),
                          _captured(knn_release(codes[1:], y[1:], size)))
