"""``design``: the smallest ε_total whose forecast P(all pass) reaches the target at n.

Steps (public proxy only, simulation contexts):
1. the proxy, cleaned as a run cleans, resampled to n (the low end of ``schema.expected_n``
   unless ``n`` is given; ``dryrun.size``), encoded with the configuration;
2. each criterion's tunable parameters tuned on it by its kind (``CriterionKind.tuned_params``:
   e.g. the regression's statistic weights);
3. for every ε_gen alternative, ``repetitions`` candidates made by the engine's own steps
   (:mod:`workbench.design.facts`); the margin of each criterion is its threshold minus the
   candidates' median exact error;
4. for every noise divisor K, each criterion's ε from the rule σ ≤ margin/K
   (:mod:`workbench.design.rules`), and the forecast p = mean over candidates of Π P(pass):
   exact Laplace probabilities, and for the regression group the share of ``draws`` DP
   releases that pass (its noise is not one Laplace draw);
5. the mode, single attempt (ε₁ + once) or loop (2ε₁ + once), whichever expects less ε until
   a release at p, and ε_total — both from ``privacy.budget_plan.BudgetPlan``;
6. the drafts, cheapest model-feasible first, are rehearsed AS FROZEN
   (:mod:`workbench.design.rehearse`: a seeded dry run of the draft itself at n on the proxy
   and its scenarios, :mod:`workbench.dryrun.robust`); the first whose low end reaches the
   target (else the one with the highest low end, flagged) is written, and that rehearsal is
   its recorded forecast (p, interval, range, n, proxy, and the hash of the draft).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from workbench.design.facts import CandidateFacts
from workbench.design.jobs import Shared, fit_candidate, pass_job, run_jobs, sigma_job
from workbench.design.progress import Countdown
from workbench.design.rehearse import DEFAULT_CHECKS, rehearse_drafts
from workbench.design.rules import needed_epsilon
from workbench.design.variants import at_epsilon, variant, variant_document
from workbench.dryrun.executors import LocalExecutor, session
from workbench.dryrun.forecast import all_pass
from workbench.dryrun.robust import RobustForecast
from workbench.evidence.core import SCENARIOS, Evidence
from workbench.evidence.population import size_seed
from workbench.evidence.prepare import as_evidence
from workbench.privacy.budget_plan import BudgetPlan
from workbench.specification import Configuration, Spec
from workbench.specification.errors import SpecError
from workbench.transform.cells import distinct_cells
from workbench.trial import Trial, bind
from workbench.validation import build_spec

DEFAULT_DIVISORS = (2.0, 3.0, 4.0, 6.0, 10.0)
SINGLE, LOOP = "single attempt", "loop"
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Alternative:
    """One (ε_gen, K) design: its ε's, forecast p, cheaper mode and ε_total (BudgetPlan)."""

    epsilon_generator: float
    divisor: float
    epsilons: Mapping[str, float]
    p: float
    mode: str
    plan: BudgetPlan
    #: mean P(pass) per criterion over the candidates (the regression group: jointly)
    per_criterion: Mapping[str, float] = field(default_factory=dict)

    @property
    def epsilon_total(self) -> float:
        return self.plan.epsilon_total

    @property
    def expected_epsilon(self) -> float:
        """ε expected until a release at the forecast p (retrying a single attempt)."""
        return self.plan.expected_epsilon_until_release(self.p)


