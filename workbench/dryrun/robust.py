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
  (p^(1+a), renormalised), by re-weighting rows with the product of the per-column ratios;
* ``rare thinned`` / ``rare thickened``: rows in a 1-way cell holding under
  ``rare_share`` of the proxy kept with probability ½, or one more copy of every second one.

The range is [lowest p, highest p]; `workbench design` aims at its low end. Public data only.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.dryrun.proxy import prepare_proxy
from workbench.dryrun.result import DryRunResult
from workbench.dryrun.size import SizeSpec
from workbench.dryrun.sized import dry_run_at
from workbench.spec import Configuration, Spec
from workbench.trial import bind

SCENARIOS = ("proxy", "flatter", "sharper", "rare thinned", "rare thickened")
#: The declared shift of every column's 1-way distribution (total variation).
DEFAULT_TOLERANCE = 0.03
#: A 1-way cell under this share of the proxy is rare.
RARE_SHARE = 0.01


@dataclass(frozen=True)
class RobustForecast:
    """p per scenario, and the proxy scenario's dry run (for its interval and records)."""

    scenarios: Mapping[str, float]
    result: DryRunResult

    @property
    def low(self) -> float:
        return min(self.scenarios.values())

    @property
    def high(self) -> float:
        return max(self.scenarios.values())

    def words(self) -> str:
        """'p 0.80 on the proxy, range 0.62–0.85 (flatter 0.62, …)'."""
        parts = ", ".join(f"{k} {v:.2f}" for k, v in self.scenarios.items())
        return (f"p {self.scenarios.get('proxy', self.low):.2f} on the proxy, range "
                f"{self.low:.2f}–{self.high:.2f} over proxy scenarios ({parts})")


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


def _reweighted(frame: pd.DataFrame, codes: np.ndarray, tolerance: float, sharper: bool,
                rng: np.random.Generator, sweeps: int = 50) -> pd.DataFrame:
    """Rows resampled with weights raked (IPF) so that every column's weighted 1-way is its
    tilted target q_c: a plain product of the ratios q_c/p_c would also move the marginals of
    correlated columns, past the declared tolerance (0.055 for 0.03 on the shipped proxy)."""
    columns = range(codes.shape[1])
    targets = []
    for j in columns:
        counts = np.bincount(codes[:, j])
        targets.append(_tilted(counts / counts.sum(), tolerance, sharper))
    weights = np.ones(len(frame))
    for _ in range(sweeps):
        for j in columns:
            now = np.bincount(codes[:, j], weights=weights, minlength=len(targets[j]))
            now = now / now.sum()
            ratio = np.divide(targets[j], now, out=np.ones_like(now), where=now > 0)
            weights *= ratio[codes[:, j]]
    rows = rng.choice(len(frame), size=len(frame), replace=True, p=weights / weights.sum())
    return frame.iloc[np.sort(rows)].reset_index(drop=True)


def _rare_rows(codes: np.ndarray, rare_share: float) -> np.ndarray:
    """Rows with a code in a rare 1-way cell of any column."""
    rare = np.zeros(codes.shape[0], dtype=bool)
    for j in range(codes.shape[1]):
        counts = np.bincount(codes[:, j])
        rare |= (counts / counts.sum())[codes[:, j]] < rare_share
    return rare


def scenario_frames(spec: Spec, frame: pd.DataFrame, *, tolerance: float = DEFAULT_TOLERANCE,
                    rare_share: float = RARE_SHARE, seed: int = 0,
                    names: Sequence[str] = SCENARIOS) -> dict[str, pd.DataFrame]:
    """The cleaned proxy ``frame`` under each scenario (module docstring), seeded."""
    if not 0 <= tolerance < 1 or not 0 < rare_share < 1:
        raise ValueError("tolerance must lie in [0, 1) and rare_share in (0, 1)")
    unknown = [s for s in names if s not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown proxy scenario(s) {unknown}; known: {list(SCENARIOS)}")
    codes = _codes(spec, frame)
    rng = np.random.default_rng([int(seed), 0x5CE7])
    rare = _rare_rows(codes, rare_share)
    out: dict[str, pd.DataFrame] = {}
    for name in names:
        if name == "proxy":
            out[name] = frame
        elif name in ("flatter", "sharper"):
            out[name] = _reweighted(frame, codes, tolerance, name == "sharper", rng)
        elif name == "rare thinned":
            keep = ~rare | (rng.random(len(frame)) < 0.5)
            out[name] = frame[keep].reset_index(drop=True)
        else:  # rare thickened: one more copy of every second rare row
            extra = np.flatnonzero(rare)[::2]
            out[name] = pd.concat([frame, frame.iloc[extra]], ignore_index=True)
    return out


def robust_forecast(spec: Spec, proxy: pd.DataFrame | str | os.PathLike[str],
                    configurations: Sequence[Configuration] | None = None, n: SizeSpec = None,
                    *, repetitions: int = 5, seed: int = 0, noise: str = "seeded",
                    names: Sequence[str] = SCENARIOS, tolerance: float = DEFAULT_TOLERANCE,
                    stop_below: float | None = None, **options: object) -> RobustForecast:
    """Seeded dry runs of ``spec`` at n on the proxy and each scenario; p per scenario is the
    mean P(all pass) over ``configurations`` (at the low end of a range of n).

    ``stop_below``: rehearse the proxy (else the first scenario) first and stop there when its
    p is below this (the range's low end cannot be higher); the scenarios it does rehearse get
    the same frames as without it (the proxy scenario draws nothing from the seeded stream)."""
    frame = prepare_proxy(spec, proxy)
    head = list(names) if stop_below is None else (
        [s for s in names if s == "proxy"] or list(names[:1]))
    stages = [head, [s for s in names if s not in head]]
    ps: dict[str, float] = {}
    proxy_result: DryRunResult | None = None
    for stage in stages:
        if not stage or (ps and stop_below is not None and min(ps.values()) < stop_below):
            break
        frames = scenario_frames(spec, frame, tolerance=tolerance, seed=seed, names=stage)
        for name, scenario in frames.items():
            sized = dry_run_at(spec, scenario, configurations, n, repetitions=repetitions,
                               seed=seed, noise=noise, progress=False, **options)
            rates = sized.result.pass_probabilities()
            ps[name] = float(np.mean(list(rates.values()))) if rates else math.nan
            if name == "proxy" or proxy_result is None:
                proxy_result = sized.result
    assert proxy_result is not None
    return RobustForecast(ps, proxy_result)
