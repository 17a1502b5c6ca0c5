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


def read_raw(path: str | os.PathLike[str], columns: Sequence[ColumnSpec]) -> pd.DataFrame:
    """Read the spec's columns of a CSV (optionally gzipped); fail naming a missing column."""
    wanted = [c.name for c in columns]
    try:
        header = pd.read_csv(path, nrows=0).columns
    except pd.errors.EmptyDataError:
        raise EncodingError(f"the data file {os.fspath(path)!r} is empty (no header, no "
                            "records); nothing was run and no budget was spent") from None
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise EncodingError(
            f"cannot read data file {os.fspath(path)!r} ({type(exc).__name__})"
        ) from None
    missing = [w for w in wanted if w not in header]
    if missing:
        raise EncodingError(f"the data has no column(s) {', '.join(repr(m) for m in missing)}")
    dtypes = {c.name: ("string" if c.type == "categorical" else "float64") for c in columns}
    try:
        frame = pd.read_csv(path, usecols=wanted, dtype=dtypes)
    except (ValueError, TypeError):
        # a numeric column holds text somewhere: read it as text; the domain check flags it
        frame = pd.read_csv(path, usecols=wanted, dtype="string")
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


def non_numeric(frame: pd.DataFrame, column: ColumnSpec) -> np.ndarray:
    """Cells of a numeric column that are present but are not numbers (text in the file)."""
    series = frame[column.name]
    if column.type == "categorical" or pd.api.types.is_numeric_dtype(series):
        return np.zeros(len(series), dtype=bool)
    x = pd.to_numeric(series, errors="coerce")
    return (x.isna() & series.notna()).to_numpy(dtype=bool)


def as_numbers(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> pd.DataFrame:
    """Numeric columns as float64 (text cells become missing), as the rules expect them."""
    out = frame.copy()
    for col in columns:
        if col.type != "categorical" and not pd.api.types.is_numeric_dtype(out[col.name]):
            out[col.name] = pd.to_numeric(out[col.name], errors="coerce").astype("float64")
    return out


def text_in_numbers_message(column: ColumnSpec) -> str:
    """A data problem, said as one: which column, which policy, what to do (no values)."""
    fix = ("'clip' cannot clip text" if column.out_of_domain == "clip" else
           "'error' stops the run")
    return (f"data problem in column {column.name!r}: it is declared {column.type} but some "
            f"cells are not numbers. Its out_of_domain policy is {column.out_of_domain!r}, and "
            f"{fix}; the run stopped before any noise. Fix the file, or set the column's "
            "out_of_domain to 'drop' to remove such rows. `workbench profile SPEC PUBLIC.csv` "
            "shows the share of such cells on public data.")


def apply_domain_policy(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> pd.DataFrame:
    """Drop, clip or refuse out-of-domain values as each column's policy says.

    A text cell in a numeric column is out of its domain: 'drop' removes its row; 'error' and
    'clip' refuse the file with a data problem naming the column and the policy.
    """
    keep = np.ones(len(frame), dtype=bool)
    out = frame.copy()
    for col in columns:
        bad = out_of_domain(out, col)
        if not bad.any():
            continue
        if col.out_of_domain != "drop" and non_numeric(out, col).any():
            raise EncodingError(text_in_numbers_message(col))
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
    return as_numbers(out.loc[keep].reset_index(drop=True), columns)


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