@dataclass
class DesignResult:
    """The derivation: every alternative, the chosen one and the draft spec document."""

    n: int
    target_p: float
    configuration: Configuration
    alternatives: list[Alternative]
    chosen: Alternative
    reached: bool
    margins: dict[float, dict[str, float]]
    document: dict[str, Any]
    #: per criterion id, the parameters its kind tuned on the proxy
    tuned: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the written draft rehearsed as frozen: p on the proxy and each proxy scenario
    forecast: RobustForecast | None = None

    def table(self) -> str:
        """The alternatives, cheapest first, with the chosen one marked."""
        rows = ["| ε_gen | K | Σ ε criteria | P(all pass) | mode | ε_total | E[ε] until release |",
                "|---|---|---|---|---|---|---|"]
        for a in sorted(self.alternatives, key=lambda a: (a.epsilon_total, -a.p)):
            mark = " ← chosen" if a is self.chosen else ""
            crit = math.fsum(a.epsilons.values())
            rows.append(f"| {a.epsilon_generator:g} | {a.divisor:g} | {crit:.4g} | {a.p:.3f} | "
                        f"{a.mode} | {a.epsilon_total:.4g} | {a.expected_epsilon:.4g} |{mark}")
        return "\n".join(rows)

    def best_draft(self) -> str:
        """The chosen draft in words: ε_gen, K, mode, ε_total."""
        c = self.chosen
        return (f"ε_gen {c.epsilon_generator:g}, K {c.divisor:g}, {c.mode}, ε_total "
                f"{c.epsilon_total:.4g}")

    def shortfall(self, spec: Spec) -> list[str]:
        """Why the target was not reached: the best draft, its recorded forecast, the binding
        criterion (the one passing least often in a rehearsed scenario) and what to relax."""
        rf = self.forecast
        lines = [f"target not reached: no rehearsed draft's recorded forecast reaches "
                 f"p ≥ {self.target_p:g} at its low end, so nothing was written or frozen",
                 f"best draft found: {self.best_draft()}"]
        if rf is None:
            return lines
        scenarios = "" if len(rf.scenarios) > 1 or "published" in rf.scenarios else (
            " (the proxy scenarios were not rehearsed: it is below the target on the proxy)")
        lines.append(f"its forecast (a seeded dry run of it as frozen at n = {self.n:,}): "
                     f"{rf.words()}{scenarios}")
        bound = rf.binding()
        if bound is None:
            return lines
        cid, scenario, (rate, exact, limit) = bound
        c = spec.criterion(cid)
        limit = limit if math.isfinite(limit) else c.threshold
        eps = self.chosen.epsilons.get(cid, c.epsilon)
        eps = eps if math.isfinite(eps) else c.epsilon
        lines.append(f"binding criterion: {cid!r} passes {rate:.0%} of the rehearsals on "
                     f"{scenario!r} (median exact {exact:.4g} against threshold {limit:.4g}, "
                     f"ε {eps:g})")
        top = max(a.epsilon_generator for a in self.alternatives)
        if not math.isfinite(exact) or exact >= limit:
            relax = (f"the release itself misses {cid!r}: raise its threshold above "
                     f"{exact:.4g}, or give the generator more ε (--eps-gen above {top:g}); "
                     "a larger ε for the criterion will not help")
        else:
            relax = (f"the release meets {cid!r} but its DP test's noise fails it: give it "
                     f"more ε than {eps:g} (a larger --divisors K), or raise its threshold")
        if rf.low > 0:
            relax += f"; or accept a lower target (--target-p {math.floor(rf.low * 100) / 100:g})"
        lines.append(f"what to relax: {relax}")
        return lines

    def criteria_table(self, spec: Spec) -> str:
        """Per criterion of the chosen design: threshold, median exact, margin, ε."""
        margins = self.margins[self.chosen.epsilon_generator]
        rows = ["| criterion | threshold | median exact on the proxy | margin | ε |",
                "|---|---|---|---|---|"]
        for c in spec.criteria:
            v = margins.get(c.id, math.nan)
            eps = self.chosen.epsilons.get(c.id, c.epsilon)
            shown = f"{eps:g}" if math.isfinite(eps) else f"∞: no margin (kept {c.epsilon:g})"
            rows.append(f"| {c.id} | {c.threshold:g} | {v:.4g} | {c.threshold - v:.4g} | "
                        f"{shown} |")
        return "\n".join(rows)


def _simulated_group(trial: Trial) -> list[str]:
    """Criteria whose kind answers no closed-form P(pass) (its noise is not one Laplace draw
    on the exact value: the regression kinds, quantiles, TSTR, kNN): simulated jointly."""
    return [b.id for b in trial.criteria if not b.kind.tags.closed_form_pass and b.epsilon > 0]


def _plans(eps_gen: float, spec: Spec, epsilons: Mapping[str, float]
           ) -> dict[str, BudgetPlan]:
    """Single-attempt and loop plans of these ε's (the one place ε_total is computed); what
    every run releases besides them (survey raking, DP cleaning counts) is the spec's own."""
    pairs = [(epsilons[c.id], c.once) for c in spec.criteria]
    base = spec.budget_plan()
    extra = {"epsilon_survey": base.epsilon_survey, "epsilon_cleaning": base.epsilon_cleaning}
    return {mode: replace(BudgetPlan.of_criteria(eps_gen, pairs, max_iterations=cap), **extra)
            for mode, cap in ((SINGLE, 1), (LOOP, None))}


