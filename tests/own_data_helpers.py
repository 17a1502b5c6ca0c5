"""Small public designs and files for the own-data tests (issue 27): a few Adult columns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OWN = ROOT / "examples" / "adult_own_data.json"
KEEP = ("age", "workclass", "sex", "Y")


def small_doc(keep: tuple[str, ...] = KEEP) -> dict:
    """``examples/adult_own_data.json`` cut to ``keep``, lenient thresholds, a fresh dataset."""
    doc = json.loads(OWN.read_text(encoding="utf-8"))
    doc["schema"]["columns"] = [c for c in doc["schema"]["columns"] if c["name"] in keep]
    doc["transformations"]["columns"] = {k: v for k, v in
                                         doc["transformations"]["columns"].items() if k in keep}
    doc["criteria"] = [
        {"id": "one_way", "kind": "observed_marginal_error", "threshold": 0.5, "epsilon": 0.5,
         "bounds": [0, 1], "params": {"way": 1, "columns": None}},
        {"id": "missing", "kind": "missing_rate", "threshold": 0.5, "epsilon": 0.5,
         "bounds": [0, 1], "params": {"columns": ["workclass"]}},
    ]
    doc["budget"]["epsilon_criteria"] = 1.0
    doc["budget"]["epsilon_generator"] = 1.0  # the tests' figures, whatever the example spends
    doc["budget"]["epsilon_lifetime_max"] = 20.0
    doc["faithfulness"] = {"exact": [k for k in keep if k != "age"], "distance": {"age": 1},
                           "alpha": 1}
    doc["generator"] = {"family": "independent", "search_space": [{}]}
    doc["metadata"]["dataset"] = "test-own-data"
    doc["cleaning_counts"] = {"release": "dp", "epsilon": 0.05}
    doc["schema"].pop("expected_n", None)
    return doc


def small_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """A public synthetic table in the file's spelling (Adult's header names, '?' missing)."""
    rng = np.random.default_rng(seed)
    work = np.array(["Private", "Self-emp-not-inc", "Local-gov", "?"])
    return pd.DataFrame({
        "age": rng.integers(17, 91, n),
        "workclass": work[rng.choice(4, n, p=[0.7, 0.15, 0.1, 0.05])],
        "sex": np.where(rng.random(n) < 0.33, "Female", "Male"),
        "Y": np.where(rng.random(n) < 0.24, ">50K", "<=50K"),
    })


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """The frame as Adult writes it: ', ' between fields."""
    path.write_text(", ".join(frame.columns) + "\n" + "\n".join(
        ", ".join(str(v) for v in row) for row in frame.itertuples(index=False)) + "\n",
        encoding="utf-8")
    return path


def facts_of(frame: pd.DataFrame, rounding: float = 0.001) -> dict:
    """Published-style facts of a small frame: 1-way shares, a missing rate, a mean, a table."""
    src = "test table"
    obs = frame[frame.workclass != "?"]
    work = ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
            "State-gov", "Without-pay", "Never-worked"]
    bins = [[17, 29], [30, 44], [45, 59], [60, 90]]
    lows = np.array([b[0] for b in bins])

    def r(x):
        return [round(round(v / rounding) * rounding, 6) for v in x]

    age_code = np.searchsorted(lows, frame.age, side="right") - 1
    table = pd.crosstab(frame.sex, frame.Y).reindex(index=["Female", "Male"],
                                                    columns=["<=50K", ">50K"]).to_numpy()
    return {"format": "workbench.facts", "format_version": 1, "title": "test", "facts": [
        {"id": "age", "kind": "shares", "axes": [{"column": "age", "bins": bins}],
         "shares": r(np.bincount(age_code, minlength=4) / len(frame)), "rounding": rounding,
         "source": src},
        {"id": "work", "kind": "shares", "axes": [{"column": "workclass", "values": work}],
         "shares": r([(obs.workclass == w).mean() for w in work]), "rounding": rounding,
         "source": src},
        {"id": "work_missing", "kind": "missing_rate", "column": "workclass",
         "value": round((frame.workclass == "?").mean(), 3), "rounding": rounding,
         "source": src},
        {"id": "sex", "kind": "shares", "axes": [{"column": "sex", "values": ["Female", "Male"]}],
         "shares": r([(frame.sex == "Female").mean(), (frame.sex == "Male").mean()]),
         "rounding": rounding, "source": src},
        {"id": "Y", "kind": "shares", "axes": [{"column": "Y", "values": ["<=50K", ">50K"]}],
         "shares": r([(frame.Y == "<=50K").mean(), (frame.Y == ">50K").mean()]),
         "rounding": rounding, "source": src},
        {"id": "sex_by_Y", "kind": "shares",
         "axes": [{"column": "sex", "values": ["Female", "Male"]},
                  {"column": "Y", "values": ["<=50K", ">50K"]}],
         "shares": np.asarray(r((table / table.sum()).ravel())).reshape(2, 2).tolist(),
         "rounding": rounding, "source": src},
        {"id": "age_mean", "kind": "mean", "column": "age", "value": round(frame.age.mean(), 1),
         "rounding": 0.1, "source": src},
    ]}
