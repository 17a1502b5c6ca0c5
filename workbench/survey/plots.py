"""The proxy simulation's plots (Merrill ch. 4) and its what-if table; public data only.

Boxes are the IQR, whiskers the 5th and 95th percentiles, the truth a horizontal line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from workbench.survey.simulation import SAMPLING_ONLY, SimulationResult

WHISKERS = (5, 95)


def paired_boxplots(result: SimulationResult, estimator: str, ax: Any = None) -> Any:
    """Per ε, 'sampling + DP' beside 'sampling only' (the same samples), truth as a line."""
    import matplotlib.pyplot as plt

    d = result.estimates[result.estimates["estimator"] == estimator]
    base = d[d["method"] == SAMPLING_ONLY]["estimate"].to_numpy()
    epsilons = sorted(float(e) for e in d["epsilon"].dropna().unique())
    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 + 1.3 * len(epsilons), 3.4))
    data, positions, colours = [], [], []
    for i, eps in enumerate(epsilons):
        dp = d[d["epsilon"] == eps]["estimate"].to_numpy()
        data += [dp, base]
        positions += [3 * i + 1, 3 * i + 2]
        colours += ["tab:orange", "tab:blue"]
    boxes = ax.boxplot(data, positions=positions, whis=WHISKERS, widths=0.8,
                       showfliers=False, patch_artist=True)
    for patch, colour in zip(boxes["boxes"], colours, strict=True):
        patch.set_facecolor(colour)
        patch.set_alpha(0.6)
    ax.axhline(result.truth[estimator], color="black", linestyle="--", linewidth=1,
               label="population truth")
    ax.set_xticks([3 * i + 1.5 for i in range(len(epsilons))],
                  labels=[f"ε = {e:g}" for e in epsilons])
    ax.set_title(f"{estimator}: sampling + DP (orange) beside sampling only (blue)")
    ax.legend(loc="best", fontsize=8)
    return ax


def method_boxplots(result: SimulationResult, epsilon: float, ax: Any = None) -> Any:
    """At one ε, one box per estimator and method, each against its truth (estimate − truth)."""
    import matplotlib.pyplot as plt

    d = result.estimates
    d = d[(d["method"] == SAMPLING_ONLY) | (d["epsilon"] == epsilon)]
    groups = list(d.groupby(["estimator", "method"], sort=False))
    if ax is None:
        _, ax = plt.subplots(figsize=(1.6 + 1.4 * len(groups), 3.4))
    data = [(g["estimate"] - result.truth[name[0]]).to_numpy() for name, g in groups]
    ax.boxplot(data, whis=WHISKERS, showfliers=False)
    ax.axhline(0.0, color="black", linestyle="--", linewidth=1, label="truth")
    ax.set_xticks(np.arange(1, len(groups) + 1),
                  labels=[f"{e}\n{m}" for (e, m), _ in groups], fontsize=7)
    ax.set_ylabel("estimate − truth")
    ax.set_title(f"methods at ε = {epsilon:g} (box = IQR, whiskers = 5th/95th percentiles)")
    ax.legend(loc="best", fontsize=8)
    return ax


def what_if_table(result: SimulationResult, sensitivities: dict[str, float],
                  sampling_sd: dict[str, float]) -> pd.DataFrame:
    """Each (estimator, ε) option: the noise SD √2·Δ/ε (formula) and measured, the sampling SD,
    the share of the total variance that is DP noise, and the crossover ε*."""
    rows = []
    for name, by_eps in ((n, result.noise_sd(n)) for n in result.truth):
        delta = sensitivities[name]
        crossover = math.sqrt(2) * delta / sampling_sd[name]
        for eps, measured in sorted(by_eps.items()):
            formula = math.sqrt(2) * delta / eps
            rows.append({"estimator": name, "epsilon": eps, "noise_sd": formula,
                         "noise_sd_measured": measured, "sampling_sd": sampling_sd[name],
                         "dp_share_of_variance": formula ** 2 / (formula ** 2
                                                                 + sampling_sd[name] ** 2),
                         "crossover_epsilon": crossover})
    return pd.DataFrame(rows)