@dataclass(frozen=True)
class _Priced:
    """One (ε_gen, K) before its forecast: the rule's ε's, both plans and, when every ε is
    finite, the variant's document, its bound trial and its simulated group."""

    divisor: float
    epsilons: dict[str, float]
    plans: dict[str, BudgetPlan]
    document: dict[str, Any] | None = None
    at: Trial | None = None
    group: tuple[str, ...] = ()


def _price(trial: Trial, eps_gen: float, divisor: float, facts: Sequence[CandidateFacts],
           margins: Mapping[str, float], sigma_eps: Mapping[str, float],
           floors: Mapping[str, float] | None = None) -> _Priced:
    """The ε's of one (ε_gen, K) from the rule σ ≤ margin/K (K at least ``floors[id]`` for the
    criteria it names), and their plans."""
    spec = trial.spec
    floors = floors or {}
    delta = {c.id: max((f.sensitivity[c.id] or 0.0) for f in facts) for c in spec.criteria}
    epsilons = {c.id: 0.0 if c.epsilon == 0 else needed_epsilon(
        c, margins[c.id], delta[c.id], max(divisor, floors.get(c.id, 0.0)),
        sigma_eps.get(c.id)) for c in spec.criteria}
    plans = _plans(eps_gen, spec, {c.id: epsilons[c.id] if math.isfinite(epsilons[c.id])
                                   else c.epsilon for c in spec.criteria})
    if not all(math.isfinite(v) for v in epsilons.values()):
        return _Priced(divisor, epsilons, plans)
    document = variant_document(spec, eps_gen, epsilons)
    at = bind(build_spec(document), trial.configuration)
    return _Priced(divisor, epsilons, plans, document, at, tuple(_simulated_group(at)))


def _alternative(priced: _Priced, eps_gen: float, facts: Sequence[CandidateFacts],
                 joint: Sequence[float]) -> Alternative:
    """The forecast p and cheaper mode of one priced (ε_gen, K); ``joint``: per candidate,
    the simulated group's share of DP releases passing together (its jobs')."""
    at, group, plans = priced.at, list(priced.group), priced.plans
    if at is None:
        return Alternative(eps_gen, priced.divisor, priced.epsilons, 0.0, SINGLE, plans[SINGLE])
    each = []
    for i, f in enumerate(facts):
        one = {b.id: b.pass_probability(f.exact[b.id], f.sensitivity[b.id], f.details[b.id])
               for b in at.criteria if b.id not in group}
        if group:
            one |= dict.fromkeys(group, joint[i])
        each.append(one)
    # the one P(all pass) model; the regression group's joint P(pass) counts once
    forecast = all_pass([{k: v for k, v in one.items() if k not in group[1:]} for one in each])
    p = 0.0 if forecast is None else forecast.probability
    mode = min(plans, key=lambda m: (plans[m].expected_epsilon_until_release(p), m != SINGLE))
    per = {c.id: float(np.mean([e[c.id] for e in each])) for c in at.criteria}
    return Alternative(eps_gen, priced.divisor, priced.epsilons, p, mode, plans[mode], per)


