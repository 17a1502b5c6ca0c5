"""The privacy layer: noise (OpenDP), sensitivities, the run context, ledger, accountant, selection.

Every computation that touches confidential data goes through a :class:`PrivacyContext`.
"""

from workbench.privacy import sensitivity
from workbench.privacy.accountant import Accountant, BudgetExceeded, plan_epsilon_total
from workbench.privacy.context import PrivacyContext, PrivacyMode
from workbench.privacy.ledger import Ledger
from workbench.privacy.loop import private_selection
from workbench.privacy.records import MeasurementRecord, laplace_sigma
from workbench.privacy.selection import (
    check_selection_parameters,
    expected_iterations,
    minimum_iterations,
    probability_bottom,
    probability_success,
    selection_epsilon,
)

__all__ = [
    "Accountant",
    "BudgetExceeded",
    "Ledger",
    "MeasurementRecord",
    "PrivacyContext",
    "PrivacyMode",
    "check_selection_parameters",
    "expected_iterations",
    "laplace_sigma",
    "minimum_iterations",
    "plan_epsilon_total",
    "private_selection",
    "probability_bottom",
    "probability_success",
    "selection_epsilon",
    "sensitivity",
]
