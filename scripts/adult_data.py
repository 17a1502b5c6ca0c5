"""Prepare the UCI Adult extract for the plausible-deniability example (writes to out/ only).

The shared file ``../shared/data/adult/adult_train.csv.gz`` separates fields with ", ", marks
missing values with "?" and names columns with hyphens. This script keeps the columns the
example uses — none has a missing value — renames them to identifiers, and splits the rows
with a fixed public seed into two halves:

* ``out/adult/adult_confidential.csv`` — stands in for the confidential data R;
* ``out/adult/adult_public_proxy.csv`` — stands in for PUBLIC data of the same population
  (the distinguisher's "real" class, the public structure's proxy and the dry run's proxy). In
  a real release it must be genuinely public (another year, a published sample), never a part
  of R.

The same two halves of the raw file, every column and its own format (", " separators, "?"
for missing), go to ``adult_raw_confidential.csv`` and ``adult_raw_public_proxy.csv``: the
missing-data example (``examples/adult_missing.json``) reads that format.

Usage: ``python scripts/adult_data.py [--source PATH] [--out DIR]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared" / "data" / "adult" / "adult_train.csv.gz"
#: Source column → spec column (the example's schema).
COLUMNS = {
    "age": "age", "education": "education", "marital-status": "marital_status",
    "relationship": "relationship", "race": "race", "sex": "sex",
    "hours-per-week": "hours_per_week", "capital-gain": "capital_gain",
    "capital-loss": "capital_loss", "Y": "income",
}


def load_adult(source: Path = SOURCE) -> pd.DataFrame:
    """The example's columns of the Adult extract, values stripped, names as in the spec."""
    frame = pd.read_csv(source, sep=",", skipinitialspace=True, na_values=["?"], dtype=str)
    frame = frame[list(COLUMNS)].rename(columns=COLUMNS)
    if frame.isna().any().any():
        raise ValueError("the chosen Adult columns unexpectedly hold missing values")
    return frame


def split_halves(frame: pd.DataFrame, seed: int = 20170801) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two disjoint halves by a fixed public permutation (R, public proxy)."""
    order = np.random.default_rng(seed).permutation(len(frame))
    half = len(frame) // 2
    return (frame.iloc[np.sort(order[:half])].reset_index(drop=True),
            frame.iloc[np.sort(order[half:])].reset_index(drop=True))


def split_raw_halves(source: Path = SOURCE, seed: int = 20170801) -> tuple[list[str], list[str]]:
    """The raw file's lines (header first) in the two halves of :func:`split_halves` (the same
    permutation of the same records, so the halves hold the same people)."""
    import gzip

    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf-8") as fh:
        header, *rows = [line for line in fh.read().splitlines() if line.strip()]
    order = np.random.default_rng(seed).permutation(len(rows))
    half = len(rows) // 2
    return ([header] + [rows[i] for i in np.sort(order[:half])],
            [header] + [rows[i] for i in np.sort(order[half:])])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=REPO / "out" / "adult")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    confidential, proxy = split_halves(load_adult(args.source))
    confidential.to_csv(args.out / "adult_confidential.csv", index=False)
    proxy.to_csv(args.out / "adult_public_proxy.csv", index=False)
    for name, lines in zip(("adult_raw_confidential.csv", "adult_raw_public_proxy.csv"),
                           split_raw_halves(args.source), strict=True):
        (args.out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(confidential):,} + {len(proxy):,} records to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
