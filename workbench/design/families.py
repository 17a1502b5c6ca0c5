"""Which generator family serves the spec: candidates compared at equal ε by rehearsal (issue 28).

A spec names one generator family; for a continuous target the family is itself a design
choice (a censored Bayesian posterior draw, the perturbed histogram, …). ``workbench design
--families bayesian perturbed_histogram`` makes that choice on the spec's own criteria:

1. each candidate ``FAMILY[:NAME=VALUE,...]`` becomes a variant of the spec that differs in its
   ``generator`` section only — the same columns, criteria, criterion ε's and ε_gen (the
   spec's), so every candidate has the same ε_total (``BudgetPlan``; checked): the comparison
   is at EQUAL ε. Hyperparameters a candidate leaves out come from the spec when it is the
   spec's own family, else from ``design.candidates.COMPLETE`` (e.g. the perturbed histogram's
   ``number_bins``: bins half as wide as the tightest threshold in the column's units, so
   binning alone moves a quantile by at most half its margin), else the family's defaults;
2. each variant is rehearsed AS FROZEN at n, as the assistant rehearses its drafts
   (``dryrun.robust``: the proxy, then the proxy scenarios); a candidate whose P(all pass) on
   the proxy is already below the target is not rehearsed on the scenarios (the range's low
   end cannot be higher than the proxy's p);
3. the chosen candidate is, among those whose low end reaches the target, the one with the
   strongest guarantee (pure ε-DP, then ε-DP for an exact posterior draw released from MCMC,
   then per-record bounds, then aDP), then the highest low end, then the most headroom on its
   tightest error criterion (the largest median exact / threshold on the proxy is smallest:
   two variants that both pass every rehearsal are told apart by their margins, e.g. a
   sampling or workload option that keeps more record-level structure); when none reaches it, the
   highest p on the proxy (flagged). Its opt-ins for weaker guarantees
   (``budget.allow_mcmc_draw``, ``allow_asymptotic_dp``) are dropped when it does not need them;
4. the design assistant (:func:`workbench.design.assistant.design`) then prices the chosen
   variant as usual (criterion ε's, ε_gen, mode) and records its rehearsal as the forecast.

Public data only (simulation contexts, seeded).
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.criteria import kinds
from workbench.design.assistant import DesignResult, design
from workbench.design.candidates import (
    OPTION,
    Candidate,
    candidate_document,
    parse_candidates,
)
from workbench.dryrun.executors import LocalExecutor, session
from workbench.dryrun.robust import RobustForecast, robust_forecast
from workbench.evidence.core import SCENARIOS, Evidence
from workbench.evidence.prepare import as_evidence
from workbench.generators import MCMC_KIND, Guarantee
from workbench.specification import Spec
from workbench.trial import bind
from workbench.validation import build_spec

__all__ = ["Candidate", "FamilyChoice", "FamilyDesign", "candidate_document",
           "compare_families", "design_families", "parse_candidates"]

# --- the comparison ---------------------------------------------------------------------------
def strength(g: Guarantee) -> int:
    """0 pure ε-DP, 1 ε-DP for an exact posterior draw (MCMC), 2 another strict bound
    (per record), 3 not a guarantee (aDP): lower is stronger."""
    if g.is_pure:
        return 0
    if g.kind == MCMC_KIND:
        return 1
    return 2 if g.strict else 3


def _label(candidate: Candidate, document: Mapping[str, Any]) -> str:
    """'perturbed_histogram (number_bins 136)', 'bayesian (censor_uw)'."""
    grid = document["generator"]["search_space"][0]
    if candidate.family == "bayesian":
        return f"bayesian ({grid.get('mechanism', ['censor_uw'])[0]})"
    shown = [f"{k} {grid[k][0]}" for k in sorted(grid)
             if k != "epsilon" and not isinstance(grid[k][0], list | dict)]
    return f"{candidate.family} ({', '.join(shown)})" if shown else candidate.family


@dataclass(frozen=True)
class Compared:
    """One candidate's rehearsal at n: p per scenario, per-criterion pass rates on the proxy."""

    candidate: Candidate
    label: str
    document: dict[str, Any]
    guarantee: Guarantee
    epsilon_total: float
    forecast: RobustForecast
    complete: bool  # rehearsed on every scenario (not stopped after the proxy)
    pass_rates: Mapping[str, float]
    median_exact: Mapping[str, float]

    @property
    def p(self) -> float:
        return self.forecast.anchor_p

    @property
    def low(self) -> float:
        return self.forecast.low

    def passes(self, target_p: float) -> bool:
        return self.complete and self.low >= target_p


