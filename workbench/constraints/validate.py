"""Static checks of a rule against the declared column types of a spec, as readable messages."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from workbench.constraints.nodes import ORDERING, Comparison, Membership, render_literal
from workbench.constraints.predicate import Predicate

NUMERIC_TYPES = frozenset({"ordinal", "integer", "continuous"})
COLUMN_TYPES = NUMERIC_TYPES | {"categorical"}


def validate_columns(pred: Predicate, known: Mapping[str, str]) -> list[str]:
    """Problems (unknown columns, type mismatches) so a spec editor can show them all at once."""
    problems: list[str] = []
    for leaf in pred.leaves:
        col = leaf.column
        if col not in known:
            problems.append(_unknown(col, known))
            continue
        kind = known[col]
        if kind not in COLUMN_TYPES:
            problems.append(f"column {col!r} has unknown type {kind!r}")
            continue
        if isinstance(leaf, Comparison) and leaf.op in ORDERING:
            if kind == "categorical":
                needs = f"{leaf.op!r} needs a numeric column"
                problems.append(f"column {col!r} is categorical; {needs}")
            elif isinstance(leaf.value, str):
                problems.append(f"{leaf.op!r} on column {col!r} needs a number, not a string")
            continue
        values = (leaf.value,) if isinstance(leaf, Comparison) else ()
        values = leaf.values if isinstance(leaf, Membership) else values
        for value in values:
            if kind in NUMERIC_TYPES and isinstance(value, str):
                literal = render_literal(value)
                problems.append(f"column {col!r} is {kind}; it cannot be compared with {literal}")
    return list(dict.fromkeys(problems))


def _unknown(column: str, known: Mapping[str, str]) -> str:
    """Message for an unknown column, suggesting the closest known name."""
    close = difflib.get_close_matches(column, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown column {column!r}{hint}"
