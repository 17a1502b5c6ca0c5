"""Typed source columns into the spec's raw values: one check of the types, then chunk by chunk.

A source reports each column's type class (integer, float, text, boolean, other) and its
native name, and optionally value labels (Stata/SPSS/SAS formats, a database's code table).
A spec column read as a number needs an integer or float column; a column read as text takes
text, or integer/float codes: a labelled code becomes its label, an unlabelled one its number
written as a CSV would write it (``3``, ``2.5``). Declared missing markers become missing. The
result has exactly the dtypes ``transform.raw.read_raw`` gives a CSV (``string`` for text,
``float64`` for numbers), so everything downstream sees the same frame whatever the source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.sources.location import SourceError

#: Type classes a source reports; which ones a spec column may be read from.
NUMBER_OK = frozenset({"integer", "float"})
TEXT_OK = frozenset({"text", "integer", "float"})


@dataclass(frozen=True)
class Want:
    """One column the spec reads: its spec name, its name in the source, text or number."""

    name: str
    source: str
    text: bool
    declared_as: str  # the spec's type, for messages


@dataclass(frozen=True)
class SourceColumn:
    """A source column's type class and native type name (e.g. ``integer``, ``int2``)."""

    kind: str
    native: str


def check_columns(wants: Sequence[Want], columns: Mapping[str, SourceColumn],
                  shown: str) -> None:
    """Refuse, before any read, an absent column or one whose type cannot match the spec."""
    absent = [w.name for w in wants if w.source not in columns]
    if absent:
        raise SourceError(f"data source {shown!r} has no column(s) "
                          f"{', '.join(repr(a) for a in absent)}; nothing was run and no "
                          "budget was spent")
    for w in wants:
        col = columns[w.source]
        ok = TEXT_OK if w.text else NUMBER_OK
        if col.kind not in ok:
            raise SourceError(
                f"data source {shown!r}: column {w.source!r} has type {col.native!r} "
                f"({col.kind}), which cannot hold the spec's {w.declared_as} column "
                f"{w.name!r}; nothing was run and no budget was spent")


def arrow_frame(batch: Any, names: Sequence[str]) -> pd.DataFrame:
    """An Arrow record batch as the frame ``convert_chunk`` takes, column by column in Arrow's
    own kernels (no object column, no copy of a text column): integers and floats as float64
    (missing as NaN), text as pandas ``string``, dictionary columns decoded to their values;
    any other type (e.g. a decimal) as ``to_pandas`` gives it. ``names``: the columns, in order.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {}
    for name, column in zip(names, batch.columns, strict=True):
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        kind = column.type
        if pa.types.is_integer(kind) or pa.types.is_floating(kind):
            values = pc.cast(column, pa.float64(), safe=False).to_numpy(zero_copy_only=False)
            out[name] = pd.Series(values, copy=False)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            out[name] = pd.Series(pd.array(column, dtype="string"), copy=False)
        else:
            out[name] = column.to_pandas()
    return pd.DataFrame(out, copy=False)


def _number_text(x: float) -> str:
    """A number as a CSV writes it: integral values without a decimal point."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _as_text(series: pd.Series, labels: Mapping[float, str] | None, kind: str) -> pd.Series:
    """A chunk's column as text: labels for labelled codes, CSV spelling for other numbers
    (``kind``: the source column's type class, checked before any read)."""
    if kind == "text":
        return series.astype("string")
    x = series.astype("float64")
    present = x.notna()
    mapping = {v: (labels or {}).get(v, _number_text(v)) for v in pd.unique(x[present])}
    out = pd.Series(pd.NA, index=series.index, dtype="string")
    out[present] = x[present].map(mapping).astype("string")
    return out


def _as_number(series: pd.Series) -> pd.Series:
    """A chunk's column as float64 (a driver's ints, floats or decimals; None is missing)."""
    return pd.to_numeric(series, errors="raise").astype("float64")


def convert_chunk(chunk: pd.DataFrame, wants: Sequence[Want],
                  columns: Mapping[str, SourceColumn],
                  labels: Mapping[str, Mapping[float, str]], markers: Sequence[str],
                  shown: str) -> dict[str, pd.Series]:
    """One chunk in the spec's raw values, under spec names; declared markers are missing."""
    numeric_markers = []
    for m in markers:
        try:
            numeric_markers.append(float(m))
        except ValueError:
            continue
    out = {}
    for w in wants:
        try:
            if w.text:
                values = _as_text(chunk[w.source], labels.get(w.source), columns[w.source].kind)
                if markers:  # (no marker: no per-row pass, no copy)
                    values = values.mask(values.isin(list(markers)))
            else:
                values = _as_number(chunk[w.source])
                if numeric_markers:
                    values = values.mask(values.isin(numeric_markers))
        except (ValueError, TypeError):
            raise SourceError(f"data source {shown!r}: column {w.source!r} holds values that "
                              f"are not of the spec's type {w.declared_as}") from None
        out[w.name] = values.reset_index(drop=True)
    return out


def assemble(chunks: Iterable[pd.DataFrame], wants: Sequence[Want],
             columns: Mapping[str, SourceColumn],
             labels: Mapping[str, Mapping[float, str]], markers: Sequence[str],
             shown: str) -> pd.DataFrame:
    """Every chunk converted as it arrives (the source's chunk is dropped at once), then one
    frame joined column by column, so the peak holds the converted chunks and one column."""
    parts: dict[str, list[pd.Series]] = {w.name: [] for w in wants}
    for chunk in chunks:
        converted = convert_chunk(chunk, wants, columns, labels, markers, shown)
        del chunk
        for name in parts:
            parts[name].append(converted[name])
        del converted
    if not next(iter(parts.values()), []):
        empty = {w.name: pd.Series(dtype="string" if w.text else "float64") for w in wants}
        return pd.DataFrame(empty)
    out = {}
    for name in list(parts):
        out[name] = pd.concat(parts.pop(name), ignore_index=True)
    return pd.DataFrame(out, copy=False)
