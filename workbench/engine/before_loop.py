"""What every iteration sees, released before the selection loop — the run's and every
rehearsal's, by this one function (issue 26: a step a dry run skips is a step the forecast
cannot see).

Before the loop a run releases, in this order, through its context: the survey's weight check
(ε_w, first, so that a refusal has spent nothing else), the statistics of R alone (criteria
marked ``once``, §4.14.1; a later run of the spec reuses the kept ones), the survey section's DP
raking (ε₁ + ε₂ + ε₃, Merrill ch. 7), then, under ``metadata.n_policy: dp``, the DP estimate n̂
of the cleaned n (:func:`release_n_hat`). Every iteration then reads them, with R's base
weights, from ``once_results``. The confidential run, each dry-run task, the design
assistant's candidates and the co-design floors call :func:`release_before_loop`, so a public
rehearsal performs exactly the steps the enclave performs, with the same noise order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.criteria import release_once
from workbench.engine.survey_step import (
    raking_before_loop,
    weight_check_before_loop,
    with_survey_inputs,
)
from workbench.privacy import PrivacyContext
from workbench.specification import Spec
from workbench.specification.n_policy import N_HAT_KEY, noisy_n
from workbench.survey.pipeline import SurveyRelease
from workbench.trial import Trial


@dataclass(frozen=True)
class LoopInputs:
    """The once-results every iteration reads (survey inputs included) and the raking."""

    once: dict[str, Any]
    raking: SurveyRelease | None


def release_once_statistics(trial: Trial, frame: pd.DataFrame, ctx: PrivacyContext
                            ) -> dict[str, Any]:
    """The once-criteria's releases on R (empty without any). A once-criterion's columns have
    a single transformation alternative (validated), so any configuration's Trial encodes them
    alike."""
    if not trial.plan.epsilon_once:
        return {}
    return release_once(trial.spec, trial.configuration, trial.encode(frame), ctx)


def release_before_loop(trial: Trial, frame: pd.DataFrame, ctx: PrivacyContext, *,
                        kept_once: Mapping[str, Any] | None = None,
                        once_step: Callable[[], Mapping[str, Any]] | None = None) -> LoopInputs:
    """The weight check, then the once-statistics (``once_step``'s, the kept ones, or released
    here), then the survey raking: what every iteration of the run — or of a rehearsal —
    reads. A failed weight check raises before anything else is released. ``trial``: any
    configuration of the spec (the once and margin columns have one alternative)."""
    spec = trial.spec
    weight_check_before_loop(spec, frame, ctx)
    if once_step is not None:
        once = dict(once_step())
    else:
        once = (dict(kept_once) if kept_once is not None
                else release_once_statistics(trial, frame, ctx))
    raking = raking_before_loop(trial, frame, ctx)
    inputs = with_survey_inputs(once, spec, frame, raking)
    n_hat = release_n_hat(spec, len(frame), ctx)
    if n_hat is not None:
        inputs = {**inputs, N_HAT_KEY: n_hat}
    return LoopInputs(inputs, raking)


def release_n_hat(spec: Spec, n: int, ctx: PrivacyContext) -> int | None:
    """n̂ of the cleaned n under ``n_policy: dp`` (:func:`workbench.specification.n_policy.noisy_n`:
    discrete Laplace, Δ = 1, ε_n charged once per run); None under ``public``."""
    return noisy_n(n, spec.n_policy.epsilon, ctx) if spec.n_policy.dp else None