@dataclass(frozen=True)
class FamilyChoice:
    """Every candidate's rehearsal and the chosen one."""

    n: int
    target_p: float
    compared: tuple[Compared, ...]
    chosen: int
    thresholds: Mapping[str, float]

    @property
    def winner(self) -> Compared:
        return self.compared[self.chosen]

    @property
    def reached(self) -> bool:
        return self.winner.passes(self.target_p)

    def table(self) -> str:
        """One row per candidate at equal ε: guarantee, ε_total, p on the proxy, range."""
        rows = ["| candidate | guarantee | ε_total | P(all pass) on the proxy | low–high over "
                "scenarios |", "|---|---|---|---|---|"]
        for i, c in enumerate(self.compared):
            spread = (f"{c.low:.2f}–{c.forecast.high:.2f}" if c.complete
                      else "not rehearsed: below the target on the proxy")
            mark = " ← chosen" if i == self.chosen else ""
            rows.append(f"| {c.label} | {c.guarantee.label} | {c.epsilon_total:.4g} | "
                        f"{c.p:.2f} | {spread} |{mark}")
        return "\n".join(rows)

    def _failing(self, c: Compared) -> str:
        bad = sorted((r, cid) for cid, r in c.pass_rates.items() if r < 1)
        return "; ".join(f"{cid} passed {r:.0%} (median exact {c.median_exact[cid]:.4g}, "
                         f"threshold {self.thresholds[cid]:g})" for r, cid in bad[:3])

    def why(self) -> str:
        """The chosen candidate, its guarantee label, and why (the others' failing criteria)."""
        w = self.winner
        lines = [f"chosen generator: {w.label} — guarantee: {w.guarantee.label}"]
        if self.reached:
            rivals = [c for c in self.compared if c is not w and c.passes(self.target_p)]
            lines.append(f"  why: its rehearsal as frozen at n = {self.n:,} reaches P(all pass) "
                         f"≥ {self.target_p:g} on the proxy and every scenario (low end "
                         f"{w.low:.2f})" + ("; of the candidates that do, it has the "
                                            "strongest guarantee, then the highest low end, "
                                            "then the most headroom on its tightest "
                                            "criterion (median exact / threshold on the "
                                            "proxy)" if rivals else ""))
        else:
            lines.append(f"  why: no candidate reaches P(all pass) ≥ {self.target_p:g}; it "
                         f"has the highest p on the proxy ({w.p:.2f}) — target not reached")
        for c in self.compared:
            if c is w:
                continue
            verdict = ("passes too" if c.passes(self.target_p) else
                       f"P(all pass) {c.p:.2f} on the proxy, low end {c.low:.2f}" if c.complete
                       else f"P(all pass) {c.p:.2f} on the proxy, below the target")
            failing = self._failing(c)
            lines.append(f"  {c.label} ({c.guarantee.label}): {verdict}"
                         + (f" — {failing}" if failing else ""))
        return "\n".join(lines)


def headroom_thresholds(spec: Spec) -> dict[str, float]:
    """The criteria a headroom is read on: a positive threshold that a value passes below
    and fails above (an error bound; its kind's own ``passes``)."""
    out = {}
    for c in spec.criteria:
        t = float(c.threshold)
        kind = kinds.get(c.kind)
        if t > 0 and kind.passes(0.5 * t, t) and not kind.passes(1.5 * t, t):
            out[c.id] = t
    return out


def tightest(c: Compared, thresholds: Mapping[str, float]) -> float:
    """The candidate's tightest criterion on the proxy: max median exact / threshold (1 is at
    the threshold; ∞ when none of those criteria has an exact value)."""
    ratios = [c.median_exact[cid] / t for cid, t in thresholds.items()
              if math.isfinite(c.median_exact.get(cid, math.nan))]
    return max(ratios) if ratios else math.inf


def choose(compared: Sequence[Compared], target_p: float,
           thresholds: Mapping[str, float]) -> int:
    """Among candidates reaching the target: the strongest guarantee, then the highest low end,
    then the most headroom on the tightest criterion (so equal pass rates are decided by the
    criteria's own margins, not by the order listed), then the order; if none reaches it, the
    highest p on the proxy."""
    passing = [i for i, c in enumerate(compared) if c.passes(target_p)]
    if passing:
        return min(passing, key=lambda i: (strength(compared[i].guarantee), -compared[i].low,
                                           tightest(compared[i], thresholds), i))
    return max(range(len(compared)), key=lambda i: (compared[i].p, -i))


