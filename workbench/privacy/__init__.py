"""The privacy layer: noise (OpenDP), sensitivities, the run context, ledger, accountant, selection.

Every computation that touches confidential data goes through a :class:`PrivacyContext`.
"""

from workbench.privacy import sensitivity
from workbench.privacy.accountant import (
    Accountant,
    BudgetExceeded,
    SelectionPlan,
    plan_epsilon_total,
)
from workbench.privacy.context import PrivacyContext, PrivacyMode
from workbench.privacy.ledger import Ledger
from workbench.privacy.loop import SelectionResult, private_selection
from workbench.privacy.records import (
    MeasurementRecord,
    Noisy,
    discrete_laplace_sigma,
    laplace_sigma,
    noisy_max_sigma,
)
from workbench.privacy.selection import (
    check_selection_parameters,
    expected_iterations,
    loop_factor,
    minimum_iterations,
    probability_bottom,
    probability_success,
    selection_epsilon,
    smallest_epsilon_0,
)

__all__ = [
    "Accountant",
    "BudgetExceeded",
    "Ledger",
    "MeasurementRecord",
    "Noisy",
    "PrivacyContext",
    "PrivacyMode",
    "SelectionPlan",
    "SelectionResult",
    "check_selection_parameters",
    "discrete_laplace_sigma",
    "expected_iterations",
    "laplace_sigma",
    "loop_factor",
    "minimum_iterations",
    "noisy_max_sigma",
    "plan_epsilon_total",
    "private_selection",
    "probability_bottom",
    "probability_success",
    "selection_epsilon",
    "sensitivity",
    "smallest_epsilon_0",
]
