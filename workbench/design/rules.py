"""The ε rule (noise small against the margin) and the pass probability of a Laplace criterion.

Margin = effective threshold − the candidates' median exact error on the proxy at n. A
criterion released with Laplace noise of scale b = Δ/ε has σ = √2·b; the rule asks σ ≤
margin/K, so ε = K·√2·Δ/margin, rounded up to two significant digits (the lean example used
K = 10; the assistant tries several K and lets the forecast choose). For the relative 1-way
error T′ = λ + (Δ/ε)·ln 2p itself moves with ε (Prop. 6), so σ ≤ (min(T, λ) + (Δ/ε)·ln 2p −
v)/K gives ε ≥ Δ·(K√2 − ln 2p)/(min(T, λ) − v). Criteria whose noise is not one Laplace draw
(the regression group) pass ``sigma_epsilon``, σ·ε measured on the proxy: ε = K·σε/margin.

A Laplace criterion's DP value is v + Lap(b) (v clipped to [1, λ] for the relative 1-way
error) and passes below its effective threshold T_eff, so P(pass | v) = F_Lap(T_eff − v; b)
exactly (no sampling).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from workbench.criteria import kinds
from workbench.spec.model import Criterion

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


def laplace_cdf(x: float, b: float) -> float:
    """P(Lap(b) < x)."""
    if b <= 0:
        return 1.0 if x > 0 else 0.0
    return 0.5 * math.exp(x / b) if x < 0 else 1.0 - 0.5 * math.exp(-x / b)


def pass_probability(criterion: Criterion, epsilon: float, exact: float, delta: float | None,
                     details: Mapping[str, Any]) -> float:
    """P(the DP value passes) for a Laplace criterion at ``epsilon`` given its exact value."""
    if epsilon <= 0 or delta is None:
        return 1.0 if exact < criterion.threshold else 0.0
    at = dataclasses.replace(criterion, epsilon=float(epsilon))
    kind = kinds.get(criterion.kind)
    value = exact
    rel = _relative(criterion)
    if rel is not None:
        value = min(max(exact, 1.0), rel[0])
    adjusted = kind.adjusted_threshold(at, delta, details)
    limit = criterion.threshold if adjusted is None else adjusted  # as the release decides
    return laplace_cdf(limit - value, delta / epsilon)
