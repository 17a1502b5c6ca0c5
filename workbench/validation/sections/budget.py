"""``budget``: the neighbour relation (``add_remove`` refused: n is public in this scheme), the
optional cap on ε_total and the dataset's lifetime cap (both checked on the whole spec, in
``workbench.validation.checks``), and two DERIVED values:

* ε_gen — the largest ``epsilon`` a selectable configuration's generator takes (its search-space
  grid's, or the narrowed list's); private selection is charged for the largest. A spec without
  ``epsilon`` alternatives states it once, as ``budget.epsilon_generator``;
* Σ ε_criteria — the sum of the criteria's ε.

Older specs that write ``budget.epsilon_generator`` beside ``epsilon`` alternatives, or
``budget.epsilon_criteria``, still load: the written values are checked against the derived
ones (one fact, one owner; a copy that disagrees is a problem at its path)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.specification.model import Budget
from workbench.validation.budget_rules import ADD_REMOVE_REFUSED
from workbench.validation.sections.context import BuildContext

FIELD = "budget"
#: The budget fields that are derived (written only by older specs, then checked).
DERIVED = ("epsilon_generator", "epsilon_criteria")


def build(ctx: BuildContext) -> Budget:
    """The budget, with ε_gen and Σ ε_criteria derived (and written copies checked)."""
    raw = ctx.doc["budget"]
    total = math.fsum(c.epsilon for c in ctx.built["criteria"])
    written = raw.get("epsilon_criteria")
    if written is not None and not math.isclose(written, total, rel_tol=1e-9, abs_tol=1e-12):
        ctx.problem("budget.epsilon_criteria",
                    f"{written:g} does not equal the sum of the criteria's ε ({total:g}); "
                    "leave it out: it is derived from the criteria")
    if raw["neighbour"] == "add_remove":
        ctx.problem("budget.neighbour", ADD_REMOVE_REFUSED)
    return Budget(
        epsilon_generator=generator_epsilon(ctx, raw),
        epsilon_criteria=round(total, 12),
        neighbour=raw["neighbour"],
        epsilon_total_max=raw.get("epsilon_total_max"),
        epsilon_lifetime_max=raw.get("epsilon_lifetime_max"),
        allow_asymptotic_dp=bool(raw.get("allow_asymptotic_dp", False)),
        allow_mcmc_draw=bool(raw.get("allow_mcmc_draw", False)),
        written=tuple(k for k in DERIVED if k in raw),
    )


def _selectable_epsilons(ctx: BuildContext) -> list[float | None]:
    """The generator 'epsilon' of every selectable configuration (None: it takes none)."""
    selection = ctx.built.get("selection")
    narrowed = None if selection is None else selection.configurations
    if narrowed:
        return [_number(c.params.get("epsilon")) for c in narrowed]
    space = ctx.built.get("generator")
    out: list[float | None] = []
    for grid in () if space is None else space.grids:
        values = dict(grid).get("epsilon")
        out += [_number(v) for v in values] if values else [None]
    return out


def generator_epsilon(ctx: BuildContext, raw: Mapping[str, Any]) -> float:
    """ε_gen of the selection: the largest selectable 'epsilon', or the written budget value
    for configurations that take none (which must then be ≥ every alternative)."""
    written = raw.get("epsilon_generator")
    values = _selectable_epsilons(ctx)
    given = [v for v in values if v is not None]
    if written is None:
        if not given or len(given) < len(values):
            ctx.problem("budget.epsilon_generator",
                        "the generator's ε is not given: declare 'epsilon' in every "
                        "generator.search_space grid (one value or alternatives) or write "
                        "budget.epsilon_generator")
            return math.nan
        return max(given)
    written = float(written)
    largest = max([written] * (len(given) < len(values) or not given) + given)
    if not math.isclose(largest, written, rel_tol=1e-9):
        ctx.problem("budget.epsilon_generator",
                    f"must equal the largest selectable generator 'epsilon' ({largest:g}): "
                    "private selection is charged for the largest; leave it out to derive it")
    return written


def _number(value: Any) -> float | None:
    """A usable ε value (the generator section reports bad ones)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None
