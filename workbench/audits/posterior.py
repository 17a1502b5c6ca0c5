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
"""

from __future__ import annotations

import numpy as np

from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import log_posterior
from workbench.privacy import PrivacyContext
from workbench.privacy.audit import AuditResult, Threshold, audit_events
from workbench.privacy.noise import SamplerStream, SeededNoise

D = (0.5,) * 6
D_PRIME = (0.999,) + (0.5,) * 5
#: θ grid: (log a, log b) on [−4, 4]², 161 points a side.
GRID = np.linspace(-4.0, 4.0, 161)
THRESHOLDS = tuple(np.linspace(-3.0, 3.0, 13))


def _grid() -> np.ndarray:
    a, b = np.meshgrid(GRID, GRID, indexing="ij")
    return np.column_stack([a.ravel(), b.ravel()])


def exact_draws(values: tuple[float, ...], interval: tuple[float, float],
                stream: SamplerStream, trials: int) -> np.ndarray:
    """``trials`` independent exact draws of θ from the clamped beta posterior on the grid."""
    data = ModelData(np.asarray(values), np.zeros(len(values), np.int64), one_hot_design(()))
    theta = _grid()
    logp = log_posterior(MODELS["beta"], data, None, interval)(theta)
    cdf = np.cumsum(np.exp(logp - logp.max()))
    idx = np.searchsorted(cdf / cdf[-1], stream.uniform(trials), side="right")
    return theta[np.minimum(idx, len(theta) - 1)]


def events() -> list[Threshold]:
    """Tails of each coordinate at fixed thresholds, both directions."""
    return [Threshold(float(t), op, j) for j in (0, 1) for t in THRESHOLDS for op in (">=", "<=")]


def censor_uw_audit(width_factor: float = 1.0, *, epsilon: float = 2.0,
                    trials: int = 300_000, seed: int = 0) -> AuditResult:
    """Audit one draw at ``width_factor`` × the replace-one clamp width, against ``epsilon``."""
    lo, hi = mech.clamp_interval(epsilon, "replace_one")
    interval = (lo * width_factor, hi * width_factor)
    delta = mech.loglik_sensitivity(interval, "replace_one")
    samples = []
    for k, values in enumerate((D, D_PRIME)):
        ctx = PrivacyContext.simulation(seed, noise=SeededNoise(2 * seed + k))
        noisy = ctx.posterior_draw(
            lambda stream, v=values: exact_draws(v, interval, stream, trials),
            sensitivity=delta, epsilon=2 * delta, purpose="audit: censor_uw draw")
        samples.append(noisy.value)
    return audit_events(samples[0], samples[1], events(), epsilon)
