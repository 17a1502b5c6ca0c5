"""``constraints``: raw cleaning rules and synthetic rejection rules, parsed and column-checked."""

from __future__ import annotations

from workbench.constraints import ConstraintSyntaxError, parse, validate_columns
from workbench.specification.errors import join_path
from workbench.specification.model import Constraints, Rule
from workbench.validation.sections.context import BuildContext

FIELD = "constraints"


def build(ctx: BuildContext) -> Constraints:
    """Both rule lists, the partial-bin policy and the sampling-round cap."""
    raw = ctx.doc["constraints"]
    return Constraints(
        raw=_rules(ctx, "raw"),
        synthetic=_rules(ctx, "synthetic"),
        partial_bins=raw.get("partial_bins", "keep"),
        max_sampling_rounds=raw.get("max_sampling_rounds", 20),
    )


def _rules(ctx: BuildContext, key: str) -> tuple[Rule, ...]:
    """One rule list: unique names, parseable predicates over known columns of the right type."""
    types = {
        c.name: c.type if c.numeric or c.type == "categorical" else "categorical"
        for c in ctx.columns.values()
    }
    out, names = [], set()
    for i, raw in enumerate(ctx.doc["constraints"][key]):
        path = f"constraints.{key}[{i}]"
        if raw["name"] in names:
            ctx.problem(join_path(path, "name"), f"duplicate rule name {raw['name']!r}")
        names.add(raw["name"])
        try:
            pred = parse(raw["reject_if"])
        except ConstraintSyntaxError as exc:
            ctx.problem(join_path(path, "reject_if"), str(exc))
            continue
        for msg in validate_columns(pred, types):
            ctx.problem(path, msg)
        out.append(Rule(raw["name"], raw["reject_if"], pred, raw.get("description", "")))
    return tuple(out)
