"""Exact missing-value statistics of R and S for the missing-value criterion kinds.

Columns whose codec carries a missing code (``category`` or ``allow`` policies,
``transform.missing``) have it last; everything here reads the code matrices and the public
codecs only.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.kinds.base import CheckContext
from workbench.transform.missing import MissingCodec

if TYPE_CHECKING:
    from workbench.transform import TableCodec


def missing_columns(table: TableCodec) -> tuple[str, ...]:
    """Columns of a configuration that have a missing code."""
    return tuple(n for n, c in table.codecs if isinstance(c, MissingCodec))


def chosen(table: TableCodec, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The criterion's ``columns`` (default: every column with a missing code)."""
    cols = params.get("columns")
    return tuple(cols) if cols else missing_columns(table)


def missing_matrix(codes: np.ndarray, table: TableCodec, columns: Sequence[str]) -> np.ndarray:
    """(n, k) booleans: row r is missing column j."""
    codes = np.asarray(codes)
    out = np.zeros((codes.shape[0], len(columns)), dtype=bool)
    for j, name in enumerate(columns):
        codec = table.codec(name)
        out[:, j] = codes[:, table.names.index(name)] == codec.size - 1
    return out


def missing_rate_error(real: np.ndarray, synth: np.ndarray, table: TableCodec,
                       columns: Sequence[str]) -> float:
    """max over columns of |share missing in R − share missing in S|.

    >>> from workbench.transform import IdentityCodec, TableCodec
    >>> t = TableCodec((("a", MissingCodec(IdentityCodec(("x",)), "", True)),))
    >>> missing_rate_error(np.array([[1], [0]]), np.array([[0], [0]]), t, ["a"])
    0.5
    """
    r = missing_matrix(real, table, columns).mean(axis=0)
    s = missing_matrix(synth, table, columns).mean(axis=0)
    return float(np.abs(r - s).max()) if len(columns) else 0.0


def co_missing_error(real: np.ndarray, synth: np.ndarray, table: TableCodec,
                     columns: Sequence[str]) -> float:
    """max over pairs (a, b) of |share missing both in R − in S|."""
    r = missing_matrix(real, table, columns)
    s = missing_matrix(synth, table, columns)
    gaps = [abs(float((r[:, i] & r[:, j]).mean() - (s[:, i] & s[:, j]).mean()))
            for i, j in itertools.combinations(range(len(columns)), 2)]
    return max(gaps, default=0.0)


def check_missing_columns(ctx: CheckContext, params: Mapping[str, Any], path: str,
                          least: int) -> None:
    """``columns`` (when given) name columns whose policy is not ``forbid``; at least
    ``least`` such columns exist."""
    cols = params.get("columns")
    if cols is None:
        names = [n for n, c in ctx.columns.items() if c.missing != "forbid"]
        if len(names) < least:
            ctx.problem(path, f"needs at least {least} column(s) with missing: category or allow")
        return
    if not isinstance(cols, list) or len(cols) < least:
        ctx.problem(f"{path}.columns", f"must list at least {least} column(s)")
        return
    for i, name in enumerate(cols):
        if name not in ctx.columns:
            ctx.unknown_column(f"{path}.columns[{i}]", name)
        elif ctx.columns[name].missing == "forbid":
            ctx.problem(f"{path}.columns[{i}]", f"column {name!r} forbids missing values")
