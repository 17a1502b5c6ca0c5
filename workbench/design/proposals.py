"""The design assistant's association proposals (issue 36): a criterion for every declared
exposure–outcome pair that no criterion sees.

A maximum share error cannot see a relation inside rare cells, so a release may pass every
criterion with a declared association reversed (:mod:`workbench.dryrun.reversal`). For each pair
of ``metadata.associations`` that no relative-risk, odds-ratio or risk-difference criterion
covers, ``workbench design`` adds a ``relative_risk`` criterion (``risk_difference`` when the
public proxy at n has no outcome among the exposed or the unexposed, so RR is 0 or undefined
there) whose threshold is half the proxy's |log RR| (|RD|): a release that loses the association
(error |log RR|) or reverses it (2|log RR|) fails — but never below the ideal generator's floor
at n (:mod:`workbench.dryrun.floors`: mean + 2 SD, so it is not flagged infeasible) in any
distinct set of transforms (``trial.cells.transform_sets``: the floor depends on the cells; the
2×2 table does not once each bin lies on one side of the levels, so it is read in the design's
cells, ``trial.cells.design_codec``). Its ε is then set by the assistant's rule like any other
criterion's. Public proxy only; the criterion's own DP release is the kind's (Δ derived in
``kinds._association``).

``metadata.intended_uses`` sentences naming two schema columns (a token match) are reported as
candidates to declare; their levels are never guessed.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.criteria.associations import PAIR_KINDS, measure, yes_codes
from workbench.design.rules import round_up
from workbench.dryrun.floors import feasibility_floors
from workbench.evidence.core import Evidence
from workbench.evidence.population import size_seed
from workbench.specification import Spec
from workbench.trial import bind
from workbench.trial.cells import design_configuration, transform_sets
from workbench.validation import build_spec

PAIR_KEYS = ("exposure", "exposed", "outcome", "positive")
#: ε a proposed criterion starts from, when the spec has no criterion ε to copy (the
#: assistant's rule σ ≤ margin/K replaces it)
START_EPSILON = 0.1
SHORT = {"relative_risk": "rr", "risk_difference": "rd"}


@dataclass(frozen=True)
class Proposals:
    """The spec with the proposed criteria added, and what to print about them."""

    spec: Spec
    added: tuple[str, ...]
    lines: tuple[str, ...]


def uncovered_pairs(spec: Spec) -> list[dict[str, Any]]:
    """The pairs of ``metadata.associations`` no 2×2 association criterion covers."""
    covered = {(str(c.params.get("exposure")), str(c.params.get("outcome")))
               for c in spec.criteria if c.kind in PAIR_KINDS}
    out = []
    for pair in spec.metadata.associations:
        key = (str(pair["exposure"]), str(pair["outcome"]))
        if key not in covered:
            covered.add(key)
            out.append({k: pair[k] for k in PAIR_KEYS})
    return out


def intended_use_lines(spec: Spec) -> list[str]:
    """For each intended use naming two or more schema columns (their names as tokens, or
    with spaces for underscores), the undeclared pairs it could declare."""
    declared = {frozenset((str(p["exposure"]), str(p["outcome"])))
                for p in spec.metadata.associations}
    lines, seen = [], set(declared)
    for text in spec.metadata.intended_uses:
        low = str(text).lower()
        tokens = set(re.findall(r"[a-z0-9_]+", low))
        named = [c for c in spec.column_names
                 if c.lower() in tokens or (("_" in c) and re.search(
                     r"\b" + re.escape(c.lower().replace("_", " ")) + r"\b", low))]
        for a, b in itertools.combinations(named, 2):
            if frozenset((a, b)) in seen:
                continue
            seen.add(frozenset((a, b)))
            lines.append(f"metadata.intended_uses names the columns {a!r} and {b!r}: they "
                         "could be declared as an association in metadata.associations "
                         "({exposure, exposed, outcome, positive}); the assistant does not "
                         "guess their levels")
    return lines


def _table(codes: np.ndarray, trial: Any, pair: dict[str, Any]) -> np.ndarray:
    """The pair's unsmoothed 2×2 [exposed, unexposed] × [yes, no] on public proxy codes."""
    table = trial.table
    e = yes_codes(table, str(pair["exposure"]), pair["exposed"])[
        codes[:, table.names.index(str(pair["exposure"]))]]
    o = yes_codes(table, str(pair["outcome"]), pair["positive"])[
        codes[:, table.names.index(str(pair["outcome"]))]]
    keep = (e >= 0) & (o >= 0)
    return np.bincount((1 - e[keep]) * 2 + (1 - o[keep]), minlength=4).reshape(2, 2)


