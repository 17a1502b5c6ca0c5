"""Acceptance criteria: exact error functions, their sensitivities and their DP release."""

from workbench.criteria.marginals import max_marginal_error

__all__ = ["max_marginal_error"]
