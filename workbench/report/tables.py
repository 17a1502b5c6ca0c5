"""Shares of a release's labels in O(distinct cells): each column factorized once, counts by
``np.bincount``; the same float64 numbers, labels and order as ``value_counts`` and
``pd.crosstab(normalize=True)``, without their per-row Python work at registry scale.

The release is public (DP output); these tables feed report.html's and the release review's
figures. Missing labels (NaN) are left out of every count, as ``value_counts`` and
``crosstab`` do; every share is still over all records for 1-way tables (their callers divide
by ``len(release)``) and over the pairs with both labels for 2-way tables (``crosstab``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class CodedColumn:
    """One column as integer codes (-1: missing) into its distinct labels, first seen first."""

    name: object
    codes: np.ndarray
    uniques: pd.Index

    @cached_property
    def counts(self) -> np.ndarray:
        """Records per distinct label (int64, aligned with ``uniques``; counted once)."""
        seen = self.codes[self.codes >= 0]
        counts = np.bincount(seen, minlength=len(self.uniques)).astype(np.int64)
        counts.setflags(write=False)  # shared by every table of this column
        return counts


def code_column(labels: pd.Series) -> CodedColumn:
    """Factorize once, keeping the codes in the smallest signed integer type that fits."""
    codes, uniques = pd.factorize(labels, sort=False)
    small = np.min_scalar_type(-max(len(uniques), 1))  # signed, room for -1
    return CodedColumn(labels.name, codes.astype(small, copy=False), pd.Index(uniques))


def _by_label(column: CodedColumn, keys: pd.Index) -> pd.Series:
    """Counts per key, summing keys that coincide (two values with one text form); named like
    ``value_counts``'s result."""
    series = pd.Series(column.counts, index=keys.rename(column.name), dtype=np.int64,
                       name="count")
    if keys.has_duplicates:
        series = series.groupby(level=0, sort=False).sum()
    return series


def value_shares(column: CodedColumn, order: Sequence[object], n: int) -> pd.Series:
    """``labels.value_counts().reindex(order, fill_value=0) / max(n, 1)``, from the codes."""
    counts = _by_label(column, column.uniques).reindex(list(order), fill_value=0)
    return counts / max(n, 1)


def text_shares(column: CodedColumn, order: Sequence[str], n: int) -> pd.Series:
    """``labels.astype(str).value_counts().reindex(order, fill_value=0) / max(n, 1)``."""
    keys = column.uniques.astype(str)
    counts = _by_label(column, keys).reindex(list(order), fill_value=0)
    return counts / max(n, 1)


def observed(column: CodedColumn) -> list[object]:
    """The distinct non-missing labels, sorted (the order when the spec gives none)."""
    return sorted(column.uniques)


def pair_shares(a: CodedColumn, b: CodedColumn, index: Sequence[object] | None = None,
                columns: Sequence[object] | None = None) -> pd.DataFrame:
    """``pd.crosstab(a, b, normalize=True)`` reindexed to ``index`` × ``columns`` (missing
    labels filled with 0; None keeps the observed labels, sorted), by one ``np.bincount``."""
    both = (a.codes >= 0) & (b.codes >= 0)
    width = max(len(b.uniques), 1)
    cells = a.codes[both].astype(np.int64) * width + b.codes[both]
    counts = np.bincount(cells, minlength=len(a.uniques) * width)
    counts = counts.reshape(len(a.uniques), width)[:, :len(b.uniques)].astype(np.int64)
    rows, cols = counts.sum(axis=1) > 0, counts.sum(axis=0) > 0  # crosstab keeps seen pairs
    table = pd.DataFrame(counts[np.ix_(rows, cols)],
                         index=pd.Index(a.uniques[rows], name=a.name),
                         columns=pd.Index(b.uniques[cols], name=b.name))
    table = table.sort_index(axis=0).sort_index(axis=1) / max(int(counts.sum()), 1)
    return table.reindex(index=list(table.index if index is None else index),
                         columns=list(table.columns if columns is None else columns),
                         fill_value=0)


class CodedRelease:
    """A release's columns, each factorized on first use and kept (for the report's figures)."""

    def __init__(self, release: pd.DataFrame) -> None:
        self.release = release
        self.n = len(release)
        self._columns: dict[object, CodedColumn] = {}

    def __getitem__(self, name: object) -> CodedColumn:
        """The column ``name`` as codes (factorized once)."""
        if name not in self._columns:
            self._columns[name] = code_column(self.release[name])
        return self._columns[name]
