"""The ε rule (noise small against the margin) and the pass probability of a Laplace criterion.

Margin = effective threshold − the candidates' median exact error on the proxy at n. A
criterion released with Laplace noise of scale b = Δ/ε has σ = √2·b; the rule asks σ ≤
margin/K, so ε = K·√2·Δ/margin, rounded up to two significant digits (the lean example used
K = 10; the assistant tries several K and lets the forecast choose). For the relative 1-way
error T′ = λ + (Δ/ε)·ln 2p itself moves with ε (Prop. 6), so σ ≤ (min(T, λ) + (Δ/ε)·ln 2p −
v)/K gives ε ≥ Δ·(K√2 − ln 2p)/(min(T, λ) − v). Criteria whose noise is not one Laplace draw
(the regression group) pass ``sigma_epsilon``, σ·ε measured on the proxy: ε = K·σε/margin.

P(pass | v) is asked of the criterion's kind (``CriterionKind.pass_probability``, the same
decision the engine makes): for one Laplace draw on v, F_Lap(T_eff − v; b) exactly, with
T_eff = min(T, T′).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from workbench.criteria import kinds
from workbench.specification.model import Criterion

SQRT2 = math.sqrt(2.0)


def round_up(x: float) -> float:
    """Round up to two significant digits (so the σ condition still holds); at least 0.001."""
    if not math.isfinite(x):
        return math.inf
    if x <= 0.001:
        return 0.001
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return round(math.ceil(x / scale - 1e-9) * scale, 12)


def _relative(criterion: Criterion) -> tuple[float, float] | None:
    """(λ, false-pass p) of a relative 1-way criterion, else None."""
    if "lambda" not in criterion.params or "false_pass_probability" not in criterion.params:
        return None
    return float(criterion.params["lambda"]), float(criterion.params["false_pass_probability"])


def needed_epsilon(criterion: Criterion, exact: float, delta: float | None, divisor: float,
                   sigma_epsilon: float | None = None) -> float:
    """The smallest ε (two significant digits, rounded up) whose noise σ ≤ margin/divisor.

    ``inf`` when the proxy's exact error is already at or above the threshold.
    """
    rel = _relative(criterion)
    if rel is not None and delta is not None:
        lam, p = rel
        margin = min(criterion.threshold, lam) - exact
        need = delta * (divisor * SQRT2 - math.log(2 * p)) / margin if margin > 0 else math.inf
    else:
        margin = criterion.threshold - exact
        scale = sigma_epsilon if sigma_epsilon is not None else SQRT2 * float(delta or 0.0)
        need = divisor * scale / margin if margin > 0 else math.inf
    return round_up(need)


def pass_probability(criterion: Criterion, epsilon: float, exact: float, delta: float | None,
                     details: Mapping[str, Any]) -> float | None:
    """P(the DP value passes) at ``epsilon`` given its exact value: the kind's own answer
    (its effective threshold min(T, T′) and pass test; None when its noise is not one Laplace
    draw on the value, which the assistant then simulates)."""
    at = dataclasses.replace(criterion, epsilon=float(epsilon))
    kind = kinds.get(criterion.kind)
    noisy = delta if epsilon > 0 else None
    return kind.pass_probability(at, exact, noisy, kind.effective_threshold(at, noisy, details))
