"""Transformations: codecs, round trips, domain policies, and messages that never leak values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.transform import (
    BinsCodec,
    EncodingError,
    GroupsCodec,
    IdentityCodec,
    coarse_lookup,
)
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, out_of_domain, read_raw


def test_paper_labels_and_numbers():
    weight = BinsCodec(tuple(range(1500, 4501, 100)))
    assert weight.size == 32
    assert (
        weight.labels[0] == "<1500"
        and weight.labels[1] == "1500-1599"
        and weight.labels[-1] == "4500+"
    )
    nums = weight.numbers()
    assert nums[0] == 1500 and nums[1] == 1549.5 and nums[-1] == 4499
    parity = BinsCodec((1, 2, 4, 7, 11), open_below=False)
    assert parity.labels == ("1", "2-3", "4-6", "7-10", "11+")
    assert parity.numbers().tolist() == [1, 2.5, 5, 8.5, 10]


def test_encoding_marks_bad_values_without_raising():
    parity = BinsCodec((1, 2, 4, 7, 11), open_below=False)
    codes = parity.encode(pd.Series([0, 1, 3, 11, 50, None, "x"], dtype=object))
    assert codes.tolist() == [-1, 0, 1, 4, 4, -2, -1]
    closed = BinsCodec((0, 10, 20), open_below=False, open_above=False)
    assert closed.encode([0, 9, 10, 19, 20]).tolist() == [0, 0, 1, 1, -1]
    sex = IdentityCodec(("M", "F"))
    assert sex.encode(pd.Series(["F", "M", None, "Q"])).tolist() == [1, 0, -2, -1]


def test_clip_then_bin():
    codec = BinsCodec((10, 20, 30), clip=(12, 29), open_below=False, open_above=False)
    assert codec.encode([0, 15, 25, 99]).tolist() == [0, 0, 1, 1]
    assert BinsCodec((10, 20, 30), open_below=False, open_above=False).encode([99]).tolist() == [-1]


def test_coarse_lookup_from_bin_numbers():
    fine = BinsCodec((18, 20, 25, 30, 35, 37, 40, 43, 45))
    coarse = BinsCodec((25, 30, 35), integer=False, labels=("<=24", "25-29", "30-34", ">=35"))
    assert coarse_lookup(fine, coarse).tolist() == [0, 0, 0, 1, 2, 3, 3, 3, 3, 3]


def test_groups_codec():
    g = GroupsCodec((("north", ("a", "b")), ("south", ("c",))))
    assert g.encode(["a", "c", "b", "z"]).tolist() == [0, 1, 0, -1]
    with pytest.raises(ValueError, match="more than one group"):
        GroupsCodec((("x", ("a",)), ("y", ("a",))))


@settings(max_examples=200, deadline=None)
@given(
    edges=st.lists(st.integers(-1000, 1000), min_size=1, max_size=30, unique=True).map(sorted),
    open_below=st.booleans(),
    open_above=st.booleans(),
    data=st.data(),
)
def test_encode_decode_encode_is_identity_on_codes(edges, open_below, open_above, data):
    if len(edges) < 2 and not (open_below or open_above):
        edges = [edges[0], edges[0] + 1]
    codec = BinsCodec(tuple(edges), open_below=open_below, open_above=open_above)
    codes = np.asarray(data.draw(st.lists(st.integers(0, codec.size - 1), min_size=1, max_size=50)))
    labels = codec.decode(codes)
    assert codec.encode_labels(labels).tolist() == codes.tolist()
    # and every raw value in a bin's interval encodes to that bin
    lo, hi = codec.intervals()
    for c in np.unique(codes):
        probe = [v for v in (lo[c], hi[c]) if np.isfinite(v)]
        assert (codec.encode(probe) == c).all()


def test_table_round_trip(example_spec):
    config = next(example_spec.configurations())
    table = example_spec.table_codec(config)
    rng = np.random.default_rng(0)
    codes = np.column_stack([rng.integers(0, s, 1000) for s in table.domain.sizes])
    labels = table.decode(codes)
    assert (table.encode_labels(labels) == codes).all()
    assert table.domain.sizes == (12, 9, 5, 6, 2, 32)



def test_a_categorical_decode_has_the_same_text_and_keeps_the_codes(example_spec, tmp_path):
    """A release decoded as Categoricals (issue 38: no Python string per row) writes the same
    CSV bytes and encodes back to the same codes; its categories are the labels in code order."""
    config = next(example_spec.configurations())
    table = example_spec.table_codec(config)
    rng = np.random.default_rng(1)
    codes = np.column_stack([rng.integers(0, s, 500) for s in table.domain.sizes]).astype(np.uint8)
    text, compact = table.decode(codes), table.decode(codes, categorical=True)
    for j, name in enumerate(table.names):
        column = compact[name]
        assert isinstance(column.dtype, pd.CategoricalDtype), name
        assert list(column.cat.categories) == [str(v) for v in table.codec(name).labels]
        assert (column.cat.codes.to_numpy() == codes[:, j]).all()
    text.to_csv(tmp_path / "text.csv", index=False, lineterminator="\n")
    compact.to_csv(tmp_path / "compact.csv", index=False, lineterminator="\n")
    assert (tmp_path / "text.csv").read_bytes() == (tmp_path / "compact.csv").read_bytes()
    assert (table.encode_labels(compact) == codes).all()

def test_table_errors_name_the_column_never_the_value(example_spec):
    table = example_spec.table_codec(next(example_spec.configurations()))
    frame = pd.DataFrame(
        {
            "birth_month": [1],
            "mother_age": [30],
            "parity": [1],
            "gestation_week": [39],
            "birth_sex": ["Q777"],
            "birth_weight": [3300],
        }
    )
    with pytest.raises(EncodingError) as info:
        table.encode(frame)
    assert "birth_sex" in str(info.value) and "Q777" not in str(info.value)
    with pytest.raises(EncodingError, match="missing column"):
        table.encode(frame.drop(columns=["parity"]))


def test_domain_policy_drop_clip_error(example_spec):
    cols = {c.name: c for c in example_spec.columns}
    frame = pd.DataFrame({"mother_age": [30, 777, 12.5, None]})
    assert out_of_domain(frame, cols["mother_age"]).tolist() == [False, True, True, False]
    from dataclasses import replace

    kept = apply_domain_policy(frame, [cols["mother_age"]])
    assert len(kept) == 2
    clip = replace(cols["mother_age"], out_of_domain="clip")
    assert apply_domain_policy(frame.iloc[:2], [clip])["mother_age"].tolist() == [30, 65]
    err = replace(cols["mother_age"], out_of_domain="error")
    with pytest.raises(EncodingError) as info:
        apply_domain_policy(frame, [err])
    assert "777" not in str(info.value) and "mother_age" in str(info.value)


def test_read_raw_reads_only_spec_columns(example_spec, tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame(
        {
            "secret": ["s3cr3t"],
            "birth_month": [1],
            "mother_age": [30],
            "parity": [1],
            "gestation_week": [39],
            "birth_sex": ["F"],
            "birth_weight": [3300],
        }
    ).to_csv(path, index=False)
    frame = read_raw(path, example_spec.columns)
    assert list(frame.columns) == list(example_spec.column_names)
    (tmp_path / "bad.csv").write_text("birth_month,mother_age\n1,30\n")
    with pytest.raises(EncodingError, match="'parity'"):
        read_raw(tmp_path / "bad.csv", example_spec.columns)


def test_clean_removes_rule_rows_and_enforces_missing(example_spec):
    frame = pd.DataFrame(
        {
            "birth_month": [1, 2, 3, 4],
            "mother_age": [30, 18, 30, None],
            "parity": [1, 5, 2, 1],
            "gestation_week": [39, 39, 39, 39],
            "birth_sex": ["F", "M", "F", "M"],
            "birth_weight": [3300, 3300, 6000, 3300],
        }
    )
    out = clean(frame, example_spec)
    assert out["birth_month"].tolist() == [1]  # teen parity > 3, weight > 5500, missing age removed


def test_a_wide_domain_counts_its_cells_exactly_and_summarises_its_rows() -> None:
    """36 columns of 8 codes: 8^36 cells passes 2^63; the size must not wrap negative, and
    CellCounts must still summarise the rows (NHANES' 36 columns failed with 'invalid dims')."""
    from workbench.transform import Domain
    from workbench.transform.cells import CellCounts

    domain = Domain(tuple(f"c{i}" for i in range(36)), (8,) * 36)
    assert domain.size() == 8 ** 36
    codes = np.tile(np.arange(8), (36, 1)).T[[0, 1, 1, 7]]
    counts = CellCounts.from_codes(codes, domain)
    assert sorted(counts.counts.tolist()) == [1, 1, 2]
    assert counts.marginal(("c3",)).tolist() == [1, 2, 0, 0, 0, 0, 0, 1]


def test_unique_rows_is_numpys_row_unique_on_wide_domains() -> None:
    """``unique_rows`` (packed int64 words) gives np.unique(axis=0)'s cells, inverse and
    counts, in the same order, on domains too wide for one cell number (36+ columns)."""
    from workbench.transform.cells import unique_rows

    rng = np.random.default_rng(7)
    for d, n in ((1, 50), (36, 3000), (44, 1500), (70, 800)):
        sizes = rng.integers(1, 40, d)
        rows = np.stack([rng.integers(0, s, n) for s in sizes], axis=1).astype(np.int64)
        rows[n // 2:] = rows[: n - n // 2]  # repeated rows
        cells, inverse, counts = np.unique(rows, axis=0, return_inverse=True,
                                           return_counts=True)
        mine = unique_rows(rows, sizes)
        assert np.array_equal(mine[0], cells) and np.array_equal(mine[1], inverse.ravel())
        assert np.array_equal(mine[2], counts)
