"""What ``workbench run`` checks on public inputs alone before it opens the budget store: the
spec's pinned public files (``preflight``) and one whole iteration on stand-in rows
(:mod:`workbench.engine.stand_in`); ``validate`` and ``freeze`` ask the same questions."""

from __future__ import annotations

import sys

from workbench.engine.rundir import RunRefused
from workbench.engine.stand_in import StandInFailure, rehearse_on_stand_in
from workbench.specification import Spec
from workbench.transform import EncodingError


def check_public_inputs(spec: Spec) -> None:
    """Every criterion's and every configuration's generator's checks of its public inputs (a
    distinguisher's proxy file, a workload's or a public structure's pinned public proxy),
    before any budget: a missing or changed file is refused here, not after the generator has
    spent ε."""
    problem = preflight_problem(spec)
    if problem:
        raise RunRefused(problem)


def check_model_fits(spec: Spec) -> None:
    """Refuse, before the stand-in rehearsal and any budget, a design whose model is above
    ``generator.model_limit`` (``generators.model_size``: no fit, no data)."""
    from workbench.generators.model_size_advice import size_refusal

    problem = size_refusal(spec)
    if problem:
        raise RunRefused(problem)


def preflight_problem(spec: Spec) -> str | None:
    """What :func:`check_public_inputs` refuses (a public file missing or changed), or None."""
    from workbench.criteria import kinds
    from workbench.generators import GeneratorFamily, family_class, generator_for

    try:
        for criterion in spec.criteria:
            kinds.get(criterion.kind).preflight(spec, criterion)
        for configuration in spec.configurations():
            if family_class(configuration.family).preflight is not GeneratorFamily.preflight:
                generator_for(spec, configuration, spec.table_codec(configuration)).preflight()
    except (ValueError, EncodingError) as exc:
        return str(exc)
    return None


def say(message: str) -> None:
    """A progress line on stderr, so no preflight step sits silent."""
    print(message, file=sys.stderr, flush=True)


def rehearse_before_budget(spec: Spec, quiet: bool) -> None:
    """One whole iteration of every configuration on public stand-in rows (issue 36), before
    the budget store is opened: a step that fails there is refused with its real message."""
    try:
        report = rehearse_on_stand_in(spec, None if quiet else say)
    except StandInFailure as exc:
        raise RunRefused(f"{exc}. Nothing was read from the data and no budget was spent; "
                         "fix the spec (workbench validate runs the same rehearsal)") from None
    if not quiet:
        print(report.words(), file=sys.stderr, flush=True)
