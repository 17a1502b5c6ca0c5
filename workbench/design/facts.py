"""What the design assistant measures on each proxy candidate: exact errors, Δ and T′ inputs.

A candidate is the engine's own synthetic release (``engine.iteration.synthesize_candidate``:
fit at ε_gen, sample with the synthetic rules, project) made in a SIMULATION context from the
public proxy. Criterion ε does not change the candidate, so one set of candidates serves every
ε alternative: only the criteria's noise differs, which :mod:`workbench.design.rules` prices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria import evaluate_all, exact_errors
from workbench.engine.before_loop import release_before_loop
from workbench.engine.iteration import synthesize_candidate
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.trial import Trial


@dataclass(frozen=True)
class CandidateFacts:
    """One proxy candidate: its synthetic codes and, per criterion, exact error, Δ, details."""

    synth: np.ndarray
    exact: dict[str, float]
    sensitivity: dict[str, float | None]
    details: dict[str, dict[str, Any]] = field(default_factory=dict)


def candidate_facts(trial: Trial, frame: pd.DataFrame, real: np.ndarray,
                    seed: int) -> CandidateFacts:
    """Make one candidate from the public proxy (``frame``, and ``real``, its codes) and
    measure it exactly, after the run's own before-loop releases (once-statistics, survey).

    Δ comes from one DP evaluation (it depends on n, the spec and S only, never on ε).
    """
    spec, configuration = trial.spec, trial.configuration
    ctx = PrivacyContext.simulation(seed=seed, noise=SeededNoise(seed))
    once = release_before_loop(trial, frame, ctx).once
    synth = synthesize_candidate(trial, real, ctx)
    exact = exact_errors(spec, configuration, real, synth, ctx, table=trial.table,
                         once_results=once)
    results = evaluate_all(spec, configuration, real, synth, ctx, once_results=once,
                           table=trial.table)
    return CandidateFacts(
        synth=synth,
        exact={k: float(v) for k, v in exact.items()},
        sensitivity={r.id: r.sensitivity for r in results},
        details={r.id: dict(r.details) for r in results},
    )
