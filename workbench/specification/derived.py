"""What a spec document implies, derived once for a draft in the app and for a frozen spec.

* ε_gen (:func:`generator_epsilon`): the largest selectable 'epsilon' — the narrowed list's
  when there is one, else every grid's (selection is charged for the largest) — or, when the
  configurations take none, ``budget.epsilon_generator``; :func:`configuration_epsilon` is
  one configuration's. The validator reports a written copy that disagrees.
* The budget items (:func:`budget_items`): every ε a designer moves, its weight in ε_total (f in
  the loop, 1 outside) and every place it is declared; :func:`budget_parts` adds ε₀, survey,
  cleaning counts and n̂, so that Σ weight·ε is ε_total.
* The plan (:func:`document_plan`): the one formula, ``BudgetPlan``, of the document's numbers
  (a draft's unusable ε's are skipped); ``Spec.budget_plan`` is this of its document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.selection import loop_factor
from workbench.specification.survey import DEFAULT_WEIGHT_CHECK_EPSILON

GENERATOR_KEY = "generator"
BUDGET_PATH = "budget.epsilon_generator"


def _finite(value: Any) -> float | None:
    """A finite float, or None for anything else (drafts may be invalid)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def positive(value: Any) -> float | None:
    """A finite float > 0, or None for anything else."""
    number = _finite(value)
    return number if number is not None and number > 0 else None


