"""Write examples/adult_own_data.json: the "own data" draft of issue 27 on UCI Adult's columns.

A statistician's first draft for a file the project has no proxy for: the columns and domains
(from ``adult.names``, public documentation, through ``examples/adult_missing.json``), unknown
labels in the incomplete columns recoded to missing (``out_of_domain: to_missing``), the
recoded and removed counts released with DP (``cleaning_counts``, ε 0.2: Δ₁ = 3 for its
three recoding columns, σ ≈ 21 cells), and criteria whose ε
``workbench design`` derives. Run once; ``workbench design`` and ``workbench freeze`` do the
rest (notebooks/06_your_own_data.ipynb).
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE = REPO / "examples" / "adult_missing.json"
OUT = REPO / "examples" / "adult_own_data.json"
KEEP = ("age", "workclass", "education", "marital_status", "occupation", "relationship", "race",
        "sex", "hours_per_week", "native_country", "Y")


def document() -> dict:
    """The draft."""
    base = json.loads(BASE.read_text(encoding="utf-8"))
    columns = [c for c in base["schema"]["columns"] if c["name"] in KEEP]
    for c in columns:
        if c["missing"] != "forbid":
            c["out_of_domain"] = "to_missing"
    transforms = {k: v for k, v in base["transformations"]["columns"].items() if k in KEEP}
    return {
        "spec_version": "1.0",
        "metadata": {
            "title": "UCI Adult extract: your own data, from published tables to a release",
            "owner": "Release Workbench examples (issue 27)",
            "description": ("A census-style extract the workbench has no shipped proxy for. "
                            "The proxy is built from published tables (data_public/"
                            "adult_facts.json) by `workbench proxy build`; unknown labels in "
                            "the incomplete columns become missing, and the bundle states "
                            "how many cells that recoded, with DP."),
            "dataset": "uci-adult-own-data",
            "intended_uses": ["1-way and 2-way tables of the released columns"],
            "unintended_uses": ["anything about individual people"],
        },
        "schema": {"expected_n": [30000, 33000], "file_format": base["schema"]["file_format"],
                   "columns": columns},
        "transformations": {"bin_to_number": base["transformations"]["bin_to_number"],
                            "columns": transforms},
        "constraints": {"raw": [], "synthetic": []},
        "criteria": [
            {"id": "one_way", "kind": "observed_marginal_error", "threshold": 0.05,
             "epsilon": 0.05, "bounds": [0, 1], "params": {"way": 1, "columns": None},
             "description": "1-way shares over observed values within 5 points"},
            {"id": "two_way", "kind": "observed_marginal_error", "threshold": 0.03,
             "epsilon": 0.05, "bounds": [0, 1],
             "params": {"way": 2, "columns": ["age", "education", "sex", "hours_per_week", "Y"]},
             "description": "2-way shares over observed values, main columns, within 3 points "
                            "(an independent-marginals release is about 4.6 points off: "
                            "the criterion protects the relations)"},
            {"id": "missing_rates", "kind": "missing_rate", "threshold": 0.015, "epsilon": 0.05,
             "bounds": [0, 1], "params": {"columns": ["workclass", "occupation",
                                                      "native_country"]},
             "description": "each incomplete column's missing rate within 1.5 points"},
        ],
        "faithfulness": {"exact": [c for c in KEEP if c not in ("age", "hours_per_week")],
                         "distance": {"age": 1, "hours_per_week": 1}, "alpha": 1},
        "face_privacy": {"min_count": [1]},
        "generator": {"family": "privbayes",
                      "search_space": [{"theta": [4.0], "missing_strategy": ["partial"]}]},
        "budget": {"epsilon_generator": 2.0, "epsilon_criteria": 0.15,
                   "neighbour": "replace_one", "epsilon_lifetime_max": 6.0},
        "selection": {"gamma": 0, "max_iterations": 1, "epsilon_0": 0},
        "cleaning_counts": {"release": "dp", "epsilon": 0.2},
    }


def main() -> None:
    OUT.write_text(json.dumps(document(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
