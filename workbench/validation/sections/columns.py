"""``schema.columns``: names, types, declared domains or bounds, and the data policies."""

from __future__ import annotations

import json

from workbench.specification.errors import join_path
from workbench.transform import ColumnSpec
from workbench.validation.sections.context import BuildContext
from workbench.validation.sections.missing import missing_fields

FIELD = "columns"


def build(ctx: BuildContext) -> tuple[ColumnSpec, ...]:
    """Every column, checked and added to ``ctx.columns`` for the sections that follow."""
    out = []
    for i, raw in enumerate(ctx.doc["schema"]["columns"]):
        path = f"schema.columns[{i}]"
        name, ctype = raw["name"], raw["type"]
        if name in ctx.columns:
            ctx.problem(join_path(path, "name"), f"duplicate column name {name!r}")
            continue
        domain = tuple(raw["domain"]) if "domain" in raw else None
        bounds = tuple(float(b) for b in raw["bounds"]) if "bounds" in raw else None
        if ctype in {"categorical", "ordinal"}:
            _check_domain(ctx, path, ctype, domain, bounds)
        else:
            _check_bounds(ctx, path, ctype, domain, bounds)
        policy = raw.get("out_of_domain", "error")
        mcar = raw.get("mcar_rate")
        col = ColumnSpec(name, ctype, domain, bounds, raw["missing"], policy,
                         raw.get("description", ""), **missing_fields(ctx, path, raw, domain),
                         mcar_rate=None if mcar is None else float(mcar))
        if mcar is not None and mcar > 0 and raw["missing"] == "forbid":
            ctx.problem(join_path(path, "mcar_rate"), "a column whose missing values are "
                        "forbidden has no missingness rate; declare how missing values are "
                        "kept in 'missing' first")
        if policy == "to_missing" and raw["missing"] == "forbid":
            ctx.problem(join_path(path, "out_of_domain"),
                        "'to_missing' recodes unknown values to missing, but this column's "
                        "missing policy is 'forbid': set missing to 'allow' or 'category', or "
                        "choose 'drop' or 'error'")
        if policy == "clip" and ctype not in {"integer", "continuous"}:
            ctx.problem(join_path(path, "out_of_domain"),
                        "'clip' needs an integer or continuous column")
        if (ctype == "ordinal" and domain is not None and col.numeric
                and list(domain) != sorted(domain)):
            ctx.problem(join_path(path, "domain"),
                        "an ordinal domain must be listed in increasing order")
        ctx.columns[name] = col
        out.append(col)
    return tuple(out)


def _check_domain(ctx: BuildContext, path: str, ctype: str, domain: tuple | None,
                  bounds: tuple | None) -> None:
    """A categorical or ordinal column lists unique values and has no bounds."""
    if domain is None:
        ctx.problem(path, f"a {ctype} column needs a 'domain' list")
    elif len({json.dumps(v) for v in domain}) != len(domain):
        ctx.problem(join_path(path, "domain"), "values must be unique")
    if bounds is not None:
        ctx.problem(join_path(path, "bounds"), f"a {ctype} column takes a domain, not bounds")


def _check_bounds(ctx: BuildContext, path: str, ctype: str, domain: tuple | None,
                  bounds: tuple | None) -> None:
    """An integer or continuous column has bounds L < U (whole for integers), no domain."""
    if bounds is None:
        ctx.problem(path, f"an {ctype} column needs 'bounds' [lower, upper]")
    elif not bounds[0] < bounds[1]:
        ctx.problem(join_path(path, "bounds"), "lower bound must be below upper bound")
    elif ctype == "integer" and not all(float(b).is_integer() for b in bounds):
        ctx.problem(join_path(path, "bounds"), "an integer column needs whole-number bounds")
    if domain is not None:
        ctx.problem(join_path(path, "domain"), f"an {ctype} column takes bounds, not a domain")
