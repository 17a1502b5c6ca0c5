"""Acceptance criteria: exact error functions, their sensitivities and their DP release.

The engine calls :func:`evaluate_all` once per private-selection iteration and
:func:`release_once` once before the loop (statistics of R alone, §4.14.1). Each kind of
criterion is one module under :mod:`workbench.criteria.kinds`, found by its registry.
"""

from workbench.criteria import kinds, sensitivity
from workbench.criteria.dispatch import (
    criterion_sensitivity,
    evaluate_all,
    evaluate_criterion,
    exact_errors,
    release_once,
)
from workbench.criteria.marginals import max_marginal_error
from workbench.criteria.regression import RegressionRelease
from workbench.criteria.result import CriterionResult

__all__ = [
    "CriterionResult",
    "RegressionRelease",
    "criterion_sensitivity",
    "evaluate_all",
    "evaluate_criterion",
    "exact_errors",
    "kinds",
    "max_marginal_error",
    "release_once",
    "sensitivity",
]
