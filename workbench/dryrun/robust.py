"""A forecast robust to the proxy (issue 26): the frozen spec rehearsed on the proxy and on
defensible variations of it, each at n.

A proxy is another population: a design tuned on it met a real registry whose rare 1-way
cells differed (the relative 1-way error went 1.33 → 1.82) and passed 7 of 16 where the proxy
said 13. One dry run on the proxy cannot see that. So the forecast is a range over scenarios
of how the registry may differ, each a seeded dry run of the exact frozen file at n (every
task resamples its scenario's table to n, the bootstrap at n):

The scenarios are the evidence's (:class:`workbench.evidence.core.Evidence`): without
published tables the proxy, flatter / sharper by a declared TV tolerance and rare cells
thinned / thickened; with them the anchor (``published``: the proxy re-weighted to them) and
flatter / sharper within their rounding (rare-cell doubts are refused: the tables fix those
shares). Each rehearsal task draws its own population of n rows from a scenario's weights,
copying a proxy row only where it must (:mod:`workbench.evidence.population`); the expected
copied share is reported with the range.

The range is [lowest p, highest p]; `workbench design` aims at its low end. Public data only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from workbench.dryrun.result import DryRunResult
from workbench.dryrun.size import SizeSpec, size_ends
from workbench.dryrun.sized import dry_run_at
from workbench.evidence.core import Evidence
from workbench.evidence.population import copied_share
from workbench.evidence.prepare import as_evidence
from workbench.specification import Configuration, Spec


@dataclass(frozen=True)
class RobustForecast:
    """p per scenario, and the proxy scenario's dry run (for its interval and records)."""

    scenarios: Mapping[str, float]
    result: DryRunResult
    copied: Mapping[str, float] = field(default_factory=dict)
    #: per scenario, per criterion: (pass rate, median exact value, median threshold it was
    #: decided against: T or the kind's T′ if lower)
    criteria: Mapping[str, Mapping[str, tuple[float, float, float]]] = field(
        default_factory=dict)

    def binding(self) -> tuple[str, str, tuple[float, float, float]] | None:
        """(criterion, scenario, its entry in ``criteria``) of the criterion passing least
        often in any rehearsed scenario; ties: the one furthest above its threshold."""
        def key(item: tuple[str, str, tuple[float, float, float]]) -> tuple[float, float]:
            rate, exact, threshold = item[2]
            ratio = exact / threshold if threshold and math.isfinite(exact) else 0.0
            return rate, -ratio

        found = [(cid, scenario, entry) for scenario, rates in self.criteria.items()
                 for cid, entry in rates.items()]
        return min(found, key=key) if found else None

    @property
    def low(self) -> float:
        return min(self.scenarios.values())

    @property
    def high(self) -> float:
        return max(self.scenarios.values())

    @property
    def anchor_p(self) -> float:
        """p on the anchor: the proxy raked to the published tables, else the proxy as it is
        (else the low end); what a recorded forecast states."""
        for name in ("published", "proxy"):
            if name in self.scenarios:
                return self.scenarios[name]
        return self.low

    def words(self) -> str:
        """'p 0.80 on the proxy, range 0.62–0.85 (flatter 0.62, …)'."""
        parts = ", ".join(f"{k} {v:.2f}" for k, v in self.scenarios.items())
        where = ("the proxy raked to the published tables" if "published" in self.scenarios
                 else "the proxy")
        copies = {k: v for k, v in self.copied.items() if v >= 0.005}
        note = ("; rows copied where the proxy holds too few of a kind: " + ", ".join(
            f"{k} {v:.1%}" for k, v in copies.items()) if copies else "")
        return (f"p {self.anchor_p:.2f} on {where}, range "
                f"{self.low:.2f}–{self.high:.2f} over proxy scenarios ({parts}){note}")


def robust_forecast(spec: Spec, proxy: Evidence | pd.DataFrame | str | os.PathLike[str],
                    configurations: Sequence[Configuration] | None = None, n: SizeSpec = None,
                    *, repetitions: int = 5, seed: int = 0, noise: str = "seeded",
                    names: Sequence[str] | None = None, tolerance: float | None = None,
                    stop_below: float | None = None,
                    on_scenario: Callable[[str, int, int], None] | None = None,
                    on_task: Callable[[int, int], None] | None = None,
                    **options: object) -> RobustForecast:
    """Seeded dry runs of ``spec`` at n on the proxy and each scenario; p per scenario is the
    dry run's forecast, the mean P(all pass) over ``configurations`` (at the low end of n).

    Every task of a scenario draws its own population at n from the scenario's row weights
    (the bootstrap at n, copying a row only where it must). With published tables in the
    evidence the scenarios are :data:`~workbench.evidence.core.PUBLISHED_SCENARIOS`.
    ``stop_below``: rehearse the anchor (the proxy, or the proxy raked to the published
    tables; else the first scenario) first and stop there when its p is below this (the
    range's low end cannot be higher); a scenario's tasks do not depend on the others, so the
    ones it does rehearse get the same populations as without it. ``on_scenario(name, k,
    total)`` is called before each scenario's dry run, ``on_task(done, total)`` after each of
    its tasks (progress lines)."""
    evidence = as_evidence(spec, proxy)
    ends = size_ends(n)
    size = max(ends) if ends else len(evidence.frame)
    names = list(evidence.default_scenarios() if names is None else names)
    head = names if stop_below is None else (
        [s for s in names if s in ("proxy", "published")][:1] or names[:1])
    stages = [head, [s for s in names if s not in head]]
    ps: dict[str, float] = {}
    per_criterion: dict[str, dict[str, tuple[float, float, float]]] = {}
    copied: dict[str, float] = {}
    anchor: DryRunResult | None = None
    for stage in stages:
        if not stage or (ps and stop_below is not None and min(ps.values()) < stop_below):
            break
        weighted = evidence.scenario_weights(stage, tolerance=tolerance)
        for name, weights in weighted.items():
            if weights is not None:
                copied[name] = copied_share(weights, size)
            if on_scenario is not None:
                on_scenario(name, len(ps) + 1, len(names))
            sized = dry_run_at(spec, evidence, configurations, n, repetitions=repetitions,
                               seed=seed, noise=noise, progress=on_task or False,
                               weights=weights, **options)
            ps[name] = sized.result.selection_forecast(spec.selection.gamma,
                                                       spec.selection.max_iterations).p
            per_criterion[name] = _criterion_rates(sized.result)
            if name in ("proxy", "published") or anchor is None:
                anchor = sized.result
    assert anchor is not None
    return RobustForecast(ps, anchor, copied, per_criterion)


def _criterion_rates(result: DryRunResult) -> dict[str, tuple[float, float, float]]:
    """(pass rate, median exact value, median threshold decided against) per criterion over
    every rehearsal of ``result`` (public: proxy data only)."""
    out = {}
    for cid in result.criteria:
        outcomes = [r.criteria.get(cid) for r in result.records]
        exact = [float(o.exact) for o in outcomes if o is not None and o.exact is not None]
        limit = [float(o.threshold) for o in outcomes if o is not None and o.threshold]
        rate = sum(bool(o and o.passed) for o in outcomes) / max(len(outcomes), 1)
        out[cid] = (rate, float(np.median(exact)) if exact else math.nan,
                    float(np.median(limit)) if limit else math.nan)
    return out
