"""The ε rule (noise small against the margin) and the pass probability of a Laplace criterion.

Margin = effective threshold − the candidates' median exact error on the proxy at n. A
criterion released with Laplace noise of scale b = Δ/ε has σ = √2·b; the rule asks σ ≤
margin/K, rounded up to two significant digits (the lean example used K = 10; the assistant
tries several K and lets the forecast choose). The ε meeting it is the kind's own answer
(``CriterionKind.needed_epsilon``: a T′ that moves with ε, or σ·ε measured on the proxy).

P(pass | v) is the bound criterion's (``trial.BoundCriterion.pass_probability``: its kind's,
the same decision the engine makes): for one Laplace draw on v, F_Lap(T_eff − v; b) exactly,
with T_eff = min(T, T′).
"""

from __future__ import annotations

import math

from workbench.criteria import kinds
from workbench.specification.model import Criterion


def round_up(x: float) -> float:
    """Round up to two significant digits (so the σ condition still holds); at least 0.001."""
    if not math.isfinite(x):
        return math.inf
    if x <= 0.001:
        return 0.001
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return round(math.ceil(x / scale - 1e-9) * scale, 12)


def needed_epsilon(criterion: Criterion, exact: float, delta: float | None, divisor: float,
                   sigma_epsilon: float | None = None) -> float:
    """The kind's smallest ε whose noise σ ≤ margin/divisor, rounded up to two significant
    digits (``inf`` when the proxy's exact error is already at or above the threshold)."""
    return round_up(kinds.get(criterion.kind).needed_epsilon(criterion, exact, delta, divisor,
                                                             sigma_epsilon))
