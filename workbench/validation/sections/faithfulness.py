"""``faithfulness``: when a release row may stand for a real row (exact columns, bin distances,
the threshold α and the must-match exceptions); every column needs a rule."""

from __future__ import annotations

from workbench.specification.document import freeze_value
from workbench.specification.model import FaithfulnessRule
from workbench.validation.sections.context import BuildContext

FIELD = "faithfulness"


def build(ctx: BuildContext) -> FaithfulnessRule:
    """The cost rule, each column either exact or at a distance, distances on numeric ones."""
    raw = ctx.doc["faithfulness"]
    exact, dist = list(raw["exact"]), dict(raw["distance"])
    tolerance = dict(raw.get("tolerance", {}))
    for c in tolerance:
        path = f"faithfulness.tolerance.{c}"
        if c not in ctx.columns:
            ctx.unknown_column(path, c)
        elif c in exact or c in dist:
            ctx.problem(path, "a column takes one rule: exact, distance or tolerance")
        elif any(alt.kind != "number" for t in ctx.built.get("transformations", ())
                 if t.column == c for alt in t.alternatives):
            ctx.problem(path, "a tolerance in units needs every alternative to be 'number'")
        elif raw["alpha"] <= 0:
            ctx.problem(path, "a tolerance needs alpha > 0")
    for j, c in enumerate(exact):
        if c not in ctx.columns:
            ctx.unknown_column(f"faithfulness.exact[{j}]", c)
    for c in dist:
        if c not in ctx.columns:
            ctx.unknown_column(f"faithfulness.distance.{c}", c)
        elif c in exact:
            ctx.problem(f"faithfulness.distance.{c}", "a column cannot be both exact and distance")
        elif not ctx.columns[c].numeric:
            ctx.problem(f"faithfulness.distance.{c}",
                        "bin distance needs an ordered (numeric) column")
    missing = [c for c in ctx.columns if c not in exact and c not in dist and c not in tolerance]
    if missing:
        ctx.problem("faithfulness", f"every column needs a rule; missing: {', '.join(missing)}")
    must = []
    for j, m in enumerate(raw.get("must_match", [])):
        if m["column"] not in dist:
            ctx.problem(f"faithfulness.must_match[{j}].column",
                        f"{m['column']!r} must be one of the distance columns")
        must.append((m["column"], float(m["value"])))
    return FaithfulnessRule(tuple(exact), freeze_value(dist), float(raw["alpha"]), tuple(must),
                            freeze_value({c: float(v) for c, v in tolerance.items()}))
