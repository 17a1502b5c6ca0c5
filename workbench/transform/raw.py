"""Reading raw tables and checking them against the spec's declared domains.

Only the spec's columns are ever read from a file, so an unexpected extra
column never enters memory. Messages name columns, never values or counts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.transform.column import ColumnSpec
from workbench.transform.missing import FileFormat, check_missing_policies, undeclared_markers
from workbench.transform.table import EncodingError


def _empty(path: str | os.PathLike[str]) -> EncodingError:
    """The one message for a file with no header and no records."""
    return EncodingError(f"the data file {os.fspath(path)!r} is empty (no header, no "
                         "records); nothing was run and no budget was spent")


def _header(path: str | os.PathLike[str], **kwargs: Any) -> pd.Index:
    """The file's column names; an empty or unreadable file fails with one clear message."""
    try:
        return pd.read_csv(path, nrows=0, **kwargs).columns
    except pd.errors.EmptyDataError:
        raise _empty(path) from None
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise EncodingError(
            f"cannot read data file {os.fspath(path)!r} ({type(exc).__name__})"
        ) from None


def _spaced(path: str | os.PathLike[str]) -> bool:
    """Whether the header separates fields by ', ' (as UCI Adult does): then every field is."""
    try:
        names = pd.read_csv(path, nrows=0).columns
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return False
    return len(names) > 1 and all(str(n).startswith(" ") for n in names[1:])


