"""A public design that is too large to fit: one 2-way criterion over many wide columns."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "examples" / "adult_own_data.json"


def wide_doc(columns: int = 10, bins: int = 30) -> dict:
    """Issue 36's intractable design: ``columns`` integer columns of ``bins`` codes each, one
    tv_marginals criterion over every pair, the workload family (one table of bins^columns)."""
    doc = json.loads(OWN.read_text(encoding="utf-8"))
    names = [f"x{i}" for i in range(columns)]
    doc["schema"]["columns"] = [{"name": n, "type": "integer", "missing": "forbid",
                                 "out_of_domain": "error", "bounds": [0, 10 * bins]}
                                for n in names]
    edges = list(range(10, 10 * bins, 10))  # bins - 1 edges, open below and above: bins codes
    doc["transformations"]["columns"] = {
        n: {"alternatives": [{"name": "bins", "kind": "bins", "edges": edges}]} for n in names}
    doc["criteria"] = [{"id": "pairs", "kind": "tv_marginals", "threshold": 0.1,
                        "epsilon": 0.1, "bounds": [0, 1], "params": {"way": 2}}]
    doc["budget"].pop("epsilon_criteria", None)
    doc["faithfulness"] = {"exact": names[1:], "distance": {names[0]: 1}, "alpha": 1}
    doc["generator"] = {"family": "workload", "search_space": [{"algorithm": ["fixed"]}]}
    doc["metadata"]["dataset"] = "test-wide-design"
    doc.pop("cleaning_counts", None)
    doc["constraints"] = {"raw": [], "synthetic": []}
    return doc
