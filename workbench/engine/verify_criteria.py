"""``verify``'s criteria check: criteria.json lists every spec criterion, all passed, each
decision re-made by its kind from the row's public fields, ε as in the spec and the ledger."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from workbench.specification import Spec

_TOL = 1e-9


def criteria_problem(root: Path, spec: Spec, ledger: list[dict[str, Any]] | None) -> str | None:
    """What is wrong with criteria.json (every spec criterion, all passed, ε matching the
    ledger), or None."""
    try:
        results = json.loads((root / "criteria.json").read_text(encoding="utf-8"))["criteria"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return "criteria.json is not readable"
    ids = [r.get("id") for r in results]
    problems = []
    if ids != [c.id for c in spec.criteria]:
        problems.append("the criteria differ from the spec's")
    if not all(r.get("passed") for r in results):
        problems.append("a released candidate must pass every criterion")
    by_id = {c.id: c for c in spec.criteria}
    problems += _decisions(results, by_id)
    for r in results:
        c = by_id.get(r.get("id"))
        if c is not None and not math.isclose(float(r.get("epsilon", -1)), c.epsilon,
                                              abs_tol=_TOL) and r.get("mechanism") != "none":
            problems.append(f"criterion {c.id!r}: ε differs from the spec")
    spent = math.fsum(float(e["epsilon"]) for e in ledger or []
                      if e.get("event") == "measurement" and e.get("stage") == "loop"
                      and str(e.get("purpose", "")).startswith("criterion "))
    claimed = math.fsum(float(r["epsilon"]) for r in results
                        if r.get("mechanism") != "none" and r.get("stage") == "loop")
    if ledger is not None and not math.isclose(spent, claimed, abs_tol=_TOL):
        problems.append("criteria ε do not add up to the ledger's criterion measurements")
    return "; ".join(problems) or None


def _decisions(results: list[dict[str, Any]], by_id: dict[str, Any]) -> list[str]:
    """Every row's decision re-made by its kind from public fields: the effective threshold
    from T, Δ and the row's details, and the pass test on the DP value."""
    from workbench.criteria import kinds

    out = []
    for r in results:
        c = by_id.get(r.get("id"))
        if c is None:
            continue
        try:
            kind = kinds.get(c.kind)
            delta = r.get("sensitivity") if r.get("mechanism") != "none" else None
            t_eff = kind.effective_threshold(c, delta, r.get("details") or {})
            recorded = float(r.get("effective_threshold", c.threshold))
            decided = kind.passes(float(r["value"]), t_eff)
        except (ValueError, KeyError, TypeError):
            out.append(f"criterion {c.id!r}: its decision cannot be re-made from the row")
            continue
        if not math.isclose(recorded, t_eff, rel_tol=1e-9, abs_tol=_TOL):
            out.append(f"criterion {c.id!r}: the effective threshold is not the kind's")
        elif decided is not bool(r.get("passed")):
            out.append(f"criterion {c.id!r}: 'passed' is not the kind's decision on the value")
    return out
