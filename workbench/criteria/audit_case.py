"""What a criterion kind declares for its privacy audit: a worst-case replace-one neighbour pair.

A kind's ``audit_case()`` returns an :class:`AuditCase`: one criterion of the kind on a tiny
PUBLIC design (:data:`GXY` or :data:`MISSING`, below), records R, their neighbour R′ (one
record replaced) and a candidate S, the Δ documented by hand from the kind's derivation, and in
words how the pair reaches it. ``workbench.audits.criteria`` runs the release on R and R′
through the public API, captures the noise call and checks ε-DP at Δ and a flag at Δ/2
(``tests/test_audits.py`` requires a case of every registered kind). Where no pair can reach Δ
(a proven but loose bound) the case says why in ``unflaggable`` and states how far its best
pair goes (``tightness``).

Designs (rows are code triples; every column has one identity transformation):

* :data:`GXY`: g ∈ {a, b}, x ∈ {0, 1, 2}, y ∈ {0, 5, 10} (y's codes 0, 1, 2), all ``forbid``,
  with a survey section (weights in [1, 3], N = 12, 6 per value of g) for the weighted kinds;
* :data:`MISSING`: g ∈ {a, b} (forbid), x ∈ {0, 1} and z ∈ {p, q}, both ``allow`` with
  ``max_missing_rate`` ¼ (code 2 is "missing"), so with n = 4 the rows complete on {x} are at
  least m = 3.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The audit designs by name.
GXY, MISSING = "gxy", "missing"
#: ε of the audited criterion unless its case sets one.
AUDIT_EPSILON = 1.0
#: The largest survey weight of the GXY design (R's records carry it: the weighted worst case).
SURVEY_MAX_WEIGHT = 3.0

OnceResults = Callable[[Any, Any, np.ndarray], Mapping[str, Any]]


@dataclass(frozen=True)
class AuditCase:
    """A kind's worst-case neighbours on a tiny public design, with the Δ written by hand."""

    criterion: Mapping[str, Any]
    real: np.ndarray
    real_prime: np.ndarray
    synth: np.ndarray
    delta: float
    how: str
    mechanism: str = "Laplace on the criterion value"
    design: str = GXY
    #: other criteria the audited one needs in its spec (e.g. the coefficients an MAE reads)
    companions: tuple[Mapping[str, Any], ...] = ()
    #: "once": released by ``release_once`` (a statistic of R alone), else ``evaluate_criterion``
    stage: str = "loop"
    #: the public inputs the release reads in ``once_results`` (spec, configuration, R) ↦ …
    once_results: OnceResults | None = None
    #: the share of Δ the pair moves the released statistic by (1: Δ is attained)
    tightness: float = 1.0
    #: why Δ/2 cannot be flagged (a proven but loose bound), "" when it can
    unflaggable: str = ""
    #: a kind computed on S alone: no noise to audit; the check is that R does not matter
    noiseless: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return str(self.criterion["kind"])


def rows(*triples: tuple[int, int, int]) -> np.ndarray:
    """A code matrix from code triples."""
    return np.array(triples, dtype=np.int64)


def replaced(data: np.ndarray, i: int, row: tuple[int, int, int]) -> np.ndarray:
    """The replace-one neighbour: record i becomes ``row``."""
    out = data.copy()
    out[i] = row
    return out


#: GXY base table: four distinct rows, every code of g and x seen at least once.
BASE = rows((0, 0, 0), (0, 1, 1), (1, 2, 2), (1, 0, 1))
#: MISSING base table: x missing in the last row.
MISSING_BASE = rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 2, 1))

_IDENTITY = {"alternatives": [{"name": "id", "kind": "identity"}]}


def _column(name: str, domain: list[Any], kind: str = "categorical", **extra: Any
            ) -> dict[str, Any]:
    return {"name": name, "type": kind, "domain": domain, "missing": "forbid",
            "out_of_domain": "error", **extra}


def _allow(name: str, domain: list[Any]) -> dict[str, Any]:
    return _column(name, domain, missing="allow", max_missing_rate=0.25)


_DESIGNS: dict[str, dict[str, Any]] = {
    GXY: {
        "columns": [_column("g", ["a", "b"]), _column("x", [0, 1, 2], "ordinal"),
                    _column("y", [0, 5, 10], "ordinal")],
        "faithfulness": {"exact": ["g", "y"], "distance": {"x": 1}, "alpha": 0},
        "survey": {"weight": {"column": "w", "bounds": [1, SURVEY_MAX_WEIGHT]},
                   "design": {"type": "srs"},
                   "margins": [{"name": "g", "columns": ["g"], "totals": {"a": 6, "b": 6}}],
                   "epsilon": {"binning": 0, "table": 0.5, "counts": 0},
                   # N = 12 against w_U = 3: a weight check this small needs a large ε_w
                   "weight_check_epsilon": 6.0},
    },
    MISSING: {
        "columns": [_column("g", ["a", "b"]), _allow("x", ["0", "1"]), _allow("z", ["p", "q"])],
        "faithfulness": {"exact": ["g", "x", "z"], "distance": {}, "alpha": 0},
    },
}


def audit_document(case: AuditCase) -> dict[str, Any]:
    """The tiny public spec of one case: its design, its criterion (id = the kind's name, ε 1
    unless set) and its companions."""
    criteria = [{"epsilon": AUDIT_EPSILON, "id": case.kind, **case.criterion},
                *({"epsilon": AUDIT_EPSILON, **c} for c in case.companions)]
    return design_document(case.design, criteria, title=f"Privacy audit design ({case.kind})")


def design_document(design_name: str, criteria: list[dict[str, Any]], *,
                    title: str = "Privacy audit design") -> dict[str, Any]:
    """A tiny public spec on one audit design with the given criteria (ε_gen 1): a fresh copy,
    so a caller that edits it never changes the shared design."""
    design = copy.deepcopy(_DESIGNS[design_name])
    names = [c["name"] for c in design["columns"]]
    doc: dict[str, Any] = {
        "spec_version": "1.0",
        "metadata": {"title": title, "owner": "workbench audits",
                     "description": "A tiny public design whose neighbouring datasets are a "
                                    "worst case for a sensitivity."},
        "schema": {"columns": design["columns"]},
        "transformations": {"columns": dict.fromkeys(names, _IDENTITY)},
        "constraints": {"raw": [], "synthetic": []},
        "criteria": criteria,
        "faithfulness": design["faithfulness"],
        "face_privacy": {"min_count": [1]},
        "generator": {"family": "independent", "search_space": [{"epsilon": [1.0]}]},
        "budget": {"neighbour": "replace_one"},
        "selection": {"gamma": 0, "max_iterations": None, "epsilon_0": 0},
    }
    if "survey" in design:
        doc["survey"] = design["survey"]
    return doc


__all__ = ["AUDIT_EPSILON", "BASE", "GXY", "MISSING", "MISSING_BASE", "SURVEY_MAX_WEIGHT",
           "AuditCase", "audit_document", "design_document", "replaced", "rows"]
