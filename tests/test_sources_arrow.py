"""Issue 38, reads as cheap as a CSV's: Arrow batches converted in Arrow's kernels give exactly
the frame the pandas route gave, chunks read ahead on a helper thread arrive in order with the
reader's own errors, and cleaning's shallow copies never change the caller's frame."""

from __future__ import annotations

import decimal
import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from workbench.sources import SourceError
from workbench.sources.convert import SourceColumn, Want, arrow_frame, convert_chunk
from workbench.sources.prefetch import prefetched
from workbench.transform.column import ColumnSpec
from workbench.transform.raw import apply_domain_policy, as_numbers


def _batch() -> pa.RecordBatch:
    """Every type class a source hands over, with nulls."""
    return pa.record_batch({
        "small": pa.array([1, None, 3, 40], pa.int16()),
        "big": pa.array([2**53 + 1, -5, None, 0], pa.int64()),
        "real": pa.array([0.5, None, 2.0, 0.1], pa.float32()),
        "text": pa.array(["M", None, "F", "M"], pa.string()),
        "enum": pa.array(["a", "b", None, "a"]).dictionary_encode(),
        "coded": pa.array([1, 2, None, 1], pa.int8()).dictionary_encode(),
        "money": pa.array([decimal.Decimal("1.10"), None, decimal.Decimal("-2.5"),
                           decimal.Decimal("0")], pa.decimal128(5, 2)),
    })


def _old_route(batch: pa.RecordBatch) -> pd.DataFrame:
    """What the sources did before: ``to_pandas``, Categoricals as objects."""
    frame = batch.to_pandas()
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype(object)
    return frame


def test_arrow_frame_converts_to_exactly_what_the_pandas_route_gave():
    batch = _batch()
    names = batch.schema.names
    kinds = {"small": "integer", "big": "integer", "real": "float", "text": "text",
             "enum": "text", "coded": "integer", "money": "float"}
    columns = {n: SourceColumn(kinds[n], n) for n in names}
    wants = [Want(n, n, kinds[n] == "text", "x") for n in names]
    wants.append(Want("coded_label", "coded", True, "categorical"))
    labels = {"coded": {1.0: "one"}}
    fast = convert_chunk(arrow_frame(batch, names), wants, columns, labels, ["-5"], "src")
    slow = convert_chunk(_old_route(batch), wants, columns, labels, ["-5"], "src")
    for want in wants:
        pd.testing.assert_series_equal(fast[want.name], slow[want.name], check_exact=True)
    assert fast["coded_label"].tolist()[:2] == ["one", "2"]
    assert np.isnan(fast["big"].iloc[1])  # the declared marker -5 became missing
    assert fast["big"].iloc[0] == float(2**53 + 1)  # rounded as numpy rounds it


def test_arrow_frame_types_text_as_string_and_numbers_as_float64():
    frame = arrow_frame(_batch(), _batch().schema.names)
    assert frame["small"].dtype == np.float64 and np.isnan(frame["small"].iloc[1])
    assert isinstance(frame["text"].dtype, pd.StringDtype)
    assert frame["text"].isna().tolist() == [False, True, False, False]
    assert frame["enum"].tolist()[:2] == ["a", "b"]
    assert frame["coded"].dtype == np.float64


def test_prefetched_chunks_arrive_in_order_and_the_reader_is_closed():
    closed = threading.Event()

    def reader():
        try:
            yield from range(7)
        finally:
            closed.set()

    assert list(prefetched(reader())) == list(range(7))
    assert closed.is_set()


def test_a_reader_error_reaches_the_consumer_as_it_was():
    def reader():
        yield 1
        raise SourceError("data source 'x': the connection was dropped while reading")

    seen = []
    with pytest.raises(SourceError, match="dropped while reading"):
        for item in prefetched(reader()):
            seen.append(item)
    assert seen == [1]


def test_a_consumer_that_stops_early_stops_and_closes_the_reader():
    closed = threading.Event()
    made = []

    def reader():
        try:
            for i in range(1000):
                made.append(i)
                yield i
        finally:
            closed.set()

    chunks = prefetched(reader())
    assert next(chunks) == 0
    chunks.close()  # e.g. a refusal while cleaning the first chunk
    assert closed.is_set()
    assert len(made) < 10  # the helper stopped reading a step or two ahead


def test_cleaning_never_changes_the_callers_frame():
    columns = [
        ColumnSpec("age", "integer", None, (10, 65), "forbid", "clip"),
        ColumnSpec("sex", "categorical", ("M", "F"), None, "allow", "to_missing"),
        ColumnSpec("w", "integer", None, (0, 9), "forbid", "drop"),
        ColumnSpec("n", "integer", None, (0, 9), "forbid", "error"),
    ]
    frame = pd.DataFrame({"age": [5.0, 30.0, 70.0], "sex": pd.array(["M", "X", "F"], "string"),
                          "w": [1.0, 2.0, 3.0], "n": pd.array(["1", "2", "3"], "string")})
    before = frame.copy()
    out = apply_domain_policy(frame, columns)
    numbers = as_numbers(frame, columns)
    pd.testing.assert_frame_equal(frame, before)
    assert out["age"].tolist() == [10.0, 30.0, 65.0]
    assert out["sex"].isna().tolist() == [False, True, False]
    assert numbers["n"].dtype == np.float64 and frame["n"].dtype == before["n"].dtype
