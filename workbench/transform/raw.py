"""Reading raw tables and checking them against the spec's declared domains.

Only the spec's columns are ever read from a file, so an unexpected extra
column never enters memory. Messages name columns, never values or counts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.transform.table import EncodingError

if TYPE_CHECKING:
    from workbench.spec.model import ColumnSpec


def _spaced(path: str | os.PathLike[str]) -> bool:
    """Whether the header separates fields by ', ' (as UCI Adult does): then every field is."""
    try:
        names = pd.read_csv(path, nrows=0).columns
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return False
    return len(names) > 1 and all(str(n).startswith(" ") for n in names[1:])


def read_raw(path: str | os.PathLike[str], columns: Sequence[ColumnSpec],
             extra: Sequence[str] = ()) -> pd.DataFrame:
    """Read the spec's columns of a CSV (optionally gzipped); fail naming a missing column.

    ``extra`` names further columns the spec declares outside the schema (a survey's weight
    column), read as numbers. A file written with ', ' separators is read with
    ``skipinitialspace``.
    """
    wanted = [c.name for c in columns] + [e for e in extra if e not in {c.name for c in columns}]
    spaced = _spaced(path)
    try:
        header = pd.read_csv(path, nrows=0, skipinitialspace=spaced).columns
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise EncodingError(
            f"cannot read data file {os.fspath(path)!r} ({type(exc).__name__})"
        ) from None
    missing = [w for w in wanted if w not in header]
    if missing:
        raise EncodingError(f"the data has no column(s) {', '.join(repr(m) for m in missing)}")
    dtypes = {c.name: ("string" if c.type == "categorical" else "float64") for c in columns}
    dtypes |= {e: "float64" for e in wanted if e not in dtypes}
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


def apply_domain_policy(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> pd.DataFrame:
    """Drop, clip or refuse out-of-domain values as each column's policy says."""
    keep = np.ones(len(frame), dtype=bool)
    out = frame.copy()
    for col in columns:
        bad = out_of_domain(out, col)
        if not bad.any():
            continue
        if col.out_of_domain == "error":
            raise EncodingError(
                f"column {col.name!r} has values outside its declared domain "
                "and its policy is 'error'"
            )
        if col.out_of_domain == "drop":
            keep &= ~bad
        else:  # clip (only allowed for integer/continuous columns)
            lo, hi = col.bounds  # type: ignore[misc]
            x = pd.to_numeric(out[col.name], errors="coerce")
            if x[bad].isna().any():
                raise EncodingError(
                    f"column {col.name!r} has non-numeric values that cannot be clipped"
                )
            out[col.name] = x.clip(lo, hi)
    return out.loc[keep].reset_index(drop=True)


def check_missing(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> None:
    """Enforce each column's missing-value policy (only 'forbid' exists so far)."""
    for col in columns:
        if col.missing == "forbid" and frame[col.name].isna().any():
            raise EncodingError(
                f"column {col.name!r} has missing values and its policy is 'forbid' "
                "(add a cleaning rule such as '{0} is missing' to remove such rows)".format(
                    col.name
                )
            )
