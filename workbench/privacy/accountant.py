"""The privacy accountant: refuses any measurement that would overspend the total budget.

Charging rules (pure ε-DP):

* a "once" measurement is charged its ε (basic composition);
* "loop" measurements belong to private selection: each iteration may spend at most the
  planned ε₁, and the whole loop is charged 2ε₁ + ε₀ once (paper Thm. 3), from the moment a
  selection is planned (a reservation) — so ``epsilon_total`` is Σ once + 2ε₁ + ε₀;
* ``epsilon_spent`` counts the loop only once a loop measurement has actually been made;
* δ (issue 36): an (ε, δ)-DP "once" measurement (thresholded partition selection) is charged
  its ε as above and its δ against a separate δ budget, by basic composition of (ε, δ)-DP
  (Σε, Σδ). The δ budget is 0 unless the caller gives one, so every pure-ε run refuses a δ
  measurement; δ is not accepted in the selection loop or a parallel group.

Earlier runs logged to the same ledger can be charged too (``prior_spent`` =
:meth:`Accountant.spent_in_ledger`).
Totals are composed by :mod:`workbench.privacy.budget_plan`, the one place
ε_total is computed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.privacy import _checks
from workbench.privacy.budget_plan import BudgetPlan, compose, price_ledger
from workbench.privacy.ledger import Ledger
from workbench.privacy.records import MeasurementRecord, ParallelTracker
from workbench.privacy.selection import check_selection_parameters

_TOL = 1e-9  # absolute slack for float sums such as 0.01 + 0.30 + … = 0.99


class BudgetExceeded(RuntimeError):
    """A measurement was refused; nothing was sampled or released."""


@dataclass(frozen=True)
class SelectionPlan:
    """The private-selection part of a :class:`BudgetPlan`: ε₁, γ, T, ε₀ and the loop's cost
    (2ε₁ + ε₀, or ε₁ for a single attempt), all read from the one budget plan."""

    budget: BudgetPlan

    @property
    def epsilon_per_iteration(self) -> float:
        return self.budget.epsilon_per_iteration

    @property
    def gamma(self) -> float:
        return self.budget.gamma

    @property
    def max_iterations(self) -> int | None:
        return self.budget.max_iterations

    @property
    def epsilon_0(self) -> float:
        return self.budget.epsilon_0

    @property
    def cost(self) -> float:
        """2ε₁ + ε₀ (Thm. 3), or ε₁ for a single attempt (T = 1)."""
        return self.budget.epsilon_selection


def plan_epsilon_total(
    loop_epsilons: Iterable[float],
    once_epsilons: Iterable[float] = (),
    epsilon_0: float = 0.0,
    max_iterations: int | None = None,
) -> float:
    """ε_total of a design without running it: 2·Σ loop + ε₀ + Σ once (1·Σ loop for T = 1).

    >>> round(plan_epsilon_total([4.0, 0.99]), 12)
    9.98
    >>> round(plan_epsilon_total([4.0, 0.56], once_epsilons=[0.43]), 12)
    9.55
    """
    loop = [_checks.positive_finite("loop_epsilons", e) for e in loop_epsilons]
    once = [_checks.positive_finite("once_epsilons", e) for e in once_epsilons]
    if not loop:
        return compose(0.0, math.fsum(once))
    return BudgetPlan(math.fsum(loop), 0.0, math.fsum(once), max_iterations=max_iterations,
                      epsilon_0=epsilon_0).epsilon_total


class Accountant:
    """Tracks ε for one run against a total budget and refuses what does not fit."""

    def __init__(self, total_budget: float, *, prior_spent: float = 0.0,
                 delta_budget: float = 0.0, prior_delta: float = 0.0) -> None:
        """Budget for everything, including ``prior_spent`` by earlier runs on the same data;
        ``delta_budget`` (including ``prior_delta``) caps Σδ of (ε, δ) measurements."""
        self.total_budget = _checks.positive_finite("total_budget", total_budget)
        if isinstance(prior_spent, bool) or not math.isfinite(prior_spent) or prior_spent < 0:
            raise ValueError("prior_spent must be a finite number ≥ 0")
        for name, value in (("delta_budget", delta_budget), ("prior_delta", prior_delta)):
            if isinstance(value, bool) or not math.isfinite(value) or not 0 <= value < 1:
                raise ValueError(f"{name} must be a number in [0, 1)")
        self.prior_spent = float(prior_spent)
        self.delta_budget = float(delta_budget)
        self.prior_delta = float(prior_delta)
        self._once_delta: list[float] = []
        self._once: list[float] = []
        self._loop: dict[int, list[float]] = {}
        self._plan: SelectionPlan | None = None
        self._ledger: Ledger | None = None
        self._parallel = ParallelTracker()

    # --- planning --------------------------------------------------------------------------
    @property
    def plan(self) -> SelectionPlan | None:
        """The selection plan, if one was made."""
        return self._plan

    @classmethod
    def for_plan(cls, plan: BudgetPlan) -> Accountant:
        """The accountant of a run of ``plan``: its budget is the dataset's ε after the run
        (earlier spend + this run's charge), the earlier spend already counted."""
        return cls(plan.epsilon_cumulative, prior_spent=plan.epsilon_prior)

    def plan_selection(
        self,
        plan: BudgetPlan | float,
        gamma: float = 0.0,
        max_iterations: int | None = None,
        epsilon_0: float = 0.0,
    ) -> SelectionPlan:
        """Reserve the selection loop's cost (2ε₁ + ε₀, or ε₁ for T = 1) of ``plan``; refuse if
        it does not fit the budget. A run passes its :class:`BudgetPlan`; a bare ε₁ with γ, T
        and ε₀ is taken for tests and toy loops."""
        if not isinstance(plan, BudgetPlan):
            plan = BudgetPlan(_checks.positive_finite("epsilon_per_iteration", plan),
                              gamma=float(gamma), max_iterations=max_iterations,
                              epsilon_0=float(epsilon_0))
        e1 = _checks.positive_finite("epsilon_per_iteration", plan.epsilon_per_iteration)
        check_selection_parameters(plan.gamma, plan.max_iterations, plan.epsilon_0)
        if self._plan is not None:
            raise ValueError("plan_selection: a selection is already planned for this run")
        selection = SelectionPlan(plan)
        if self.epsilon_total() + selection.cost > self.total_budget + _TOL:
            raise BudgetExceeded(
                f"selection costs {selection.cost:g} (ε₁ = {e1:g}) but only "
                f"{self.remaining():g} of ε = {self.total_budget:g} is left"
            )
        self._plan = selection
        self._log_plan()
        return selection

    # --- charging --------------------------------------------------------------------------
    def charge(self, record: MeasurementRecord) -> None:
        """Accept ``record`` or raise BudgetExceeded; called before any noise is drawn.

        A record of a parallel group (``privacy.parallel``) costs only what it adds to the
        group's max over its disjoint parts.
        """
        self._check_delta(record)
        eps = self._parallel.increment(record)
        self._charge(record, eps)
        self._parallel.add(record)
        if record.dp_delta > 0:
            self._once_delta.append(record.dp_delta)

    def _check_delta(self, record: MeasurementRecord) -> None:
        """Refuse an (ε, δ) measurement in the loop, in a parallel group or over the δ budget."""
        if record.dp_delta <= 0:
            return
        if record.stage != "once" or record.group is not None:
            raise BudgetExceeded(f"{record.purpose!r}: a δ > 0 measurement must be a 'once' "
                                 "measurement outside any parallel group")
        if self.delta_spent() + record.dp_delta > self.delta_budget * (1 + 1e-9):
            raise BudgetExceeded(
                f"{record.purpose!r}: δ = {record.dp_delta:g} exceeds the "
                f"{max(0.0, self.delta_budget - self.delta_spent()):g} left of "
                f"δ = {self.delta_budget:g}")

    def _charge(self, record: MeasurementRecord, eps: float) -> None:
        """Charge ``eps`` for ``record`` to the once-spend or to its iteration."""
        if record.stage == "once":
            if self.epsilon_total() + eps > self.total_budget + _TOL:
                raise BudgetExceeded(
                    f"{record.purpose!r}: ε = {eps:g} exceeds the {self.remaining():g} left "
                    f"of ε = {self.total_budget:g}"
                )
            self._once.append(eps)
            return
        plan, it = self._plan, record.iteration
        if plan is None:
            raise BudgetExceeded(f"{record.purpose!r}: loop measurement but no selection planned")
        if it is None or it < 1 or (plan.max_iterations is not None and it > plan.max_iterations):
            raise BudgetExceeded(f"{record.purpose!r}: loop measurement outside an iteration")
        used = math.fsum(self._loop.get(it, []))
        if used + eps > plan.epsilon_per_iteration + _TOL:
            raise BudgetExceeded(
                f"{record.purpose!r}: iteration {it} would spend {used + eps:g} > "
                f"ε₁ = {plan.epsilon_per_iteration:g}"
            )
        self._loop.setdefault(it, []).append(eps)

    # --- totals ----------------------------------------------------------------------------
    def epsilon_spent(self) -> float:
        """ε actually consumed: prior + Σ once + (2ε₁ + ε₀ once any loop measurement ran)."""
        loop = self._plan.cost if (self._plan is not None and self._loop) else 0.0
        return compose(loop, math.fsum(self._once), self.prior_spent)

    def epsilon_total(self) -> float:
        """ε committed: prior + Σ once + (2ε₁ + ε₀ if a selection is planned)."""
        loop = self._plan.cost if self._plan is not None else 0.0
        return compose(loop, math.fsum(self._once), self.prior_spent)

    def delta_spent(self) -> float:
        """δ consumed: prior + Σ δ of accepted (ε, δ) measurements (basic composition)."""
        return math.fsum([self.prior_delta, *self._once_delta])

    def remaining(self) -> float:
        """Budget not yet committed."""
        return max(0.0, self.total_budget - self.epsilon_total())

    def describe(self) -> str:
        """Human-readable summary for logs and the CLI (no data values, only ε)."""
        lines = [f"total budget ε = {self.total_budget:g}"]
        if self.prior_spent:
            lines.append(f"spent by earlier runs: {self.prior_spent:g}")
        lines.append(f"once-measurements: {len(self._once)}, ε = {math.fsum(self._once):g}")
        if self._plan is not None:
            p = self._plan
            cap = "∞" if p.max_iterations is None else str(p.max_iterations)
            lines.append(
                f"private selection: ε₁ = {p.epsilon_per_iteration:g}, γ = {p.gamma:g}, "
                f"T = {cap}, ε₀ = {p.epsilon_0:g} → selection costs {p.cost:g}"
            )
        lines.append(f"ε_total = {self.epsilon_total():g}; ε_spent = {self.epsilon_spent():g}")
        if self.delta_budget > 0:
            lines.append(f"δ budget = {self.delta_budget:g}; δ spent = {self.delta_spent():g}")
        return "\n".join(lines)

    # --- ledger ----------------------------------------------------------------------------
    def bind_ledger(self, ledger: Ledger) -> None:
        """Log this accountant's budget and plan to ``ledger`` so later runs can charge them."""
        if self._ledger is ledger:
            return
        if self._ledger is not None:
            raise ValueError("ledger: this accountant already writes to another ledger")
        self._ledger = ledger
        extra = ({"delta_budget": self.delta_budget, "prior_delta": self.prior_delta}
                 if self.delta_budget > 0 else {})
        ledger.event("accountant", total_budget=self.total_budget, prior_spent=self.prior_spent,
                     **extra)
        self._log_plan()

    def _log_plan(self) -> None:
        """Write the plan before any loop measurement, so spent_in_ledger can price the loop."""
        if self._ledger is not None and self._plan is not None:
            p = self._plan
            self._ledger.event(
                "selection_plan",
                epsilon_per_iteration=p.epsilon_per_iteration,
                gamma=p.gamma,
                max_iterations=p.max_iterations,
                epsilon_0=p.epsilon_0,
                epsilon_selection=p.cost,
            )

    @staticmethod
    def spent_in_ledger(path: str | os.PathLike[str]) -> float:
        """ε spent by all runs in a ledger file (priced by ``budget_plan.price_ledger``)."""
        return price_ledger(Ledger.read(path))
