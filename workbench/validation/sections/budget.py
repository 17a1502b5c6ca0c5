"""``budget``: the neighbour relation (``add_remove`` refused: n is public in this scheme), the
optional cap on ε_total and the dataset's lifetime cap (both checked on the whole spec, in
``workbench.validation.checks``), and two DERIVED values: ε_gen
(:mod:`workbench.specification.derived`, as for a draft) and Σ ε_criteria. Older specs that
write ``budget.epsilon_generator`` beside ``epsilon`` alternatives, or
``budget.epsilon_criteria``, still load: a written copy that disagrees with the derived value
is a problem at its path (one fact, one owner)."""

from __future__ import annotations

import math

from workbench.specification import derived
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
        epsilon_generator=_epsilon_generator(ctx),
        epsilon_criteria=round(total, 12),
        neighbour=raw["neighbour"],
        epsilon_total_max=raw.get("epsilon_total_max"),
        epsilon_lifetime_max=raw.get("epsilon_lifetime_max"),
        allow_asymptotic_dp=bool(raw.get("allow_asymptotic_dp", False)),
        allow_mcmc_draw=bool(raw.get("allow_mcmc_draw", False)),
        written=tuple(k for k in DERIVED if k in raw),
    )


def _epsilon_generator(ctx: BuildContext) -> float:
    """ε_gen by the one derivation (:func:`workbench.specification.derived.generator_epsilon`),
    with a missing one or a written copy that is not the largest selectable 'epsilon' reported."""
    eps = derived.generator_epsilon(ctx.doc)
    if eps is None:
        ctx.problem("budget.epsilon_generator",
                    "the generator's ε is not given: declare 'epsilon' in every "
                    "generator.search_space grid (one value or alternatives) or write "
                    "budget.epsilon_generator")
        return math.nan
    values = derived.selectable_epsilons(ctx.doc)
    given = [v for v in values if v is not None]
    largest = max([eps] * (len(given) < len(values) or not given) + given)
    if not math.isclose(largest, eps, rel_tol=1e-9):
        ctx.problem("budget.epsilon_generator",
                    f"must equal the largest selectable generator 'epsilon' ({largest:g}): "
                    "private selection is charged for the largest; leave it out to derive it")
    return eps
