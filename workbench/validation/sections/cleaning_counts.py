"""``cleaning_counts``: how the bundle states the rows each policy and raw rule removed or
recoded — ``dp`` with an ε (charged by every run through the budget plan) or ``public`` (the
spec's authors declare the exact counts public). Absent, the counts never leave the run."""

from __future__ import annotations

from workbench.specification.own_data import CleaningCounts
from workbench.validation.sections.context import BuildContext

FIELD = "cleaning_counts"
PATH = "cleaning_counts"


def build(ctx: BuildContext) -> CleaningCounts | None:
    """The declaration; ``dp`` needs an ε, ``public`` takes none."""
    raw = ctx.doc.get(PATH)
    if raw is None:
        return None
    eps = raw.get("epsilon")
    if raw["release"] == "dp" and eps is None:
        ctx.problem(f"{PATH}.epsilon", "release 'dp' needs the ε its counts are released with")
    if raw["release"] == "public" and eps is not None:
        ctx.problem(f"{PATH}.epsilon", "release 'public' states exact counts and spends no ε; "
                    "drop epsilon or release them with 'dp'")
    counted = [c.name for c in ctx.columns.values() if c.out_of_domain != "error"]
    if not counted and not ctx.doc["constraints"].get("raw"):
        ctx.problem(PATH, "there is nothing to count: no column drops, clips or recodes "
                    "out-of-domain values and there are no raw cleaning rules")
    return CleaningCounts(raw["release"], float(eps) if raw["release"] == "dp" and eps else 0.0)
