"""What one criterion evaluation releases: the DP value, the pass decision and how it was made.

A :class:`CriterionResult` holds only public things — the DP value (never the exact error),
the spec's threshold, the threshold T′ a kind derives from public quantities and the effective
threshold min(T, T′) the decision used, ε, the mechanism, the clipping bounds [L, U], Δ and σ —
plus public details computed from n and S alone. It is the row of the release's criteria table
(paper Table 2). The decision itself is the kind's (``CriterionKind.result``), never made here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.privacy import MeasurementRecord

#: Mechanism name of criteria computed on the release candidate only (no noise, no ε).
NO_MECHANISM = "none"


@dataclass(frozen=True)
class CriterionResult:
    """One row of the criteria table: DP value against threshold, with its privacy parameters."""

    id: str
    kind: str
    threshold: float
    value: float
    passed: bool
    epsilon: float
    mechanism: str
    bounds: tuple[float, float] | None
    sensitivity: float | None
    sigma: float | None
    #: T′, a threshold the kind derives from public quantities (None when it derives none)
    adjusted_threshold: float | None = None
    #: the threshold the pass decision used, min(T, T′), as the kind decided (T when None)
    effective_threshold: float | None = None
    stage: str = "loop"
    details: Mapping[str, Any] = field(default_factory=dict)
    record: MeasurementRecord | None = None

    def __post_init__(self) -> None:
        if self.effective_threshold is None:
            object.__setattr__(self, "effective_threshold", float(self.threshold))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields for the release bundle and the report."""
        return {
            "id": self.id,
            "kind": self.kind,
            "threshold": self.threshold,
            "adjusted_threshold": self.adjusted_threshold,
            "effective_threshold": self.effective_threshold,
            "value": self.value,
            "passed": self.passed,
            "epsilon": self.epsilon,
            "mechanism": self.mechanism,
            "bounds": None if self.bounds is None else list(self.bounds),
            "sensitivity": self.sensitivity,
            "sigma": self.sigma,
            "stage": self.stage,
            "details": dict(self.details),
        }


def format_table(results: list[CriterionResult]) -> str:
    """Plain-text criteria table shaped like the paper's Table 2."""
    mech = max([len("mechanism"), *(len(r.mechanism) for r in results)])
    header = (
        f"{'id':<24} {'kind':<24} {'threshold':>10} {'T′':>8} {'DP value':>11} {'pass':>5} "
        f"{'ε':>6} {'mechanism':<{mech}} {'[L, U]':<14} {'Δ':>10} {'σ':>10}"
    )
    lines = [header, "-" * len(header)]
    for r in results:
        bounds = "" if r.bounds is None else f"[{r.bounds[0]:g}, {r.bounds[1]:g}]"
        t2 = "" if r.adjusted_threshold is None else f"{r.adjusted_threshold:.3f}"
        delta = "" if r.sensitivity is None else f"{r.sensitivity:.4g}"
        sigma = "" if r.sigma is None else f"{r.sigma:.4g}"
        lines.append(
            f"{r.id:<24} {r.kind:<24} {r.threshold:>10g} {t2:>8} {r.value:>11.5g} "
            f"{'yes' if r.passed else 'no':>5} {r.epsilon:>6g} {r.mechanism:<{mech}} "
            f"{bounds:<14} {delta:>10} {sigma:>10}"
        )
    return "\n".join(lines)