def _draft(spec: Spec, config: Configuration, chosen: Alternative,
           tuned: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The draft spec document of an alternative (its forecast is recorded by rehearsing it,
    :mod:`workbench.design.rehearse`)."""
    doc = variant(spec, chosen.epsilon_generator, chosen.epsilons, tuned).to_document()
    doc["selection"] = {"gamma": 0, "max_iterations": 1 if chosen.mode == SINGLE else None,
                        "epsilon_0": 0,
                        "configurations": [at_epsilon(config, chosen.epsilon_generator)
                                           .to_dict()]}
    build_spec(doc)
    return doc


def _valid_drafts(spec: Spec, config: Configuration, order: Sequence[Alternative],
                  tuned: Mapping[str, Mapping[str, Any]], checks: int, say: Progress
                  ) -> tuple[list[Alternative], list[dict[str, Any]]]:
    """The first ``checks`` alternatives whose draft is a valid spec, and their drafts: one
    over a budget cap (ε_total_max, the lifetime cap with the pilot's ε) is skipped and said,
    never an abort of the whole search; none valid is refused naming the first problem."""
    kept: list[Alternative] = []
    drafts: list[dict[str, Any]] = []
    first: SpecError | None = None
    for a in order:
        if len(drafts) == checks:
            break
        try:
            drafts.append(_draft(spec, config, a, tuned))
        except SpecError as exc:
            first = first or exc
            say(f"skipping the draft ε_gen {a.epsilon_generator:g}, K {a.divisor:g} "
                f"(ε_total {a.epsilon_total:.4g}): {exc.problems[0]}")
            continue
        kept.append(a)
    if not drafts:
        problem = first.problems[0] if first is not None and first.problems else "none"
        raise ValueError(f"no alternative makes a valid spec (first problem: {problem}); "
                         "nothing was written")
    return kept, drafts


def _rehearsal_guess(fits: Countdown, repetitions: int, scenarios: Sequence[str]) -> float | None:
    """Seconds to rehearse one draft: a candidate's time per dry-run iteration, on every
    scenario (an upper end: a draft below the target stops after the proxy)."""
    per = fits.seconds_per_unit
    return None if per is None else per * repetitions * max(len(scenarios), 1)


def design(spec: Spec, proxy: Evidence | pd.DataFrame | str | os.PathLike[str],
           n: int | None = None, *,
           target_p: float = 0.6, epsilon_generators: Sequence[float] = (1.5, 2.0, 2.5),
           divisors: Sequence[float] = DEFAULT_DIVISORS, repetitions: int = 4, draws: int = 10,
           seed: int = 0, configuration: Configuration | None = None,
           progress: Progress | None = None, check_repetitions: int = 10,
           scenarios: Sequence[str] = SCENARIOS, checks: int = DEFAULT_CHECKS,
           executor: Any = None, criterion_divisors: Mapping[str, float] | None = None,
           confidence: float | None = None) -> DesignResult:
    """Derive each criterion's ε, ε_gen and the selection mode on the proxy at n (module doc);
    the drafts are then rehearsed as frozen (``check_repetitions`` seeded dry-run iterations
    on the proxy and each of ``scenarios``, up to ``checks`` drafts cheapest first) and the
    first whose low end reaches the target is written, with that rehearsal as its forecast;
    ``executor``: the dry run's, default two local processes, opened once for the whole design
    and running its candidate fits, σ simulations and pricing draws too, :mod:`.jobs`). The
    margins are measured on a population at n of the evidence's anchor; published tables in
    the evidence anchor the rehearsal's scenarios instead of ``scenarios``.
    ``criterion_divisors``: criterion id → the least K of its rule (a cheap criterion whose
    margin on a proxy scenario is thinner than on the proxy may take more ε at little cost).
    ``confidence``: the low end's lower bound must reach the target (:mod:`.rehearse`)."""
    if not 0 < target_p < 1:
        raise ValueError("target_p must lie in (0, 1)")
    if repetitions < 1 or draws < 1 or not epsilon_generators or not divisors:
        raise ValueError("repetitions, draws, epsilon_generators and divisors must be non-empty")
    floors = dict(criterion_divisors or {})
    for cid, k in floors.items():
        if cid not in {c.id for c in spec.criteria} or not k > 0:
            raise ValueError(f"--criterion-divisors {cid}={k}: not a criterion of the spec "
                             "with a K > 0")
    say = progress or (lambda _m: None)
    config = at_epsilon(configuration or next(iter(spec.configurations())), None)
    evidence = as_evidence(spec, proxy)
    if n is None:
        n = spec.expected_n.low if spec.expected_n is not None else len(evidence.frame)
    frame = evidence.population(int(n), size_seed(seed, int(n)))
    base = bind(variant(spec, spec.budget.epsilon_generator), config)
    real = base.encode(frame)
    cells = distinct_cells(real, base.domain)
    tuned = {b.id: b.kind.tuned_params(spec, base.table, b.criterion, *cells)
             for b in base.criteria}
    # one executor (one pool) for every fit, pricing draw and rehearsal of this design
    with session(executor if executor is not None else LocalExecutor()) as ex:
        alternatives, margins, fits = _priced_alternatives(
            spec, config, frame, real, tuned, epsilon_generators, divisors, repetitions,
            draws, seed, ex, say, floors)
        # the model's order: cheapest alternative reaching the target first, then likeliest
        order = (sorted((a for a in alternatives if a.p >= target_p),
                        key=lambda a: (a.epsilon_total, -a.p))
                 + sorted((a for a in alternatives if a.p < target_p),
                          key=lambda a: (-a.p, a.epsilon_total)))
        order, drafts = _valid_drafts(spec, config, order, tuned, checks, say)
        rehearsed = rehearse_drafts(drafts, evidence, int(n), target_p=target_p,
                                    repetitions=check_repetitions, seed=seed,
                                    scenarios=scenarios, checks=checks, say=say, executor=ex,
                                    guess=_rehearsal_guess(fits, check_repetitions, scenarios),
                                    confidence=confidence)
    return DesignResult(int(n), target_p, config, alternatives, order[rehearsed.index],
                        rehearsed.reached, margins, rehearsed.document, tuned,
                        rehearsed.forecast)


def _priced_alternatives(spec: Spec, config: Configuration, frame: pd.DataFrame,
                         real: np.ndarray, tuned: Mapping[str, Mapping[str, Any]],
                         epsilon_generators: Sequence[float], divisors: Sequence[float],
                         repetitions: int, draws: int, seed: int, executor: Any, say: Progress,
                         floors: Mapping[str, float] | None = None
                         ) -> tuple[list[Alternative], dict[float, dict[str, float]], Countdown]:
    """Steps 3–4 of the module doc, each a batch of independent jobs on ``executor``
    (:mod:`workbench.design.jobs`): every candidate fit, then per ε_gen the σ simulations and
    the pricing draws. Returns the alternatives, the margins and the fits' countdown."""
    variants = {g: variant_document(spec, g, tuned=tuned, caps=False)
                for g in epsilon_generators}
    trials = {g: bind(build_spec(doc), config) for g, doc in variants.items()}
    shared = Shared(None, config.to_dict(), frame, real)
    fits = Countdown(say, len(epsilon_generators) * repetitions, "candidate fit")
    fits.start(f"{repetitions} per ε_gen, each fitted and sampled at n = {len(frame):,}")
    jobs = [(g, rep) for g in epsilon_generators for rep in range(repetitions)]
    made = run_jobs(executor, fit_candidate, shared,
                    [(variants[g], seed + 7919 * rep) for g, rep in jobs], fits,
                    lambda j: f"ε_gen {jobs[j][0]:g}, repetition {jobs[j][1] + 1} of "
                              f"{repetitions}")
    alternatives: list[Alternative] = []
    margins: dict[float, dict[str, float]] = {}
    for g in epsilon_generators:
        trial = trials[g]
        facts = [f for (h, _r), f in zip(jobs, made, strict=True) if h == g]
        margins[g] = {c.id: statistics.median(f.exact[c.id] for f in facts)
                      for c in trial.criteria}
        at_g = Shared(variants[g], config.to_dict(), frame, real, tuple(f.synth for f in facts))
        ids = [b.id for b in trial.criteria if b.kind.tags.sigma_by_simulation and b.epsilon > 0]
        sigmas = Countdown(say, len(ids), "σ simulation")
        if ids:
            sigmas.start(f"ε_gen {g:g}: {2 * draws} DP releases of each of {', '.join(ids)}")
        sigma_eps = dict(zip(ids, run_jobs(executor, sigma_job, at_g,
                                           [(i, 2 * draws, seed) for i in ids], sigmas,
                                           lambda j, ids=ids: ids[j]), strict=True))
        priced = [_price(trial, g, k, facts, margins[g], sigma_eps, floors) for k in divisors]
        pairs = [(k, i) for k, pr in enumerate(priced) if pr.group for i in range(len(facts))]
        pricing = Countdown(say, len(pairs), "pricing")
        if pairs:
            pricing.start(f"ε_gen {g:g}: {draws} DP releases per (K, candidate) of "
                          f"{', '.join(priced[pairs[0][0]].group)}")
        joint = run_jobs(executor, pass_job, at_g,
                         [(priced[k].document, i, priced[k].group, draws, seed + 1000 * i)
                          for k, i in pairs], pricing,
                         lambda j, pairs=pairs: f"K {divisors[pairs[j][0]]:g}, candidate "
                                                f"{pairs[j][1] + 1}")
        by_pair = dict(zip(pairs, joint, strict=True))
        alternatives += [_alternative(pr, g, facts, [by_pair.get((k, i), math.nan)
                                                     for i in range(len(facts))])
                         for k, pr in enumerate(priced)]
    return alternatives, margins, fits
