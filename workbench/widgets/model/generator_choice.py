"""The generator family and its hyperparameters in a draft: what the Generator tab edits.

The choices come from the registry (:func:`workbench.generators.registered`): each family's
``hyperparameters`` declare a default, a constraint and an editor ``control``
(:class:`workbench.specification.params.Param`). Values are checked by the spec validator only (the
session validates every edit with ``build_spec``), never here. This module switches a draft's
family as one edit and says when a family cannot serve a criterion (the declaration's
:meth:`~workbench.generators.family.GeneratorFamily.models_jointly` rules out a clique the
criterion depends on). Plain Python, no ipywidgets.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.criteria import kinds
from workbench.generators import COMMON, family_class, registered
from workbench.specification import Spec
from workbench.specification.params import Param

#: What the hint suggests: the family that measures the criteria's own marginals.
SUGGESTED = "workload"


def family_names() -> tuple[str, ...]:
    """Every registered family, in registration order (the family dropdown's options)."""
    return tuple(cls.name for cls in registered())


def family_words(name: str) -> str:
    """A family's description, or why it is unknown."""
    try:
        return family_class(name).description
    except ValueError as exc:
        return str(exc)


def declared(name: str) -> dict[str, Param]:
    """A family's hyperparameters as declared (ε_gen alternatives are the Budget tab's)."""
    try:
        return dict(family_class(name).hyperparameters)
    except ValueError:
        return {}


def switched(document: Mapping[str, Any], family: str) -> dict[str, Any]:
    """The draft with another family: hyperparameters the new family also declares (and the
    ε_gen alternatives) are kept, the rest dropped; the selection's narrowed configurations
    and its recorded forecast name the old family, so they go too.

    >>> doc = {"generator": {"family": "privbayes", "search_space": [{"degree": [2],
    ...        "sampling": ["rounded"]}]}, "selection": {"gamma": 0, "forecast": {"p": 0.9}}}
    >>> out = switched(doc, "workload")
    >>> out["generator"], out["selection"]
    ({'family': 'workload', 'search_space': [{'sampling': ['rounded']}]}, {'gamma': 0})
    """
    out = copy.deepcopy(dict(document))
    keep = set(declared(family)) | set(COMMON)
    grids = (out.get("generator") or {}).get("search_space") or [{}]
    kept = [{k: v for k, v in g.items() if k in keep} for g in grids if isinstance(g, Mapping)]
    out["generator"] = {"family": family, "search_space": kept or [{}]}
    selection = out.get("selection")
    if isinstance(selection, dict):
        selection.pop("configurations", None)
        selection.pop("forecast", None)
    return out


@dataclass(frozen=True)
class Hint:
    """A criterion the chosen family cannot serve, and why."""

    criterion: str
    columns: tuple[str, ...]
    message: str


def unserved(spec: Spec) -> list[Hint]:
    """Criteria depending on a clique of columns that no hyperparameter set of the spec's
    family can reproduce jointly (its ``models_jointly`` says False for each)."""
    family = spec.generator.family
    try:
        cls = family_class(family)
    except ValueError:
        return []
    sets = list(spec.generator.hyperparameter_sets()) or [{}]
    hints = []
    for c in spec.criteria:
        try:
            cliques = kinds.get(c.kind).marginals(spec, c)
        except (ValueError, KeyError):
            continue
        for clique in sorted(cliques, key=len, reverse=True):
            if all(cls.models_jointly(params, clique) is False for params in sets):
                hints.append(Hint(c.id, tuple(clique), _words(c.id, family, clique)))
                break
    return hints


def _words(criterion: str, family: str, clique: tuple[str, ...]) -> str:
    """The hint in plain words."""
    how = family_words(family).split(" (")[0]
    other = ("" if family == SUGGESTED else
             f"; choose a family that does in the Generator tab (e.g. '{SUGGESTED}', which "
             "measures the marginals the criteria depend on)")
    return (f"{criterion}: the '{family}' generator cannot reproduce {' × '.join(clique)} "
            f"together ({how}), and this criterion depends on them jointly: no ε brings its "
            f"value below the error of treating them as unrelated{other}")


def hints_by_criterion(spec: Spec | None) -> dict[str, str]:
    """Criterion id → hint, for the criteria editor's rows."""
    return {} if spec is None else {h.criterion: h.message for h in unserved(spec)}
