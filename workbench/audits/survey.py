"""Audits of the survey raking pipeline's released counts (:mod:`workbench.survey.pipeline`).

* The joint sample table: Laplace with Δ = 2 (replace-one); the neighbours move one record
  between two joint cells, so the table moves by exactly 2. Audited with the shared harness.
* A weighted count with smooth-sensitivity generalized Cauchy noise: Merrill's running example
  (5 age bins of N̂ = 100 000, sample A; the teens bin has 100 records, one of which is in the
  query). Under add/remove, removing that record moves the count from 1000 to 0 = W₀ = SS_β,
  so the local sensitivity attains the smooth bound. The mechanism is run through its public
  API (``release_survey``) with a capturing noise source, which records the value and the
  data-dependent scale S(D)/α; outputs are then replayed from the seeded source at that scale
  and at half of it, and audited on events fixed in advance from the two values, against the
  ε the shift can exercise (:func:`sliding_epsilon`): ε/2 of the calibration pays for the
  shift, ε/2 for the scale's change between neighbours, which one step barely moves.
* The binning choice (ε₁, :mod:`workbench.survey.binning`): OpenDP's noisy max over the
  scores f(D, 𝒮) = |𝒮|/W₀^𝒮(D), Δ = 2·max_𝒮 |𝒮|·g_max/(g_min·min N̂) under replace-one
  (Eq. 7.2 doubled). Margin of four cells c0…c3, N̂ = 100 each, base weights 1; candidates
  "rows" {c0, c1}, {c2, c3} and "cols" {c0, c2}, {c1, c3} (|𝒮|/min N̂ = 0.01 each, Δ = 0.02).
  With equal weights W₀ = max over bins N̂/c, so f = |𝒮|·min over bins c/N̂. D has counts
  (5, 1, 5, 3): scores (0.06, 0.04); D′ moves one record from c0 to c3: (0.05, 0.05). Each
  score moves by the add/remove Δ = 0.01 = Δ/2, in opposite directions — the most a
  replacement can do here (it changes one bin's count down and one up, so min c/N̂ moves by at
  most 1/N̂). So the doubled bound is loose by 2 for this score: the exact loss of
  permute-and-flip is ε/2 at Δ, ε at Δ/2 (not flaggable) and 2ε at Δ/4 (flagged).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from workbench.audits.harness import (
    Capture,
    ScaledNoise,
    Scenario,
    draw,
    neighbour_events,
    scenario,
    seeded_source,
)
from workbench.privacy import PrivacyContext, smooth
from workbench.privacy.audit import AllOf, AuditResult, Event, Threshold, audit_events
from workbench.specification.survey import Survey, SurveyMargin, WeightedCount
from workbench.survey.pipeline import release_survey

_EPS = 1.0
AGES = ("0-12", "13-18", "19-39", "40-64", "65+")


def _survey(margins: tuple[SurveyMargin, ...], counts: tuple[WeightedCount, ...],
            neighbour: str, table: float, eps_counts: float) -> Survey:
    """A survey section built directly (public, tiny)."""
    return Survey(weight_column="w", weight_bounds=(1.0, 1.0), design="srs", strata=(),
                  stratum_sizes={}, margins=margins, structural_zeros=(),
                  weighted_counts=counts, epsilon_binning=0.0, epsilon_table=table,
                  epsilon_counts=eps_counts, gamma=4.0, neighbour=neighbour)


def _separate(name: str, column: str, cells: tuple[str, ...], totals: tuple[float, ...]
              ) -> SurveyMargin:
    return SurveyMargin(name, (column,), cells, totals, {"separate": tuple((c,) for c in cells)})


def table_scenario() -> Scenario:
    """The noisy joint table of two margins (g × x) on replace-one neighbours: Δ = 2."""
    survey = _survey((_separate("g", "g", ("a", "b"), (6.0, 6.0)),
                      _separate("x", "x", ("0", "1", "2"), (4.0, 4.0, 4.0))), (),
                     "replace_one", _EPS, 0.0)
    d = pd.DataFrame({"g": ["a", "a", "b", "b"], "x": ["0", "1", "2", "0"]})
    d_prime = d.assign(g=["b", "a", "b", "b"], x=["2", "1", "2", "0"])
    frames = (d, d_prime)

    def run(ctx: PrivacyContext, which: int) -> object:
        return release_survey(survey, frames[which], np.ones(4), ctx)

    return scenario("survey joint table", "Laplace on the joint sample table (vector)",
                    "one record moves from cell (a, 0) to (b, 2): two cells move by 1", 2.0,
                    run, primitive="laplace")


def _running_example(with_record: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """Sample A of Figure 7.5; the query marks one teen (absent when ``with_record`` is False)."""
    counts = [1300, 100, 1200, 1200, 1200]
    age = np.repeat(AGES, counts)
    flag = np.zeros(age.size, dtype=bool)
    flag[1300] = True  # the first teen
    frame = pd.DataFrame({"age": age, "q": np.where(flag, "yes", "no")})
    if not with_record:
        frame = frame.drop(index=1300).reset_index(drop=True)
    return frame, np.ones(len(frame))


def weighted_count_calls(neighbour: str = "add_remove") -> list[tuple[float, float, Any]]:
    """(value, scale S/α, public grid) of the weighted count on D and on D′ (the flagged teen
    removed)."""
    margin = _separate("age", "age", AGES, (100000.0,) * 5)
    survey = _survey((margin,), (WeightedCount("teen_q", "age", "q", "yes"),), neighbour,
                     _EPS, _EPS)
    out = []
    for with_record in (True, False):
        frame, bwt = _running_example(with_record)
        source = Capture()
        release_survey(survey, frame, bwt, PrivacyContext.simulation(0, neighbour=neighbour,
                                                                     noise=source))
        values, scale, _gamma, grid = source.cauchy_calls[-1]
        out.append((float(values[0]), scale, grid))
    return out


def weighted_count_events(calls: list[tuple[float, float, Any]]) -> list[Event]:
    """Tails beyond both values at 0, ½, 1, 2 scales, and half-scale windows around each value
    (a heavy-tailed noise loses most near its centre); all fixed before drawing."""
    (v, s, _), (v2, _, _) = calls
    lo, hi = min(v, v2), max(v, v2)
    events: list[Event] = []
    for k in (0.0, 0.5, 1.0, 2.0):
        events += [Threshold(hi + k * s, ">="), Threshold(lo - k * s, "<=")]
    for centre in (v, v2):
        events += [AllOf((Threshold(centre + k * s, ">="), Threshold(centre + (k + 0.5) * s,
                                                                     "<=")))
                   for k in (-0.5, 0.0, 0.5)]
    return events


def sliding_epsilon(calls: list[tuple[float, float, Any]], epsilon: float = _EPS,
                    gamma: float = 4.0) -> float:
    """The part of ε these neighbours can exercise: the shift's ε/2 (the calibration gives the
    other ε/2 to the scale's change, :mod:`workbench.privacy.smooth`) plus the dilation loss
    (γ − 1)·|ln(S′/S)| of the small scale change they do make."""
    (_, s, _), (_, s2, _) = calls
    return epsilon / 2 + (gamma - 1) * abs(np.log(s2 / s))


def weighted_count_reach(calls: list[tuple[float, float, Any]], epsilon: float = _EPS,
                         gamma: float = 4.0) -> float:
    """|f(D) − f(D′)| / S(D), S = the captured scale × α: 1 when the shift attains SS_β."""
    (v, s, _), (v2, _, _) = calls
    return abs(v - v2) / (s * smooth.calibrate(epsilon, gamma).alpha)


def audit_weighted_count(trials: int = 20_000, seed: int = 0, confidence: float = 0.999
                         ) -> tuple[AuditResult, AuditResult]:
    """The weighted count at its calibrated scales and at half of them, audited against
    :func:`sliding_epsilon`: the shift reaches SS_β, so half the scale must be flagged."""
    calls = weighted_count_calls()
    events = weighted_count_events(calls)
    eps = sliding_epsilon(calls)
    results = []
    for k, factor in enumerate((1.0, 0.5)):
        source = ScaledNoise(seeded_source(2 * seed + k), factor)
        samples = [source.generalized_cauchy_vector(np.full(trials, v), s, 4.0, grid)
                   for v, s, grid in calls]
        results.append(audit_events(samples[0], samples[1], events, eps,
                                    confidence=confidence))
    return results[0], results[1]


#: The binning audit's margin: four cells, their public totals and the two candidates.
BIN_CELLS = ("c0", "c1", "c2", "c3")
BIN_CANDIDATES = {"rows": (("c0", "c1"), ("c2", "c3")), "cols": (("c0", "c2"), ("c1", "c3"))}
BIN_COUNTS = ((5, 1, 5, 3), (4, 1, 5, 4))


def binning_scenario() -> Scenario:
    """The noisy max choosing the margin's binning (ε₁ = 1) on D and D′ (module doc)."""
    margin = SurveyMargin("cell", ("cell",), BIN_CELLS, (100.0,) * 4, BIN_CANDIDATES)
    survey = _survey((margin,), (), "replace_one", _EPS, 0.0)
    survey = dataclasses.replace(survey, epsilon_binning=_EPS)
    frames = [pd.DataFrame({"cell": np.repeat(BIN_CELLS, counts)}) for counts in BIN_COUNTS]

    def run(ctx: PrivacyContext, which: int) -> object:
        return release_survey(survey, frames[which], np.ones(len(frames[which])), ctx)

    return scenario("survey binning choice (ε₁)", "OpenDP noisy max over |𝒮|/W₀ (Eq. 7.1)",
                    "one record c0 → c3: scores (0.06, 0.04) → (0.05, 0.05), each by the "
                    "add/remove Δ = Δ/2", 0.02, run, primitive="noisy_max")


def binning_exact_loss(factor: float = 1.0, epsilon: float = _EPS) -> float:
    """Permute-and-flip's exact loss for two scores whose gap 0.02 closes (module doc): the
    runner-up's probability ½·e^{−gap/β} vs ½ at β = factor·2Δ/ε, i.e. ε/(2·factor)."""
    return 0.02 / (factor * 2 * 0.02 / epsilon)


def audit_binning(factors: tuple[float, ...] = (1.0, 0.5, 0.25), trials: int = 20_000,
                  seed: int = 0, confidence: float = 0.999) -> list[AuditResult]:
    """The binning choice at each factor × its scale (Δ/2 cannot be flagged: module doc)."""
    scn = binning_scenario()
    events = neighbour_events(scn.d, scn.d_prime)
    out = []
    for k, factor in enumerate(factors):
        source = ScaledNoise(seeded_source(3 * seed + k), factor)
        samples = [draw(call, source, trials) for call in (scn.d, scn.d_prime)]
        out.append(audit_events(samples[0], samples[1], events, scn.d.epsilon,
                                confidence=confidence))
    return out
