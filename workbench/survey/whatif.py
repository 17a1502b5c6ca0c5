"""What-if readouts of the raking pipeline on public data (Merrill Figures 7.2 and 7.4).

For every candidate binning of every margin: its score |𝒮|/W₀, the exponential mechanism's
selection probability at the margin's share of ε₁, and the noise SD a weighted count would get
with that binning at the per-count ε₃ (SS_β times the calibration's SD per unit). Computed on
a public sample (the proxy): the same numbers on confidential data would be data-dependent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.privacy import smooth
from workbench.survey.binning import (
    binsets_from_spec,
    group_base_weights,
    score,
    score_sensitivity,
    selection_probabilities,
)
from workbench.survey.pipeline import margin_cells, replace_smooth_bound

if TYPE_CHECKING:
    from workbench.specification.survey import Survey


def binning_options(survey: Survey, labels: pd.DataFrame, base_weights: np.ndarray
                    ) -> list[dict[str, Any]]:
    """One row per (margin, candidate binning): score, P(selected), weighted-count noise SD."""
    g_min, g_max = survey.weight_bounds
    bwt = np.clip(np.asarray(base_weights, dtype=np.float64), g_min, g_max)
    choosing = [m for m in survey.margins if len(m.binnings) > 1]
    eps_bin = survey.epsilon_binning / len(choosing) if choosing else 0.0
    n_counts = max(len(survey.weighted_counts), 1)
    eps_count = survey.epsilon_counts / n_counts if survey.epsilon_counts else 1.0
    cal = smooth.calibrate(eps_count, survey.gamma)
    rows = []
    for m in survey.margins:
        cells = margin_cells(labels, m)
        sets = binsets_from_spec(m.binnings, m.cells)
        scores = [score(b, m.totals, cells, bwt, g_max) for b in sets]
        if len(sets) > 1:
            delta = score_sensitivity(sets, m.totals, g_min, g_max, survey.neighbour)
            probs = selection_probabilities(scores, delta, eps_bin)
        else:
            probs = np.ones(1)
        for b, s, p in zip(sets, scores, probs, strict=True):
            groups = group_base_weights(cells, bwt, b, len(m.cells))
            ss = replace_smooth_bound(b.totals(m.totals), groups, cal.beta, g_max,
                                      survey.neighbour)
            rows.append({"margin": m.name, "binning": b.name, "bins": len(b.bins),
                         "score": s, "selection_probability": float(p),
                         "count_noise_sd": ss * cal.sigma_per_unit,
                         "epsilon_count": eps_count})
    return rows
