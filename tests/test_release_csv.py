"""release.csv at registry scale (issue 38): written byte for byte as pandas writes it, from
its distinct records; read back for ``verify`` with labels as categories, the same codes and
the same error naming the column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.engine import release_csv
from workbench.engine.release_csv import read_release_labels, write_release_csv
from workbench.transform import EncodingError, TableCodec
from workbench.transform.codecs import BinsCodec, IdentityCodec
from workbench.transform.missing import MissingCodec
from workbench.transform.number import NumberCodec

AWKWARD = ["plain", "with,comma", 'with "quote"', "line\nbreak", "cr\rreturn", "", " lead",
           "trail ", "é日😀", '"', ",", "\n", "a\r\nb", "#hash", "NA", "nan"]


def _pandas_bytes(frame: pd.DataFrame, tmp_path: Path) -> bytes:
    """What the bundle wrote before: pandas' own to_csv."""
    path = tmp_path / "pandas.csv"
    frame.to_csv(path, index=False, lineterminator="\n")
    return path.read_bytes()


def _fast_bytes(frame: pd.DataFrame, tmp_path: Path) -> bytes:
    path = tmp_path / "fast.csv"
    write_release_csv(frame, path)
    return path.read_bytes()


def _repeated(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """A release-like frame: few distinct records, each repeated, of every supported kind."""
    k = max(1, n // 8)
    base = pd.DataFrame({
        "text": rng.choice(np.array(AWKWARD, dtype=object), k),
        "with_missing": rng.choice(np.array(["x", None, np.nan, "y"], dtype=object), k),
        "number": rng.choice([0.0, -0.0, 1.5, np.nan, 1e-7, 3e20, -2.0], k),
        "count": rng.integers(-5, 5, k),
        "flag": rng.random(k) < 0.5,
        "binned": pd.Categorical(rng.choice(["<18", "18-19", "a,b", 'q"'], k)),
        "string": pd.array(rng.choice(np.array(["s", "t,u", None], dtype=object), k),
                           dtype="string"),
        "small": rng.integers(0, 3, k).astype(np.float32) / 3,
    })
    return base.iloc[rng.integers(0, k, n)].reset_index(drop=True)


@pytest.mark.parametrize("seed, n", [(0, 64), (1, 1_000), (2, 9_000)])
def test_release_csv_is_byte_identical_to_pandas(tmp_path: Path, monkeypatch, seed: int,
                                                 n: int) -> None:
    monkeypatch.setattr(release_csv, "CHUNK_ROWS", 97)  # many chunks, distinct and written
    frame = _repeated(np.random.default_rng(seed), n)
    assert release_csv._distinct_lines(frame) is not None  # the fast path, not the fallback
    assert _fast_bytes(frame, tmp_path) == _pandas_bytes(frame, tmp_path)


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"only": [""] * 4}),  # one empty field: csv writes '""'
    pd.DataFrame({"only": [np.nan] * 4}),
    pd.DataFrame({"a": ["x"] * 3, "b": [None] * 3}, dtype=object),
    pd.DataFrame({"a": ['"', '"'] * 3, "b": ["\n", "\n"] * 3}),  # odd quotes, bare newlines
    pd.DataFrame({"a,b": [1, 1], 'c"d': ["e", "e"], "line\nname": [2.5, 2.5]}),  # header too
    pd.DataFrame({"a": pd.Categorical(["x", None, "x", None], categories=["x", "unused"])}),
    pd.DataFrame({"a": pd.Categorical([3, 1, 3, 1])}),
    pd.DataFrame({"x": [0.0, -0.0, np.nan, -np.nan], "t": ["z"] * 4}),  # -0.0 prints as such
], ids=["empty-string", "nan", "none", "quotes-newlines", "header", "categorical", "int-cats",
        "signed-zero"])
def test_release_csv_edge_frames_are_byte_identical(tmp_path: Path, frame: pd.DataFrame
                                                    ) -> None:
    frame = pd.concat([frame] * 8, ignore_index=True)  # records repeat, as in a release
    assert release_csv._distinct_lines(frame) is not None
    assert _fast_bytes(frame, tmp_path) == _pandas_bytes(frame, tmp_path)


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"a": ["only row"], "b": [1.0]}),  # one record: all distinct
    pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=float)}),
    pd.DataFrame({"when": pd.to_datetime(["2014-01-01", "2014-01-01"])}),  # dates: pandas
    pd.DataFrame({"mixed": [1, "1", 1.0, 1] * 2}, dtype=object),  # 1 and 1.0 print unlike
    pd.DataFrame({"n": pd.array([1, None, 1, None], dtype="Int64")}),
    pd.DataFrame(index=range(3)),  # no columns
], ids=["one-row", "zero-rows", "dates", "mixed-object", "nullable-int", "no-columns"])
def test_frames_the_fast_path_does_not_vouch_for_are_written_by_pandas(
        tmp_path: Path, frame: pd.DataFrame) -> None:
    assert release_csv._distinct_lines(frame) is None
    assert _fast_bytes(frame, tmp_path) == _pandas_bytes(frame, tmp_path)