def read_raw(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
             file_format: FileFormat | None = None, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Read the spec's columns of a CSV (optionally gzipped); fail naming a missing column.

    ``extra`` names further columns the spec declares outside the schema (a survey's weight
    column), read as numbers. A file written with ', ' separators is read with
    ``skipinitialspace``. Parquet, Stata, SAS, SPSS files and database URLs are read through
    ``workbench.sources`` into the same frame a CSV gives. With a declared ``file_format``
    exactly its missing markers become missing (no pandas default markers), a file column
    named by a column's ``source`` is read under the spec's name, and an undeclared
    marker-like token fails naming the column.
    """
    fmt = file_format or FileFormat()
    if _typed(path):
        return _read_typed(path, columns, fmt, extra)
    if fmt.declared:
        return _read_declared(path, columns, fmt, extra)
    wanted, spaced, dtypes = csv_plan(path, columns, extra)
    try:
        frame = pd.read_csv(path, usecols=wanted, dtype=dtypes, skipinitialspace=spaced)
    except (ValueError, TypeError):
        # a numeric column holds text somewhere: read it as text; the domain check flags it
        frame = pd.read_csv(path, usecols=wanted, dtype="string", skipinitialspace=spaced)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise EncodingError(
            f"cannot read data file {os.fspath(path)!r} ({type(exc).__name__})"
        ) from None
    return frame[wanted]


def csv_plan(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
             extra: Sequence[str]) -> tuple[list[str], bool, dict[str, str]]:
    """What a whole or chunked read of a plain CSV asks pandas for: the columns (refused
    naming any the header lacks), the ', ' spacing, and each column's dtype."""
    wanted = [c.name for c in columns] + [e for e in extra if e not in {c.name for c in columns}]
    spaced = _spaced(path)
    header = _header(path, skipinitialspace=spaced)
    missing = [w for w in wanted if w not in header]
    if missing:
        raise EncodingError(f"the data has no column(s) {', '.join(repr(m) for m in missing)}")
    dtypes = {c.name: ("string" if c.type == "categorical" else "float64") for c in columns}
    dtypes |= {e: "float64" for e in wanted if e not in dtypes}
    return wanted, spaced, dtypes


def _typed(path: str | os.PathLike[str]) -> bool:
    """Whether DATA is read by ``workbench.sources`` (not a CSV file)."""
    from workbench.sources import SourceError, is_source

    try:
        return is_source(path)
    except SourceError as exc:
        raise EncodingError(str(exc)) from None


def _read_typed(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
                fmt: FileFormat, extra: Sequence[str] = ()) -> pd.DataFrame:
    """``read_raw`` of a typed source: text for categorical or non-numeric columns, float64
    for the others, under the spec's names; declared markers only, as for a CSV."""
    from workbench.sources import SourceError, read_source

    try:
        frame = read_source(path, typed_wants(columns, extra),
                            fmt.missing_markers if fmt.declared else ())
    except SourceError as exc:
        raise EncodingError(str(exc)) from None
    refuse_undeclared(frame, columns, fmt)
    return frame


def typed_wants(columns: Sequence[ColumnSpec], extra: Sequence[str] = ()) -> list[Any]:
    """What a typed source must supply: spec columns (text or number) and extra numbers."""
    from workbench.sources import Want

    names = {c.name for c in columns}
    wants = [Want(c.name, c.source or c.name, c.type == "categorical" or not c.numeric, c.type)
             for c in columns]
    return wants + [Want(e, e, False, "numeric (survey weight)") for e in extra
                    if e not in names]


def refuse_undeclared(frame: pd.DataFrame, columns: Sequence[ColumnSpec],
                      fmt: FileFormat) -> None:
    """Fail naming the columns that hold an undeclared marker-like token (no value shown)."""
    bad = undeclared_markers(frame, columns, fmt)
    if bad:
        raise EncodingError(
            f"column(s) {', '.join(repr(b) for b in bad)} hold a token that looks like a "
            "missing-value marker but schema.file_format.missing_markers does not declare it")


def _read_declared(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
                   fmt: FileFormat, extra: Sequence[str] = ()) -> pd.DataFrame:
    """``read_raw`` under a declared file format: declared markers only, source names."""
    source = declared_source(columns, extra)
    kwargs = fmt.read_kwargs()
    header = _header(path, **kwargs)
    absent = [name for name, src in source.items() if src not in header]
    if absent:
        raise EncodingError(f"the data has no column(s) {', '.join(repr(m) for m in absent)}")
    try:
        text = pd.read_csv(path, usecols=list(source.values()), dtype="string", **kwargs)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise EncodingError(
            f"cannot read data file {os.fspath(path)!r} ({type(exc).__name__})"
        ) from None
    return declared_frame(text, columns, fmt, extra)


def declared_source(columns: Sequence[ColumnSpec], extra: Sequence[str] = ()) -> dict[str, str]:
    """Spec (and extra) column names to the file's column names under a declared format."""
    source = {c.name: (c.source or c.name) for c in columns}
    return source | {e: e for e in extra if e not in source}


def declared_frame(text: pd.DataFrame, columns: Sequence[ColumnSpec], fmt: FileFormat,
                   extra: Sequence[str] = ()) -> pd.DataFrame:
    """A text read under a declared format, renamed to spec names; numeric columns as float64
    where every present cell is a number (else the domain check names the column)."""
    source = declared_source(columns, extra)
    frame = text.rename(columns={src: name for name, src in source.items()})[list(source)]
    refuse_undeclared(frame, columns, fmt)
    for col in columns:
        if col.type != "categorical" and col.numeric:
            as_number = pd.to_numeric(frame[col.name], errors="coerce")
            if (as_number.isna() == frame[col.name].isna()).all():
                frame[col.name] = as_number.astype("float64")
    for name in extra:
        if name not in {c.name for c in columns}:
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    return frame


def out_of_domain(frame: pd.DataFrame, column: ColumnSpec) -> np.ndarray:
    """Rows whose (non-missing) value lies outside the column's declared domain or bounds."""
    series = frame[column.name]
    present = ~series.isna().to_numpy()
    if column.type in {"integer", "continuous"}:
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        lo, hi = column.bounds  # type: ignore[misc]
        with np.errstate(invalid="ignore"):
            bad = ~((x >= lo) & (x <= hi))
        if column.type == "integer":
            with np.errstate(invalid="ignore"):
                bad |= ~np.isnan(x) & (np.floor(x) != x)
        return bad & present
    domain = list(column.domain or ())
    if column.numeric:
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        ok = np.isin(x, np.asarray(domain, dtype=np.float64))
    else:
        ok = (
            series.astype("string")
            .isin([str(v) for v in domain])
            .to_numpy(dtype=bool, na_value=False)
        )
    return ~ok & present


def non_numeric(frame: pd.DataFrame, column: ColumnSpec) -> np.ndarray:
    """Cells of a numeric column that are present but are not numbers (text in the file)."""
    series = frame[column.name]
    if column.type == "categorical" or pd.api.types.is_numeric_dtype(series):
        return np.zeros(len(series), dtype=bool)
    x = pd.to_numeric(series, errors="coerce")
    return (x.isna() & series.notna()).to_numpy(dtype=bool)


def as_numbers(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> pd.DataFrame:
    """Numeric columns as float64 (text cells become missing), as the rules expect them (a
    shallow copy: columns are replaced, never written into, so the input is never changed)."""
    out = frame.copy(deep=False)
    for col in columns:
        if col.type != "categorical" and not pd.api.types.is_numeric_dtype(out[col.name]):
            out[col.name] = pd.to_numeric(out[col.name], errors="coerce").astype("float64")
    return out


def text_in_numbers_message(column: ColumnSpec) -> str:
    """A data problem, said as one: which column, which policy, what to do (no values)."""
    fix = ("'clip' cannot clip text" if column.out_of_domain == "clip" else
           "'error' stops the run")
    may_miss = column.missing != "forbid"
    return (f"data problem in column {column.name!r}: it is declared {column.type} but some "
            f"cells are not numbers. Its out_of_domain policy is {column.out_of_domain!r}, and "
            f"{fix}; the run stopped before any noise. Fix the file, or set the column's "
            "out_of_domain to 'drop' to remove such rows" + (" or 'to_missing' to make them "
            "missing" if may_miss else "") + ". `workbench profile SPEC PUBLIC.csv` "
            "shows the share of such cells on public data.")


def apply_domain_policy(frame: pd.DataFrame, columns: Sequence[ColumnSpec],
                        tally: dict[str, int] | None = None) -> pd.DataFrame:
    """Drop, clip, recode to missing or refuse out-of-domain values as each policy says.

    A text cell in a numeric column is out of its domain: 'drop' removes its row, 'to_missing'
    makes it missing; 'error' and 'clip' refuse the file with a data problem naming the column
    and the policy. 'to_missing' (only for columns that may be missing; the validator checks)
    turns an unknown label into a missing value, which the column's missing policy and
    ``max_missing_rate`` then handle. ``tally`` receives, per column with a policy other than
    'error', how many rows it dropped or cells it recoded or clipped: CONFIDENTIAL counts that
    leave a run only through the spec's ``cleaning_counts`` (DP or declared public).
    """
    keep = np.ones(len(frame), dtype=bool)
    out = frame.copy(deep=False)  # columns are replaced below, never written into
    for col in columns:
        bad = out_of_domain(out, col)
        if tally is not None and col.out_of_domain != "error":
            tally[col.name] = int(bad.sum())
        if not bad.any():
            continue
        if col.out_of_domain not in {"drop", "to_missing"} and non_numeric(out, col).any():
            raise EncodingError(text_in_numbers_message(col))
        if col.out_of_domain == "error":
            raise EncodingError(
                f"column {col.name!r} has values outside its declared domain "
                "and its policy is 'error'"
            )
        if col.out_of_domain == "drop":
            keep &= ~bad
        elif col.out_of_domain == "to_missing":
            out[col.name] = out[col.name].mask(bad)
        else:  # clip (only allowed for integer/continuous columns)
            lo, hi = col.bounds  # type: ignore[misc]
            x = pd.to_numeric(out[col.name], errors="coerce")
            if x[bad].isna().any():
                raise EncodingError(
                    f"column {col.name!r} has non-numeric values that cannot be clipped"
                )
            out[col.name] = x.clip(lo, hi)
    kept = out if keep.all() else out.loc[keep]  # no row dropped: no copy of the chunk
    return as_numbers(kept.reset_index(drop=True), columns)


def check_missing(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> None:
    """Enforce each column's missing-value policy (``transform.missing`` for the others)."""
    if any(c.missing != "forbid" for c in columns):
        check_missing_policies(frame, columns)
        return
    for col in columns:
        if col.missing == "forbid" and frame[col.name].isna().any():
            raise EncodingError(
                f"column {col.name!r} has missing values and its policy is 'forbid' "
                "(add a cleaning rule such as '{0} is missing' to remove such rows)".format(
                    col.name
                )
            )
