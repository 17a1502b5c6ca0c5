"""Write data_public/adult_facts.json: published-style aggregates of the public UCI Adult file.

The FACTS file (``docs/facts.md``) a statistician would type from published tables: 1-way
shares of every column of ``examples/adult_own_data.json``, the missing rates of its incomplete
columns, the means of age and hours per week, and a few 2-way tables — each rounded as a
publisher rounds (shares to 0.1%, means to 0.1) and each naming its source. Only aggregates
are written, never a row.

Usage: python scripts/build_adult_facts.py [--data ../shared/data/adult/adult_train.csv.gz]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "adult" / "adult_train.csv.gz"
SPEC = REPO / "examples" / "adult_own_data.json"
OUT = REPO / "data_public" / "adult_facts.json"
SHARE_ROUNDING = 0.001
MEAN_ROUNDING = 0.1
SOURCE = ("UCI Adult, adult.data training split (Becker & Kohavi 1996, CC BY 4.0; 32,561 "
          "rows), tabulated by scripts/build_adult_facts.py")
#: Publisher-style bins: the finest 1-way tables, and the coarse bands of the 2-way tables.
BINS = {
    "age": [[17, 19], [20, 24], [25, 29], [30, 34], [35, 39], [40, 44], [45, 49], [50, 54],
            [55, 59], [60, 64], [65, 69], [70, 74], [75, 90]],
    "hours_per_week": [[1, 19], [20, 29], [30, 34], [35, 39], [40, 40], [41, 44], [45, 49],
                       [50, 59], [60, 99]],
}
BANDS = {"age": [[17, 24], [25, 34], [35, 44], [45, 54], [55, 64], [65, 90]],
         "hours_per_week": [[1, 34], [35, 39], [40, 40], [41, 49], [50, 99]]}
PAIRS = [("sex", "Y", "Table 2: income by sex"),
         ("education", "Y", "Table 3: income by education"),
         ("age", "Y", "Table 4: income by age band"),
         ("hours_per_week", "sex", "Table 5: hours worked by sex"),
         ("marital_status", "relationship", "Table 6: marital status by relationship"),
         ("occupation", "sex", "Table 7: occupation by sex")]


def read_adult(path: Path, spec: dict) -> pd.DataFrame:
    """The spec's columns of the public file, under the spec's names ('?' is missing)."""
    raw = pd.read_csv(path, skipinitialspace=True, na_values=["?"], keep_default_na=False)
    cols = spec["schema"]["columns"]
    return pd.DataFrame({c["name"]: raw[c.get("source", c["name"])] for c in cols})


def _codes(series: pd.Series, column: dict, bins: list | None) -> tuple[np.ndarray, dict]:
    """Group index of each observed value, and the axis describing the groups."""
    if bins is not None:
        lows = np.asarray([b[0] for b in bins])
        return np.searchsorted(lows, series.to_numpy(), side="right") - 1, {"bins": bins}
    values = column["domain"]
    lookup = {v: i for i, v in enumerate(values)}
    return series.map(lookup).to_numpy(dtype=np.int64), {"values": values}


def shares_fact(df: pd.DataFrame, spec_cols: dict, names: list[str], fact_id: str,
                source: str, bands: dict) -> dict:
    """Shares among rows with every column observed, each rounded to 0.1%."""
    sub = df[names].dropna()
    codes, axes, sizes = [], [], []
    for name in names:
        code, axis = _codes(sub[name], spec_cols[name], bands.get(name))
        codes.append(code)
        axes.append({"column": name, **axis})
        sizes.append(len(axis.get("bins") or axis["values"]))
    counts = np.bincount(np.ravel_multi_index(codes, sizes), minlength=int(np.prod(sizes)))
    shares = np.round(counts / counts.sum() / SHARE_ROUNDING) * SHARE_ROUNDING
    return {"id": fact_id, "kind": "shares", "axes": axes,
            "shares": np.round(shares, 6).reshape(sizes).tolist(), "rounding": SHARE_ROUNDING,
            "source": source}


def build(data: Path = DATA) -> dict:
    """The facts document."""
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    spec_cols = {c["name"]: c for c in spec["schema"]["columns"]}
    df = read_adult(data, spec)
    facts = []
    for i, name in enumerate(spec_cols, start=1):
        facts.append(shares_fact(df, spec_cols, [name], f"{name}_shares",
                                 f"{SOURCE}; Table 1.{i}: {name} (% of rows with it stated)",
                                 BINS))
    for name, col in spec_cols.items():
        if col["missing"] != "forbid":
            facts.append({"id": f"{name}_missing", "kind": "missing_rate", "column": name,
                          "value": round(float(df[name].isna().mean()), 3),
                          "rounding": SHARE_ROUNDING,
                          "source": f"{SOURCE}; Table 1: '{name} not stated'"})
    for name in ("age", "hours_per_week"):
        facts.append({"id": f"{name}_mean", "kind": "mean", "column": name,
                      "value": round(float(df[name].mean()), 1), "rounding": MEAN_ROUNDING,
                      "source": f"{SOURCE}; Table 1: mean {name}"})
    for a, b, title in PAIRS:
        facts.append(shares_fact(df, spec_cols, [a, b], f"{a}_by_{b}", f"{SOURCE}; {title}",
                                 BANDS))
    return {
        "format": "workbench.facts",
        "format_version": 1,
        "title": "UCI Adult (public): published-style tables for a facts-based proxy",
        "about": ("Aggregates of the public UCI Adult training file as a statistics office would "
                  "publish them: shares to 0.1% among rows with the columns stated, missing "
                  "rates, means to 0.1. Only aggregates; no row is stored."),
        "provenance": {"source_file": "../shared/data/adult/adult_train.csv.gz",
                       "source_sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
                       "built_by": "scripts/build_adult_facts.py",
                       "spec": "examples/adult_own_data.json"},
        "facts": facts,
    }


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from workbench.evidence.facts import facts_to_json

    args.out.write_text(facts_to_json(build(args.data)), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