def _table() -> TableCodec:
    """A configuration of every codec kind verify reads back."""
    return TableCodec((
        ("sex", IdentityCodec(("F", "M"))),
        ("age", BinsCodec((18, 25), integer=True)),
        ("weight", NumberCodec(2000.0, 2010.0, 5.0)),
        ("parity", MissingCodec(IdentityCodec(("1", "2")), "NA", reserved=True)),
    ))


def _release(tmp_path: Path, rows: dict[str, list[str]]) -> Path:
    path = tmp_path / "release.csv"
    pd.DataFrame(rows).to_csv(path, index=False, lineterminator="\n")
    return path


def _old_codes(path: Path, table: TableCodec) -> np.ndarray:
    """What verify encoded before: every column read as text."""
    return table.encode_labels(pd.read_csv(path, dtype=str, keep_default_na=False))


GOOD = {"sex": ["F", "M", "F"], "age": ["<18", "25+", "18-24"], "weight": ["2000", "2010", "2005"],
        "parity": ["1", "NA", "2"], "extra": ["x", "", "01"]}


def test_read_back_labels_are_categories_with_the_same_codes(tmp_path: Path) -> None:
    table = _table()
    path = _release(tmp_path, GOOD)
    frame = read_release_labels(path, table)
    assert all(isinstance(frame[n].dtype, pd.CategoricalDtype) for n in table.names)
    assert list(frame["extra"]) == ["x", "", "01"]  # other columns: the text as written
    assert np.array_equal(table.encode_labels(frame), _old_codes(path, table))


@pytest.mark.parametrize("column, values", [
    ("sex", ["F", "X", "F"]),  # not a label
    ("sex", ["F", "", "M"]),  # empty
    ("age", ["<18", "25+ ", "18-24"]),  # a space makes it another text
    ("weight", ["2000", "2010.0", "2005"]),  # a number codec reads a value by value
    ("weight", ["2000", "2003", "2005"]),  # off the grid
    ("parity", ["1", "3", "NA"]),
])
def test_read_back_outside_the_labels_gives_the_old_codes_or_error(
        tmp_path: Path, column: str, values: list[str]) -> None:
    table = _table()
    path = _release(tmp_path, {**GOOD, column: values})
    frame = read_release_labels(path, table)
    assert not isinstance(frame[column].dtype, pd.CategoricalDtype)  # read again as text
    assert list(frame[column]) == values
    try:
        expected = _old_codes(path, table)
    except EncodingError as exc:
        with pytest.raises(EncodingError) as got:
            table.encode_labels(frame)
        assert str(got.value) == str(exc) and repr(column) in str(exc)
        assert not any(v in str(exc) for v in values if v not in table.names and len(v) > 1)
    else:
        assert np.array_equal(table.encode_labels(frame), expected)


def test_read_back_a_short_row_reads_as_before(tmp_path: Path) -> None:
    table = _table()
    path = tmp_path / "release.csv"
    path.write_text("sex,age,weight,parity\nF,<18,2000,1\nM,25+\n", encoding="utf-8")
    frame = read_release_labels(path, table)
    old = pd.read_csv(path, dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(frame[["weight", "parity"]], old[["weight", "parity"]])
    with pytest.raises(EncodingError, match="column 'weight'"):
        table.encode_labels(frame)
    with pytest.raises(EncodingError, match="column 'weight'"):
        _old_codes(path, table)


def test_read_back_a_missing_column_fails_as_before(tmp_path: Path) -> None:
    table = _table()
    path = _release(tmp_path, {k: v for k, v in GOOD.items() if k != "parity"})
    with pytest.raises(EncodingError) as old:
        _old_codes(path, table)
    with pytest.raises(EncodingError) as new:
        table.encode_labels(read_release_labels(path, table))
    assert str(new.value) == str(old.value) == "missing column(s): 'parity'"
