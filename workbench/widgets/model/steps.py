"""The guided co-design flow: its steps in order, what each still lacks, and the summary.

Steps: data and schema → rules → criteria → budget → feasibility → sign-off and export. Each
step owns the JSON paths whose problems it shows and a check that lists, in plain words,
what is still missing (an invalid field, a criterion without ε, a threshold the quick samples
say is out of reach, no dry run yet, not exported yet). Plain Python: the app draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from workbench.criteria import kinds
from workbench.criteria.kinds.base import Reads
from workbench.privacy.budget_plan import BudgetPlan
from workbench.widgets.model.readouts import Readout, samples_label
from workbench.widgets.model.session import Session

#: A criterion whose P(pass) on the quick samples is below this is "at risk".
AT_RISK = 0.8
#: ... and below this its threshold looks out of reach ("infeasible").
INFEASIBLE = 0.05


@dataclass
class FlowState:
    """What the checks read: the session, the readouts, and what the user has done."""

    session: Session
    readouts: Mapping[str, Readout] = field(default_factory=dict)
    samples: int = 0
    has_proxy: bool = True
    dry_run_done: bool = False
    exported: bool = False


@dataclass(frozen=True)
class Step:
    """One step of the guided flow; ``paths`` are the spec sections whose problems it shows."""

    key: str
    title: str
    paths: tuple[str, ...]
    check: Callable[[FlowState], list[str]] = lambda _s: []

    def lacks(self, state: FlowState) -> list[str]:
        """Everything this step still lacks: invalid fields first, then its own check."""
        out = [f"{path or '(root)'}: {message}"
               for path, messages in state.session.errors.items()
               if _belongs(path, self.paths) for message in messages]
        return out + self.check(state)


def _belongs(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether a JSON path lies in one of the sections (the root belongs to the first step).

    >>> _belongs("criteria[2].epsilon", ("criteria",)), _belongs("", ("",))
    (True, True)
    """
    return any(path == p or path.startswith((p + ".", p + "[")) if p else path == ""
               for p in prefixes)


def _data(state: FlowState) -> list[str]:
    return [] if state.has_proxy else ["no public proxy loaded: the readouts are off"]


def _criteria(state: FlowState) -> list[str]:
    crits = [c for c in state.session.get("criteria", []) if isinstance(c, dict)]
    if not crits:
        return ["no acceptance criterion yet: add at least one"]
    out = []
    for c in crits:
        try:
            reads = kinds.get(str(c.get("kind"))).reads
        except ValueError:
            continue
        eps = c.get("epsilon", 0)
        if reads is not Reads.S_ONLY and isinstance(eps, int | float) and eps <= 0:
            out.append(f"{c.get('id')}: no ε (it reads the confidential data, so it needs one)")
    for r in state.readouts.values():
        if r.probability_pass is not None and r.probability_pass < INFEASIBLE:
            out.append(f"{r.id}: threshold {r.threshold:g} looks out of reach (P(pass) "
                       f"{r.probability_pass:.1%} {samples_label(r.samples)})")
    return out


def _budget(state: FlowState) -> list[str]:
    spec = state.session.spec
    if spec is None:
        return []
    cap = spec.budget.epsilon_total_max
    total = BudgetPlan.of_spec(spec).epsilon_total
    return [f"ε_total {total:.4g} exceeds the cap {cap:g}"] if cap is not None and total > cap \
        else []


def _feasibility(state: FlowState) -> list[str]:
    return [] if state.dry_run_done else ["no dry run yet (advised before sign-off)"]


def _signoff(state: FlowState) -> list[str]:
    if not state.session.valid:
        return ["the draft is invalid: fix the steps above first"]
    return [] if state.exported else ["not frozen and exported yet"]


#: The steps in order. The app maps its tabs to these keys (``app.TABS``).
STEPS: list[Step] = [
    Step("data", "Data & schema", ("", "spec_version", "metadata", "schema", "transformations"),
         _data),
    Step("rules", "Rules", ("constraints", "faithfulness", "face_privacy")),
    Step("criteria", "Criteria", ("criteria",), _criteria),
    Step("budget", "Budget", ("budget", "selection", "generator"), _budget),
    Step("feasibility", "Feasibility", (), _feasibility),
    Step("signoff", "Sign-off & export", (), _signoff),
]


def step(key: str) -> Step:
    """The step with this key."""
    return next(s for s in STEPS if s.key == key)


@dataclass(frozen=True)
class Summary:
    """The always-visible summary: ε_total, the forecast P(all pass), the criteria at risk."""

    epsilon_total: float | None
    all_pass: float | None
    all_pass_range: tuple[float, float] | None
    at_risk: tuple[tuple[str, float], ...]
    samples: int
    stale: bool


def summarize(state: FlowState, all_pass: object | None = None) -> Summary:
    """The summary of the last valid design (ε_total by the one budget plan)."""
    spec = state.session.spec
    total = None if spec is None else BudgetPlan.of_spec(spec).epsilon_total
    risk = sorted(((r.id, r.probability_pass) for r in state.readouts.values()
                   if r.probability_pass is not None and r.probability_pass < AT_RISK),
                  key=lambda item: item[1])
    p = getattr(all_pass, "probability", None)
    span = None if all_pass is None else (all_pass.low, all_pass.high)  # type: ignore[attr-defined]
    return Summary(total, p, span, tuple(risk), state.samples,
                   stale=not state.session.valid and spec is not None)
