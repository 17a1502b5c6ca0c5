"""Write examples/adult_survey.json and its frozen copy: UCI Adult as a weighted survey.

The public margins (sex × race, age band) are the Adult file's OWN weighted totals (Σ fnlwgt
per cell). In this example they stand in for published census totals: a statistics office
would take them from its population estimates, never from the sample it releases.
Usage: python scripts/build_adult_survey.py [ADULT_CSV]
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.validation import build_spec, save_spec  # noqa: E402

ADULT = REPO.parent / "shared" / "data" / "adult" / "adult_train.csv.gz"
RACES = ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]
AGE_EDGES = [25, 35, 45, 55, 65]
RELATIONSHIPS = ["Husband", "Not-in-family", "Own-child", "Unmarried", "Wife",
                 "Other-relative"]


def _column(name: str, kind: str, desc: str, **extra: object) -> dict:
    return {"name": name, "type": kind, **extra, "missing": "forbid", "out_of_domain": "drop",
            "description": desc}


def base_document() -> dict:
    """The design without its survey totals."""
    return {
        "spec_version": "1.0",
        "metadata": {
            "title": "UCI Adult (1994 CPS extract) as a weighted survey: DP raking and release",
            "owner": "Release Workbench example (issue 17)",
            "description": (
                "Adult treated as a weighted survey sample with fnlwgt as the base weight. The "
                "release carries a weight column raked to public margins of sex x race and age "
                "band. THE MARGINS ARE THE DATA'S OWN WEIGHTED TOTALS (sum of fnlwgt per cell, "
                "scripts/build_adult_survey.py): here they stand in for published census "
                "totals. The sampling fraction 0.00017 (32,561 of about 190 million adults) is "
                "a stand-in too; the amplified epsilon it gives is a secondary figure, never "
                "charged."),
            "intended_uses": ["weighted tables of sex, race, age band, relationship and "
                              "income class"],
            "unintended_uses": ["inference about individuals", "re-identification or linkage"],
            "privacy_unit": "one person record of the survey sample",
            "n_policy": "The number of records after cleaning is treated as public.",
            "dataset": "uci-adult-train",
        },
        "schema": {"columns": [
            _column("age", "integer", "Age in years", bounds=[17, 90]),
            _column("sex", "categorical", "Sex", domain=["Male", "Female"]),
            _column("race", "categorical", "Race", domain=RACES),
            _column("relationship", "categorical", "Relationship in the household",
                    domain=RELATIONSHIPS),
            _column("Y", "categorical", "Income class", domain=["<=50K", ">50K"]),
        ]},
        "transformations": {
            "bin_to_number": {"single": "value", "bounded": "midpoint", "open": "edge"},
            "columns": {
                "age": {"alternatives": [{"name": "bands", "kind": "bins",
                                          "edges": AGE_EDGES}]},
                "sex": {"alternatives": [{"name": "sex", "kind": "identity"}]},
                "race": {"alternatives": [{"name": "race", "kind": "identity"}]},
                "relationship": {"alternatives": [{"name": "relationship",
                                                   "kind": "identity"}]},
                "Y": {"alternatives": [{"name": "income", "kind": "identity"}]},
            },
        },
        "constraints": {"raw": [], "synthetic": [], "partial_bins": "keep"},
        "criteria": [
            {"id": "marginals", "kind": "max_marginal_error", "threshold": 0.05,
             "epsilon": 0.05, "bounds": [0, 1], "params": {"max_way": 2},
             "description": "Max 1- and 2-way marginal error (unweighted), share of n"},
            {"id": "weighted_sex_income", "kind": "weighted_marginal_error", "threshold": 0.05,
             "epsilon": 0.05, "bounds": [0, 1], "params": {"columns": ["sex", "Y"]},
             "description": "Max gap of the weighted sex x income table, share of the "
                            "population (survey weights vs the release's calibrated weights)"},
            {"id": "weighted_mean_age", "kind": "weighted_mean", "threshold": 2.0,
             "epsilon": 0.05, "bounds": [17, 90], "params": {"target": "age"},
             "description": "Gap of the weighted mean age (band midpoints), in years"},
        ],
        "faithfulness": {"exact": ["sex", "race", "relationship", "Y"], "distance": {"age": 1},
                         "alpha": 1},
        "face_privacy": {"min_count": [1]},
        "generator": {"family": "workload", "search_space": [{"algorithm": ["fixed"]}]},
        "budget": {"epsilon_generator": 1.0, "epsilon_criteria": 0.15,
                   "neighbour": "replace_one"},
        "selection": {"gamma": 0, "max_iterations": 1, "epsilon_0": 0},
    }


def survey_section(frame: pd.DataFrame, age_labels: list[str]) -> dict:
    """The survey section with the data's own weighted totals (stand-ins for census totals)."""
    w = frame["fnlwgt"]
    sex_race = {f"{s}|{r}": float(w[(frame["sex"] == s) & (frame["race"] == r)].sum())
                for s in ("Male", "Female") for r in RACES}
    small = ("Amer-Indian-Eskimo", "Other")
    merged = [[f"{s}|{r}"] for s in ("Male", "Female") for r in RACES if r not in small]
    merged += [[f"{s}|{r}" for r in small] for s in ("Male", "Female")]
    age = {lab: float(w[frame["age_band"] == lab].sum()) for lab in age_labels}
    return {
        "weight": {"column": "fnlwgt", "bounds": [10000, 1500000]},
        "design": {"type": "srs", "sampling_fraction": 0.00017},
        "margins": [
            {"name": "sex_race", "columns": ["sex", "race"], "totals": sex_race,
             "binnings": {"separate": [[c] for c in sex_race], "small_races_merged": merged},
             "description": "Adult's own weighted totals, standing in for census totals"},
            {"name": "age_band", "columns": ["age"], "totals": age,
             "binnings": {"separate": [[a] for a in age_labels],
                          "oldest_merged": [[a] for a in age_labels[:-2]] + [age_labels[-2:]]},
             "description": "Adult's own weighted totals, standing in for census totals"},
        ],
        "weighted_counts": [{"id": "high_income", "margin": "age_band", "column": "Y",
                             "value": ">50K"}],
        "epsilon": {"binning": 0.1, "table": 0.5, "counts": 0.4},
        "gamma": 4,
        "margin_tolerance": 0.01,
    }


def document(adult: Path = ADULT) -> dict:
    """The whole example design."""
    doc = base_document()
    plain = copy.deepcopy(doc)  # weighted criteria need the survey section: leave them out
    plain["criteria"] = plain["criteria"][:1]
    plain["budget"]["epsilon_criteria"] = plain["criteria"][0]["epsilon"]
    spec = build_spec(plain)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    frame = pd.read_csv(adult, skipinitialspace=True,
                        usecols=["age", "sex", "race", "fnlwgt"])
    labels = table.codec("age").decode(table.codec("age").encode(frame["age"]))
    frame["age_band"] = list(labels)
    out = copy.deepcopy(doc)
    out["survey"] = survey_section(frame, [str(x) for x in table.codec("age").labels])
    return out


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else ADULT
    doc = document(source)
    draft = REPO / "examples" / "adult_survey.json"
    draft.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    frozen = REPO / "examples" / "adult_survey.frozen.json"
    print(f"{draft.relative_to(REPO)}; {frozen.relative_to(REPO)}: sha256 "
          f"{save_spec(doc, frozen)}")
