"""Empirical audit of Censor_uw's single posterior draw on a tiny dataset (issue 19).

Neighbours (replace-one): D = six records at 0.5 and D′ with one of them replaced by 0.999.
Under D's posterior the replaced record's term sits at the top of the clamp interval almost
everywhere and the new record's at the bottom, except in the tail where b is small: the
normaliser shifts by nearly the width and the tail event by nearly the width the other way,
so the privacy loss comes close to the bound 2Δ = ε (0.89ε on the grid's exact laws).

The draw is exact: the clamped log posterior of
:func:`workbench.generators.bayesian.posterior.log_posterior` on a fine grid of
θ = (log a, log b), sampled by inverse CDF, which is the object the ε = 2Δ proof is about
(the Metropolis chain approximates it). It goes through ``PrivacyContext.posterior_draw``
with a seeded simulation source; events are fixed before any draw (tails of log a, log b).
At the clamp width of :func:`~workbench.generators.bayesian.mechanisms.clamp_interval` the
draw must be consistent with ε; at twice the width (the add/remove interval used under
replace-one, the bug the notes warn about) the audit must flag it.

The normal linear model's clamped posterior is computed by another code path, the per-cell
prefix sums of :mod:`workbench.generators.bayesian.fast` (``log_posterior`` takes it for
``normal_linear`` without weights), audited the same way (:func:`normal_fast_audit`):
θ = (β₀, log σ), D = four records at 0 (the working scale's midpoint), D′ one of them replaced
by 3 (the public upper bound). The replaced record's term reaches the clamp's top only where μ
is within a few σ of it, a narrow strip, so these neighbours exercise less of the bound than the
beta pair: over the grid's exact laws the box events {β₀ ≥ 2.5 or 2.75, log σ ≤ −1.25 or −1}
lose 0.32ε at the clamp width and 1.22ε at twice it (flagged with 300,000 draws).
"""

from __future__ import annotations

import numpy as np

from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import log_posterior
from workbench.privacy import PrivacyContext
from workbench.privacy.audit import AllOf, AuditResult, Event, Threshold, audit_events
from workbench.privacy.noise import SamplerStream, SeededNoise

D = (0.5,) * 6
D_PRIME = (0.999,) + (0.5,) * 5
#: θ grid: (log a, log b) on [−4, 4]², 161 points a side.
GRID = np.linspace(-4.0, 4.0, 161)
THRESHOLDS = tuple(np.linspace(-3.0, 3.0, 13))


def _grid() -> np.ndarray:
    a, b = np.meshgrid(GRID, GRID, indexing="ij")
    return np.column_stack([a.ravel(), b.ravel()])


def grid_law(values: tuple[float, ...], interval: tuple[float, float],
             model: str = "beta") -> np.ndarray:
    """The exact clamped posterior of ``model`` on the θ grid (probabilities, summing to 1)."""
    data = ModelData(np.asarray(values), np.zeros(len(values), np.int64), one_hot_design(()))
    logp = log_posterior(MODELS[model], data, None, interval)(_grid())
    p = np.exp(logp - logp.max())
    return p / p.sum()


def exact_draws(values: tuple[float, ...], interval: tuple[float, float],
                stream: SamplerStream, trials: int, model: str = "beta") -> np.ndarray:
    """``trials`` independent exact draws of θ from the clamped posterior on the grid."""
    theta = _grid()
    cdf = np.cumsum(grid_law(values, interval, model))
    idx = np.searchsorted(cdf / cdf[-1], stream.uniform(trials), side="right")
    return theta[np.minimum(idx, len(theta) - 1)]


def events() -> list[Threshold]:
    """Tails of each coordinate at fixed thresholds, both directions."""
    return [Threshold(float(t), op, j) for j in (0, 1) for t in THRESHOLDS for op in (">=", "<=")]


def censor_uw_audit(width_factor: float = 1.0, *, epsilon: float = 2.0,
                    trials: int = 300_000, seed: int = 0, model: str = "beta",
                    pair: tuple[tuple[float, ...], tuple[float, ...]] = (D, D_PRIME),
                    chosen: list[Event] | None = None, confidence: float = 0.99
                    ) -> AuditResult:
    """Audit one draw at ``width_factor`` × the replace-one clamp width, against ``epsilon``."""
    interval = _interval(epsilon, width_factor)
    delta = mech.loglik_sensitivity(interval, "replace_one")
    samples = []
    for k, values in enumerate(pair):
        ctx = PrivacyContext.simulation(seed, noise=SeededNoise(2 * seed + k))
        noisy = ctx.posterior_draw(
            lambda stream, v=values: exact_draws(v, interval, stream, trials, model),
            sensitivity=delta, epsilon=2 * delta, purpose=f"audit: censor_uw draw ({model})")
        samples.append(noisy.value)
    return audit_events(samples[0], samples[1], chosen or events(), epsilon,
                        confidence=confidence)


def _interval(epsilon: float, width_factor: float) -> tuple[float, float]:
    """The replace-one clamp interval at ``width_factor`` × its width."""
    lo, hi = mech.clamp_interval(epsilon, "replace_one")
    return (lo * width_factor, hi * width_factor)


#: The normal model's pair (working scale): four records at 0; one replaced by 3.
NORMAL_D = (0.0,) * 4
NORMAL_D_PRIME = (3.0,) + (0.0,) * 3


def normal_events() -> list[Event]:
    """Boxes {β₀ ≥ a, log σ ≤ b}: the replaced record's clamp strip moved to the new value."""
    return [AllOf((Threshold(a, ">=", 0), Threshold(b, "<=", 1)))
            for a in (2.5, 2.75) for b in (-1.25, -1.0)]


def normal_exact_loss(width_factor: float = 1.0, epsilon: float = 2.0) -> float:
    """The largest |ln P_D(E)/P_D′(E)| over :func:`normal_events` on the grid's exact laws."""
    interval = _interval(epsilon, width_factor)
    p, q = (grid_law(v, interval, "normal_linear") for v in (NORMAL_D, NORMAL_D_PRIME))
    theta = _grid()
    return max(abs(float(np.log(p[e(theta)].sum() / q[e(theta)].sum())))
               for e in normal_events())


def normal_fast_audit(width_factor: float = 1.0, *, epsilon: float = 2.0,
                      trials: int = 300_000, seed: int = 0, confidence: float = 0.99
                      ) -> AuditResult:
    """Censor_uw on ``normal_linear`` (the fast clamped path) at ``width_factor`` × width."""
    return censor_uw_audit(width_factor, epsilon=epsilon, trials=trials, seed=seed,
                           model="normal_linear", pair=(NORMAL_D, NORMAL_D_PRIME),
                           chosen=normal_events(), confidence=confidence)
