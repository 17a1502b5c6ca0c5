"""Missing values as the spec declares them: file markers, the missing code, the policy checks.

A column's ``missing`` policy is ``forbid`` (no missing value may reach the encoder),
``category`` (missing is a value of its own, with a public label, synthesised like any other)
or ``allow`` (missing stays missing: one reserved code that the generators' missing strategy
and the criteria handle). Both non-forbid policies give the column one extra code, the last,
so the domain still comes from the spec alone. Markers are declared per file format
(``schema.file_format.missing_markers``), never guessed; a marker-like token the spec does not
declare is an error. Messages name columns, never values or counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.transform.codecs import MISSING, Codec
from workbench.transform.column import ColumnSpec
from workbench.transform.table import EncodingError

POLICIES = ("forbid", "category", "allow")

#: Tokens that commonly mean "missing"; one of these in a column, undeclared, is refused.
MARKER_LIKE = ("?", "", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", ".", "-", "n/a")
#: Default upper bound on a column's missing share when ``allow`` declares none.
DEFAULT_MAX_MISSING_RATE = 0.5


@dataclass(frozen=True)
class FileFormat:
    """How a data file spells missing values and separators; public, declared in the spec.

    ``declared`` is False for specs without ``schema.file_format`` (pandas' default markers,
    kept for older designs).
    """

    missing_markers: tuple[str, ...] = ()
    skip_initial_space: bool = False
    declared: bool = False

    def read_kwargs(self) -> dict[str, Any]:
        """Arguments of ``pandas.read_csv`` that apply exactly the declared markers."""
        if not self.declared:
            return {}
        return {"na_values": list(self.missing_markers), "keep_default_na": False,
                "skipinitialspace": self.skip_initial_space}


@dataclass(frozen=True)
class MissingCodec:
    """A codec plus one code for missing values, the last: ``category`` or ``allow`` columns.

    >>> from workbench.transform.codecs import IdentityCodec
    >>> c = MissingCodec(IdentityCodec(("a", "b")), "NA", reserved=False)
    >>> c.size, c.labels, c.encode(["b", None, "a"]).tolist()
    (3, ('a', 'b', 'NA'), [1, 2, 0])
    """

    base: Codec
    label: str
    reserved: bool
    labels: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", (*self.base.labels, self.label))

    @property
    def size(self) -> int:
        return self.base.size + 1

    @property
    def missing_code(self) -> int:
        """The code that stands for a missing value."""
        return self.base.size

    @property
    def numeric(self) -> bool:
        return bool(getattr(self.base, "numeric", False))

    def encode(self, values: Any) -> np.ndarray:
        codes = np.asarray(self.base.encode(values), dtype=np.int64).copy()
        codes[codes == MISSING] = self.missing_code
        return codes

    def encode_labels(self, labels: Any) -> np.ndarray:
        series = pd.Series(labels, copy=False)
        codes = np.asarray(self.base.encode_labels(series), dtype=np.int64).copy()
        gone = series.isna().to_numpy() | (series.astype("string") == self.label).to_numpy(
            dtype=bool, na_value=False)
        codes[gone] = self.missing_code
        return codes

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(self.labels, dtype=object)[np.asarray(codes)]

    def numbers(self) -> np.ndarray:
        """The base codec's numbers and NaN for the missing code (it has no value)."""
        return np.append(np.asarray(self.base.numbers(), dtype=np.float64), np.nan)

    def intervals(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The base intervals; the missing code may be any value (rules 'depend' on it)."""
        got = self.base.intervals()
        if got is None:
            return None
        return np.append(got[0], -np.inf), np.append(got[1], np.inf)

    def categories(self) -> tuple[frozenset, ...] | None:
        """The base categories; the missing code stands for the category ``None``."""
        got = self.base.categories()
        return None if got is None else (*got, frozenset([None]))


def with_missing(codec: Codec, column: ColumnSpec) -> Codec:
    """The column's codec under its missing policy (unchanged for ``forbid``)."""
    if column.missing == "forbid":
        return codec
    return MissingCodec(codec, column.missing_label, reserved=column.missing == "allow")


def missing_code(codec: Codec) -> int | None:
    """The reserved missing code of an ``allow`` column's codec, else None."""
    if isinstance(codec, MissingCodec) and codec.reserved:
        return codec.missing_code
    return None


def undeclared_markers(frame: pd.DataFrame, columns: Sequence[ColumnSpec],
                       fmt: FileFormat) -> list[str]:
    """Columns holding a marker-like token that is neither declared nor in the domain."""
    if not fmt.declared:
        return []
    suspects = [m for m in MARKER_LIKE if m not in fmt.missing_markers]
    bad = []
    for col in columns:
        known = {str(v) for v in (col.domain or ())}
        tokens = [m for m in suspects if m not in known]
        text = frame[col.name].astype("string").str.strip()
        if text.isin(tokens).to_numpy(dtype=bool, na_value=False).any():
            bad.append(col.name)
    return bad


def check_missing_policies(frame: pd.DataFrame, columns: Sequence[ColumnSpec]) -> None:
    """Refuse, before any noise, a table the declared missing policies do not cover.

    A column entirely missing, a missing value in a ``forbid`` column, or a missing share
    above the column's ``max_missing_rate`` (the public bound the partial-observation
    sensitivities rely on) fails, naming the column only.
    """
    n = len(frame)
    for col in columns:
        gone = frame[col.name].isna().to_numpy()
        if n and gone.all():
            raise EncodingError(f"column {col.name!r} is entirely missing")
        if col.missing == "forbid" and gone.any():
            raise EncodingError(
                f"column {col.name!r} has missing values and its policy is 'forbid' "
                "(declare missing: category or allow, or add a cleaning rule such as "
                f"'{col.name} is missing' to remove such rows)")
        limit = col.max_missing_rate
        if col.missing != "forbid" and limit is not None and n and gone.mean() > limit:
            raise EncodingError(
                f"column {col.name!r} has more missing values than its declared "
                "max_missing_rate")
