"""A forecast robust to the proxy (issue 26): the frozen spec rehearsed on the proxy and on
defensible variations of it, each at n.

A proxy is another population: a design tuned on it met a real registry whose rare 1-way
cells differed (the relative 1-way error went 1.33 → 1.82) and passed 7 of 16 where the proxy
said 13. One dry run on the proxy cannot see that. So the forecast is a range over scenarios
of how the registry may differ, each a seeded dry run of the exact frozen file at n (every
task resamples its scenario's table to n, the bootstrap at n):

* ``proxy``: the proxy as it is;
* ``flatter`` / ``sharper``: every column's 1-way distribution (in the configuration's
  cells) moved by a declared total-variation ``tolerance`` towards uniform, or away from it
  (p^(1+a), renormalised), by raking rows' weights to every column's target;
* ``rare thinned`` / ``rare thickened``: rows in a 1-way cell holding under
  ``rare_share`` of the proxy weighted ½ or 1½.

Every scenario but ``proxy`` is a set of row weights; each rehearsal task draws its own
population of n rows from them, copying a proxy row only where the scenario asks for more of
its kind than the proxy holds (:mod:`workbench.evidence.population`): copies are clumps no
registry has, and copying rows everywhere (a resample with replacement) alone failed the lean
design's faithfulness on the US sample; the expected copied share is reported with the range.

With the registry's own published 1-way tables (:mod:`workbench.evidence.published`) the 1-way
distributions are known up to the tables' rounding, so the scenarios are ``published`` (the
proxy raked to the tables) and ``flatter`` / ``sharper`` moved from the tables by the TV their
rounding allows, column by column; the rare cells' shares are published, so thinning or
thickening them is no longer a defensible doubt (a request for it is refused). Published
counts are exact (rounding 0): the shifts are then the tables themselves, and ``published`` is
the one scenario. What 1-way tables leave unknown is how the columns depend on one another;
published cross-tables (``pairs``) fix that for their pairs, and ``published`` is raked to them
as well.

The range is [lowest p, highest p]; `workbench design` aims at its low end. Public data only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.dryrun.result import DryRunResult
from workbench.dryrun.size import SizeSpec, size_ends
from workbench.dryrun.sized import dry_run_at
from workbench.evidence.population import copied_share, raked_weights, systematic_sample
from workbench.evidence.prepare import prepare_proxy
from workbench.evidence.published import PublishedTables
from workbench.specification import Configuration, Spec
from workbench.trial import bind

SCENARIOS = ("proxy", "flatter", "sharper", "rare thinned", "rare thickened")
#: The scenarios when the registry's published 1-way tables are given.
PUBLISHED_SCENARIOS = ("published", "flatter", "sharper")
#: The declared shift of every column's 1-way distribution (total variation).
DEFAULT_TOLERANCE = 0.03
#: A 1-way cell under this share of the proxy is rare.
RARE_SHARE = 0.01
#: The weight of a rare row in the rare thinned / thickened scenarios.
RARE_WEIGHTS = {"rare thinned": 0.5, "rare thickened": 1.5}


@dataclass(frozen=True)
class RobustForecast:
    """p per scenario, and the proxy scenario's dry run (for its interval and records)."""

    scenarios: Mapping[str, float]
    result: DryRunResult
    copied: Mapping[str, float] = field(default_factory=dict)

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


def _codes(spec: Spec, frame: pd.DataFrame) -> np.ndarray:
    """The table in the first configuration's cells (a scenario's 1-way cells)."""
    return bind(spec, next(iter(spec.configurations()))).encode(frame)


def _tilted(p: np.ndarray, tolerance: float, sharper: bool) -> np.ndarray:
    """A 1-way distribution moved by total variation ``tolerance`` towards (or away from)
    uniform."""
    if sharper:
        lo, hi = 0.0, 8.0
        for _ in range(40):  # bisect the exponent a of p^(1+a) to the tolerance
            a = (lo + hi) / 2
            q = np.where(p > 0, p, 0.0) ** (1 + a)
            q = q / q.sum()
            lo, hi = (a, hi) if 0.5 * np.abs(q - p).sum() < tolerance else (lo, a)
        return q
    support = p > 0
    uniform = support / support.sum()
    tv = 0.5 * np.abs(uniform - p).sum()
    lam = 1.0 if tv <= tolerance else tolerance / tv
    return (1 - lam) * p + lam * uniform


def _one_way_targets(spec: Spec, codes: np.ndarray,
                     published: PublishedTables | None) -> dict[int, np.ndarray]:
    """Each column's 1-way distribution to start from: published where given, else the
    proxy's own."""
    out = {}
    for j, name in enumerate(spec.column_names):
        if published is not None and name in published.shares:
            out[j] = published.target(name)
        else:
            counts = np.bincount(codes[:, j])
            out[j] = counts / counts.sum()
    return out


def _pair_targets(spec: Spec, published: PublishedTables | None
                  ) -> dict[tuple[int, int], np.ndarray]:
    """The published cross-tables as raking targets, by column index."""
    if published is None:
        return {}
    index = {name: j for j, name in enumerate(spec.column_names)}
    return {(index[a], index[b]): table for (a, b), table in published.pairs.items()}


def _rare_rows(codes: np.ndarray, rare_share: float) -> np.ndarray:
    """Rows with a code in a rare 1-way cell of any column."""
    rare = np.zeros(codes.shape[0], dtype=bool)
    for j in range(codes.shape[1]):
        counts = np.bincount(codes[:, j])
        rare |= (counts / counts.sum())[codes[:, j]] < rare_share
    return rare


