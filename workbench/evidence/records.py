"""The default proxy: a seeded record sample of the public US 2019 natality file, after cleaning.

Facts-based proxies (:mod:`workbench.evidence.sampler`) keep only low-order structure, so every
forecast made on them is optimistic; real records keep the higher-order structure a registry
has (issue 15). The source is public domain (NVSS public-use file), so its rows may ship.
"""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd

from workbench.evidence.realism import cleaning_rule_masks


def clean_records(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of a schema-mapped sample that none of the paper's raw cleaning rules removes."""
    removed = np.zeros(len(df), dtype=bool)
    for mask in cleaning_rule_masks(df).values():
        removed |= mask
    return df.loc[~removed].reset_index(drop=True)


def record_sample(df: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` cleaned rows of ``df`` drawn without replacement by a seeded Generator, in the
    order drawn (a public sample of a public file, so a seed is fine here).

    >>> frame = pd.DataFrame({"mother_age": [30, 18, 25], "parity": [1, 5, 2],
    ...     "gestation_week": [39, 40, 38], "birth_weight": [3300, 3100, 3000]})
    >>> sorted(record_sample(frame, 2, seed=0)["mother_age"])  # the 18-year-old, parity 5, goes
    [25, 30]
    """
    cleaned = clean_records(df)
    if not 1 <= n <= len(cleaned):
        raise ValueError(f"n must be between 1 and the {len(cleaned):,} cleaned rows, not {n}")
    rows = np.random.default_rng(seed).choice(len(cleaned), size=n, replace=False)
    return cleaned.iloc[rows].reset_index(drop=True)


def csv_gz_bytes(df: pd.DataFrame) -> bytes:
    """Deterministic gzip'd CSV bytes (no file name, mtime 0) of a frame."""
    text = df.to_csv(index=False, lineterminator="\n").encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(text)
    return buf.getvalue()
