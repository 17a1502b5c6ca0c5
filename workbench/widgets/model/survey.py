"""The co-design Survey panel's readouts (no ipywidgets): budget, secondary figure, what-ifs.

Everything is computed from the draft's valid spec and the public proxy: the survey's ε₁ + ε₂
+ ε₃ inside ε_total (the one budget plan), the amplified figure beside it (never charged), the
binning what-if on the proxy (selection probability and weighted-count noise SD of every
candidate) and, for each weighted criterion, its ε beside the crossover ε* = √2·Δ/SD_sampling
with n the proxy's size (a share's SD at p = ½; a mean's from the proxy's spread).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.privacy.sampling import sampling_figure
from workbench.specification import Spec
from workbench.trial import Trial, bind


@dataclass
class SurveyReadouts:
    """What the panel shows; ``rows`` are the binning what-if, ``crossover`` per criterion."""

    formula: str
    epsilon_survey: float
    secondary: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    crossover: list[dict[str, Any]] = field(default_factory=list)


def crossover_rows(trial: Trial, proxy: pd.DataFrame | None) -> list[dict[str, Any]]:
    """Each weighted criterion: ε, Laplace Δ and the crossover ε* at the proxy's n."""
    if proxy is None or len(proxy) < 2:
        return []
    out = []
    for b in trial.criteria:
        c = b.criterion
        sd = b.kind.sampling_sd(c, proxy)  # None: not a weighted estimate
        if sd is None:
            continue
        delta, _ = b.kind.sensitivity(trial.spec, trial.table, c, None)
        star = math.sqrt(2) * float(delta) / sd if sd > 0 else math.inf
        out.append({"criterion": c.id, "epsilon": c.epsilon, "delta": float(delta),
                    "sampling_sd": sd, "crossover_epsilon": star,
                    "dominant": "DP noise" if c.epsilon < star else "sampling"})
    return out


def survey_readouts(spec: Spec, proxy: pd.DataFrame | None) -> SurveyReadouts | None:
    """The panel's numbers, or None when the draft has no survey section."""
    survey = spec.survey
    if survey is None:
        return None
    plan = spec.budget_plan()
    secondary = "no sampling fraction declared: no amplified figure"
    if survey.sampling_fraction is not None and survey.sampling_fraction < 1:
        secondary = sampling_figure(plan.epsilon_total, survey.sampling_fraction).text()
    rows: list[dict[str, Any]] = []
    trial = bind(spec, next(spec.configurations()))  # margin columns: one alternative
    if proxy is not None and len(proxy):
        try:
            rows = _binning_rows(trial, proxy)
        except (KeyError, ValueError):
            rows = []  # the proxy lacks a margin's cells: no what-if
    return SurveyReadouts(plan.formula(), plan.epsilon_survey, secondary, rows,
                          crossover_rows(trial, proxy))


def _binning_rows(trial: Trial, proxy: pd.DataFrame) -> list[dict[str, Any]]:
    """The binning what-if on the proxy as the sample (the dry run's own function)."""
    from workbench.dryrun.survey import proxy_binning_options

    return proxy_binning_options(trial, proxy.dropna(subset=list(trial.table.names)))