def _rehearse(spec: Spec, evidence: Evidence, n: int, target_p: float, repetitions: int,
              seed: int, scenarios: Sequence[str], executor: Any
              ) -> tuple[RobustForecast, bool]:
    """The anchor first (the proxy, or the proxy raked to the published tables); the other
    scenarios only if its p reaches the target; and whether every scenario was rehearsed."""
    names = evidence.default_scenarios() if evidence.published is not None else scenarios
    rf = robust_forecast(spec, evidence, list(spec.configurations()), n,
                         repetitions=repetitions, seed=seed, names=names, stop_below=target_p,
                         executor=executor)
    return rf, len(rf.scenarios) == len(names)


def compare_families(spec: Spec, proxy: Evidence | pd.DataFrame | str, n: int | None,
                     candidates: Sequence[Candidate], *, target_p: float = 0.6,
                     repetitions: int = 10, seed: int = 0,
                     scenarios: Sequence[str] = SCENARIOS, executor: Any = None,
                     progress: Callable[[str], None] | None = None) -> FamilyChoice:
    """Rehearse every candidate at the spec's ε and choose (module docstring, steps 1–3) on
    the evidence (anchored on its published tables, if any)."""
    if not candidates:
        raise ValueError(f"{OPTION}: name at least one generator family")
    say = progress or (lambda _m: None)
    evidence = as_evidence(spec, proxy)
    if n is None:
        n = spec.expected_n.low if spec.expected_n is not None else len(evidence.frame)
    documents = [candidate_document(spec, c, evidence.frame) for c in candidates]  # all valid first
    compared = []
    for c, doc in zip(candidates, documents, strict=True):
        variant = build_spec(doc)
        say(f"comparing {_label(c, doc)} at ε_total {variant.epsilon_total:.4g}, n = {n:,}")
        rf, complete = _rehearse(variant, evidence, int(n), target_p, repetitions, seed,
                                 scenarios, executor)
        records = rf.result.records
        rates = {cid: statistics.fmean(bool(r.criteria.get(cid) and r.criteria[cid].passed)
                                       for r in records) for cid in rf.result.criteria}
        exact = {cid: statistics.median(
            [r.criteria[cid].exact for r in records
             if r.criteria.get(cid) is not None and r.criteria[cid].exact is not None]
            or [math.nan]) for cid in rf.result.criteria}
        compared.append(Compared(c, _label(c, doc), doc,
                                 bind(variant, next(iter(variant.configurations()))).guarantee,
                                 variant.budget_plan().epsilon_total, rf, complete,
                                 rates, exact))
    totals = [c.epsilon_total for c in compared]
    if not all(math.isclose(t, totals[0], rel_tol=1e-12) for t in totals):
        raise ValueError(f"{OPTION}: the candidates' ε_total differ ({totals}); the comparison "
                         "must be at equal ε")
    chosen = choose(compared, target_p, headroom_thresholds(spec))
    return FamilyChoice(int(n), target_p, tuple(compared), chosen,
                        {c.id: c.threshold for c in spec.criteria})


def chosen_spec(choice: FamilyChoice) -> Spec:
    """The chosen variant, without opt-ins for guarantees it does not need."""
    doc = copy.deepcopy(choice.winner.document)
    g = choice.winner.guarantee
    for flag in {"allow_mcmc_draw", "allow_asymptotic_dp"} - {g.opt_in}:
        doc["budget"].pop(flag, None)
    return build_spec(doc)


@dataclass(frozen=True)
class FamilyDesign:
    """The family comparison, then the assistant's design of the chosen family."""

    choice: FamilyChoice
    design: DesignResult


def design_families(spec: Spec, proxy: Evidence | pd.DataFrame | str, n: int | None,
                    candidates: Sequence[Candidate], *, target_p: float = 0.6,
                    check_repetitions: int = 10, seed: int = 0,
                    scenarios: Sequence[str] = SCENARIOS, executor: Any = None,
                    progress: Callable[[str], None] | None = None,
                    **design_options: Any) -> FamilyDesign:
    """Choose the family at equal ε (:func:`compare_families`), then design it
    (:func:`workbench.design.assistant.design` with ``design_options``)."""
    evidence = as_evidence(spec, proxy)
    with session(executor if executor is not None else LocalExecutor()) as ex:  # one pool
        choice = compare_families(spec, evidence, n, candidates, target_p=target_p,
                                  repetitions=check_repetitions, seed=seed,
                                  scenarios=scenarios, executor=ex, progress=progress)
        result = design(chosen_spec(choice), evidence, choice.n, target_p=target_p,
                        check_repetitions=check_repetitions, seed=seed, scenarios=scenarios,
                        executor=ex, progress=progress, **design_options)
    return FamilyDesign(choice, result)
