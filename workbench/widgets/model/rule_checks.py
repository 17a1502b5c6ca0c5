"""Checks of row rules against each other and against the proxy: shares removed, contradictions.

**Definition used.** A rule *removes everything* when no record inside the declared schema
survives it (¬A unsatisfiable). Two rules *contradict* when no record inside the declared
schema survives both (¬A ∧ ¬B unsatisfiable): together they remove every record, i.e. one
rule removes everything the other keeps. "Inside the declared schema" means every column
present (rules about missing values never fire), numbers within the declared bounds (whole
numbers for integer columns) and categories within the declared domain.

**Decision procedure (exact).** A rule's truth changes only at the literals it compares
with, so it suffices to evaluate both rules on a grid holding, per column, one value of every
region between (and at) those literals: for integers c−1, c, c+1 around each literal c plus
the bounds; for continuous columns the literals, the bounds and the midpoints between them;
for domain columns each literal value plus one value no literal mentions. Grids larger than
``GRID_LIMIT`` rows are not checked (the result is None, "unknown").
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from workbench.constraints import Predicate
from workbench.constraints.nodes import Comparison, Membership
from workbench.transform import ColumnSpec

GRID_LIMIT = 200_000


def removed_share(predicate: Predicate, frame: pd.DataFrame) -> float:
    """Share of the rows of a PUBLIC frame that the rule rejects (raw values)."""
    if len(frame) == 0:
        return 0.0
    return float(np.asarray(predicate.evaluate_raw(frame), dtype=bool).mean())


def _constants(predicates: Iterable[Predicate]) -> dict[str, list[Any]]:
    """Per column, every literal the rules compare it with."""
    out: dict[str, list[Any]] = {}
    for pred in predicates:
        for leaf in pred.leaves:
            if isinstance(leaf, Comparison):
                out.setdefault(leaf.column, []).append(leaf.value)
            elif isinstance(leaf, Membership):
                out.setdefault(leaf.column, []).extend(leaf.values)
            else:
                out.setdefault(leaf.column, [])
    return out


def representatives(column: ColumnSpec, constants: Sequence[Any]) -> list[Any]:
    """One value per region of the column that the literals can tell apart (see module doc).

    >>> col = ColumnSpec("age", "integer", None, (10.0, 65.0), "forbid", "drop")
    >>> representatives(col, [23])
    [10.0, 22.0, 23.0, 24.0, 65.0]
    """
    numbers = [float(c) for c in constants if isinstance(c, int | float)]
    if column.type in {"integer", "continuous"} and column.bounds is not None:
        lo, hi = column.bounds
        if column.type == "integer":
            points = {lo, hi}
            for c in numbers:
                points.update({math.floor(c) - 1.0, math.floor(c), math.floor(c) + 1.0,
                               math.ceil(c), math.ceil(c) + 1.0})
            return sorted(float(p) for p in points if lo <= p <= hi)
        cuts = sorted({lo, hi, *(c for c in numbers if lo <= c <= hi)})
        mids = [(a + b) / 2 for a, b in itertools.pairwise(cuts)]
        return sorted({*cuts, *mids})
    domain = list(column.domain or ())
    if column.numeric:
        ordered = sorted(float(v) for v in domain)
        picks = {ordered[0], ordered[-1]} if ordered else set()
        for c in numbers:
            below = [v for v in ordered if v < c]
            above = [v for v in ordered if v > c]
            picks.update(v for v in ordered if v == c)
            picks.update(below[-1:] + above[:1])
        return sorted(picks)
    texts = {c for c in constants if isinstance(c, str)}
    keep = [str(v) for v in domain if str(v) in texts]
    other = next((str(v) for v in domain if str(v) not in texts), None)
    return keep + ([other] if other is not None else [])


def _grid(
    predicates: Sequence[Predicate], columns: Mapping[str, ColumnSpec]
) -> pd.DataFrame | None:
    """Every combination of representative values of the columns the rules read."""
    constants = _constants(predicates)
    if any(c not in columns for c in constants):
        return None
    names = sorted(constants)
    values = [representatives(columns[c], constants[c]) for c in names]
    if any(not v for v in values) or math.prod(len(v) for v in values) > GRID_LIMIT:
        return None
    rows = list(itertools.product(*values))
    data: dict[str, Any] = {}
    for j, name in enumerate(names):
        column = [r[j] for r in rows]
        numeric = columns[name].numeric
        data[name] = pd.Series(column, dtype="float64" if numeric else "string")
    return pd.DataFrame(data)


def _survivors(predicates: Sequence[Predicate], columns: Mapping[str, ColumnSpec]) -> bool | None:
    """Whether some record in the schema survives every rule; None when it cannot be decided."""
    grid = _grid(predicates, columns)
    if grid is None:
        return None
    if grid.empty:
        return True
    kept = np.ones(len(grid), dtype=bool)
    try:
        for pred in predicates:
            kept &= ~np.asarray(pred.evaluate_raw(grid), dtype=bool)
    except (ValueError, KeyError):
        return None
    return bool(kept.any())


def removes_everything(pred: Predicate, columns: Mapping[str, ColumnSpec]) -> bool | None:
    """Whether the rule rejects every record inside the declared schema."""
    survives = _survivors([pred], columns)
    return None if survives is None else not survives


def contradict(a: Predicate, b: Predicate, columns: Mapping[str, ColumnSpec]) -> bool | None:
    """Whether no record inside the declared schema survives both rules (¬A ∧ ¬B unsatisfiable).

    >>> from workbench.constraints import parse
    >>> cols = {"age": ColumnSpec("age", "integer", None, (10.0, 65.0), "forbid", "drop")}
    >>> contradict(parse("age < 30"), parse("age >= 25"), cols)
    True
    >>> contradict(parse("age < 30"), parse("age > 40"), cols)
    False
    """
    survives = _survivors([a, b], columns)
    return None if survives is None else not survives


def conflict_warnings(
    rules: Sequence[tuple[str, Predicate]], columns: Mapping[str, ColumnSpec]
) -> dict[str, list[str]]:
    """Per rule name, the warnings about removing everything, alone or with another rule."""
    out: dict[str, list[str]] = {name: [] for name, _ in rules}
    total = {name: removes_everything(pred, columns) for name, pred in rules}
    for name, flag in total.items():
        if flag:
            out[name].append("removes every record inside the declared schema")
    for (na, a), (nb, b) in itertools.combinations(rules, 2):
        if total[na] or total[nb] or not (a.columns & b.columns):
            continue  # rules on disjoint columns can only clash if one removes everything
        if contradict(a, b, columns):
            out[na].append(f"contradicts {nb!r}: together they remove every record")
            out[nb].append(f"contradicts {na!r}: together they remove every record")
    return out
