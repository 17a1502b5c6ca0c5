"""Issue 38, streamed reads: data read, cleaned and compacted chunk by chunk give the table,
the cleaning counts and the codes that reading and cleaning the whole table gives (so every
seeded output is unchanged), with text categorical columns held as Categoricals over the
spec's declared domain, and the missing rates checked over the whole table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data

from workbench.engine.cleaning_counts import CleaningTally
from workbench.engine.run import load_confidential
from workbench.privacy.budget_store import table_fingerprint
from workbench.transform import EncodingError
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, check_missing, read_raw
from workbench.transform.stream import load_clean
from workbench.trial import bind
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "israel_births_2014_narrowed.frozen.json"
ADULT = REPO / "examples" / "adult_missing.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"


def _messy(path: Path) -> Path:
    """600 proxy rows with out-of-domain values, text in a number column, a missing value and
    rows the raw rules remove, spread over the file (so over several chunks)."""
    frame = pd.read_csv(PROXY, nrows=600).astype({"mother_age": object, "birth_weight": float})
    frame.loc[5::50, "birth_weight"] = 99_999  # outside the bounds: the 'drop' policy
    frame.loc[9::70, "birth_sex"] = "X"  # outside the domain: dropped
    frame.loc[13::90, "mother_age"] = "unknown"  # text in a number column: dropped
    frame.loc[17::80, "birth_weight"] = 450  # inside the bounds, removed by weight_range
    frame.loc[21::110, "parity"] = np.nan  # missing: removed by the missing_value rule
    frame.to_csv(path, index=False)
    return path


def _whole(spec, path: Path) -> tuple[pd.DataFrame, CleaningTally]:
    """The whole-table path: read everything, then the policies and the rules."""
    tally = CleaningTally()
    frame = read_raw(path, spec.columns, spec.file_format)
    frame = apply_domain_policy(frame, spec.columns, tally.policies)
    frame = clean(frame, spec, tally.rules)
    check_missing(frame, spec.columns)
    return frame, tally


@pytest.mark.parametrize("rows", [37, 1_000])
def test_chunks_give_the_whole_tables_rows_counts_codes_and_fingerprint(tmp_path: Path,
                                                                        monkeypatch, rows):
    monkeypatch.setattr("workbench.transform.stream.CHUNK_ROWS", rows)
    spec = load_spec(SPEC)
    path = _messy(tmp_path / "messy.csv")
    whole, whole_tally = _whole(spec, path)
    tally = CleaningTally()
    chunked = load_confidential(spec, path, tally)
    assert tally == whole_tally
    assert sum(tally.policies.values()) > 0 and sum(tally.rules.values()) > 0
    as_text = chunked.astype({"birth_sex": "string"})
    pd.testing.assert_frame_equal(as_text, whole)
    assert table_fingerprint(chunked, b"k") == table_fingerprint(whole, b"k")
    for configuration in list(spec.configurations())[:3]:
        trial = bind(spec, configuration)
        assert np.array_equal(trial.encode(chunked), trial.encode(whole))


def test_text_categoricals_are_compact_over_the_declared_domain(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("workbench.transform.stream.CHUNK_ROWS", 50)
    spec = load_spec(SPEC)
    frame = pd.read_csv(PROXY, nrows=300)
    frame["birth_sex"] = "F"  # the data hold one label; the categories are still the spec's
    frame.to_csv(tmp_path / "f.csv", index=False)
    loaded = load_clean(tmp_path / "f.csv", spec, spec.file_format)
    sex = loaded.frame["birth_sex"]
    assert isinstance(sex.dtype, pd.CategoricalDtype)
    assert list(sex.cat.categories) == ["M", "F"] and sex.cat.codes.dtype == np.int8
    assert loaded.raw_rows == 300 and len(loaded.frame) == 300


def test_the_missing_rate_is_checked_over_the_whole_table_not_per_chunk(tmp_path: Path,
                                                                        monkeypatch):
    """adult_missing: workclass may be missing ('?', declared) in at most 20% of rows. The
    first chunk alone is over the limit, the table is not; then the table is."""
    monkeypatch.setattr("workbench.transform.stream.CHUNK_ROWS", 100)
    spec = load_spec(ADULT)
    source = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                         nrows=3_000)
    source = source[source["workclass"] != "?"].head(1_000).reset_index(drop=True)
    source.loc[:49, "workclass"] = "?"  # 50% of the first chunk, 5% of the table
    source.to_csv(tmp_path / "a.csv", index=False)
    loaded = load_clean(tmp_path / "a.csv", spec, spec.file_format)
    assert int(loaded.frame["workclass"].isna().sum()) == 50
    source.loc[:299, "workclass"] = "?"  # 30% of the table
    source.to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(EncodingError, match=r"'workclass'.*max_missing_rate"):
        load_clean(tmp_path / "b.csv", spec, spec.file_format)


def test_a_header_only_file_is_refused_before_anything(tmp_path: Path):
    spec = load_spec(SPEC)
    pd.read_csv(PROXY, nrows=0).to_csv(tmp_path / "h.csv", index=False)
    with pytest.raises(EncodingError, match="has a header but no records"):
        load_confidential(spec, tmp_path / "h.csv")


def test_categorical_codes_equal_text_codes_with_missing_and_unknown():
    from workbench.transform.codecs import text_codes

    labels = ("M", "F")
    text = pd.Series(["F", None, "M", "F"], dtype="string")
    compact = pd.Series(pd.Categorical(text, categories=["F", "M", "Q"]))
    assert list(text_codes(labels, compact)) == list(text_codes(labels, text)) == [1, -1, 0, 1]
    assert list(text_codes(labels, pd.Series(pd.Categorical(["Q", "M"])))) == [-1, 0]


def test_the_freed_chunks_are_handed_back_once_the_table_is_joined(tmp_path: Path, monkeypatch):
    """glibc keeps a chunked read's freed pages; the read hands them back once (issue 38)."""
    import platform

    from workbench.transform import stream

    calls = []
    monkeypatch.setattr(stream, "return_freed_memory", lambda: calls.append(1) or True)
    load_confidential(load_spec(SPEC), _messy(tmp_path / "messy.csv"))
    assert calls == [1]
    monkeypatch.undo()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert stream.return_freed_memory() is True
