"""The MCAR amplification figure: secondary, beside the guaranteed ε_total, never charged.

Why: a registry that declares MCAR rates φ (``schema.columns[].mcar_rate``, public) may want to
know how much weaker the loss is against the *ground truth* than the ε_total the budget
guarantees. The figure is computed by :mod:`workbench.privacy.amplification` for the generator's
measurements only and put back into the one ε_total formula,
:class:`~workbench.privacy.budget_plan.BudgetPlan`, with ε_gen replaced by its amplified ε̄_gen
(the criteria read R with its own missingness; their ε is left as is, which stays valid since
ε̄(ε_gen) + ε_c ≥ ε̄(ε_gen + ε_c): d ε̄/dε ≤ 1). It is labelled as a secondary figure
everywhere; the accountant, the ledger and the lifetime cap use ε_total only.

Assumption, stated with the figure: the MCAR declaration is true and public, and the
generator's measurements are ε-DP on their complete rows under add/remove too (the workbench's
count mechanisms are: their replace-one Δ is twice the add/remove one), which the
subsampling theorem needs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.privacy import amplification as amp

STRATEGIES = ("complete_rows", "partial", "impute")


@dataclass(frozen=True)
class AmplificationFigure:
    """ε_total (guaranteed) and the secondary ε̄_total under the declared MCAR rates."""

    epsilon_total: float
    epsilon_total_bar: float
    epsilon_generator: float
    epsilon_generator_bar: float
    strategy: str
    result: amp.Amplification
    rates: dict[str, float]

    def lines(self, *, ascii: bool = False) -> list[str]:
        """The plain-words rendering (the guaranteed figure first; ``ascii``: 'epsilon')."""
        out = self._lines()
        if ascii:
            out = [x.replace("ε̄", "epsilon_bar").replace("ε′", "epsilon'").replace(
                "ε", "epsilon").replace("−", "-") for x in out]
        return out

    def _lines(self) -> list[str]:
        """The rendering with Greek letters."""
        rates = ", ".join(f"{c} {r:g}" for c, r in sorted(self.rates.items()))
        return [
            f"ε_total = {self.epsilon_total:.6g} (guaranteed; this is what is charged)",
            f"secondary, not charged: ε̄_total = {self.epsilon_total_bar:.6g} against the "
            f"ground truth if the declared MCAR rates hold ({rates}); the generator's "
            f"ε_gen = {self.epsilon_generator:.6g} amplifies to "
            f"{self.epsilon_generator_bar:.6g} ({self.result.method}, "
            f"ε′ = ln(1 + p(e^ε − 1)) exactly)",
        ]


def mcar_rates(spec: Any) -> dict[str, float]:
    """The declared φ of every column that has one (> 0)."""
    return {c.name: float(c.mcar_rate) for c in spec.columns
            if getattr(c, "mcar_rate", None)}


def amplification_figure(spec: Any, *, strategy: str = "complete_rows",
                         cliques: Sequence[Sequence[str]] | None = None
                         ) -> AmplificationFigure | None:
    """The figure for ``spec`` (None when no MCAR rate is declared).

    ``strategy`` is the generator's missing-value strategy: ``complete_rows`` (one group over
    every column), ``partial`` (the ``cliques`` it measures — default: every column's 1-way
    marginal — ε_gen split evenly, grouped by Alg. 4) or ``impute`` (column-wise, Thm 5.12,
    ε_gen split evenly over the columns).
    """
    rates = mcar_rates(spec)
    if not rates:
        return None
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}")
    columns = list(spec.column_names)
    plan = spec.budget_plan()
    eps = plan.epsilon_generator
    if strategy == "complete_rows":
        result = amp.complete_rows([amp.Measure(tuple(columns), eps)], rates, columns)
    elif strategy == "impute":
        result = amp.column_wise({c: eps / len(columns) for c in columns}, rates)
    else:
        sets = [tuple(c) for c in cliques] if cliques else [(c,) for c in columns]
        result = amp.grouped([amp.Measure(s, eps / len(sets)) for s in sets], rates)
    bar = dataclasses.replace(plan, epsilon_generator=result.epsilon_bar)
    return AmplificationFigure(plan.epsilon_total, bar.epsilon_total, eps, result.epsilon_bar,
                               strategy, result, rates)
