"""The design's forecast is a rehearsal of exactly what it freezes (issue 26).

The assistant picks ε's with a model of the run (``design.facts``, ``design.rules``); the
model can be wrong about the spec it writes (the generator is refitted at the draft's own ε's
and seeds). So every draft it would write is
rehearsed as written: a seeded dry run of the draft itself at n, on the proxy and on the
proxy scenarios of :mod:`workbench.dryrun.robust`, and the draft is accepted only when the
LOW end of that range reaches the target. With the registry's own published tables
(:mod:`workbench.evidence.published`) the range is over the proxy raked to them instead, as
`workbench dryrun --robust --published-tables` rehearses. The recorded forecast is that dry
run's (p, its interval, the range, n, proxy, seed, and the hash of the draft it belongs to).

The low end is a point estimate: 10 of 10 iterations is p = 1.00, whose 95% Wilson lower bound
is 0.72 (issue 37: a draft at 1.00 over the scenarios passed 17 of 20 on a stand-in). With a
``confidence`` the draft reaches the target only when the low-end scenario's Wilson lower bound
does (:func:`lower_bound`); :func:`repetitions_needed` says how many iterations that takes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from workbench.design.progress import Eta
from workbench.dryrun.forecast import forecast_record, wilson_interval
from workbench.dryrun.robust import RobustForecast, robust_forecast
from workbench.evidence.core import SCENARIOS, Evidence
from workbench.validation import build_spec

#: How many drafts, cheapest first, are rehearsed before the best one is kept.
DEFAULT_CHECKS = 3
#: Seconds between two lines about one scenario's iterations.
QUIET = 15.0


def _z(confidence: float) -> float:
    """The normal quantile of a two-sided ``confidence`` (0.95 → 1.96, the recorded interval's)."""
    if not 0 < confidence < 1:
        raise ValueError(f"--confidence {confidence:g}: must lie in (0, 1)")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def lower_bound(low: float, trials: int, confidence: float = 0.95) -> float:
    """The Wilson lower bound of the low-end scenario's pass rate (``low`` of ``trials``
    iterations), so a draft is judged by what its rehearsal shows, not by its point estimate."""
    return wilson_interval(round(low * trials), trials, _z(confidence))[0]


def repetitions_needed(target_p: float, confidence: float = 0.95) -> int:
    """The fewest iterations whose perfect score has a lower bound ≥ ``target_p``: R of R has
    Wilson lower bound R / (R + z²), so R ≥ z²·t / (1 − t) (35 for t 0.9 at 95%)."""
    z2 = _z(confidence) ** 2
    r = max(1, math.ceil(z2 * target_p / (1 - target_p) - 1e-9))
    while r / (r + z2) < target_p:  # float safety at the boundary
        r += 1
    return r


def bound_words(forecast: RobustForecast, target_p: float, confidence: float = 0.95) -> str:
    """The low end's lower bound in words, and the iterations a bound at the target needs."""
    trials = len(forecast.result.records)
    bound = lower_bound(forecast.low, trials, confidence)
    verdict = (f"≥ {target_p:g}" if bound >= target_p else
               f"under the target {target_p:g}; showing p ≥ {target_p:g} at {confidence:g} "
               f"takes ≥ {repetitions_needed(target_p, confidence)} iterations per scenario "
               "with none failing (--check-repetitions, --confidence)")
    return (f"the low end's {confidence:.0%} lower bound (Wilson, {round(forecast.low * trials)} "
            f"of {trials} iterations): {bound:.2f}, {verdict}")


@dataclass(frozen=True)
class Rehearsed:
    """The accepted draft (its forecast recorded), its alternative and its rehearsal."""

    index: int
    document: dict[str, Any]
    forecast: RobustForecast
    reached: bool


def rehearse_drafts(drafts: Sequence[dict[str, Any]], evidence: Evidence, n: int, *,
                    target_p: float, repetitions: int, seed: int,
                    scenarios: Sequence[str] = SCENARIOS, checks: int = DEFAULT_CHECKS,
                    say: Callable[[str], None] | None = None,
                    executor: Any = None, guess: float | None = None,
                    confidence: float | None = None) -> Rehearsed:
    """Rehearse ``drafts`` (in the order to try) until one's low end reaches ``target_p``
    (with ``confidence``: its lower bound, :func:`lower_bound`); else keep the one with the
    highest low end. Its document gets the recorded forecast
    (with published tables in the evidence: anchored on them, their scenarios). A draft whose
    anchor p is already below the target is not rehearsed on the scenarios (its low end
    cannot reach it). ``guess``: seconds per draft to quote as the ETA before one finishes."""
    def reaches(rf: RobustForecast) -> bool:
        return rf.low >= target_p and (confidence is None or lower_bound(
            rf.low, len(rf.result.records), confidence) >= target_p)

    published, proxy_name = evidence.published, evidence.source
    say = say or (lambda _m: None)
    best: tuple[float, int, RobustForecast] | None = None
    tried = drafts[:max(1, checks)]
    eta = Eta(say, len(tried), "rehearsing draft")
    for i, draft in enumerate(tried):
        spec = build_spec(draft)
        eta.step(f"ε_total {spec.epsilon_total:.4g}, as frozen; {repetitions} iterations on "
                 "the proxy, then on each scenario if it reaches the target", guess)
        lines = _ScenarioLines(say, i + 1, guess)
        # a draft already below the target on the anchor cannot reach it at the low end
        rf = robust_forecast(spec, evidence, list(spec.configurations()), n,
                             repetitions=repetitions, seed=seed,
                             names=None if published is not None else scenarios,
                             executor=executor, stop_below=target_p,
                             on_scenario=lines.scenario, on_task=lines.task)
        lines.finish()
        if best is None or rf.low > best[0]:
            best = (rf.low, i, rf)
        if reaches(rf):
            break
    eta.finish()
    assert best is not None
    _, index, rf = best
    document = dict(drafts[index])
    records = rf.result.records
    if published is not None:
        proxy_name = (f"{proxy_name or 'the proxy'} raked to "
                      f"{published.source or 'the published tables'}")
    document["selection"] = {**document["selection"], "forecast": forecast_record(
        document, rf.anchor_p, sum(r.passed for r in records),
        len(records), repetitions=repetitions, min_pass=0.0, n=int(n), proxy=proxy_name,
        seed=seed, noise="seeded", scenarios=rf.scenarios)}
    build_spec(document)
    return Rehearsed(index, document, rf, reaches(rf))


class _ScenarioLines:
    """A draft's rehearsal in progress lines: each scenario with what is left and an ETA, and
    within one, its iterations done at most every :data:`QUIET` seconds."""

    def __init__(self, say: Callable[[str], None], draft: int, guess: float | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.say, self.draft, self.guess, self.clock = say, draft, guess, clock
        self.eta: Eta | None = None
        self.last = clock()

    def scenario(self, name: str, k: int, total: int) -> None:
        if self.eta is None:
            self.eta = Eta(self.say, total, f"  draft {self.draft}: scenario")
            self.eta.done = k - 1
        per = None if self.guess is None else self.guess / max(self.eta.total, 1)
        self.eta.step(name, per)
        self.last = self.clock()

    def task(self, done: int, total: int) -> None:
        now = self.clock()
        if 0 < done < total and now - self.last >= QUIET:
            self.say(f"    {done} of {total} iterations done")
            self.last = now

    def finish(self) -> None:
        if self.eta is not None:
            self.eta.finish()