def _unique_id(base: str, taken: set[str]) -> str:
    """``base`` (made of letters, digits and underscores), suffixed until unused."""
    base = re.sub(r"[^A-Za-z0-9_]+", "_", base)
    out, k = base, 2
    while out in taken:
        out, k = f"{base}_{k}", k + 1
    taken.add(out)
    return out


def propose_associations(spec: Spec, evidence: Evidence, n: int | None = None, seed: int = 0,
                         draws: int = 3) -> Proposals:
    """Add a criterion for every uncovered declared pair (module doc) at n (None: the low end
    of ``schema.expected_n``, else the proxy's size, as ``design`` does)."""
    lines = intended_use_lines(spec)
    pairs = uncovered_pairs(spec)
    if not pairs:
        return Proposals(spec, (), tuple(lines))
    if n is None:
        n = spec.expected_n.low if spec.expected_n is not None else len(evidence.frame)
    trial = bind(spec, design_configuration(spec))
    codes = trial.encode(evidence.population(int(n), size_seed(seed, int(n))))
    eps = [c.epsilon for c in spec.criteria if c.epsilon > 0]
    start = float(min(eps)) if eps else START_EPSILON
    doc = spec.to_document()
    taken = {c.id for c in spec.criteria}
    new: list[tuple[dict[str, Any], float, str]] = []
    for pair in pairs:
        words = f"{pair['exposure']} → {pair['outcome']}"
        t = _table(codes, trial, pair)
        if min(t.sum(axis=1)) == 0 or min(t.sum(axis=0)) == 0:
            lines.append(f"declared association {words}: the proxy at n = {n:,} has no exposed "
                         "or no unexposed rows, or no outcome either way; nothing to protect, "
                         "no criterion proposed")
            continue
        kind = "relative_risk" if min(t[:, 0]) > 0 else "risk_difference"
        value = abs(measure(t, kind, 0.0))
        cid = _unique_id(f"{SHORT[kind]}_{pair['exposure']}_{pair['outcome']}", taken)
        new.append(({"id": cid, "kind": kind, "threshold": round_up(value / 2),
                     "epsilon": start, "params": dict(pair)}, value, words))
    if not new:
        return Proposals(spec, (), tuple(lines))
    only = {**doc, "criteria": [c for c, _, _ in new]}
    only.get("selection", {}).pop("forecast", None)
    drafted = build_spec(only)
    floors = [feasibility_floors(drafted, evidence, config, int(n), max(draws, 2), seed).by_id()
              for config in transform_sets(drafted)]
    for criterion, value, words in new:
        need, f = max(((g.mean + 2 * (0.0 if math.isnan(g.sd) else g.sd), g)
                       for g in (table[criterion["id"]] for table in floors)),
                      key=lambda pair: pair[0])
        unit = "|log RR|" if criterion["kind"] == "relative_risk" else "|RD|"
        why = f"half the proxy's {unit} {value:.3g} at n = {n:,}"
        if need > criterion["threshold"]:
            criterion["threshold"] = round_up(need)
            why = (f"the ideal generator's floor {f.mean:.3g} + 2 SD at n = {n:,} (above half "
                   f"the proxy's {unit} {value:.3g})")
        lines.append(f"proposed criterion {criterion['id']!r} ({criterion['kind']}, threshold "
                     f"{criterion['threshold']:g}: {why}) for the declared association "
                     f"{words}: no criterion sees its direction")
        if criterion["threshold"] >= 2 * value:
            lines.append(f"  note: at n = {n:,} even a reversed {words} stays within its "
                         "threshold: the proxy's association is too weak to protect at this n")
        elif criterion["threshold"] >= value:
            lines.append(f"  note: at n = {n:,} it sees a reversal of {words} but not the loss "
                         "of the association")
    doc["criteria"] = list(doc["criteria"]) + [c for c, _, _ in new]
    doc.get("selection", {}).pop("forecast", None)
    return Proposals(build_spec(doc), tuple(c["id"] for c, _, _ in new), tuple(lines))


__all__ = ["Proposals", "intended_use_lines", "propose_associations", "uncovered_pairs"]
