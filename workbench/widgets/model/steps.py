"""The guided co-design flow: its steps in order, what each still lacks, and the summary.

Steps: data and schema → rules → criteria → budget → feasibility → sign-off and export. Each
step owns the JSON paths whose problems it shows and a check that lists, in plain words,
what is still missing (an invalid field, no dataset id, a criterion without ε, a threshold the
quick samples say is out of reach, a criterion the generator cannot serve, no budget chosen, no
dry run yet, a forecast below the target, not exported yet). A step is "done" only when the
user has done it (:attr:`FlowState.did`): edited its sections or used its buttons, or, for the
review steps (data, rules, criteria), opened its tab; the budget needs a chosen ε (a slider,
the design assistant, or "use this budget"). Plain Python: the app draws it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from workbench.criteria import kinds
from workbench.criteria.kinds.tags import Reads
from workbench.dryrun.forecast import AllPass
from workbench.widgets.model.forecast import DEFAULT_TARGET, Forecast, percent
from workbench.widgets.model.generator_choice import unserved
from workbench.widgets.model.metadata import dataset_problems
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
    #: steps the user has done (edited, used, or — review steps — opened)
    did: frozenset[str] = frozenset()
    forecast: Forecast | None = None
    target: float = DEFAULT_TARGET
    #: the export was made below the target (or without a forecast), acknowledged
    acknowledged: bool = False
    spec_path: Path | None = None


@dataclass(frozen=True)
class Step:
    """One step of the guided flow; ``paths`` are the spec sections whose problems it shows."""

    key: str
    title: str
    paths: tuple[str, ...]
    check: Callable[[FlowState], list[str]] = lambda _s: []
    #: what the step lacks until the user has done it (None: its check decides alone)
    undone: str | None = None

    def lacks(self, state: FlowState) -> list[str]:
        """Everything this step still lacks: invalid fields first, then its own check, then
        the user's own action if they have not done the step yet."""
        out = [f"{path or '(root)'}: {message}"
               for path, messages in state.session.errors.items()
               if _belongs(path, self.paths) for message in messages]
        out += self.check(state)
        if self.undone and self.key not in state.did:
            out.append(self.undone)
        return out


