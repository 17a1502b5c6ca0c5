"""The rows each domain policy and raw cleaning rule removed or recoded, as the bundle states them.

The exact counts are confidential (``tests/test_engine.py`` checks they never leave a run).
A spec releases them only by declaring ``cleaning_counts``:

* ``release: dp`` — one discrete-Laplace vector through the run's ``PrivacyContext``, before
  the selection loop, charged ε = ``cleaning_counts.epsilon`` by every run (the budget plan's
  ε_cleaning, so ε_total, the ledger and ``verify`` agree); clipped at 0 (post-processing);
* ``release: public`` — the exact counts, because the spec's authors declare them public (e.g.
  the agency publishes them anyway); the bundle says so and spends no ε.

**The vector.** One count per column whose ``out_of_domain`` policy is not ``error`` (rows it
dropped, cells it recoded to missing, or cells it clipped; every row is tested in every such
column), then one per raw rule (rows it removed, each row counted for the first rule in spec
order that rejects it), in spec order: K = p + r counts for p such columns and r rules.

**Sensitivity (replace-one).** Each count is a sum over rows of an indicator that depends on
that row alone, so replacing one row x by x′ changes every count by at most 1: Δ₁ ≤ K. A row
adds to at most m = p + [r > 0] counts (any of the p column counts, and at most one rule
count), so the change v(x′) − v(x) has L1 norm ≤ |v(x)|₁ + |v(x′)|₁ ≤ 2m. Hence
Δ₁ = min(K, 2m) (``tests/test_pilot.py`` checks it on neighbouring datasets).

**Which relation** (``metadata.n_policy``, :mod:`workbench.specification.n_policy`). Under ``dp``
the
privacy unit is a raw row and the argument above is the whole proof (n̂ is released
separately, Δ = 1). Under ``public`` (the default) the unit is a record of the cleaned table,
whose n is published; a raw row that crosses a rule changes that published n, so such a move
is not protected by anything, and the argument is restated for the neighbours the relation
does protect: raw files differing in one row whose two versions are both kept or both
removed (the cleaned n the same). Those are a subset of raw replace-one, so Δ₁ = min(K, 2m)
still holds; what the noise hides is how the public removed total (raw size − n) splits
across the rules and policies, never the total (the datasheet says so, from the policy).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.privacy import PrivacyContext
from workbench.specification import Spec

PURPOSE = "cleaning counts"
FILE = "cleaning.json"
WHAT = {"drop": "rows removed", "to_missing": "cells recoded to missing",
        "clip": "cells clipped"}


@dataclass
class CleaningTally:
    """What one read of the data removed or recoded. CONFIDENTIAL: never print or log it."""

    policies: dict[str, int] = field(default_factory=dict)
    rules: dict[str, int] = field(default_factory=dict)


def entries(spec: Spec) -> list[dict[str, str]]:
    """The counts' public description, in the fixed order of the vector (module doc)."""
    out = [{"column": c.name, "policy": c.out_of_domain, "what": WHAT[c.out_of_domain]}
           for c in spec.columns if c.out_of_domain != "error"]
    out += [{"rule": r.name, "what": "rows removed"} for r in spec.constraints.raw]
    return out


def sensitivity(spec: Spec) -> int:
    """Δ₁ = min(K, 2m) of the count vector under replace-one (derivation in the module doc)."""
    p = sum(1 for c in spec.columns if c.out_of_domain != "error")
    r = len(spec.constraints.raw)
    return max(1, min(p + r, 2 * (p + (1 if r else 0))))


def exact_vector(spec: Spec, tally: CleaningTally) -> np.ndarray:
    """The confidential counts in the vector's order."""
    return np.asarray([tally.policies.get(e["column"], 0) if "column" in e
                       else tally.rules.get(e["rule"], 0) for e in entries(spec)],
                      dtype=np.int64)


def release(spec: Spec, tally: CleaningTally, ctx: PrivacyContext) -> dict[str, Any] | None:
    """The bundle's ``cleaning.json`` (None when the spec keeps the counts inside the run)."""
    declared = spec.cleaning_counts
    if declared is None:
        return None
    rows = entries(spec)
    exact = exact_vector(spec, tally)
    doc: dict[str, Any] = {"release": declared.release}
    if declared.private:
        delta = sensitivity(spec)
        noisy = ctx.discrete_laplace(exact, sensitivity=delta, epsilon=declared.epsilon,
                                     purpose=PURPOSE)
        values = np.maximum(np.asarray(noisy.value, dtype=np.int64), 0)  # post-processing
        doc |= {"epsilon": declared.epsilon, "mechanism": "discrete_laplace",
                "sensitivity": delta, "sigma": noisy.record.sigma,
                "how": "discrete Laplace, replace-one Δ₁ = min(K, 2m), clipped at 0"}
    else:
        values = exact
        doc["how"] = ("exact counts, declared public by the spec (cleaning_counts.release: "
                      "public); not differentially private")
    doc["counts"] = [{**e, "count": int(v)} for e, v in zip(rows, values, strict=True)]
    return doc



def is_cleaning(entry: dict[str, Any]) -> bool:
    """A ledger measurement of the DP cleaning counts."""
    return entry.get("event") == "measurement" and entry.get("purpose") == PURPOSE


def verify(path: Path, spec: Spec, ledger: list[dict[str, Any]] | None) -> str:
    """``workbench verify``'s check of ``cleaning.json`` against the spec and the ledger;
    the problem in words, or '' when it holds."""
    declared = spec.cleaning_counts
    lines = [e for e in ledger or [] if is_cleaning(e)]
    if declared is None:
        return "the bundle states cleaning counts the spec does not declare"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        counts = doc["counts"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return f"{FILE} is missing or not readable"
    described = [{k: v for k, v in c.items() if k != "count"} for c in counts]
    if described != entries(spec) or doc.get("release") != declared.release:
        return f"{FILE} does not list the spec's policies and rules"
    if any(not isinstance(c.get("count"), int) or c["count"] < 0 for c in counts):
        return "a count is not a whole number >= 0"
    if not declared.private:
        return "" if not lines else "declared-public counts must spend no ε"
    if len(lines) != 1:
        return f"the ledger holds {len(lines)} cleaning-count measurements, not 1"
    line = lines[0]
    if abs(float(line.get("epsilon", -1)) - declared.epsilon) > 1e-9 or \
            float(line.get("sensitivity", -1)) != sensitivity(spec):
        return "the ledger's ε or Δ of the cleaning counts differs from the spec's"
    return ""


def verified_words(spec: Spec) -> str:
    """What a passing check says."""
    declared = spec.cleaning_counts
    if declared is not None and declared.private:
        return (f"DP counts, ε = {declared.epsilon:g}, Δ₁ = {sensitivity(spec)} in the ledger")
    return "exact counts declared public by the spec (no ε)"
