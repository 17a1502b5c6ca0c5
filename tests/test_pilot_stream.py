"""Issue 38, the pilot reads in chunks: its exact tables summed over raw chunks, and its
discovery inputs joined in chunk order, are the whole table's, so with the same seeded noise
the FACTS file is byte-identical at any chunk size (text in a number column included)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from own_data_helpers import small_doc, small_frame, write_csv

from workbench.engine import pilot as pilot_module
from workbench.engine.pilot import exact_tables, measured, parse_pairs, pilot, pilot_columns
from workbench.engine.pilot_labels import exact_inputs, parse_discovery
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.transform.raw import read_raw
from workbench.transform.stream import fold_raw, raw_chunks
from workbench.validation import build_spec

N = 3_000
PAIRS = ("sex:Y", "age:workclass")


@pytest.fixture(scope="module")
def spec():
    return build_spec(small_doc())


def _data(tmp: Path, text_in_age: bool) -> Path:
    """Frequent unknown labels, values out of bounds on both sides, and (optionally) text in
    the number column 'age' near the end only, so a chunked typed read meets it late."""
    frame = small_frame(N, seed=38).astype({"age": object})
    frame.loc[frame.index[::9], "workclass"] = "Guild"
    frame.loc[frame.index[5::40], "age"] = 95
    frame.loc[frame.index[7::60], "age"] = 12
    if text_in_age:
        frame.loc[frame.index[-3], "age"] = "unknown"
    return write_csv(frame, tmp / f"data_{int(text_in_age)}.csv")


class _Seeded(PrivacyContext):
    """The pilot's context with seeded public noise, so two pilots draw the same noise."""

    @classmethod
    def confidential(cls, *, accountant, ledger, neighbour="replace_one"):  # type: ignore[override]
        return PrivacyContext.simulation(7, noise=SeededNoise(7), accountant=accountant,
                                         ledger=ledger, neighbour=neighbour)


@pytest.mark.parametrize("text_in_age", [False, True])
def test_chunked_exact_inputs_are_the_whole_tables(spec, tmp_path, monkeypatch, text_in_age):
    """The summed per-chunk tables and joined discovery inputs equal those of ``read_raw``'s
    whole table (the path the pilot took before), at chunk sizes that split the file."""
    path = _data(tmp_path, text_in_age)
    columns = pilot_columns(spec)
    pairs = parse_pairs(spec, PAIRS)
    discover = parse_discovery(spec, ["workclass,age"], 1.0, 1e-6)
    whole = read_raw(path, spec.columns, spec.file_format)
    want_tables = exact_tables(whole, columns, pairs)
    want_inputs = exact_inputs(whole, discover)  # type: ignore[arg-type]
    assert want_inputs["workclass"]["Guild"] == len(range(0, N, 9))
    for rows in (37, 1_000):
        monkeypatch.setattr("workbench.transform.stream.CHUNK_ROWS", rows)
        chunks = list(raw_chunks(path, spec.columns, spec.file_format, as_text=text_in_age))
        assert len(chunks) == math.ceil(N / rows)
        got = fold_raw(path, spec.columns, spec.file_format,
                       lambda c: measured(c, columns, pairs, discover))
        assert got.rows == N
        assert got.tables.keys() == want_tables.keys()
        for key, table in want_tables.items():
            assert np.array_equal(got.tables[key], table), key
        assert list(got.inputs["workclass"].items()) == list(want_inputs["workclass"].items())
        assert np.array_equal(got.inputs["age"], want_inputs["age"])


@pytest.mark.parametrize("text_in_age", [False, True])
def test_facts_are_byte_identical_at_two_chunk_sizes(spec, tmp_path, monkeypatch, text_in_age):
    """Must-show: FACTS (with label discovery) from 37-row chunks, 1,000-row chunks and one
    chunk are the same bytes under the same seeded noise."""
    monkeypatch.setattr(pilot_module, "PrivacyContext", _Seeded)
    path = _data(tmp_path, text_in_age)
    discover = parse_discovery(spec, ["workclass,age"], 1.0, 1e-6)
    texts = []
    for rows in (37, 1_000, 10 * N):
        monkeypatch.setattr("workbench.transform.stream.CHUNK_ROWS", rows)
        out = pilot(spec, path, 2.0, tmp_path / f"facts_{rows}.json", pairs=PAIRS,
                    budget_store=tmp_path / f"store_{rows}", discover=discover)
        texts.append(out.facts_path.read_bytes())
    assert b"Guild" in texts[0]  # the frequent label is discovered, so discovery was compared
    assert texts[0] == texts[1] == texts[2]
