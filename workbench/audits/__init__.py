"""Empirical privacy audits of every mechanism, on worst-case neighbouring datasets.

:mod:`workbench.privacy.audit` holds the statistics (Clopper–Pearson lower bounds on ε from
outputs on D and D′). This package holds the audits themselves, above the privacy layer: the
worst-case replace-one neighbours of every criterion kind (:mod:`~workbench.audits.criteria`),
of PrivBayes' mutual-information score, AIM's and the structure tree's selection scores and the
public-measurement choice (:mod:`~workbench.audits.generators`), and an end-to-end audit of
private selection with a toy generator (:mod:`~workbench.audits.loop`); issue 34's releases
around the loop: the pilot, the cleaning counts and the (ε, δ) label selection
(:mod:`~workbench.audits.pilot`), the perturbed histogram and the workload measurements
(:mod:`~workbench.audits.release_mechanisms`), plausible deniability
(:mod:`~workbench.audits.plausible`), the survey pipeline (:mod:`~workbench.audits.survey`) and
the posterior draw (:mod:`~workbench.audits.posterior`). Mechanisms are run through their public
API and captured at the noise seam (:mod:`~workbench.audits.harness`). Public data only.
``tests/test_audits.py`` and ``tests/test_audits_release.py`` assert every verdict;
``benchmarks/audit_mechanisms.py`` prints them."""

from workbench.audits.criteria import (
    CRITERION_KINDS,
    NOISELESS_KINDS,
    criterion_scenario,
    noiseless_check,
    variant_cases,
    variant_scenario,
)
from workbench.audits.generators import (
    aim_score_scenario,
    junction_score_scenario,
    privbayes_mi_scenario,
    public_choice_scenario,
    tree_score_scenario,
)
from workbench.audits.harness import (
    AuditRow,
    Call,
    Capture,
    ScaledNoise,
    Scenario,
    audit_scenario,
    capture,
    neighbour_events,
    primitive_scenarios,
)
from workbench.audits.loop import VARIANTS, audit_loop, exact_loss

__all__ = [
    "CRITERION_KINDS",
    "NOISELESS_KINDS",
    "VARIANTS",
    "AuditRow",
    "Call",
    "Capture",
    "ScaledNoise",
    "Scenario",
    "aim_score_scenario",
    "audit_loop",
    "audit_scenario",
    "capture",
    "criterion_scenario",
    "exact_loss",
    "junction_score_scenario",
    "neighbour_events",
    "noiseless_check",
    "primitive_scenarios",
    "privbayes_mi_scenario",
    "public_choice_scenario",
    "tree_score_scenario",
    "variant_cases",
    "variant_scenario",
]
