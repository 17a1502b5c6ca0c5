"""``metadata.n_policy`` (and ``metadata.n_epsilon``): the declared relation for n, checked
against the whole spec — under ``dp`` every criterion kind and generator family must state a
bound for a neighbour whose cleaned n differs by one, or it is refused here by name
(:mod:`workbench.specification.n_policy`)."""

from __future__ import annotations

from workbench.criteria import kinds
from workbench.criteria.kinds.tags import Reads
from workbench.generators import FAMILIES, family_class
from workbench.specification.n_policy import DP, NPolicy, parse
from workbench.validation.sections.context import BuildContext

FIELD = "n_policy"
PATH = "metadata.n_policy"


def build(ctx: BuildContext) -> NPolicy:
    """The relation; under ``dp`` its ε and the refusals of what has no bound for it."""
    meta = ctx.doc["metadata"]
    relation, problem = parse(meta.get("n_policy"))
    if problem:
        ctx.problem(PATH, problem)
    eps = meta.get("n_epsilon")
    if relation != DP:
        if eps is not None:
            ctx.problem("metadata.n_epsilon", "n_epsilon is the ε of the DP estimate n̂; it "
                        "needs n_policy 'dp' (under 'public' n is published and costs no ε)")
        return NPolicy()
    if eps is None:
        ctx.problem("metadata.n_epsilon", "n_policy 'dp' needs n_epsilon, the ε of the DP "
                    "estimate n̂ of the cleaned n (charged by every run)")
    _refusals(ctx)
    return NPolicy(DP, float(eps) if eps is not None else 0.0)


def _refusals(ctx: BuildContext) -> None:
    """Every part of the spec whose privacy bound is not derived for the ``dp`` relation."""
    why = ("has no sensitivity derived for n_policy 'dp' (a neighbour whose cleaned n differs "
           "by one)")
    if ctx.doc["budget"].get("neighbour") != "replace_one":
        ctx.problem("budget.neighbour", "n_policy 'dp' takes replace-one on the raw file as the "
                    "relation; the bounds derived for it assume budget.neighbour 'replace_one'")
    for i, criterion in enumerate(ctx.doc["criteria"]):
        name = criterion.get("kind")
        try:
            kind = kinds.get(name)
        except ValueError:
            continue  # the criteria section names an unknown kind
        if kind.tags.reads is not Reads.S_ONLY and not kind.tags.dp_n_bound:
            ctx.problem(f"criteria[{i}].kind", f"criterion kind '{name}' {why}; use a kind "
                        f"that has one ({', '.join(sorted(kinds.dp_bound()))}) or n_policy "
                        "'public'")
    family = ctx.doc["generator"].get("family")
    if family in FAMILIES and not family_class(family).dp_n_bound:
        ctx.problem("generator.family", f"generator family '{family}' {why}; use one of "
                    f"{', '.join(sorted(n for n, c in FAMILIES.items() if c.dp_n_bound))} or "
                    "n_policy 'public'")
    if ctx.doc.get("survey") is not None:
        ctx.problem("survey", "a survey's weights and margins use the exact n; n_policy 'dp' "
                    "has no bound for them")
    sel = ctx.doc["selection"]
    if sel.get("gamma", 0) == 0 and sel.get("max_iterations") is None:
        ctx.problem("selection.max_iterations", "γ = 0 with T = ∞ is checked against the exact "
                    "cleaned n before the run (a forecast's sizes); under n_policy 'dp' set a "
                    "finite max_iterations")