def scenario_weights(spec: Spec, frame: pd.DataFrame, *,
                     tolerance: float | None = None, rare_share: float = RARE_SHARE,
                     names: Sequence[str] | None = None,
                     published: PublishedTables | None = None
                     ) -> dict[str, np.ndarray | None]:
    """Each scenario as row weights of the cleaned proxy ``frame`` (None: the proxy as it is).

    ``tolerance``: the declared TV shift of flatter/sharper (default 0.03; with ``published``,
    each column's rounding tolerance, and the columns it does not give stay as the proxy)."""
    known = PUBLISHED_SCENARIOS if published is not None else SCENARIOS
    names = list(default_scenarios(published) if names is None else names)
    if (tolerance is not None and not 0 <= tolerance < 1) or not 0 < rare_share < 1:
        raise ValueError("tolerance must lie in [0, 1) and rare_share in (0, 1)")
    unknown = [s for s in names if s not in known]
    if unknown:
        why = (" (the published tables fix the 1-way shares, rare cells included)"
               if published is not None else "")
        raise ValueError(f"unknown proxy scenario(s) {unknown}{why}; known: {list(known)}")
    codes = _codes(spec, frame)
    rare = _rare_rows(codes, rare_share)
    base = _one_way_targets(spec, codes, published)
    out: dict[str, np.ndarray | None] = {}
    for name in names:
        if name == "proxy":
            out[name] = None
        elif name == "published":
            out[name] = raked_weights(codes, {**base, **_pair_targets(spec, published)})
        elif name in ("flatter", "sharper"):
            out[name] = raked_weights(codes, {
                j: _tilted(p, _tolerance(spec, j, tolerance, published), name == "sharper")
                for j, p in base.items()
                if published is None or spec.column_names[j] in published.shares})
        else:
            out[name] = np.where(rare, RARE_WEIGHTS[name], 1.0)
    return out


def scenario_frames(spec: Spec, frame: pd.DataFrame, *, seed: int = 0,
                    size: int | None = None, **options: Any) -> dict[str, pd.DataFrame]:
    """Each scenario realised as one population of about ``size`` rows (default the proxy's
    size) of the cleaned proxy ``frame``, seeded (as a rehearsal's task draws its own);
    ``options`` are :func:`scenario_weights`'s."""
    m = len(frame) if size is None else int(size)
    out = {}
    for name, weights in scenario_weights(spec, frame, **options).items():
        if weights is None:
            out[name] = frame
        else:
            rng = np.random.default_rng([int(seed), 0x5CE7, m])
            rows = systematic_sample(m * weights / weights.sum(), rng)
            out[name] = frame.iloc[rows].reset_index(drop=True)
    return out


def _tolerance(spec: Spec, j: int, tolerance: float | None,
               published: PublishedTables | None) -> float:
    """The declared shift of column j: given, else its published rounding, else the default."""
    if tolerance is not None:
        return tolerance
    if published is not None:
        return published.tolerance(spec.column_names[j])
    return DEFAULT_TOLERANCE


def default_scenarios(published: PublishedTables | None) -> tuple[str, ...]:
    """The scenarios a forecast rehearses: the proxy's five, the published tables' three, or
    the tables alone when they are exact (counts: no rounding to shift within)."""
    if published is None:
        return SCENARIOS
    return PUBLISHED_SCENARIOS if published.step > 0 else PUBLISHED_SCENARIOS[:1]


def robust_forecast(spec: Spec, proxy: pd.DataFrame | str | os.PathLike[str],
                    configurations: Sequence[Configuration] | None = None, n: SizeSpec = None,
                    *, repetitions: int = 5, seed: int = 0, noise: str = "seeded",
                    names: Sequence[str] | None = None, tolerance: float | None = None,
                    stop_below: float | None = None,
                    published: PublishedTables | None = None,
                    **options: object) -> RobustForecast:
    """Seeded dry runs of ``spec`` at n on the proxy and each scenario; p per scenario is the
    mean P(all pass) over ``configurations`` (at the low end of a range of n).

    Every task of a scenario draws its own population at n from the scenario's row weights
    (the bootstrap at n, copying a row only where it must). ``published``: the registry's own
    1-way tables; the scenarios are then :data:`PUBLISHED_SCENARIOS` (module docstring).
    ``stop_below``: rehearse the anchor (the proxy, or the proxy raked to the published
    tables; else the first scenario) first and stop there when its p is below this (the
    range's low end cannot be higher); a scenario's tasks do not depend on the others, so the
    ones it does rehearse get the same populations as without it."""
    frame = prepare_proxy(spec, proxy)
    ends = size_ends(n)
    size = max(ends) if ends else len(frame)
    names = list(default_scenarios(published) if names is None else names)
    head = names if stop_below is None else (
        [s for s in names if s in ("proxy", "published")][:1] or names[:1])
    stages = [head, [s for s in names if s not in head]]
    ps: dict[str, float] = {}
    copied: dict[str, float] = {}
    anchor: DryRunResult | None = None
    for stage in stages:
        if not stage or (ps and stop_below is not None and min(ps.values()) < stop_below):
            break
        weighted = scenario_weights(spec, frame, tolerance=tolerance, names=stage,
                                    published=published)
        for name, weights in weighted.items():
            if weights is not None:
                copied[name] = copied_share(weights, size)
            sized = dry_run_at(spec, frame, configurations, n, repetitions=repetitions,
                               seed=seed, noise=noise, progress=False, weights=weights,
                               **options)
            rates = sized.result.pass_probabilities()
            ps[name] = float(np.mean(list(rates.values()))) if rates else math.nan
            if name in ("proxy", "published") or anchor is None:
                anchor = sized.result
    assert anchor is not None
    return RobustForecast(ps, anchor, copied)
