"""Benchmark: encode 4M raw rows with the paper's bins, then decode and re-encode.

Target (issue 2): encoding 4M rows is vectorised and takes seconds, not minutes.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]


def main(n: int = 4_000_000) -> None:
    spec = load_spec(REPO / "examples" / "israel_births_2014.json")
    rng = np.random.default_rng(0)  # public benchmark data, not the confidential path
    frame = pd.DataFrame(
        {
            "birth_month": rng.integers(1, 13, n),
            "mother_age": rng.integers(14, 50, n),
            "parity": rng.integers(1, 12, n),
            "gestation_week": rng.integers(22, 45, n),
            "birth_sex": pd.Series(rng.choice(["M", "F"], n), dtype="string"),
            "birth_weight": rng.integers(500, 5500, n),
        }
    )
    config = next(spec.configurations())
    table = spec.table_codec(config)
    t0 = time.perf_counter()
    codes = table.encode(frame)
    t1 = time.perf_counter()
    labels = table.decode(codes)
    t2 = time.perf_counter()
    again = table.encode_labels(labels)
    t3 = time.perf_counter()
    assert (again == codes).all()
    print(f"encode {n:,} rows: {t1 - t0:.2f} s")
    print(f"decode {n:,} rows: {t2 - t1:.2f} s")
    print(f"encode labels {n:,} rows: {t3 - t2:.2f} s")


if __name__ == "__main__":
    main()
