"""The survey steps of a run: weight check and DP raking before the loop, weights after it.

Before the loop (confidential, charged), first the weight check (ε_w: a DP total of the base
weights against every margin's N, :mod:`workbench.survey.weight_check`; a refusal there has
spent only ε_w), then the survey section's ε₁ + ε₂ + ε₃ through the run's context
(:func:`workbench.survey.pipeline.release_survey`). After the accepted candidate
(post-processing, free): the release's weight column raked to the public margins
(:func:`workbench.survey.calibrate.release_weights`), and ``survey.json`` for the bundle.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria.weighting import SURVEY_KEY, SurveyInputs
from workbench.privacy import PrivacyContext
from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.sampling import sampling_figure
from workbench.specification import Spec
from workbench.survey.calibrate import release_weights
from workbench.survey.pipeline import SurveyRelease, release_survey
from workbench.survey.weight_check import WeightCheck, check_weights
from workbench.transform import EncodingError
from workbench.trial import Trial


def extra_columns(spec: Spec) -> tuple[str, ...]:
    """Columns read from the data besides the schema's: the survey's weight."""
    return (spec.survey.weight_column,) if spec.survey is not None else ()


def base_weights(spec: Spec, frame: pd.DataFrame) -> np.ndarray:
    """The weight column as numbers; fails naming the column, never a value."""
    assert spec.survey is not None
    name = spec.survey.weight_column
    w = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(w).any() or (w <= 0).any():
        raise EncodingError(f"survey weight column {name!r} has missing, non-numeric or "
                            "non-positive values")
    return w


def weight_check_before_loop(spec: Spec, frame: pd.DataFrame, ctx: PrivacyContext
                             ) -> WeightCheck | None:
    """The DP weight total against every N (charged ε_w now), or None without a survey;
    raises :class:`~workbench.survey.weight_check.WeightCheckFailed` outside the tolerance."""
    if spec.survey is None:
        return None
    return check_weights(spec.survey, base_weights(spec, frame), ctx)


def raking_before_loop(trial: Trial, frame: pd.DataFrame, ctx: PrivacyContext
                       ) -> SurveyRelease | None:
    """The DP raking of the sample (charged now), or None without a survey section; any
    configuration's ``trial`` bins the margin columns alike (they have one alternative)."""
    spec = trial.spec
    if spec.survey is None:
        return None
    labels = trial.table.decode(trial.encode(frame))
    return release_survey(spec.survey, labels, base_weights(spec, frame), ctx)


def with_survey_inputs(once: dict[str, Any], spec: Spec, frame: pd.DataFrame,
                       raking: SurveyRelease | None) -> dict[str, Any]:
    """The once-results every iteration sees, plus R's base weights and the DP raking for
    the weighted criteria (:mod:`workbench.criteria.weighting`)."""
    if spec.survey is None:
        return once
    return {**once, SURVEY_KEY: SurveyInputs(base_weights(spec, frame), raking)}


def weight_release(spec: Spec, release: pd.DataFrame, raking: SurveyRelease | None
                   ) -> pd.DataFrame:
    """The release with its weight column (unchanged without a survey)."""
    if spec.survey is None or raking is None:
        return release
    weights = release_weights(spec.survey, release, raking)
    return release.assign(**{spec.survey.weight_column: np.round(weights, 6)})


def survey_document(spec: Spec, raking: SurveyRelease | None) -> dict[str, Any] | None:
    """survey.json: the DP raking outputs and the secondary, never-charged sampling figure."""
    if spec.survey is None or raking is None:
        return None
    out = raking.to_dict() | {"epsilon": spec.survey.epsilon,
                              "weight_column": spec.survey.weight_column}
    fraction = spec.survey.sampling_fraction
    if fraction is not None and fraction < 1:
        fig = sampling_figure(spec.budget_plan().epsilon_total, fraction)
        out["sampling_amplification"] = {"guaranteed": fig.guaranteed,
                                         "amplified": fig.amplified, "charged": False,
                                         "text": fig.text()}
    return out


def budget_lines(spec: Spec, plan: BudgetPlan) -> dict[str, Any]:
    """Budget entries of the report: ε_survey and the labelled secondary figure."""
    if spec.survey is None:
        return {}
    out: dict[str, Any] = {"epsilon_survey": plan.epsilon_survey}
    fraction = spec.survey.sampling_fraction
    if fraction is not None and fraction < 1:
        out["sampling_amplified (secondary, not charged)"] = sampling_figure(
            plan.epsilon_total, fraction).text()
    return out
