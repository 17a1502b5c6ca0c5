"""Three-valued (Kleene) evaluation of a rule on binned codes via one lookup table per comparison.

Truth values: 0 = false for every raw value a bin may hold, 2 = true for every such value,
1 = depends on the value inside the bin. AND = min, OR = max, NOT = 2 - x.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from workbench.constraints.errors import ConstraintColumnError
from workbench.constraints.nodes import (
    ORDERING,
    And,
    Comparison,
    Leaf,
    Literal,
    Membership,
    MissingTest,
    Node,
    Not,
    Or,
    leaves,
)
from workbench.constraints.semantics import BinSemantics

FALSE, PARTIAL, TRUE = 0, 1, 2


@dataclass(frozen=True)
class _Table:
    """Truth per code of one column, not yet spread over rows."""

    column: str
    table: np.ndarray


def evaluate_bins(
    root: Node, codes: Mapping[str, np.ndarray], semantics: Mapping[str, BinSemantics]
) -> np.ndarray:
    """Per-row truth (int8 0/1/2): tables per code, then one gather per column and connective."""
    columns = sorted({leaf.column for leaf in leaves(root)})
    rows = _check_codes(columns, codes, semantics)
    result = _eval(root, rows, semantics)
    if isinstance(result, _Table):
        result = result.table[rows[result.column]]
    return np.asarray(result, dtype=np.int8)


def partial_codes(root: Node, semantics: Mapping[str, BinSemantics]) -> dict[str, list[int]]:
    """Codes, per column, where at least one comparison on that column is undecided (truth 1)."""
    found: dict[str, set[int]] = {}
    for leaf in leaves(root):
        if isinstance(leaf, MissingTest):
            continue
        table = leaf_table(leaf, _semantics_of(leaf.column, semantics))
        undecided = np.flatnonzero(table == PARTIAL)
        if undecided.size:
            found.setdefault(leaf.column, set()).update(int(c) for c in undecided)
    return {col: sorted(found[col]) for col in sorted(found)}


def leaf_table(leaf: Leaf, sem: BinSemantics) -> np.ndarray:
    """Truth of one comparison for each code of its column (length = number of codes)."""
    if isinstance(leaf, MissingTest):
        value = TRUE if leaf.negated else FALSE  # binned data has no missing values
        return np.full(sem.n_codes, value, dtype=np.int8)
    if sem.is_categorical:
        return _categorical_table(leaf, sem)
    return _numeric_table(leaf, sem)


def _semantics_of(column: str, semantics: Mapping[str, BinSemantics]) -> BinSemantics:
    """Semantics of a referenced column, or an error naming it."""
    if column not in semantics:
        raise ConstraintColumnError(column, "bin semantics")
    sem = semantics[column]
    if not isinstance(sem, BinSemantics):
        raise ValueError(f"semantics of column {column!r} must be a BinSemantics")
    return sem


def _check_codes(
    columns: list[str], codes: Mapping[str, np.ndarray], semantics: Mapping[str, BinSemantics]
) -> dict[str, np.ndarray]:
    """Integer 1-D code arrays of equal length, each within its column's number of codes."""
    rows: dict[str, np.ndarray] = {}
    for col in columns:
        sem = _semantics_of(col, semantics)
        if col not in codes:
            raise ConstraintColumnError(col, "binned codes")
        arr = np.asarray(codes[col])
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"codes of column {col!r} must be a 1-D integer array")
        if arr.size and (arr.min() < 0 or arr.max() >= sem.n_codes):
            raise ValueError(f"codes of column {col!r} fall outside 0..{sem.n_codes - 1}")
        rows[col] = arr
    if len({arr.size for arr in rows.values()}) > 1:
        raise ValueError(f"code arrays of columns {columns} differ in length")
    return rows