def _section(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A top-level object of the document ({} when absent or malformed)."""
    value = document.get(key)
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    """A JSON list (a tuple in a frozen document), or [] for anything else."""
    return list(value) if isinstance(value, list | tuple) else []


def _narrowed(document: Mapping[str, Any]) -> list[Any]:
    """The narrowed configurations (``selection.configurations``; [] when not narrowed)."""
    return _list(_section(document, "selection").get("configurations"))


def _generator_params(config: Any) -> Mapping[str, Any]:
    """The generator object of one narrowed configuration ({} when malformed)."""
    gen = config.get("generator") if isinstance(config, Mapping) else None
    return gen if isinstance(gen, Mapping) else {}


def selectable_epsilons(document: Mapping[str, Any]) -> list[float | None]:
    """The generator 'epsilon' of every selectable configuration (None: it takes none): the
    narrowed list's when narrowed, else each grid's alternatives."""
    narrowed = _narrowed(document)
    if narrowed:
        return [positive(_generator_params(c).get("epsilon")) for c in narrowed]
    out: list[float | None] = []
    for grid in _list(_section(document, "generator").get("search_space")):
        values = _list(grid.get("epsilon")) if isinstance(grid, Mapping) else []
        out += [positive(v) for v in values] if values else [None]
    return out


def generator_epsilon(document: Mapping[str, Any]) -> float | None:
    """ε_gen: the written budget value, else the largest selectable 'epsilon' when every
    selectable configuration declares one (None when neither is usable)."""
    written = positive(_section(document, "budget").get("epsilon_generator"))
    if written is not None:
        return written
    values = selectable_epsilons(document)
    given = [v for v in values if v is not None]
    return max(given) if given and len(given) == len(values) else None


def configuration_epsilon(spec: Any, params: Mapping[str, Any]) -> float:
    """ε_gen of one configuration (its generator ``params``) of a validated spec: its
    'epsilon', else the spec's ε_gen."""
    return float(params.get("epsilon", spec.budget.epsilon_generator))


def generator_declarations(document: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    """Every (path, value) where the document declares ε_gen: the budget, each grid
    alternative and each narrowed configuration (an edit of ε_gen moves them together)."""
    written = positive(_section(document, "budget").get("epsilon_generator"))
    out = [] if written is None else [(BUDGET_PATH, written)]
    for j, grid in enumerate(_list(_section(document, "generator").get("search_space"))):
        values = _list(grid.get("epsilon")) if isinstance(grid, Mapping) else []
        out += [(f"generator.search_space[{j}].epsilon[{k}]", v)
                for k, v in enumerate(map(positive, values)) if v is not None]
    for i, config in enumerate(_narrowed(document)):
        value = positive(_generator_params(config).get("epsilon"))
        if value is not None:
            out.append((f"selection.configurations[{i}].generator.epsilon", value))
    return tuple(out)


@dataclass(frozen=True)
class BudgetItem:
    """One ε the designer can move: its weight in ε_total and where the document declares it."""

    key: str
    label: str
    epsilon: float
    weight: float
    in_loop: bool = True
    #: (path, value) of every declaration; ε_gen's may be several (budget, grids, narrowed)
    declared: tuple[tuple[str, float], ...] = ()

    def assign(self, value: float) -> dict[str, float]:
        """Where to write ``value``: every declaration scaled by value/ε (so the largest of
        several alternatives becomes ``value``; a declaration equal to ε becomes it exactly).

        >>> BudgetItem("g", "g", 2.0, 2.0, declared=(("a", 2.0), ("b", 1.0))).assign(3.0)
        {'a': 3.0, 'b': 1.5}
        """
        return {path: float(value) if old == self.epsilon else old * value / self.epsilon
                for path, old in self.declared}


def max_iterations(document: Mapping[str, Any]) -> int | None:
    """The selection cap T (None = no cap, also when malformed)."""
    cap = _section(document, "selection").get("max_iterations")
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1 else None


def budget_items(document: Mapping[str, Any]) -> list[BudgetItem]:
    """ε_gen and every criterion ε > 0, with weights f (in the loop) or 1 (once)."""
    loop = float(loop_factor(max_iterations(document)))
    family = _section(document, "generator").get("family")
    items: list[BudgetItem] = []
    eps_gen = generator_epsilon(document)
    if eps_gen is not None:
        label = f"generator ({family})" if isinstance(family, str) else "generator"
        items.append(BudgetItem(GENERATOR_KEY, label, eps_gen, loop,
                                declared=generator_declarations(document)))
    for i, crit in enumerate(_list(document.get("criteria"))):
        if not isinstance(crit, Mapping):
            continue
        eps = positive(crit.get("epsilon", 0.0))
        if eps is None:
            continue
        once = bool(crit.get("once", False))
        cid = str(crit.get("id", f"criterion {i}"))
        items.append(BudgetItem(cid, f"{cid} (once)" if once else cid, eps,
                                1.0 if once else loop, not once,
                                ((f"criteria[{i}].epsilon", eps),)))
    return items


def _survey_epsilon(section: Any) -> float:
    """ε_w + ε₁ + ε₂ + ε₃ of a survey section (0 when absent or unusable)."""
    eps = section.get("epsilon") if isinstance(section, Mapping) else None
    if not isinstance(eps, Mapping):
        return 0.0
    parts = [positive(eps.get(k, 0.0)) for k in ("binning", "table", "counts")]
    check = positive(section.get("weight_check_epsilon", DEFAULT_WEIGHT_CHECK_EPSILON))
    return math.fsum(p for p in (*parts, check) if p is not None)


def _cleaning_epsilon(section: Any) -> float:
    """ε of ``cleaning_counts`` (0 when absent, public or unusable)."""
    if not isinstance(section, Mapping) or section.get("release") != "dp":
        return 0.0
    return positive(section.get("epsilon")) or 0.0


def _n_epsilon(metadata: Mapping[str, Any]) -> float:
    """ε_n of ``metadata.n_epsilon`` under ``n_policy: dp`` (0 otherwise)."""
    return (positive(metadata.get("n_epsilon")) or 0.0) if metadata.get("n_policy") == "dp" \
        else 0.0


def document_plan(document: Mapping[str, Any]) -> BudgetPlan | None:
    """The budget plan of a document; None without a usable ε_gen or selection."""
    items = budget_items(document)
    if not items or items[0].key != GENERATOR_KEY:
        return None
    selection = _section(document, "selection")
    e0, gamma = (_finite(selection.get(k, 0.0)) for k in ("epsilon_0", "gamma"))
    plan = BudgetPlan.of_criteria(items[0].epsilon,
                                  ((it.epsilon, not it.in_loop) for it in items[1:]),
                                  gamma=gamma if gamma is not None and 0 <= gamma <= 1 else 0.0,
                                  max_iterations=max_iterations(document),
                                  epsilon_0=e0 if e0 is not None and e0 >= 0 else 0.0,
                                  epsilon_survey=_survey_epsilon(document.get("survey")))
    plan = replace(plan, epsilon_cleaning=_cleaning_epsilon(document.get("cleaning_counts")),
                   epsilon_n=_n_epsilon(_section(document, "metadata")))
    try:
        plan.epsilon_selection  # noqa: B018 - raises on an ε₀ outside Thm. 3's range
    except ValueError:
        return None
    return plan


def budget_parts(document: Mapping[str, Any]) -> list[BudgetItem]:
    """Every part of ε_total (ε₀ even at 0): the items, then ε₀, survey, cleaning counts, n̂;
    Σ weight·ε is :func:`document_plan`'s ε_total ([] when there is no plan)."""
    plan = document_plan(document)
    if plan is None:
        return []
    e0 = BudgetItem("epsilon_0", "ε₀ (private selection's stop rule)", plan.epsilon_0, 1.0, False)
    return budget_items(document) + [e0] + [BudgetItem(term, term, eps, 1.0, False)
                                            for term, _, eps in plan.every_run_parts()]
