"""Live readouts per criterion: Δ, σ, T′, the proxy's value, and false-pass/false-fail odds.

Δ, σ and T′ come from the code the engine uses (:mod:`workbench.criteria.sensitivity`, the
criteria modules' public layouts, :func:`workbench.privacy.laplace_sigma`), evaluated with the
public proxy as R and a quick synthetic sample as S. What differs by kind (T′, clipping, where
the noise goes) is asked of the criterion's kind (:mod:`workbench.criteria.kinds`), the same
objects that make the engine's releases.

Pass odds: the engine passes a criterion when its DP value v + Lap(b), b = Δ/ε, is below the
effective threshold T_eff (min(T, T′) for the relative 1-way error; the value is clipped to
[0, 1] first for share-valued kinds). Taking the proxy's exact value v as the "true value":

* P(pass) = F_Lap(T_eff − v; b), with F the Laplace CDF;
* if v ≥ T (truly failing), P(false pass) = P(pass);
* if v < T (truly passing), P(false fail) = 1 − P(pass).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.criteria import kinds
from workbench.criteria.cells import PairedCells
from workbench.criteria.evaluate import criterion_sensitivity
from workbench.privacy import laplace_sigma
from workbench.spec.model import Criterion, Spec
from workbench.transform import TableCodec


@dataclass(frozen=True)
class Readout:
    """What the criteria editor shows for one criterion (None where a quantity does not apply)."""

    id: str
    kind: str
    threshold: float
    epsilon: float
    n: int
    sensitivity: float | None = None
    sigma: float | None = None
    adjusted_threshold: float | None = None
    value: float | None = None
    probability_pass: float | None = None
    false_pass: float | None = None
    false_fail: float | None = None
    note: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def effective_threshold(self) -> float:
        """The threshold the engine's pass decision uses."""
        if self.adjusted_threshold is None:
            return self.threshold
        return min(self.threshold, self.adjusted_threshold)

    @property
    def scale(self) -> float | None:
        """Laplace scale b = Δ/ε."""
        if self.sensitivity is None or self.epsilon <= 0:
            return None
        return self.sensitivity / self.epsilon


def laplace_cdf(x: float, scale: float) -> float:
    """P(Lap(scale) ≤ x) = ½e^{x/b} for x < 0, 1 − ½e^{−x/b} otherwise.

    >>> laplace_cdf(0.0, 1.0), round(laplace_cdf(math.log(0.1), 1.0), 6)
    (0.5, 0.05)
    """
    if scale <= 0:
        return 1.0 if x >= 0 else 0.0
    if x < 0:
        return 0.5 * math.exp(x / scale)
    return 1.0 - 0.5 * math.exp(-x / scale)


def pass_probability(criterion: Criterion, value: float, scale: float, t_eff: float) -> float:
    """P(the engine's DP value is below T_eff) when the exact value is ``value``."""
    clip = kinds.get(criterion.kind).clip
    if clip is not None:
        if t_eff > clip[1]:
            return 1.0  # the DP value is clipped (to [0, 1] for shares), always below T_eff
        if t_eff <= clip[0]:
            return 0.0
    return laplace_cdf(t_eff - value, scale)


def criterion_readout(
    spec: Spec,
    table: TableCodec,
    criterion: Criterion,
    pc: PairedCells,
    value: float | None,
) -> Readout:
    """Every readout of one criterion at the draft's current threshold and ε."""
    base = {"id": criterion.id, "kind": criterion.kind, "threshold": criterion.threshold,
            "epsilon": criterion.epsilon, "n": pc.n, "value": value}
    if criterion.epsilon <= 0:
        return Readout(**base, note="computed on the release alone, without noise")
    delta, details = criterion_sensitivity(spec, table, criterion, pc)
    if delta is None:
        return Readout(**base, note="no sensitivity for this kind", details=details)
    sigma = laplace_sigma(delta, criterion.epsilon)
    kind = kinds.get(criterion.kind)
    t_prime = kind.adjusted_threshold(criterion, delta, details)
    out = Readout(**base, sensitivity=delta, sigma=sigma, adjusted_threshold=t_prime,
                  details=details)
    if kind.noise_note:
        return _replace(out, note=f"{kind.noise_note}: the pass odds are not a single "
                        "Laplace tail")
    if value is None:
        return out
    scale = delta / criterion.epsilon
    p_pass = pass_probability(criterion, value, scale, out.effective_threshold)
    truly_passes = value < criterion.threshold
    return _replace(
        out,
        probability_pass=p_pass,
        false_pass=pass_probability(criterion, failing_value(criterion, value), scale,
                                    out.effective_threshold),
        false_fail=1.0 - p_pass if truly_passes else None,
    )


#: A candidate this much above the threshold is the "failing" one the false-pass readout uses.
FALSE_PASS_MARGIN = 0.10


def failing_value(criterion: Criterion, value: float) -> float:
    """The true value a false pass is judged at: the proxy's if it fails, else T·(1 + 10%).

    The relative 1-way error is clipped to [1, λ], so every failing value collapses to λ there
    (Prop. 6), where P(pass) is the spec's p by construction.
    """
    if value >= criterion.threshold:
        failing = value
    else:
        failing = criterion.threshold * (1.0 + FALSE_PASS_MARGIN)
    return kinds.get(criterion.kind).failing_value(criterion, failing)

def _replace(readout: Readout, **changes: Any) -> Readout:
    """A copy with some fields changed (dataclasses.replace, kept local for brevity)."""
    from dataclasses import replace

    return replace(readout, **changes)
