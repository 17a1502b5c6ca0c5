"""What a kind's validation may ask of the spec (:class:`CheckContext`), and the checks the
kinds share: numeric and complete columns, pairs of columns, a draft's template target,
whole-number counts of columns."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from workbench.transform import ColumnSpec

Clique = tuple[str, ...]


class CheckContext(Protocol):
    """What a kind's validation may ask of the spec being built (the validator implements it)."""

    columns: Mapping[str, ColumnSpec]
    criterion_kinds: Mapping[str, str]

    def problem(self, path: str, message: str) -> None:
        """Record a problem at a JSON path."""

    def unknown_column(self, path: str, name: Any) -> None:
        """Record an unknown column name (with a did-you-mean hint)."""

    def alternatives(self, column: str) -> int:
        """How many transformation alternatives ``column`` has (0 if none are declared)."""

    def has_coarse(self, column: str) -> bool:
        """Whether ``column`` declares a coarse binning for group-bys."""


def numeric_column(ctx: CheckContext, path: str, name: Any, missing_ok: bool = False) -> bool:
    """``name`` must be a numeric column of the schema, present in every row unless the kind
    handles missing values itself (``missing_ok``): a mean or a regression over a column
    whose missing code has no number would otherwise fail only after ε was spent."""
    if name not in ctx.columns:
        ctx.unknown_column(path, name)
        return False
    if not ctx.columns[name].numeric:
        ctx.problem(path, f"column {name!r} is not numeric")
        return False
    return missing_ok or complete_column(ctx, path, name)


def complete_column(ctx: CheckContext, path: str, name: str) -> bool:
    """A column this kind reads in every row must have ``missing: forbid``."""
    policy = ctx.columns[name].missing
    if policy == "forbid":
        return True
    ctx.problem(path, f"column {name!r} may be missing (missing: {policy}) but this criterion "
                "needs its value in every row: declare missing: forbid, leave the column out, "
                "or use a kind that handles missing values (knn_imputed_mean, "
                "observed_marginal_error)")
    return False


def pairs(columns: Sequence[str]) -> list[Clique]:
    """All 2-way cliques of ``columns``, in the given order."""
    return [tuple(p) for p in itertools.combinations(columns, 2)]


def template_target(document: Mapping[str, Any]) -> tuple[Any, list[float]]:
    """The last integer or continuous column of a draft and its bounds (for templates)."""
    cols = document.get("schema", {}).get("columns", [])
    numeric = [c for c in cols if isinstance(c, Mapping)
               and c.get("type") in ("integer", "continuous")]
    target = numeric[-1] if numeric else {"name": "", "bounds": [0, 1]}
    return target.get("name"), list(target.get("bounds", [0, 1]))


def whole_in(ctx: CheckContext, path: str, value: Any, *, allow_null: bool) -> None:
    """A whole number of columns 1..d (or null when allowed)."""
    d = len(ctx.columns)
    if allow_null and value is None:
        return
    if not (isinstance(value, int) and 1 <= value <= d):
        ctx.problem(path, f"must be {'null or ' if allow_null else ''}a whole number 1..{d}")
