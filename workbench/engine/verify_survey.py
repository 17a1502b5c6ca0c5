"""``verify``'s survey check: the release's weighted margins match the public totals and the
raking's ε is in the ledger (release.csv, spec.json's margins and survey.json: no confidential
data)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.engine.bundle import SURVEY_FILE
from workbench.engine.release_csv import read_release_labels
from workbench.specification import Spec
from workbench.trial import Trial

_TOL = 1e-9


def is_survey(entry: dict[str, Any]) -> bool:
    """A measurement of the survey's DP raking (purpose 'survey …')."""
    return str(entry.get("purpose", "")).startswith("survey ")


def survey_verdict(root: Path, spec: Spec, ledger: list[dict[str, Any]] | None,
                   trial: Trial | None = None) -> tuple[bool, str]:
    """(passed, what verify says) for a survey release's margins and its ledger's survey ε."""
    from workbench.survey.calibrate import margin_gaps

    survey = spec.survey
    assert survey is not None
    problems = []
    if not (root / SURVEY_FILE).is_file():
        problems.append(f"{SURVEY_FILE} is missing")
    frame = (pd.read_csv(root / "release.csv", dtype=str, keep_default_na=False) if trial is None
             else read_release_labels(root / "release.csv", trial.table))  # same text
    if survey.weight_column not in frame.columns:
        return False, f"release.csv has no weight column {survey.weight_column!r}"
    weights = pd.to_numeric(frame[survey.weight_column], errors="coerce").to_numpy()
    if np.isnan(weights).any() or (weights < 0).any():
        problems.append("the weight column has missing or negative values")
    else:
        try:
            gaps = margin_gaps(survey, frame, weights)
        except ValueError as exc:
            return False, str(exc)
        worst = max(gaps.values())
        if worst > survey.margin_tolerance:
            bad = ", ".join(f"{k} {100 * g:.3g}%" for k, g in gaps.items()
                            if g > survey.margin_tolerance)
            problems.append(f"weighted margins miss the public totals by more than "
                            f"{100 * survey.margin_tolerance:g}%: {bad}")
    spent = math.fsum(float(e["epsilon"]) for e in ledger or []
                      if e.get("event") == "measurement" and is_survey(e))
    if ledger is not None and spent > survey.epsilon + _TOL:
        problems.append(f"the ledger's survey measurements spend {spent:g} > ε_w + ε₁ + ε₂ + ε₃ = "
                        f"{survey.epsilon:g}")
    if problems:
        return False, "; ".join(problems)
    return True, (f"weighted margins within {100 * survey.margin_tolerance:g}% of the public "
                  f"totals (worst {100 * worst:.2g}%); survey ε {spent:g} in the ledger")
