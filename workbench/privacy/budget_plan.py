"""The one budget plan: ε_total of a design, what a run charges, and the formula text.

A draft's plan is built from its numbers by :func:`workbench.specification.derived.document_plan`.

Every place that states ε_total asks this module — ``Spec.epsilon_total``, the accountant,
ledger pricing (``Accountant.spent_in_ledger``, ``workbench verify``), ``workbench describe``,
the release report and datasheet, and the widgets' budget readouts:

* ε₁ = ε_gen + Σ in-loop criterion ε (one private-selection iteration);
* the loop costs f·ε₁ + ε₀, f = 2 (Liu & Talwar, paper Thm. 3) or f = 1 for a single
  attempt T = 1 (post-processing of one ε₁-DP iteration; :mod:`workbench.privacy.selection`);
* ε_total = f·ε₁ + ε₀ + Σ ε_once (§4.14.1: statistics of R alone are released once)
  + ε_survey, the survey section's ε_w + ε₁ + ε₂ + ε₃ (weight check, binning choice, noisy
  joint table, weighted counts; Merrill ch. 7), released before the loop and charged by every
  run (never reused)
  + ε_cleaning, the DP counts of the rows each domain policy and raw rule removed or recoded
  (``cleaning_counts: {release: dp}``), released before the loop and charged by every run
  + ε_n, the DP estimate n̂ of the cleaned n under ``metadata.n_policy: dp`` (Δ = 1), released
  before the loop and charged by every run (:mod:`workbench.specification.n_policy`).

Sampling amplification (:mod:`workbench.privacy.sampling`) is never part of this plan: it is a
secondary, labelled figure shown beside ε_total.

What a run *charges* to its dataset is the loop, plus Σ ε_once unless an earlier run of the
same spec on the same dataset already released the once-statistics: they are kept in the
dataset's budget store and reused (post-processing of a DP output is free), so they are
charged once, ever. A retry after ⊥ therefore costs f·ε₁ + ε₀, and repeating until a release
costs, in expectation, ε_once + (f·ε₁ + ε₀)/P(release) (a geometric number of attempts, basic
composition), with P(release) = p for a single attempt.

A family whose released records carry a per-record bound instead of dataset-level ε-DP
(plausible deniability: (ε, δ) per record, Thm 1) reports ε_total in two parts
(:meth:`BudgetPlan.with_records`): the pure ε of the model, the criteria and the selection,
composed as above, and the records' per-record (ε, δ), which is *not* added to ε_total — the
paper gives no dataset-level composition. When the records' seeds are disjoint from the model's
data (``gated``: PD's D_S), the per-record part is ε_rec + ε_statistics (issue 34): a seed
record also enters every criterion evaluated on R (and every other DP statistic of R the run
releases, :attr:`BudgetPlan.epsilon_statistics`), and the release is gated on them, so by basic
composition a released record, with the values that let it out, costs its seed the sum.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from workbench.privacy.selection import (
    loop_factor,
    probability_success,
    selection_epsilon,
)

#: Pass probabilities at which the expected cost of retrying is shown when none is known.
EXAMPLE_PASS_PROBABILITIES = (0.5, 0.8, 0.95)


def compose(selection: float, once: float = 0.0, prior: float = 0.0) -> float:
    """ε committed by basic composition: earlier spend + once-statistics + the selection loop."""
    return math.fsum((prior, once, selection))


def _num(x: float) -> str:
    """Compact number (six significant digits, no trailing zeros), ∞ for infinity."""
    return "∞" if math.isinf(x) else f"{x:.6g}"


@dataclass(frozen=True)
class BudgetPlan:
    """The ε of one release design, and what running it charges given earlier spend."""

    epsilon_generator: float
    epsilon_criteria_loop: float = 0.0
    epsilon_once: float = 0.0
    gamma: float = 0.0
    max_iterations: int | None = None
    epsilon_0: float = 0.0
    epsilon_prior: float = 0.0
    once_reused: bool = False
    epsilon_survey: float = 0.0
    #: The second part, for per-record guarantees: its label and (ε, δ) per released record
    #: (``record_epsilon``: the records' own mechanism, e.g. PD's Theorem 1; ``record_gated``:
    #: a seed also enters the statistics of R that gate the release, so they are added).
    record_label: str = ""
    record_epsilon: float | None = None
    record_delta: float | None = None
    record_gated: bool = False
    #: the DP cleaning counts' ε (``cleaning_counts``), charged by every run like the survey's
    epsilon_cleaning: float = 0.0
    #: ε_n of the DP estimate n̂ (``metadata.n_policy: dp``), charged by every run
    epsilon_n: float = 0.0

    # --- construction ----------------------------------------------------------------------
    @classmethod
    def of_criteria(cls, epsilon_generator: float, criteria: Iterable[tuple[float, bool]], *,
                    gamma: float = 0.0, max_iterations: int | None = None,
                    epsilon_0: float = 0.0, prior: float = 0.0, once_reused: bool = False,
                    epsilon_survey: float = 0.0) -> BudgetPlan:
        """The plan of ε_gen and the criteria's (ε, once) pairs: THE place the criteria's ε are
        split into the in-loop part of ε₁ and the once part (a criterion with ε = 0 reads S
        only and costs nothing)."""
        pairs = [(float(e), bool(once)) for e, once in criteria]
        loop = math.fsum(e for e, once in pairs if not once and e > 0)
        once = math.fsum(e for e, once in pairs if once and e > 0)
        return cls(float(epsilon_generator), loop, once, float(gamma), max_iterations,
                   float(epsilon_0), float(prior), bool(once_reused and once > 0),
                   float(epsilon_survey))

    @classmethod
    def of_selection_line(cls, line: Mapping[str, Any], once: Iterable[float] = (),
                          *, once_reused: bool = False, survey: Iterable[float] = (),
                          cleaning: Iterable[float] = (), n: Iterable[float] = ()
                          ) -> BudgetPlan:
        """The plan a ledger's ``selection_plan`` line, its once-, survey, cleaning-count and
        n̂ measurements describe."""
        return cls(float(line["epsilon_per_iteration"]), 0.0, math.fsum(once),
                   float(line.get("gamma", 0.0)), line.get("max_iterations"),
                   float(line["epsilon_0"]), once_reused=once_reused,
                   epsilon_survey=math.fsum(survey), epsilon_cleaning=math.fsum(cleaning),
                   epsilon_n=math.fsum(n))

    def with_prior(self, prior: float, *, once_reused: bool | None = None) -> BudgetPlan:
        """The same design run after ``prior`` ε was already spent on its dataset."""
        reused = self.once_reused if once_reused is None else once_reused
        return replace(self, epsilon_prior=float(prior), once_reused=reused)

    def with_records(self, label: str, epsilon: float, delta: float, *,
                     gated: bool = False) -> BudgetPlan:
        """The same plan whose released records carry a per-record (ε, δ) bound (second part);
        ``gated``: the records come from seeds outside the model's data that also enter every
        statistic of R (PD), so the per-record figure is ε + :attr:`epsilon_statistics`.

        >>> p = BudgetPlan(1.0, 0.5, max_iterations=1).with_records("per-record (ε, δ)", 1.4, 1e-9)
        >>> p.epsilon_total, p.parts()["records"]["epsilon"]
        (1.5, 1.4)
        >>> p.with_records("per-record (ε, δ)", 1.4, 1e-9, gated=True).record_epsilon_total
        1.9
        """
        return replace(self, record_label=str(label), record_epsilon=float(epsilon),
                       record_delta=float(delta), record_gated=bool(gated))

    # --- the numbers -----------------------------------------------------------------------
    @property
    def epsilon_per_iteration(self) -> float:
        """ε₁: the generator plus the in-loop criteria."""
        return self.epsilon_generator + self.epsilon_criteria_loop

    @property
    def loop_factor(self) -> int:
        """f: 2 for private selection, 1 for a single attempt."""
        return loop_factor(self.max_iterations)

    @property
    def epsilon_selection(self) -> float:
        """f·ε₁ + ε₀, the whole selection loop (also the cost of one retry after ⊥)."""
        return selection_epsilon(self.epsilon_per_iteration, self.epsilon_0, self.max_iterations)

    @property
    def epsilon_every_run(self) -> float:
        """ε_survey + ε_cleaning + ε_n: released before the loop by every run (never reused)."""
        return math.fsum((self.epsilon_survey, self.epsilon_cleaning, self.epsilon_n))

    @property
    def epsilon_before_loop(self) -> float:
        """Σ ε_once + ε_survey + ε_cleaning: what is released before the selection loop."""
        return math.fsum((self.epsilon_once, self.epsilon_every_run))

    @property
    def epsilon_total(self) -> float:
        """ε_total = f·ε₁ + ε₀ + Σ ε_once + ε_survey: the privacy loss of the release."""
        return round(compose(self.epsilon_selection, self.epsilon_before_loop), 12)

    @property
    def epsilon_statistics(self) -> float:
        """ε of every DP statistic of R besides the generator's model, what a record outside
        the model's data still pays: f·Σ in-loop criterion ε + ε₀ + Σ once + survey + cleaning
        (ε_total − f·ε_gen; with the generator out, Liu–Talwar's loop costs f·Σ in-loop + ε₀)."""
        return round(math.fsum((self.loop_factor * self.epsilon_criteria_loop, self.epsilon_0,
                                self.epsilon_before_loop)), 12)

    @property
    def record_epsilon_total(self) -> float | None:
        """The per-record figure stated: the records' own ε, plus :attr:`epsilon_statistics`
        when gated (None without a per-record part)."""
        if self.record_epsilon is None:
            return None
        extra = self.epsilon_statistics if self.record_gated else 0.0
        return round(self.record_epsilon + extra, 12)

    @property
    def epsilon_once_charged(self) -> float:
        """The once-statistics' ε this run charges (0 when an earlier run released them) plus
        the survey's and the cleaning counts', which every run releases anew."""
        return (0.0 if self.once_reused else self.epsilon_once) + self.epsilon_every_run

    @property
    def epsilon_charged(self) -> float:
        """What this run adds to its dataset's ledger."""
        return round(compose(self.epsilon_selection, self.epsilon_once_charged), 12)

    @property
    def epsilon_cumulative(self) -> float:
        """The dataset's ε after this run: earlier spend plus this run's charge."""
        return round(compose(self.epsilon_selection, self.epsilon_once_charged,
                             self.epsilon_prior), 12)

    def parts(self) -> dict[str, Any]:
        """ε_total in its parts: the pure ε (always) and, if set, the records' per-record (ε, δ)."""
        out: dict[str, Any] = {"pure": {"epsilon_total": self.epsilon_total,
                                        "covers": "generator model, criteria, selection"}}
        if self.record_epsilon is not None:
            out["records"] = {"label": self.record_label, "epsilon": self.record_epsilon_total,
                              "delta": self.record_delta, "composed_over_dataset": False}
            if self.record_gated:
                out["records"].update(epsilon_records_test=self.record_epsilon,
                                      epsilon_criteria=self.epsilon_statistics)
        return out

    def probability_release(self, p: float) -> float:
        """P(one run releases a candidate) when each iteration passes with probability p."""
        return probability_success(p, self.gamma, self.max_iterations)

    def expected_epsilon_until_release(self, p: float) -> float:
        """E[ε spent by retrying until a release] = ε_once + (f·ε₁ + ε₀)/P(release)."""
        q = self.probability_release(p)
        return math.inf if q == 0 else compose(
            (self.epsilon_selection + self.epsilon_every_run) / q, self.epsilon_once)

    # --- the words -------------------------------------------------------------------------
    def every_run_parts(self) -> list[tuple[str, str, float]]:
        """(formula term, sentence, ε) of each part every run releases before the loop."""
        parts = [("survey", "The survey's DP raking ({}) is", self.epsilon_survey),
                 ("cleaning counts", "The cleaning counts ({}) are", self.epsilon_cleaning),
                 ("n estimate", "The DP estimate of n ({}) is", self.epsilon_n)]
        return [part for part in parts if part[2] > 0]

    def formula_terms(self, *, ascii: bool = False) -> str:
        """'ε_total = 2 × (ε_gen + Σ in-loop) + ε₀ + Σ once' with numbers (``ascii``: 'epsilon')."""
        name, times = ("epsilon_total", "x") if ascii else ("ε_total", "×")
        survey = "".join(f" + {term} {_num(round(e, 12))}" for term, _, e in self.every_run_parts())
        return (f"{name} = {self.loop_factor} {times} ({_num(self.epsilon_generator)} + "
                f"{_num(round(self.epsilon_criteria_loop, 12))}) + {_num(self.epsilon_0)} + "
                f"{_num(round(self.epsilon_once, 12))}{survey}")

    def formula_symbols(self) -> str:
        """The formula in symbols with this plan's loop factor (1 for a single attempt):
        'ε_total = 1 × (ε_gen + Σ in-loop criterion ε) + ε₀ + Σ once ε'.

        >>> BudgetPlan(1.0, 0.5, max_iterations=1).formula_symbols()[:22]
        'ε_total = 1 × (ε_gen +'
        """
        survey = " + ε_survey" if self.epsilon_survey else ""
        return (f"ε_total = {self.loop_factor} × (ε_gen + Σ in-loop criterion ε) + ε₀ + "
                f"Σ once ε{survey}")

    def formula(self, *, ascii: bool = False) -> str:
        """The formula with numbers and result: 'ε_total = 2 × (4 + 0.99) + 0 + 0 = 9.98'
        (followed by the records' per-record part when :meth:`with_records` set one)."""
        pure = f"{self.formula_terms(ascii=ascii)} = {_num(self.epsilon_total)}"
        return pure if self.record_epsilon is None else f"{pure}; {self.records_text(ascii=ascii)}"

    def records_text(self, *, ascii: bool = False) -> str:
        """The second part in words: 'records: <label>, ε = …, δ = … per record (not composed)'."""
        if self.record_epsilon is None or self.record_epsilon_total is None:
            return ""
        eps, delta = ("epsilon", "delta") if ascii else ("ε", "δ")
        value = _num(self.record_epsilon_total)
        if self.record_gated:
            value = (f"{_num(self.record_epsilon)} (the records' test) + "
                     f"{_num(self.epsilon_statistics)} (criteria on R, which gate the release) "
                     f"= {value}")
        return (f"released records: {self.record_label}, {eps} = {value}, "
                f"{delta} = {self.record_delta:.3g} per record (not composed over the dataset, "
                f"not part of {'epsilon_total' if ascii else 'ε_total'})")

    def selection_text(self) -> str:
        """The loop's cost in words, e.g. '2 × 4.99 + ε₀ 0'."""
        return (f"{self.loop_factor} × {_num(self.epsilon_per_iteration)} + "
                f"ε₀ {_num(self.epsilon_0)}")

    def retry_text(self, pass_probability: float | None = None, *, ascii: bool = False) -> str:
        """What retrying after ⊥ costs, honestly: per attempt, and in expectation until a release.

        With ``pass_probability`` (a dry run's forecast p) the expectation is given for it,
        else at a few example values of p.
        """
        eps, e1 = ("epsilon", "epsilon_1") if ascii else ("ε", "ε₁")
        if self.max_iterations is None and self.gamma == 0:
            return ("Retrying: not needed; with γ = 0 and no cap the loop ends only with a "
                    "release (for any pass probability p > 0).")
        unit = (f"{e1} = {_num(self.epsilon_selection)}" if self.loop_factor == 1
                else f"{self.selection_text()} = {_num(self.epsilon_selection)}")
        once = ""
        if self.epsilon_once > 0:
            once = (f" The once-statistics ({eps} = {_num(self.epsilon_once)}) are kept in the "
                    "dataset's budget store and reused, so they are charged once, ever.")
        once += "".join(f" {who.format(f'{eps} = {_num(e)}')} released again by every attempt."
                        for _, who, e in self.every_run_parts())
        ps = EXAMPLE_PASS_PROBABILITIES if pass_probability is None else (pass_probability,)
        expected = ", ".join(
            f"p = {p:g}: {_num(self.expected_epsilon_until_release(p))}" for p in ps)
        release = "p" if self.loop_factor == 1 else "P(release | p)"
        return (f"Retrying after ⊥ (--spend-again) costs {unit} per attempt.{once} Expected "
                f"{eps} until a release = {_num(self.epsilon_once)} + "
                f"{_num(self.epsilon_selection + self.epsilon_every_run)}/{release}: {expected}.")


def price_ledger(entries: Iterable[Mapping[str, Any]]) -> float:
    """ε spent by every run in a ledger: per run Σ once + (f·ε₁ + ε₀ if it made any loop line).

    A run with loop lines but no plan line cannot be priced (the realised loop spend is not a
    valid bound, since the stopping time depends on the data), so it raises ValueError.
    """
    once: dict[str, list[float]] = {}
    looped: set[str] = set()
    plans: dict[str, float] = {}
    for entry in entries:
        run = str(entry.get("run_id"))
        if entry.get("event") == "selection_plan":
            plans[run] = float(entry["epsilon_selection"])
        elif entry.get("event") == "measurement":
            if entry.get("stage") == "once":
                once.setdefault(run, []).append(float(entry["epsilon"]))
            else:
                looped.add(run)
    if looped - plans.keys():
        raise ValueError("ledger: loop measurements without a selection plan cannot be priced")
    runs = once.keys() | looped
    return math.fsum(compose(plans[r] if r in looped else 0.0, math.fsum(once.get(r, ())))
                     for r in runs)
