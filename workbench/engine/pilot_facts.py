"""The pilot's noisy tables as a public FACTS file (post-processing of DP outputs only).

The noisy column and pair tables are made consistent by one Private-PGM estimate
(``generators.mbi_model.estimate``: the L2 fit weighted by each table's σ, the noisy total
as n̂), which also clips and normalises them. From the estimate: each column's shares among
its declared values or bins, its missing rate among in-domain rows, its out-of-domain count,
and each pair's shares among rows with both columns declared — rounded to 0.01% (shares) or
a whole count, the precision the file states as each fact's rounding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal, estimate, model_marginal
from workbench.spec import Spec
from workbench.transform import Domain

#: Stated rounding of the pilot's shares and rates.
ROUNDING = 1e-4
#: Mirror-descent steps of the consistency estimate (it stops earlier when converged).
ITERS = 2000


def _axis(column: Any) -> dict[str, Any]:
    """A FACTS axis for a pilot column: its declared values or its bins."""
    if column.values is not None:
        return {"column": column.spec.name, "values": list(column.values)}
    bins = [[int(a), int(b)] if column.spec.type == "integer" else [a, b]
            for a, b in column.bins]
    return {"column": column.spec.name, "bins": bins}


def _shares(block: np.ndarray) -> list[Any]:
    """Non-negative shares summing to 1, rounded to the stated precision (uniform if empty)."""
    block = np.clip(np.asarray(block, dtype=np.float64), 0.0, None)
    total = block.sum()
    shares = block / total if total > 0 else np.full(block.shape, 1.0 / block.size)
    return np.round(np.round(shares / ROUNDING) * ROUNDING, 6).tolist()


def facts_document(spec: Spec, columns: Sequence[Any],
                   noisy: Mapping[tuple[str, ...], tuple[np.ndarray, float]], epsilon: float,
                   each: float, pairs: Sequence[tuple[str, str]]) -> tuple[dict, dict]:
    """(the FACTS document, a summary of DP values to print)."""
    domain = Domain(tuple(c.spec.name for c in columns), tuple(c.size for c in columns))
    measured = [NoisyMarginal(clique, table, sigma) for clique, (table, sigma) in noisy.items()]
    totals = [float(np.clip(noisy[(c.spec.name,)][0], 0, None).sum()) for c in columns]
    total = max(1.0, float(np.mean(totals)))
    model = estimate(domain, measured, total, ITERS)
    source = (f"DP pilot on dataset {spec.metadata.dataset!r} (workbench pilot, ε = {epsilon:g} "
              f"in all)")
    sigma = {clique: s for clique, (_, s) in noisy.items()}

    def noise(clique: tuple[str, ...]) -> dict[str, Any]:
        return {"mechanism": "discrete_laplace", "epsilon": each, "sensitivity": 2,
                "sigma_counts": sigma[clique],
                "post_processing": "made consistent (Private-PGM), clipped, normalised"}

    facts: list[dict[str, Any]] = []
    summary: dict[str, dict[str, Any]] = {"out_of_domain": {}, "forbidden_missing": {}}
    for c in columns:
        name = c.spec.name
        m = np.clip(model_marginal(model, (name,)), 0.0, None)
        obs, miss, ood = m[:c.observed], float(m[c.observed]), float(m[c.observed + 1])
        facts.append({"id": f"{name}_shares", "kind": "shares", "axes": [_axis(c)],
                      "shares": _shares(obs), "rounding": ROUNDING, "source": source,
                      "noise": noise((name,))})
        in_domain = obs.sum() + miss
        rate = round(miss / in_domain, 4) if in_domain > 0 else 0.0
        if c.spec.missing != "forbid":
            facts.append({"id": f"{name}_missing", "kind": "missing_rate", "column": name,
                          "value": min(rate, 0.9999), "rounding": ROUNDING, "source": source,
                          "noise": noise((name,))})
        else:
            summary["forbidden_missing"][name] = round(miss)
        facts.append({"id": f"{name}_out_of_domain", "kind": "out_of_domain", "column": name,
                      "count": round(ood), "rounding": 1, "source": source,
                      "noise": noise((name,))})
        summary["out_of_domain"][name] = (round(ood), sigma[(name,)])
    by_name = {c.spec.name: c for c in columns}
    for a, b in pairs:
        block = np.clip(model_marginal(model, (a, b)), 0.0, None)
        block = block[:by_name[a].observed, :by_name[b].observed]
        facts.append({"id": f"{a}_by_{b}", "kind": "shares",
                      "axes": [_axis(by_name[a]), _axis(by_name[b])], "shares": _shares(block),
                      "rounding": ROUNDING, "source": source, "noise": noise((a, b))})
    doc = {
        "format": "workbench.facts",
        "format_version": 1,
        "title": f"DP pilot of dataset {spec.metadata.dataset!r}",
        "about": ("Every number is differentially private (workbench pilot): noisy count tables "
                  "made consistent, clipped and normalised. No exact count, row or label of the "
                  "confidential file is in it; out-of-domain cells are counted, never named."),
        "pilot": {"dataset": spec.metadata.dataset, "epsilon": epsilon,
                  "epsilon_per_table": each, "tables": len(noisy),
                  "pairs": [f"{a}:{b}" for a, b in pairs], "neighbour": spec.budget.neighbour,
                  "sensitivity": "Δ₁ = 2 per table (each row in one cell of each table)",
                  "spec_sha256": spec.sha256},
        "facts": facts,
    }
    return doc, summary
