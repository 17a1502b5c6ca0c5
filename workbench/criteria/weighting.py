"""Weights for the weighted criteria: R's survey base weights and the candidate's calibrated ones.

R's weights are the survey's base weights (the weight column, clipped to its public bounds
[w_L, w_U]); the engine hands them, with the DP raking released before the loop, to every
iteration through ``once_results[SURVEY_KEY]`` (a key no criterion id can take). The
candidate's weights are post-processing of public things — S, the DP raking and the public
margins (:func:`workbench.survey.calibrate.release_weights`) — exactly the weights the release
carries. On proxy data without a weight column (dry runs), R's weights are the equal weights
N/n, the proxy's stand-in for a design.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.survey.calibrate import release_weights, uniform_weights

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Spec
    from workbench.specification.survey import Survey
    from workbench.survey.pipeline import SurveyRelease

#: The once_results key of :class:`SurveyInputs` (criterion ids are identifiers: no ':').
SURVEY_KEY = "survey:inputs"


@dataclass(frozen=True)
class SurveyInputs:
    """R's base weights (confidential) and the DP raking (public once released)."""

    real_weights: np.ndarray
    raking: SurveyRelease | None = None


def survey_of(spec: Spec) -> Survey:
    """The spec's survey section (the validator makes weighted kinds require one)."""
    if spec.survey is None:
        raise ValueError("weighted criteria need the spec's survey section")
    return spec.survey


def population_total(spec: Spec) -> float:
    """N: the public population total (every margin sums to it; the first one is used)."""
    return float(sum(survey_of(spec).margins[0].totals))


def weights(ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
    """(R's weights clipped to the public bounds, S's calibrated weights), cached per candidate."""
    if "survey:weights" in ev.cache:
        return ev.cache["survey:weights"]
    survey = survey_of(ev.spec)
    inputs: Any = ev.once.get(SURVEY_KEY)
    lo, hi = survey.weight_bounds
    if inputs is None:  # never guess: a rehearsal without them would not be the run
        raise ValueError(
            "a weighted criterion needs R's base weights and the survey's DP raking "
            f"(once_results[{SURVEY_KEY!r}]), which the run and every rehearsal release "
            "before the loop (workbench.engine.before_loop.release_before_loop)")
    real, raking = np.asarray(inputs.real_weights, dtype=np.float64), inputs.raking
    labels = ev.table.decode(ev.synth)
    synth = (release_weights(survey, labels, raking) if raking is not None
             else uniform_weights(survey, labels))
    ev.cache["survey:weights"] = (np.clip(real, lo, hi), synth)
    return ev.cache["survey:weights"]
