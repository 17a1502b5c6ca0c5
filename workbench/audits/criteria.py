"""The audit of every criterion kind, from the worst-case pair each kind declares.

Each registered kind declares ``audit_case()`` (:mod:`workbench.criteria.audit_case`): one
criterion on a tiny public design, R, its replace-one neighbour R′, a candidate S, and the Δ
written out by hand from the kind's derivation. Here the case's spec is built and the release is
run through the public API (``evaluate_criterion``, or ``release_once`` for a statistic of R
alone), so a change of the criteria's internals is audited as long as the API holds; the noise
call is captured at the seam (:mod:`workbench.audits.harness`). Nothing here names a kind: a
new kind is audited by declaring its case.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from workbench.audits.harness import Scenario, scenario
from workbench.criteria import evaluate_criterion, kinds, release_once
from workbench.criteria.audit_case import AuditCase, audit_document
from workbench.privacy import PrivacyContext
from workbench.specification import Configuration, Spec
from workbench.validation import build_spec

#: Every registered criterion kind is audited: a kind without ``audit_case()`` fails
#: ``tests/test_audits.py`` (a new kind brings its worst-case audit with it).
CRITERION_KINDS: tuple[str, ...] = tuple(kinds.names())
#: Kinds computed on S alone, without noise or ε: nothing private to audit.
NOISELESS_KINDS: frozenset[str] = frozenset(
    k.name for k in kinds.registered() if k.tags.reads is kinds.Reads.S_ONLY
)


def audit_case(kind: str) -> AuditCase:
    """The kind's declared case (every kind declares one: ``CriterionKind.audit_case`` is
    abstract)."""
    return kinds.get(kind).audit_case()


@cache
def case_spec(kind: str) -> tuple[Spec, Configuration]:
    """The case's tiny spec and its one configuration."""
    return _spec_of(audit_case(kind))


def _spec_of(case: AuditCase) -> tuple[Spec, Configuration]:
    """Any case's tiny spec and its one configuration."""
    spec = build_spec(audit_document(case))
    return spec, next(iter(spec.configurations()))


def variant_cases() -> dict[str, AuditCase]:
    """Every kind's declared cases of its other release options, by audit name."""
    return {name: case for k in kinds.registered()
            for name, case in k.variant_audit_cases().items()}


def variant_scenario(name: str) -> Scenario:
    """The captured releases of one declared release option on its worst-case neighbours."""
    case = variant_cases()[name]
    return scenario(name, case.mechanism, case.how, case.delta, _runner(case, _spec_of(case)))


def _runner(case: AuditCase, built: tuple[Spec, Configuration] | None = None
            ) -> Callable[[PrivacyContext, int], object]:
    """run(ctx, which): the public call that releases the case's criterion on R (0) or R′ (1)."""
    spec, config = built or case_spec(case.kind)
    datasets = (case.real, case.real_prime)
    if case.stage == "once":
        return lambda ctx, which: release_once(spec, config, datasets[which], ctx)
    once = None if case.once_results is None else case.once_results(spec, config, case.real)

    def run(ctx: PrivacyContext, which: int) -> object:
        return evaluate_criterion(spec, config, case.kind, datasets[which], case.synth, ctx,
                                  once_results=once, table=spec.table_codec(config))

    return run


def criterion_scenario(kind: str) -> Scenario:
    """The captured releases of one criterion kind on its declared worst-case neighbours."""
    case = audit_case(kind)
    if case.noiseless or kind in NOISELESS_KINDS:
        raise ValueError(f"{kind} is computed on S alone without noise; there is nothing to "
                         "audit (see noiseless_check)")
    return scenario(kind, case.mechanism, case.how, case.delta, _runner(case))


def noiseless_check(kind: str) -> tuple[float, float, int]:
    """For an S-only kind: its value on R and on R′ with S fixed, and how many measurements
    were made (must be equal values and zero measurements)."""
    case = audit_case(kind)
    spec, config = case_spec(kind)
    values, measured = [], 0
    for real in (case.real, case.real_prime):
        ctx = PrivacyContext.simulation(0)
        values.append(evaluate_criterion(spec, config, kind, real, case.synth, ctx,
                                         table=spec.table_codec(config)).value)
        measured += len(ctx.records)
    return float(values[0]), float(values[1]), measured
