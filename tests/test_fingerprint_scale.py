"""The fast content fingerprint (issue 38) hashes exactly the bytes of the first implementation.

Budget stores on disk hold fingerprints the first implementation computed; a different value
would warn "content fingerprint changed" on the next run of the same data. The reference is that
implementation, verbatim (benchmarks/_fingerprint_reference.py, also the benchmark's "before").
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.privacy.budget_store import table_fingerprint

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from _fingerprint_reference import reference_fingerprint

KEY = b"fingerprint-key-" * 2


def _nan_with_payload(payload: int) -> float:
    """A quiet NaN whose mantissa bits differ from NumPy's (it must survive, in row order)."""
    return float(np.array([0x7FF8000000000000 | payload], dtype="<u8").view("<f8")[0])


DAYS = ["2014-01-01", "2014-01-02", "2014-01-03 10:30"]  # an unused category with a time
TEXTS = ["", "a", "b", "\x00", "\x00a", "a\x00", "é", "ß", "日本", "😀", "Z", "a b", "a,b",
         'q"q', "line\nbreak", "10", "9", "-1"]


def _random_frame(rng: np.random.Generator, n: int, d: int) -> pd.DataFrame:
    """A frame of ``d`` columns of every kind, with ties, NaN, -0.0 and awkward strings."""
    out: dict[str, object] = {}
    for j in range(d):
        kind = j % 7
        name = f"c{(j * 7919) % 101:03d}_{kind}"
        if kind == 0:  # float with NaN, -0.0, inf
            pool = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3.0, 1e-300])
            out[name] = rng.choice(pool, n)
        elif kind == 1:  # int
            out[name] = rng.integers(-3, 4, n)
        elif kind == 2:  # object text with None and NaN
            pool = np.array([*TEXTS, None, np.nan], dtype=object)
            out[name] = pool[rng.integers(0, len(pool), n)]
        elif kind == 3:  # Categorical text with missing codes and an unused category
            cats = ["x", "y", "", "\x00", "Ω", "unused"]
            codes = rng.integers(-1, len(cats) - 1, n)
            out[name] = pd.Categorical.from_codes(codes, categories=cats)
        elif kind == 4:  # pandas string dtype with NA
            pool = np.array([*TEXTS[:8], None], dtype=object)
            out[name] = pd.array(pool[rng.integers(0, len(pool), n)], dtype="string")
        elif kind == 5:  # nullable Int64 with NA
            vals = pd.array(rng.integers(0, 3, n), dtype="Int64")
            vals[rng.random(n) < 0.2] = pd.NA
            out[name] = vals
        else:  # Categorical of numbers (text path: categories as text)
            cats = [1.0, 2.5, 10.0]
            out[name] = pd.Categorical.from_codes(rng.integers(-1, 3, n), categories=cats)
    return pd.DataFrame(out)


@pytest.mark.parametrize("seed, n, d", [(0, 200, 7), (1, 1_000, 14), (2, 3_000, 35),
                                        (3, 1, 35), (4, 0, 35), (5, 50, 3), (6, 5_000, 2)])
def test_fast_fingerprint_equals_the_reference_on_mixed_frames(seed: int, n: int, d: int
                                                              ) -> None:
    frame = _random_frame(np.random.default_rng(seed), n, d)
    assert table_fingerprint(frame, KEY) == reference_fingerprint(frame, KEY)
    shuffled = frame.sample(frac=1.0, random_state=seed)[list(reversed(frame.columns))]
    assert table_fingerprint(shuffled, KEY) == reference_fingerprint(frame, KEY)


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"a": [0.0, -0.0, np.nan, -np.nan, 1.0]}),  # -0.0 is 0.0, NaN last
    pd.DataFrame({"a": ["\x00", None, "", "\x00", "a"]}, dtype=object),  # NaN hashes as "\x00"
    pd.DataFrame({"a": ["b", "a"], "b": [1, 1]}),  # one tie column
    pd.DataFrame({"t": ["same"] * 6, "x": [1.0] * 6}),  # every row equal
    pd.DataFrame({"t": ["z", "é", "e", "E", "日", "😀", "\uffff", "\U0010ffff"]}),  # code points
    pd.DataFrame({"a": [True, False, True], "b": ["1", 1, 1.0]}),  # bool numeric; mixed object
    pd.DataFrame({"a": pd.Categorical(["b", "a", None, "b"], categories=["b", "a"])}),
    pd.DataFrame({"a": pd.Categorical([], categories=["b", "a"])}),
    pd.DataFrame({"a": pd.Categorical([1, 1], categories=[1, "1"])}),  # two categories, one text
    pd.DataFrame({"d": pd.Categorical(pd.to_datetime(["2014-01-01", "2014-01-02"]),
                                      categories=pd.to_datetime(DAYS, format="ISO8601"))}),
    pd.DataFrame({"d": pd.to_datetime(["2014-01-02", None, "2014-01-01"])}),
    pd.DataFrame({"x": [1.0], "t": ["only row"]}),
    pd.DataFrame({"x": np.zeros(0), "t": np.array([], dtype=object)}),
    pd.DataFrame({"f": np.array([1.5, 1.5, 1.5], dtype=np.float32), "i": np.array([3, 1, 2],
                                                                                dtype=np.uint8)}),
], ids=lambda f: "-".join(f"{c}:{f[c].dtype}" for c in f.columns) + f"-{len(f)}")
def test_fast_fingerprint_equals_the_reference_on_edge_cases(frame: pd.DataFrame) -> None:
    assert table_fingerprint(frame, KEY) == reference_fingerprint(frame, KEY)


def test_nan_payloads_keep_the_reference_row_order() -> None:
    """Rows equal but for their NaN's bits hash in their original order, as a stable sort."""
    odd, plain = _nan_with_payload(1), np.nan
    frame = pd.DataFrame({"x": [odd, plain, odd, 2.0, plain], "t": ["a"] * 5})
    assert table_fingerprint(frame, KEY) == reference_fingerprint(frame, KEY)
    flipped = frame.iloc[[1, 0, 2, 3, 4]].reset_index(drop=True)
    assert table_fingerprint(flipped, KEY) == reference_fingerprint(flipped, KEY)


def test_many_columns_of_many_values_pack_beyond_one_int64_word() -> None:
    """40 columns of ~1,000 ranks each overflow one packed word: the regrouping keeps order."""
    rng = np.random.default_rng(9)
    frame = pd.DataFrame({f"n{j:02d}": rng.integers(0, 1_000, 400).astype(float)
                          for j in range(40)})
    frame["text"] = rng.choice(np.array(TEXTS, dtype=object), 400)
    frame = pd.concat([frame, frame.iloc[:50]], ignore_index=True)  # ties across every column
    assert table_fingerprint(frame, KEY) == reference_fingerprint(frame, KEY)


def test_a_changed_cell_or_key_changes_the_fingerprint() -> None:
    frame = _random_frame(np.random.default_rng(11), 500, 14)
    base = table_fingerprint(frame, KEY)
    for j in range(frame.shape[1]):
        neighbour = frame.copy()
        col = neighbour.columns[j]
        text = neighbour[col].astype("string").fillna("\x00")
        other = neighbour[col][text != text.iloc[0]]
        neighbour.loc[0, col] = other.iloc[0]
        assert table_fingerprint(neighbour, KEY) != base, col
    assert table_fingerprint(frame, b"other" * 6) != base
