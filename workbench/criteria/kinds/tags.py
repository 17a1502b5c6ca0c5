"""A criterion kind's capability flags in one declared value (scikit-learn's ``Tags`` model):
a kind declares ``tags = KindTags(...)`` (or ``replace(Parent.tags, ...)``), callers read
``kind.tags.<flag>``."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Reads(enum.Enum):
    """What a criterion's DP measurement reads."""

    S_ONLY = "S only"  # the release candidate alone: no noise, ε must be 0
    R_AND_S = "R and S"  # compares R with the candidate: measured in every iteration
    R_ALONE = "R alone"  # a statistic of R alone: may be computed once, before the loop


@dataclass(frozen=True)
class KindTags:
    """What a kind can do and how it is measured, declared once per kind."""

    #: What the DP measurement reads (S only: ε = 0; R alone: may run once, before the loop).
    reads: Reads = Reads.R_AND_S
    #: Whether the stakeholder sets [L, U] (otherwise the kind fixes or derives it).
    bounds_editable: bool = False
    #: The range the DP value is clipped to after noise (None: not clipped).
    clip: tuple[float, float] | None = None
    #: Which workload multiplier scales this kind's marginals (one of WORKLOAD_GROUPS).
    workload_group: str = "marginal"
    #: Where the noise goes when it is not one Laplace draw on the value ("" when it is).
    noise_note: str = ""
    #: The pass test: the DP value strictly below the effective threshold (False: at most it).
    strict: bool = True
    #: Whether the DP value is the exact value plus one Laplace draw (then clipped to
    #: ``clip``), so P(pass | exact) has a closed form. False when the noised value is not the
    #: exact one (e.g. it is computed from another DP release); with ``noise_note`` set the
    #: noise is elsewhere too. Forecasts then simulate the release instead.
    laplace_on_exact: bool = True
    #: Whether the design assistant measures the DP value's σ·ε by simulation (the value is
    #: computed from a noisy vector, not one draw of known σ) for its ε rule.
    sigma_by_simulation: bool = False
    #: The kind's bound under ``metadata.n_policy: dp`` (a neighbour whose cleaned n differs
    #: by one: replace-one or add/remove-one), derived in words; "" refuses the kind under
    #: ``dp`` (a kind reading S only needs none). See :mod:`workbench.specification.n_policy`.
    dp_n_bound: str = ""

    @property
    def closed_form_pass(self) -> bool:
        """Whether P(pass | exact) has a closed form (one Laplace draw on the exact value);
        otherwise a forecast simulates the release."""
        return self.laplace_on_exact and not self.noise_note
