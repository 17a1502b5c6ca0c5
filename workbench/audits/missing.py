"""The generators' partial-observation count table, audited on the tiny MISSING design.

Columns (:mod:`workbench.criteria.audit_case`): g ∈ {a, b} (forbid), x ∈ {0, 1} and z ∈ {p, q},
both ``allow`` with declared ``max_missing_rate`` ¼; code 2 of x and z is "missing". (The
missing-value criterion kinds declare their own cases on the same design.) Documented Δ:

* the generators' partial-observation marginal (``generators.workload_missing``,
  ``measure_observed``): the count table of x over the rows complete on x, Δ₁ = 2; R′ moves one
  observed record from x = 0 to x = 1.
"""

from __future__ import annotations

from functools import lru_cache

from workbench.audits.harness import Scenario, scenario
from workbench.criteria.audit_case import MISSING, MISSING_BASE, design_document, rows
from workbench.generators.missing import MissingLayout, ObservedCounts
from workbench.generators.workload_missing import measure_observed
from workbench.specification import Configuration, Spec
from workbench.validation import build_spec

_EPS = 1.0
#: The generators' partial-observation count table (not a criterion kind).
PARTIAL_MARGINAL = "partial_observation_marginal"


@lru_cache(maxsize=1)
def audit_spec() -> tuple[Spec, Configuration]:
    """The MISSING audit design (no criteria: the missing-value kinds declare their own cases)."""
    spec = build_spec(design_document(MISSING, [], title="Missing-value audit design"))
    return spec, next(iter(spec.configurations()))


def partial_marginal_scenario() -> Scenario:
    """The generators' count table of x over the rows complete on x, on its worst case."""
    spec, config = audit_spec()
    domain = spec.table_codec(config).domain
    layout = MissingLayout.of(domain, ("x", "z"), (0.25, 0.25))
    assert layout is not None
    datasets = (MISSING_BASE, rows((0, 1, 0), (1, 0, 1), (0, 0, 0), (1, 2, 1)))

    def run(ctx, which: int) -> object:
        view = ObservedCounts(datasets[which], layout, complete_rows=False)
        return measure_observed(view, ("x",), _EPS, ctx)

    return scenario(PARTIAL_MARGINAL, "discrete Laplace on the observed-value count table",
                    "R′ moves one record complete on x from x = 0 to x = 1 (Δ₁ = 2)", 2.0, run)
