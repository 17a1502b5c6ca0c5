"""Data read and cleaned chunk by chunk into one compact table (issue 38: registry scale).

Every chunk (CSV rows by pandas' chunked reader; a Parquet/Stata/SAS/SPSS file or a database
table by ``workbench.sources.source_chunks``) is read as ``read_raw`` reads a whole file, then
cleaned at once: the domain policies and the raw cleaning rules act row by row, so cleaning the
chunks one after another removes and recodes exactly the rows cleaning the whole table does,
and the per-chunk cleaning counts summed are the whole table's counts. The chunk is then
compacted before the next is read: a text ``categorical`` column becomes a pandas Categorical
whose categories are the spec's declared domain (never the data's values), one byte per row
instead of a Python string; numeric columns stay float64, so every value is kept exactly. The
missing policies, whose rates are over the whole table, are checked once on the joined table.
Peak memory is one raw chunk plus the compact table, not the raw table and its cleaned copies.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from workbench.transform.clean import Spec, clean
from workbench.transform.column import ColumnSpec
from workbench.transform.missing import FileFormat
from workbench.transform.raw import (
    _header,
    _typed,
    apply_domain_policy,
    check_missing,
    csv_plan,
    declared_frame,
    declared_source,
    refuse_undeclared,
    typed_wants,
)
from workbench.transform.table import EncodingError

#: Rows per chunk: bounded memory per read, few enough chunks to stay fast (read at call time,
#: so a test may set it).
CHUNK_ROWS = 262_144

T = TypeVar("T")


class _TextInNumbers(Exception):
    """A numeric column of a CSV holds text: the read restarts with every column as text."""


@dataclass
class Loaded:
    """The cleaned compact table, the raw row count, and the confidential cleaning counts."""

    frame: pd.DataFrame
    raw_rows: int
    policies: dict[str, int]
    rules: dict[str, int]


def _cannot_read(path: str | os.PathLike[str], exc: BaseException) -> EncodingError:
    """The one message for a file pandas cannot read (the exception's type only)."""
    return EncodingError(f"cannot read data file {os.fspath(path)!r} ({type(exc).__name__})")


def _csv(path: str | os.PathLike[str], rows: int, typed: bool, **kwargs: Any
         ) -> Iterator[pd.DataFrame]:
    """pandas' chunked CSV reader; a typed read that meets text in a number column raises
    :class:`_TextInNumbers` (as ``read_raw`` then rereads as text), other failures one
    EncodingError."""
    try:
        with pd.read_csv(path, chunksize=rows, **kwargs) as reader:
            yield from reader
    except (ValueError, TypeError) as exc:  # ParserError and UnicodeDecodeError are ValueErrors
        if typed:
            raise _TextInNumbers from None
        raise _cannot_read(path, exc) from None
    except OSError as exc:
        raise _cannot_read(path, exc) from None


def raw_chunks(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
               file_format: FileFormat | None = None, extra: Sequence[str] = (),
               rows: int | None = None, as_text: bool = False) -> Iterator[pd.DataFrame]:
    """``read_raw``'s frame, ``rows`` (default :data:`CHUNK_ROWS`) records at a time (same
    columns, names, dtypes and refusals); ``as_text`` reads a CSV's columns as text (the reread
    after a text cell)."""
    rows = rows or CHUNK_ROWS
    fmt = file_format or FileFormat()
    if _typed(path):
        from workbench.sources import SourceError, source_chunks

        markers = fmt.missing_markers if fmt.declared else ()
        try:
            for chunk in source_chunks(path, typed_wants(columns, extra), markers):
                refuse_undeclared(chunk, columns, fmt)
                yield chunk
        except SourceError as exc:
            raise EncodingError(str(exc)) from None
        return
    if fmt.declared:
        source = declared_source(columns, extra)
        kwargs = fmt.read_kwargs()
        header = _header(path, **kwargs)
        absent = [name for name, src in source.items() if src not in header]
        if absent:
            raise EncodingError(f"the data has no column(s) "
                                f"{', '.join(repr(m) for m in absent)}")
        for text in _csv(path, rows, False, usecols=list(source.values()), dtype="string",
                         **kwargs):
            yield declared_frame(text, columns, fmt, extra)
        return
    wanted, spaced, dtypes = csv_plan(path, columns, extra)
    for chunk in _csv(path, rows, not as_text, usecols=wanted,
                      dtype="string" if as_text else dtypes, skipinitialspace=spaced):
        yield chunk[wanted]


def _labels(column: ColumnSpec) -> list[str] | None:
    """The categories of a compacted column: a categorical column's text domain (the spec's)."""
    domain = column.domain or ()
    if column.type != "categorical" or not domain or not all(isinstance(v, str) for v in domain):
        return None
    return [str(v) for v in domain]


def compact(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> dict[str, pd.Series]:
    """A cleaned chunk's columns, text categorical ones as Categoricals over the declared
    domain (cleaning left only domain values or missing there: checked, no value shown)."""
    out = {}
    for name in frame.columns:
        series = frame[name]
        spec = next((c for c in columns if c.name == name), None)
        labels = None if spec is None else _labels(spec)
        if labels is not None:
            as_cat = pd.Series(pd.Categorical(series, categories=labels), copy=False)
            if int(as_cat.isna().sum()) != int(series.isna().sum()):
                raise EncodingError(f"column {name!r}: a cleaned value lies outside the declared "
                                    "domain; nothing was run and no budget was spent")
            series = as_cat
        out[name] = series.reset_index(drop=True)
    return out


def _add(total: dict[str, int], part: dict[str, int]) -> None:
    """Sum one chunk's cleaning counts into the running totals (keys in spec order)."""
    for key, value in part.items():
        total[key] = total.get(key, 0) + int(value)


def _load(path: str | os.PathLike[str], spec: Spec, file_format: FileFormat | None,
          extra: Sequence[str], rows: int | None, as_text: bool) -> Loaded:
    """One pass over the chunks: clean, count, compact each; join the columns at the end."""
    parts: dict[str, list[pd.Series]] = {}
    policies: dict[str, int] = {}
    rules: dict[str, int] = {}
    raw_rows = 0
    for chunk in raw_chunks(path, spec.columns, file_format, extra, rows, as_text):
        raw_rows += len(chunk)
        policy_part: dict[str, int] = {}
        rule_part: dict[str, int] = {}
        cleaned = clean(apply_domain_policy(chunk, spec.columns, policy_part), spec, rule_part,
                        check=False, domains=False)
        del chunk
        _add(policies, policy_part)
        _add(rules, rule_part)
        for name, series in compact(cleaned, spec.columns).items():
            parts.setdefault(name, []).append(series)
        del cleaned
    if not parts:
        return Loaded(pd.DataFrame(), raw_rows, policies, rules)
    joined = {}
    for name in list(parts):
        pieces = parts.pop(name)
        joined[name] = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0]
        del pieces
    frame = pd.DataFrame(joined, copy=False)
    del joined
    return_freed_memory()
    return Loaded(frame, raw_rows, policies, rules)


def return_freed_memory() -> bool:
    """Hand the freed chunks' heap pages back to the system (glibc's ``malloc_trim``): glibc
    keeps them after a chunked read (≈ 80–140 MB at 4M rows), and every later step's peak
    would carry them (issue 38's memory bar). False where the C library has no such call."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        trim = None
    if trim is None:
        return False
    trim(0)
    return True


def fold_raw(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
             file_format: FileFormat | None, fold: Callable[[Iterator[pd.DataFrame]], T]) -> T:
    """``fold`` over the raw chunks, started again over text chunks when a CSV's number column
    holds text (as ``read_raw`` rereads the whole file as text), so ``fold`` sees the chunks of
    the frame ``read_raw`` gives; ``fold`` must build its result afresh on each call."""
    try:
        return fold(raw_chunks(path, columns, file_format))
    except _TextInNumbers:
        return fold(raw_chunks(path, columns, file_format, as_text=True))


def load_clean(path: str | os.PathLike[str], spec: Spec, file_format: FileFormat | None = None,
               extra: Sequence[str] = (), rows: int | None = None) -> Loaded:
    """The table read, cleaned and compacted chunk by chunk, its missing policies checked on
    the whole (with no raw row, the frame is empty and nothing was checked)."""
    try:
        loaded = _load(path, spec, file_format, extra, rows, as_text=False)
    except _TextInNumbers:
        loaded = _load(path, spec, file_format, extra, rows, as_text=True)
    if loaded.raw_rows:
        check_missing(loaded.frame, spec.columns)
    return loaded


def as_read(frame: pd.DataFrame) -> pd.DataFrame:
    """The compact table with its Categoricals as text, the dtypes ``read_raw`` gives (for
    public data, whose consumers compute on the values, not only on the codes)."""
    text = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype({c: "string" for c in text}) if text else frame
