"""The pilot's noisy tables as a public FACTS file (post-processing of DP outputs only).

The proxy a FACTS file drives holds declared values only (and missing values where the spec
allows them), so the facts describe that population. Each noisy table is cut to its kept
cells — a column's declared values or bins, plus its missing cell when the column may be
missing (with its out-of-domain cell folded in when the policy is ``to_missing``: the run
will read those cells as missing) — and the cut tables are made consistent by one
Private-PGM estimate (``generators.mbi_model.estimate``: the L2 fit weighted by each table's
σ, the noisy in-domain total as n̂), which also clips and normalises them. Without this cut
the noise in the few out-of-domain and forbidden-missing cells would leak into every share.

Written from the estimate: each column's shares among its declared values or bins and its
missing rate, each pair's shares among rows with both declared, rounded to 0.1% (:data:`ROUNDING`,
the rounding each fact states; the noise is larger still, and each fact records its σ).
The out-of-domain count of every column, and the missing count of a ``forbid`` column, come
from the noisy 1-way table's own cell, clipped at 0 and rounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal, estimate, model_marginal
from workbench.specification import Spec
from workbench.transform import Domain

#: Stated rounding of the pilot's shares and rates.
ROUNDING = 1e-3
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


def _kept(column: Any, table: np.ndarray, axis: int) -> np.ndarray:
    """A noisy table cut to the column's kept cells along ``axis`` (module doc)."""
    obs = np.take(table, range(column.observed), axis=axis)
    if column.spec.missing == "forbid":
        return obs
    missing = np.take(table, [column.observed], axis=axis)
    if column.spec.out_of_domain == "to_missing":
        missing = missing + np.take(table, [column.observed + 1], axis=axis)
    return np.concatenate([obs, missing], axis=axis)


def facts_document(spec: Spec, columns: Sequence[Any],
                   noisy: Mapping[tuple[str, ...], tuple[np.ndarray, float]], epsilon: float,
                   each: float, pairs: Sequence[tuple[str, str]]) -> tuple[dict, dict]:
    """(the FACTS document, a summary of DP values to print)."""
    by_name = {c.spec.name: c for c in columns}
    kept: dict[tuple[str, ...], np.ndarray] = {}
    for clique, (table, _) in noisy.items():
        for k, name in enumerate(clique):
            table = _kept(by_name[name], table, k)
        kept[clique] = table
    sizes = {name: kept[(name,)].size for name in by_name}
    domain = Domain(tuple(sizes), tuple(sizes.values()))
    # a folded missing cell sums two noisy cells: its σ is √2 times a cell's (the fit's weights
    # are per table, so the table keeps the one-cell σ, a slight over-weighting of that cell)
    measured = [NoisyMarginal(c, kept[c], noisy[c][1]) for c in noisy]
    total = max(1.0, float(np.mean([np.clip(kept[(n,)], 0, None).sum() for n in sizes])))
    model = estimate(domain, measured, total, ITERS)
    source = (f"DP pilot on dataset {spec.metadata.dataset!r} (workbench pilot, ε = {epsilon:g} "
              f"in all)")

    def noise(clique: tuple[str, ...]) -> dict[str, Any]:
        return {"mechanism": "discrete_laplace", "epsilon": each, "sensitivity": 2,
                "sigma_counts": noisy[clique][1],
                "post_processing": "cut to declared cells, made consistent (Private-PGM), "
                                   "clipped, normalised"}

    facts: list[dict[str, Any]] = []
    summary: dict[str, dict[str, Any]] = {"out_of_domain": {}, "forbidden_missing": {}}
    for c in columns:
        name, sigma = c.spec.name, noisy[(c.spec.name,)][1]
        m = np.clip(model_marginal(model, (name,)), 0.0, None)
        raw = np.clip(noisy[(name,)][0], 0.0, None)
        facts.append({"id": f"{name}_shares", "kind": "shares", "axes": [_axis(c)],
                      "shares": _shares(m[:c.observed]), "rounding": ROUNDING, "source": source,
                      "noise": noise((name,))})
        if c.spec.missing != "forbid":
            rate = float(m[c.observed] / m.sum()) if m.sum() > 0 else 0.0
            facts.append({"id": f"{name}_missing", "kind": "missing_rate", "column": name,
                          "value": min(round(rate, 3), 0.999), "rounding": ROUNDING,
                          "source": source, "noise": noise((name,))})
        else:
            summary["forbidden_missing"][name] = (round(float(raw[c.observed])), sigma)
        ood = round(float(raw[c.observed + 1]))
        facts.append({"id": f"{name}_out_of_domain", "kind": "out_of_domain", "column": name,
                      "count": ood, "rounding": 1, "source": source, "noise": noise((name,))})
        summary["out_of_domain"][name] = (ood, sigma)
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
                  "cut to the declared cells, made consistent, clipped and normalised. No exact "
                  "count, row or label of the confidential file is in it; out-of-domain cells "
                  "are counted, never named."),
        "pilot": {"dataset": spec.metadata.dataset, "epsilon": epsilon,
                  "epsilon_per_table": each, "tables": len(noisy),
                  "pairs": [f"{a}:{b}" for a, b in pairs], "neighbour": spec.budget.neighbour,
                  "sensitivity": "Δ₁ = 2 per table (each row in one cell of each table)",
                  "spec_sha256": spec.sha256},
        "facts": facts,
    }
    return doc, summary
