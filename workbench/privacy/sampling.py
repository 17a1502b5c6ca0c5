"""Sampling-aware accounting (Merrill ch. 5): secondary figures, never what a run is charged.

A survey release is computed on a sample. If the sample was drawn at random *and the draw is
kept secret*, the population-level privacy loss can be smaller than ε. The workbench shows that
figure beside the guaranteed ε_total, labelled with its assumption, and never charges it: the
accountant and :class:`~workbench.privacy.budget_plan.BudgetPlan` always use the guaranteed ε.

* Fixed-size subsample, β = n′/n, bounded DP (Thm 5.5.1):
  ε′ = ln((e^ε·β + 1 − β)/(1 − β)); it helps (ε′ < ε) only when β < (e^ε − 1)/(2e^ε − 1).
  Table 5.1 (β = 0.1): ε = 0.5 → 0.17, 1 → 0.26, 2 → 0.60, 5 → 2.86, 10 → 7.80.
* The well-known bound for sampling without replacement: ln(1 + β(e^ε − 1)).
* Random partition (Thm 5.3.1): shuffle, cut into pieces of data-independent sizes, run an
  εᵢ-DP mechanism on each: the whole is (max εᵢ)-DP, even under bounded DP.
* Partition of the domain (disjoint by value): ε under unbounded (add/remove) DP, 2ε under
  bounded (replace-one) DP, since a replaced record may leave one piece and enter another.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.privacy import _checks
from workbench.privacy.amplification import amplified

#: The assumption every amplified figure is shown with.
AMPLIFICATION_ASSUMPTION = ("assumes the sample was drawn at random and the draw is secret; "
                            "not charged — the guaranteed ε is what the ledger holds")


def _fraction(beta: float) -> float:
    """A sampling fraction in (0, 1)."""
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not 0 < beta < 1:
        raise ValueError("beta (the sampling fraction n′/n) must lie strictly between 0 and 1")
    return float(beta)


def fixed_size_amplification(epsilon: float, beta: float) -> float:
    """ε′ of an ε-DP mechanism run on a secret fixed-size subsample (bounded DP, Thm 5.5.1).

    >>> [round(fixed_size_amplification(e, 0.1), 2) for e in (0.5, 1, 2, 5, 10)]
    [0.17, 0.26, 0.6, 2.86, 7.8]
    """
    eps = _checks.positive_finite("epsilon", epsilon)
    b = _fraction(beta)
    return math.log((math.exp(eps) * b + 1 - b) / (1 - b))


def amplification_helps(epsilon: float, beta: float) -> bool:
    """Whether Thm 5.5.1 gives ε′ < ε: exactly when β < (e^ε − 1)/(2e^ε − 1)."""
    eps = _checks.positive_finite("epsilon", epsilon)
    return _fraction(beta) < helps_below(eps)


def helps_below(epsilon: float) -> float:
    """The largest sampling fraction for which fixed-size amplification helps at ε."""
    e = math.exp(_checks.positive_finite("epsilon", epsilon))
    return (e - 1) / (2 * e - 1)


def without_replacement_amplification(epsilon: float, beta: float) -> float:
    """The well-known bound ln(1 + β(e^ε − 1)) (for comparison with Thm 5.5.1; the MCAR
    accountant's :func:`workbench.privacy.amplification.amplified`)."""
    eps = _checks.positive_finite("epsilon", epsilon)
    return amplified(eps, _fraction(beta))


def random_partition_epsilon(epsilons: Iterable[float]) -> float:
    """Thm 5.3.1: a random partition into data-independent sizes costs max εᵢ (any neighbours)."""
    values = [_checks.positive_finite("epsilons", e) for e in epsilons]
    if not values:
        raise ValueError("epsilons: a partition needs at least one piece")
    return max(values)


def domain_partition_epsilon(epsilon: float, neighbour: str) -> float:
    """A disjoint split by value, ε-DP per piece: ε under add/remove, 2ε under replace-one."""
    eps = _checks.positive_finite("epsilon", epsilon)
    return eps if _checks.neighbour(neighbour) == "add_remove" else 2 * eps


@dataclass(frozen=True)
class SamplingFigure:
    """A secondary, labelled ε beside the guaranteed one; ``charged`` is always False."""

    guaranteed: float
    amplified: float
    beta: float
    helps: bool
    label: str = AMPLIFICATION_ASSUMPTION
    charged: bool = False

    def text(self) -> str:
        """One line for reports: the guarantee first, the amplified figure with its label."""
        if not self.helps:
            return (f"ε = {self.guaranteed:.4g} (guaranteed); sampling fraction {self.beta:.4g} "
                    f"is too large for amplification to help (needs β < "
                    f"{helps_below(self.guaranteed):.4g})")
        return (f"ε = {self.guaranteed:.4g} (guaranteed); ε′ = {self.amplified:.4g} for the "
                f"population at sampling fraction {self.beta:.4g} — {self.label}")


def sampling_figure(epsilon_total: float, beta: float) -> SamplingFigure:
    """The amplified secondary figure for a guaranteed ε_total at sampling fraction β."""
    amplified = fixed_size_amplification(epsilon_total, beta)
    helps = amplification_helps(epsilon_total, beta)
    return SamplingFigure(float(epsilon_total), amplified if helps else float(epsilon_total),
                          _fraction(beta), helps)
