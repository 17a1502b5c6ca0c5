"""``budget``: ε for the generator and the criteria (which must add up), the neighbour relation
(``add_remove`` refused: n is public in this scheme), the optional cap on ε_total and the
dataset's lifetime cap (both checked on the whole spec, in ``workbench.validation.checks``)."""

from __future__ import annotations

import math

from workbench.spec.model import Budget
from workbench.validation.budget_rules import ADD_REMOVE_REFUSED
from workbench.validation.sections.context import BuildContext

FIELD = "budget"


def build(ctx: BuildContext) -> Budget:
    """The budget; ``epsilon_criteria`` must equal the sum of the criteria's ε."""
    raw = ctx.doc["budget"]
    total = sum(c.epsilon for c in ctx.built["criteria"])
    if not math.isclose(raw["epsilon_criteria"], total, rel_tol=1e-9, abs_tol=1e-12):
        ctx.problem(
            "budget.epsilon_criteria",
            f"{raw['epsilon_criteria']:g} does not equal the sum of the criteria's ε ({total:g})",
        )
    if raw["neighbour"] == "add_remove":
        ctx.problem("budget.neighbour", ADD_REMOVE_REFUSED)
    return Budget(
        epsilon_generator=float(raw["epsilon_generator"]),
        epsilon_criteria=float(raw["epsilon_criteria"]),
        neighbour=raw["neighbour"],
        epsilon_total_max=raw.get("epsilon_total_max"),
        epsilon_lifetime_max=raw.get("epsilon_lifetime_max"),
        allow_asymptotic_dp=bool(raw.get("allow_asymptotic_dp", False)),
        allow_mcmc_draw=bool(raw.get("allow_mcmc_draw", False)),
    )
