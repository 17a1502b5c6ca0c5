"""Checks that need the whole built :class:`~workbench.specification.model.Spec`: narrowed
configurations inside the space, ε_gen equal to the largest selectable alternative, the
ε_total cap and the lifetime cap."""

from __future__ import annotations

from workbench.criteria.associations import check_declared_pairs
from workbench.specification.model import Spec
from workbench.specification.space import Configuration
from workbench.validation.sections.context import BuildContext


def whole_spec_problems(ctx: BuildContext, spec: Spec) -> None:
    """Record every problem of the built spec on ``ctx``."""
    _configurations(ctx, spec)
    _guarantee_opt_ins(ctx, spec)
    _single_attempt(ctx, spec)
    _bound_generators(ctx, spec)
    check_declared_pairs(ctx, spec.metadata.associations)
    cap = spec.budget.epsilon_total_max
    if cap is not None and spec.epsilon_total > cap:
        ctx.problem("budget.epsilon_total_max",
                    f"ε_total {spec.epsilon_total:g} exceeds the cap {cap:g}")
    lifetime = spec.budget.epsilon_lifetime_max
    if lifetime is not None and spec.epsilon_total > lifetime:
        ctx.problem(
            "budget.epsilon_lifetime_max",
            f"ε_total {spec.epsilon_total:g} of one run exceeds the dataset's lifetime cap "
            f"{lifetime:g}: no run could ever start",
        )
    if lifetime is not None and spec.pilot is not None and \
            spec.epsilon_total + spec.pilot.epsilon > lifetime + 1e-9:
        ctx.problem(
            "pilot.epsilon",
            f"the pilot's ε {spec.pilot.epsilon:g} and this design's ε_total "
            f"{spec.epsilon_total:g} add up to more than the dataset's lifetime cap "
            f"{lifetime:g}: the run could never start after the pilot",
        )


def _full_space(spec: Spec) -> list[Configuration]:
    return list(spec.full_space())


def _configurations(ctx: BuildContext, spec: Spec) -> None:
    """A narrowed list may only hold points of the declared space."""
    if spec.selection.configurations is None:
        return
    if not spec.selection.configurations:
        ctx.problem("selection.configurations", "must not be empty")
    space = {c.key for c in _full_space(spec)}
    for i, c in enumerate(spec.selection.configurations):
        if c.key not in space:
            ctx.problem(f"selection.configurations[{i}]",
                        "is not in the spec's configuration space")


def _single_attempt(ctx: BuildContext, spec: Spec) -> None:
    """A family whose iteration is not ε₁-DP (``single_attempt_only``: plausible deniability,
    whose candidate carries a per-record bound only) runs only as a single attempt: private
    selection's theorem composes ε₁-DP iterations and would not cover a loop over it."""
    from workbench.generators.registry import family_class

    if spec.selection.max_iterations == 1:
        return
    selectable = (spec.selection.configurations if spec.selection.configurations is not None
                  else _full_space(spec))
    for family in sorted({c.family for c in selectable}):
        try:
            single = getattr(family_class(family), "single_attempt_only", False)
        except (KeyError, ValueError):
            continue  # the generator section reports an unknown family
        if single:
            ctx.problem("selection.max_iterations",
                        f"generator family {family!r} releases candidates that are not "
                        "ε₁-DP (their records carry a per-record bound only), so private "
                        "selection cannot cover a loop over them: set "
                        "selection.max_iterations to 1 (a single attempt)")
            return


def _guarantee_opt_ins(ctx: BuildContext, spec: Spec) -> None:
    """A configuration whose generator is not strictly DP ("aDP, not a guarantee") may run on
    confidential data only if the budget says ``allow_asymptotic_dp: true``; one whose ε-DP
    proof covers an exact posterior draw released from a finite MCMC chain only if it says
    ``allow_mcmc_draw: true`` (the spec states the caveat it accepts)."""
    from workbench.generators.registry import family_class

    selectable = (spec.selection.configurations if spec.selection.configurations is not None
                  else _full_space(spec))
    wanted = {"allow_asymptotic_dp": not spec.budget.allow_asymptotic_dp,
              "allow_mcmc_draw": not spec.budget.allow_mcmc_draw}
    for c in selectable:
        try:
            guarantee = family_class(c.family)(**c.generator_params).guarantee()
        except (TypeError, ValueError):
            continue  # the generator section reports bad hyperparameters
        field = guarantee.opt_in
        if field is not None and wanted[field]:
            ctx.problem(f"budget.{field}",
                        f"configuration {c.key!r} uses a generator labelled "
                        f"'{guarantee.label}': set {field} to true to accept it")
            wanted[field] = False


def _bound_generators(ctx: BuildContext, spec: Spec) -> None:
    """Each distinct hyperparameter set's problems that need the whole spec (the family's
    ``bound_problems``, e.g. a workload whose one_way_share 0 leaves a column unmeasured)."""
    from workbench.generators.registry import family_class

    try:
        cls = family_class(spec.generator.family)
    except ValueError:
        return  # the generator section reports an unknown family
    seen: set[str] = set()
    for params in spec.generator.hyperparameter_sets():
        params = {k: v for k, v in params.items() if k != "epsilon"}
        for message in cls.bound_problems(spec, params):
            if message not in seen:
                seen.add(message)
                ctx.problem("generator.search_space", message)
