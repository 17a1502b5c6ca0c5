"""The release's weight column: synthetic records raked to the public margins (post-processing).

Each synthetic record starts from the DP raking's calibrated weight of its joint cell
(:meth:`~workbench.survey.pipeline.SurveyRelease.cell_factor`, scaled so the total is the
public population), and IPF then fits every public margin exactly. Only DP outputs, the
public synthetic records and the public totals are read, so no ε is spent; ``workbench
verify`` re-checks the margins from the bundle alone (:func:`margin_gaps`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.survey.pipeline import SurveyRelease, chosen_binsets, margin_cells
from workbench.survey.raking import rake_weights, weighted_margin

if TYPE_CHECKING:
    from workbench.specification.survey import Survey


def _cells(survey: Survey, labels: pd.DataFrame) -> np.ndarray:
    """(n, margins) matrix of each record's base cell in every margin."""
    return np.column_stack([margin_cells(labels, m) for m in survey.margins])


def release_weights(survey: Survey, labels: pd.DataFrame, raking: SurveyRelease) -> np.ndarray:
    """Weights for the synthetic records whose weighted margins equal the public totals."""
    cells = _cells(survey, labels)
    binsets = chosen_binsets(survey, raking.binnings)
    bins = tuple(b.bin_of_cell(len(m.cells))[cells[:, i]]
                 for i, (b, m) in enumerate(zip(binsets, survey.margins, strict=True)))
    factor = raking.cell_factor()[bins]
    positive = factor[factor > 0]
    initial = np.where(factor > 0, factor, positive.mean() if positive.size else 1.0)
    shape = tuple(len(m.cells) for m in survey.margins)
    targets = [((i,), np.asarray(m.totals)) for i, m in enumerate(survey.margins)]
    return rake_weights(cells, initial, targets, shape)


def margin_gaps(survey: Survey, labels: pd.DataFrame, weights: np.ndarray) -> dict[str, float]:
    """Per margin, the largest |weighted total − public total| / public total over its cells."""
    cells = _cells(survey, labels)
    shape = tuple(len(m.cells) for m in survey.margins)
    out = {}
    for i, m in enumerate(survey.margins):
        got = weighted_margin(cells, weights, (i,), shape)
        target = np.asarray(m.totals)
        out[m.name] = float(np.max(np.abs(got - target) / target))
    return out


def uniform_weights(survey: Survey, labels: pd.DataFrame) -> np.ndarray:
    """Equal starting weights raked to the public margins (no DP raking to start from)."""
    cells = _cells(survey, labels)
    shape = tuple(len(m.cells) for m in survey.margins)
    targets = [((i,), np.asarray(m.totals)) for i, m in enumerate(survey.margins)]
    return rake_weights(cells, np.ones(len(labels)), targets, shape)