def _belongs(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether a JSON path lies in one of the sections (the root belongs to the first step).

    >>> _belongs("criteria[2].epsilon", ("criteria",)), _belongs("", ("",))
    (True, True)
    """
    return any(path == p or path.startswith((p + ".", p + "[")) if p else path == ""
               for p in prefixes)


def _data(state: FlowState) -> list[str]:
    out = [] if state.has_proxy else ["no public proxy loaded: the readouts are off"]
    metadata = {"metadata": state.session.get("metadata", {})}
    return out + dataset_problems(metadata, state.spec_path)


def _criteria(state: FlowState) -> list[str]:
    crits = [c for c in state.session.get("criteria", []) if isinstance(c, dict)]
    if not crits:
        return ["no acceptance criterion yet: add at least one"]
    out = []
    for c in crits:
        try:
            reads = kinds.get(str(c.get("kind"))).tags.reads
        except ValueError:
            continue
        eps = c.get("epsilon", 0)
        if reads is not Reads.S_ONLY and isinstance(eps, int | float) and eps <= 0:
            out.append(f"{c.get('id')}: no ε (it reads the confidential data, so it needs one)")
    for r in state.readouts.values():
        if r.probability_pass is not None and r.probability_pass < INFEASIBLE:
            out.append(f"{r.id}: threshold {r.threshold:g} looks out of reach (P(pass) "
                       f"{r.probability_pass:.1%} {samples_label(r.samples)})")
    if state.session.spec is not None and state.session.valid:
        out += [h.message for h in unserved(state.session.spec)]
    return out


def _budget(state: FlowState) -> list[str]:
    spec = state.session.spec
    if spec is None:
        return []
    cap = spec.budget.epsilon_total_max
    total = spec.budget_plan().epsilon_total
    return [f"ε_total {total:.4g} exceeds the cap {cap:g}"] if cap is not None and total > cap \
        else []


def _feasibility(state: FlowState) -> list[str]:
    if not state.dry_run_done:
        return ["no dry run of this design yet (advised before sign-off)"]
    f = state.forecast
    if f is not None and f.criteria and f.below(state.target):
        return [f"the forecast P(all criteria pass) = {percent(f.p, state.target)} is below "
                f"the target "
                f"{percent(state.target)}: raise ε (the design assistant), loosen thresholds, "
                "or change the generator"]
    return []


def _signoff(state: FlowState) -> list[str]:
    if not state.session.valid:
        return ["the draft is invalid: fix the steps above first"]
    if not state.exported:
        return ["not frozen and exported yet"]
    f = state.forecast
    low = f is None or (f.criteria > 0 and f.below(state.target))
    if low and not state.acknowledged:
        return ["exported below the target forecast without an acknowledgement"]
    return []


#: The steps in order. The app maps its tabs to these keys (``app.TABS``).
STEPS: list[Step] = [
    Step("data", "Data & schema", ("", "spec_version", "metadata", "schema", "transformations"),
         _data, "not reviewed yet: check the metadata and the columns (edit them, or open "
         "their tabs)"),
    Step("rules", "Rules", ("constraints", "faithfulness", "face_privacy"), undone=(
        "not reviewed yet: open the Constraints or Faithfulness tab")),
    Step("criteria", "Criteria", ("criteria",), _criteria, "not reviewed yet: open its tab"),
    Step("budget", "Budget", ("budget", "selection", "generator"), _budget,
         "no budget chosen yet: set the ε's (sliders or the design assistant) or press "
         "'use this budget'"),
    Step("feasibility", "Feasibility", (), _feasibility),
    Step("signoff", "Sign-off & export", (), _signoff),
]

#: Steps that opening one of their tabs counts as doing (a review); the others need an action.
REVIEW_STEPS = ("data", "rules", "criteria")
def steps_of_edit(path: str) -> set[str]:
    """The steps an edit at ``path`` counts for (a criterion's ε is also a budget choice).

    >>> sorted(steps_of_edit("criteria[2].epsilon")), sorted(steps_of_edit("metadata.title"))
    (['budget', 'criteria'], ['data'])
    """
    if path == "" or path.startswith("generator"):
        return set()  # a whole new document, or a family: neither chooses the budget's ε's
    out = {s.key for s in STEPS if _belongs(path, s.paths)}
    if path.startswith("criteria[") and path.endswith("].epsilon"):
        out.add("budget")
    return out


def step(key: str) -> Step:
    """The step with this key."""
    return next(s for s in STEPS if s.key == key)


@dataclass(frozen=True)
class Summary:
    """The always-visible summary: ε_total, the forecast P(all pass), the criteria at risk."""

    epsilon_total: float | None
    #: the quick samples' P(all pass), its range and sample count (None: no forecast)
    all_pass: AllPass | None
    at_risk: tuple[tuple[str, float], ...]
    stale: bool
    criteria: int = 0
    target: float = DEFAULT_TARGET


def summarize(state: FlowState, all_pass: AllPass | None = None) -> Summary:
    """The summary of the last valid design (ε_total by the one budget plan); with no
    criteria there is no forecast (a product over nothing is not a prediction)."""
    spec = state.session.spec
    total = None if spec is None else spec.budget_plan().epsilon_total
    count = 0 if spec is None else len(spec.criteria)
    risk = sorted(((r.id, r.probability_pass) for r in state.readouts.values()
                   if r.probability_pass is not None and r.probability_pass < AT_RISK),
                  key=lambda item: item[1])
    return Summary(total, all_pass if count else None, tuple(risk),
                   stale=not state.session.valid and spec is not None, criteria=count,
                   target=state.target)
