"""The forecast the co-design app signs off on: P(all criteria pass) per attempt, its source, and
P(a release) under the spec's selection plan, against a target.

Two sources, the better first: the Feasibility tab's dry run of exactly this design (the
engine's own iteration on the proxy at the expected n; p is the mean over the configurations
it ran, as private selection draws them uniformly), else the quick samples of the proxy
(``ProxyLab.all_pass``, at the proxy's size; both estimates are
:mod:`workbench.dryrun.forecast`'s). P(release) is, for either,
:meth:`~workbench.privacy.budget_plan.BudgetPlan.probability_release` of that p. The target
defaults to the design assistant's (``workbench design --target-p``). Plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.dryrun.forecast import AllPass
from workbench.specification import Spec
from workbench.widgets.model.readouts import samples_label

#: The default target P(all criteria pass) per attempt (the design assistant's default).
DEFAULT_TARGET = 0.6


def percent(p: float, against: float | None = None) -> str:
    """A probability for reading: bounds for the extremes, no alarming 1e-07; beside a target
    (``against``) with digits enough that a miss never reads as the target itself.

    >>> percent(3e-5), percent(0.004), percent(0.62), percent(0.99995)
    ('<0.1%', '0.4%', '62%', '>99.9%')
    >>> percent(0.5996, against=0.6), percent(0.59999, against=0.6)
    ('59.96%', '59.999%')
    """
    if 0 < p < 1e-3:
        return "<0.1%"
    if 0.999 < p < 1:
        return ">99.9%"
    text = f"{p:.1%}" if p < 0.1 else f"{p:.0%}"
    if against is None or p == against or text != percent(against):
        return text
    digits = next((d for d in range(1, 7) if round(100 * p, d) != round(100 * against, d)), 6)
    return f"{100 * p:.{digits}f}%"


@dataclass(frozen=True)
class Forecast:
    """P(all criteria pass) per attempt, where it comes from, and P(release) for the plan."""

    p: float
    source: str
    p_release: float
    low: float | None = None
    high: float | None = None
    criteria: int = 0

    def below(self, target: float) -> bool:
        """Whether the forecast misses the target."""
        return self.p < target

    def words(self, target: float | None = None) -> str:
        """One line for the export panel and the sign-off (read against ``target``)."""
        if self.criteria == 0:
            return "no acceptance criteria: every candidate passes (nothing to forecast)"
        span = ("" if self.low is None or self.high is None
                else f" (range {percent(self.low)} – {percent(self.high)})")
        return (f"P(all criteria pass) per attempt = {percent(self.p, target)}{span}, "
                f"{self.source}; "
                f"P(a release) under this selection plan = {percent(self.p_release)}")


def current(spec: Spec | None, all_pass: AllPass | None = None,
            dry_run: Any = None) -> Forecast | None:
    """The dry run's forecast when it ran on this design, else the quick samples', else None;
    P(a release) of either p is the plan's."""
    if spec is None:
        return None
    if not spec.criteria:
        return Forecast(1.0, "no criteria", 1.0, criteria=0)
    plan = spec.budget_plan()
    if dry_run is not None:
        f = dry_run.selection_forecast(spec.selection.gamma, spec.selection.max_iterations, 0.0)
        return Forecast(f.p, f"dry run at n = {int(dry_run.n):,} ({f.configurations} "
                        f"configuration(s), {len(dry_run.records)} task(s))",
                        plan.probability_release(f.p), criteria=len(spec.criteria))
    if all_pass is None:
        return None
    return Forecast(all_pass.probability, f"{samples_label(all_pass.samples)} at the proxy's size",
                    plan.probability_release(all_pass.probability), all_pass.low, all_pass.high,
                    len(spec.criteria))
