"""The proxy simulation harness (Merrill ch. 4): DP noise beside sampling error, on public data.

Take a proxy population with a known truth, draw R samples by the design (optionally through
a missingness model: any ``mask(sample, rng) -> keep`` function, such as the missing-data
simulator's), run each estimator without DP ("sampling only") and with DP at every ε
("sampling + DP", in a simulation :class:`PrivacyContext` with seeded noise), and report bias
and SD against the truth. The DP and non-DP estimates of a repetition use the same sample, so
their difference is the DP noise alone (paired boxplots, measured crossover ε).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.privacy import PrivacyContext, sensitivity
from workbench.privacy.noise import SeededNoise
from workbench.survey.design import Design

#: (sample, base weights, ctx or None, ε or None) -> estimate; None ctx means no DP.
Estimator = Callable[[pd.DataFrame, np.ndarray, PrivacyContext | None, float | None], float]
Mask = Callable[[pd.DataFrame, np.random.Generator], np.ndarray]
SAMPLING_ONLY = "sampling only"


def proportion(column: str, value: object, w_min: float, w_max: float) -> Estimator:
    """Weighted share of ``column == value``: (Σ w·1 [+ Laplace(w_U/ε)]) / Σ w.

    Σ w is public under the design (population size); one record moves the numerator by at
    most w_U (:func:`workbench.privacy.sensitivity.weighted_term` with y ∈ [0, 1]); the
    weight bounds [w_L, w_U] are the design's, public.
    """
    def estimate(sample: pd.DataFrame, w: np.ndarray, ctx: PrivacyContext | None,
                 eps: float | None) -> float:
        hit = (sample[column].to_numpy() == value).astype(np.float64)
        num = float(np.sum(w * hit))
        if ctx is not None and eps is not None:
            delta = sensitivity.weighted_term(w_min, w_max, 0, 1, ctx.neighbour)
            num = float(ctx.laplace(num, sensitivity=delta, epsilon=eps,
                                    purpose=f"proportion {column}").value)
        return num / float(np.sum(w))
    return estimate


def mean(column: str, low: float, high: float, w_min: float, w_max: float) -> Estimator:
    """Weighted mean of clip(y, L, U): (Σ w·y [+ Laplace(Δ/ε)]) / Σ w, Δ from the weight bounds."""
    def estimate(sample: pd.DataFrame, w: np.ndarray, ctx: PrivacyContext | None,
                 eps: float | None) -> float:
        y = np.clip(pd.to_numeric(sample[column]).to_numpy(dtype=np.float64), low, high)
        total = float(np.sum(w * y))
        if ctx is not None and eps is not None:
            delta = sensitivity.weighted_term(w_min, w_max, low, high, ctx.neighbour)
            total = float(ctx.laplace(total, sensitivity=delta, epsilon=eps,
                                      purpose=f"mean {column}").value)
        return total / float(np.sum(w))
    return estimate


@dataclass
class SimulationResult:
    """Every estimate: one row per repetition, estimator and ε (NaN ε = sampling only)."""

    estimates: pd.DataFrame
    truth: Mapping[str, float]
    design: Design
    n: int
    population: int

    def summary(self) -> pd.DataFrame:
        """Bias and SD per estimator and ε against the population truth."""
        df = self.estimates.assign(
            error=lambda d: d["estimate"] - d["estimator"].map(self.truth))
        out = df.groupby(["estimator", "method"], sort=False).agg(
            bias=("error", "mean"), sd=("estimate", "std"), reps=("estimate", "size"))
        return out.reset_index()

    def noise_sd(self, estimator: str) -> dict[float, float]:
        """SD of (DP − sampling-only) on the same sample, per ε: the DP noise alone."""
        d = self.estimates[self.estimates["estimator"] == estimator]
        base = d[d["method"] == SAMPLING_ONLY].set_index("rep")["estimate"]
        out = {}
        for eps, g in d[d["method"] != SAMPLING_ONLY].groupby("epsilon"):
            out[float(eps)] = float((g.set_index("rep")["estimate"] - base).std())
        return out

    def measured_crossover(self, estimator: str) -> float:
        """ε where the DP noise SD equals the sampling SD, from SD ∝ 1/ε (geometric mean)."""
        d = self.estimates
        sampling_sd = float(d[(d["estimator"] == estimator)
                              & (d["method"] == SAMPLING_ONLY)]["estimate"].std())
        ratios = [eps * sd / sampling_sd for eps, sd in self.noise_sd(estimator).items()]
        return float(math.exp(np.mean(np.log(ratios))))


def simulate(population: pd.DataFrame, design: Design, estimators: Mapping[str, Estimator],
             truth: Mapping[str, float], epsilons: Sequence[float], reps: int, seed: int = 0,
             *, mask: Mask | None = None, neighbour: str = "replace_one") -> SimulationResult:
    """Draw ``reps`` samples and run every estimator with and without DP on each."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, object]] = []
    n = 0
    for rep in range(reps):
        idx, w = design.draw(population, rng)
        sample = population.iloc[idx].reset_index(drop=True)
        if mask is not None:
            keep = np.asarray(mask(sample, rng), dtype=bool)
            sample, w = sample.loc[keep].reset_index(drop=True), w[keep]
        n = len(sample)
        ctx = PrivacyContext.simulation(seed + rep, neighbour=neighbour,
                                        noise=SeededNoise(seed * 100003 + rep))
        for name, est in estimators.items():
            rows.append({"rep": rep, "estimator": name, "method": SAMPLING_ONLY,
                         "epsilon": math.nan, "estimate": est(sample, w, None, None)})
            for eps in epsilons:
                rows.append({"rep": rep, "estimator": name, "method": f"sampling + DP ε={eps:g}",
                             "epsilon": float(eps), "estimate": est(sample, w, ctx, eps)})
    return SimulationResult(pd.DataFrame(rows), dict(truth), design, n, len(population))
