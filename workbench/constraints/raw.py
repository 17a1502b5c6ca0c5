"""Vectorised two-valued evaluation of a rule on raw (unbinned) pandas data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from workbench.constraints.errors import ConstraintColumnError
from workbench.constraints.nodes import (
    ORDERING,
    And,
    Comparison,
    Literal,
    MissingTest,
    Node,
    Not,
    Or,
    leaves,
)

_NUMERIC_INFERRED = frozenset({"integer", "floating", "mixed-integer-float", "decimal", "boolean"})
_COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}


@dataclass(frozen=True)
class _Column:
    """One raw column prepared once per evaluation: kind, numeric values, missing mask."""

    name: str
    kind: str  # "numeric", "text" or "empty" (every value missing)
    series: pd.Series
    values: np.ndarray | None
    missing: np.ndarray


def evaluate_raw(root: Node, frame: pd.DataFrame) -> np.ndarray:
    """Boolean mask of rows where the rule holds; comparisons with missing values are False."""
    columns = {name: _prepare(frame, name) for name in sorted({lf.column for lf in leaves(root)})}
    return np.asarray(_eval(root, columns), dtype=bool)


def _prepare(frame: pd.DataFrame, name: str) -> _Column:
    """Classify a column and extract its values without looping over rows."""
    if name not in frame.columns:
        raise ConstraintColumnError(name, "data frame")
    series = frame[name]
    if isinstance(series, pd.DataFrame):
        raise ValueError(f"column {name!r} appears more than once in the data frame")
    missing = series.isna().to_numpy(dtype=bool)
    kind = _kind(series)
    values = None
    if kind == "numeric":
        dtype = series.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in "biu":
            values = series.to_numpy()
        else:
            values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    return _Column(name, kind, series, values, missing)


def _kind(series: pd.Series) -> str:
    """'numeric', 'text' or 'empty'; anything else (dates, mixed types) is refused."""
    name, dtype = series.name, series.dtype
    probe: pd.Series | pd.Index = series
    if isinstance(dtype, pd.CategoricalDtype):
        probe = dtype.categories
        dtype = probe.dtype
    if ptypes.is_bool_dtype(dtype) or (
        ptypes.is_numeric_dtype(dtype) and not ptypes.is_complex_dtype(dtype)
    ):
        return "numeric"
    if ptypes.is_string_dtype(dtype) or ptypes.is_object_dtype(dtype):
        inferred = ptypes.infer_dtype(probe, skipna=True)
        if inferred == "string":
            return "text"
        if inferred == "empty":
            return "empty"
        if inferred in _NUMERIC_INFERRED:
            return "numeric"
        raise ValueError(f"column {name!r} mixes numbers and text or holds unsupported values")
    raise ValueError(f"column {name!r} has unsupported type {dtype} for comparisons")


def _eval(node: Node, columns: dict[str, _Column]) -> np.ndarray:
    """Mask of one sub-rule."""
    if isinstance(node, Not):
        return ~_eval(node.operand, columns)
    if isinstance(node, And | Or):
        combine = np.logical_and if isinstance(node, And) else np.logical_or
        out = _eval(node.operands[0], columns).copy()
        for child in node.operands[1:]:
            combine(out, _eval(child, columns), out=out)
        return out
    col = columns[node.column]
    if isinstance(node, MissingTest):
        return ~col.missing if node.negated else col.missing.copy()
    if isinstance(node, Comparison):
        return _compare(col, node.op, node.value)
    return _member(col, node.values, node.negated)


def _check_literal(col: _Column, value: Literal, op: str) -> None:
    """Refuse ordering on text and mixing text with numbers; messages never show data."""
    is_text = isinstance(value, str)
    if op in ORDERING and (is_text or col.kind == "text"):
        raise ValueError(f"column {col.name!r}: {op!r} orders numbers; it cannot compare text")
    if col.kind == "numeric" and is_text:
        raise ValueError(f"column {col.name!r} is numeric; the rule compares it with a string")
    if col.kind == "text" and not is_text:
        raise ValueError(f"column {col.name!r} holds text; the rule compares it with a number")


def _compare(col: _Column, op: str, value: Literal) -> np.ndarray:
    """Mask of ``column op value``, False wherever the value is missing."""
    _check_literal(col, value, op)
    n = len(col.missing)
    if col.kind == "empty":
        return np.zeros(n, dtype=bool)
    if col.kind == "text":
        hit = col.series.isin([value]).to_numpy(dtype=bool)
        return hit if op == "==" else ~hit & ~col.missing
    assert col.values is not None
    out = np.asarray(_COMPARE[op](col.values, value), dtype=bool)
    return out & ~col.missing if op == "!=" else out


def _member(col: _Column, values: tuple[Literal, ...], negated: bool) -> np.ndarray:
    """Mask of ``column [not] in {values}``, False wherever the value is missing."""
    for value in values:
        _check_literal(col, value, "in")
    n = len(col.missing)
    if col.kind == "empty":
        return np.zeros(n, dtype=bool)
    if col.kind == "text":
        hit = col.series.isin(list(values)).to_numpy(dtype=bool)
    else:
        assert col.values is not None
        hit = np.zeros(n, dtype=bool)
        for value in values:
            hit |= col.values == value
    return ~hit & ~col.missing if negated else hit