def _eval(
    node: Node, rows: dict[str, np.ndarray], semantics: Mapping[str, BinSemantics]
) -> _Table | np.ndarray:
    """Truth of a sub-rule; single-column parts stay tables so they cost nothing per row."""
    if isinstance(node, Not):
        inner = _eval(node.operand, rows, semantics)
        if isinstance(inner, _Table):
            return _Table(inner.column, TRUE - inner.table)
        return TRUE - inner
    if isinstance(node, And | Or):
        combine = np.minimum if isinstance(node, And) else np.maximum
        tables: dict[str, np.ndarray] = {}
        spread: list[np.ndarray] = []
        for child in node.operands:
            part = _eval(child, rows, semantics)
            if isinstance(part, _Table):
                prev = tables.get(part.column)
                tables[part.column] = part.table if prev is None else combine(prev, part.table)
            else:
                spread.append(part)
        if not spread and len(tables) == 1:
            ((col, table),) = tables.items()
            return _Table(col, table)
        spread += [table[rows[col]] for col, table in tables.items()]
        out = spread[0].copy()
        for part in spread[1:]:
            combine(out, part, out=out)
        return out
    return _Table(node.column, leaf_table(node, semantics[node.column]))


def _tri(always: np.ndarray, never: np.ndarray) -> np.ndarray:
    """Truth table from 'true for every value' and 'false for every value' masks."""
    out = np.full(always.shape, PARTIAL, dtype=np.int8)
    out[always] = TRUE
    out[never] = FALSE
    return out


def _numeric_table(leaf: Comparison | Membership, sem: BinSemantics) -> np.ndarray:
    """Interval logic on inclusive [low, high] bounds (narrowed to integers if integer)."""
    values = (leaf.value,) if isinstance(leaf, Comparison) else leaf.values
    if any(isinstance(v, str) for v in values):
        raise ValueError(f"column {leaf.column!r} is numeric; the rule compares it with a string")
    lo, hi = sem.bounds()
    if isinstance(leaf, Membership):
        table = _member_numeric(lo, hi, [float(v) for v in values], sem.integer)
        return TRUE - table if leaf.negated else table
    x, op = float(leaf.value), leaf.op
    if op in ("==", "!="):
        table = _member_numeric(lo, hi, [x], sem.integer)
        return table if op == "==" else TRUE - table
    if op == "<":
        return _tri(hi < x, lo >= x)
    if op == "<=":
        return _tri(hi <= x, lo > x)
    if op == ">":
        return _tri(lo > x, hi <= x)
    return _tri(lo >= x, hi < x)


def _member_numeric(lo: np.ndarray, hi: np.ndarray, xs: list[float], integer: bool) -> np.ndarray:
    """Truth of 'value in xs' per bin; exact for integer bins, by interval logic otherwise."""
    if integer:
        xs = [x for x in xs if x.is_integer()]
    distinct = sorted(set(xs))
    inside = np.zeros(lo.shape, dtype=np.int64)
    for x in distinct:
        inside += (lo <= x) & (x <= hi)
    if integer:
        with np.errstate(invalid="ignore"):
            width = hi - lo + 1  # inf for open-ended bins
        always = inside == width
    else:
        always = (lo == hi) & (inside > 0)
    return _tri(always, inside == 0)


def _categorical_table(leaf: Comparison | Membership, sem: BinSemantics) -> np.ndarray:
    """Set logic: true if all a code's categories match, false if none does."""
    assert sem.categories is not None
    if isinstance(leaf, Comparison) and leaf.op in ORDERING:
        reason = f"{leaf.op!r} needs a numeric column"
        raise ValueError(f"column {leaf.column!r} is categorical; {reason}")
    values = (leaf.value,) if isinstance(leaf, Comparison) else leaf.values
    _check_categorical_literals(leaf.column, values, sem.categories)
    wanted = frozenset(values)
    always = np.array([cats <= wanted for cats in sem.categories], dtype=bool)
    never = np.array([not (cats & wanted) for cats in sem.categories], dtype=bool)
    table = _tri(always, never)
    negated = leaf.op == "!=" if isinstance(leaf, Comparison) else leaf.negated
    return TRUE - table if negated else table


def _check_categorical_literals(
    column: str, values: tuple[Literal, ...], categories: tuple[frozenset, ...]
) -> None:
    """Refuse a string literal against numeric categories and vice versa."""
    kinds = {isinstance(c, str) for cats in categories for c in cats}
    for value in values:
        if isinstance(value, str) not in kinds:
            held, given = ("numbers", "string") if isinstance(value, str) else ("text", "number")
            raise ValueError(
                f"column {column!r} has categories that are {held}; "
                f"the rule compares it with a {given}"
            )
