"""One iteration of the scheme: transform, fit, sample with constraints, project, evaluate.

Shared by the confidential run (``workbench.engine.run``), public dry runs on proxy data, the
design assistant and the co-design widgets, so what stakeholders rehearse is exactly what runs
in the enclave. Every step takes the configuration's :class:`~workbench.trial.Trial`, resolved
once (codec, ε_gen, generator, criteria).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria import CriterionResult, evaluate_all
from workbench.generators import GeneratorShortfall
from workbench.postprocess import SamplingError, project_min_count, sample_valid_for
from workbench.privacy import PrivacyContext
from workbench.specification import Configuration
from workbench.specification.n_policy import N_HAT_KEY
from workbench.trial import Trial

Progress = Callable[[str], None]


@dataclass
class Candidate:
    """What one iteration produced; ``codes`` is public once ``passed`` (it is the release)."""

    configuration: Configuration
    codes: np.ndarray | None
    results: list[CriterionResult] = field(default_factory=list)
    passed: bool = False
    failure: str | None = None


def fit_generator(trial: Trial, codes: np.ndarray, ctx: PrivacyContext) -> Any:
    """The configuration's generator fitted with its ε_gen; shared by runs, dry runs and widgets.

    ``trial.generator()`` makes it and hands it the public spec (the family's ``bind_spec``).
    """
    generator = trial.generator()
    if not getattr(generator, "narrow_codes", False):  # a family not checked for narrow codes
        codes = np.asarray(codes).astype(np.int64, copy=False)
    generator.fit(codes, trial.domain, trial.epsilon_generator, ctx)
    return generator


def synthesize_candidate(trial: Trial, codes: np.ndarray, ctx: PrivacyContext,
                         progress: Progress | None = None, size: int | None = None
                         ) -> np.ndarray:
    """Fit on ``codes``, sample as many valid rows (``size``: the public n̂ of an
    ``n_policy: dp`` run instead), project: the candidate S before evaluation.

    Shared by :func:`run_iteration` and the co-design widgets' quick sample, so the proxy
    preview is made by the enclave's own steps. Raises ``SamplingError`` when the rejection
    rules leave too few rows (post-processing of the DP model: it reveals nothing more).
    """
    step = progress or (lambda _name: None)
    step("fit")
    generator = fit_generator(trial, codes, ctx)
    step("sample")
    rows = int(codes.shape[0]) if size is None else int(size)
    synth = sample_valid_for(trial.spec, trial.table, generator, rows, ctx.rng)
    step("project")
    # the sample is this function's own: the projection overwrites it (no second n × d copy)
    return project_min_count(synth, trial.configuration.min_count, ctx.rng, in_place=True)


def run_iteration(
    trial: Trial,
    frame: pd.DataFrame,
    ctx: PrivacyContext,
    *,
    once_results: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    real_codes: np.ndarray | None = None,
) -> Candidate:
    """Run one iteration; a failed criterion or failed sampling makes a failed candidate."""
    step = progress or (lambda _name: None)
    step("transform")
    # narrow codes (uint8 for most designs): an eighth of int64 at registry scale (issue 38)
    codes = trial.encode(frame, narrow=True) if real_codes is None else real_codes
    try:
        synth = synthesize_candidate(trial, codes, ctx, step,
                                     size=(once_results or {}).get(N_HAT_KEY))
    except (SamplingError, GeneratorShortfall) as exc:
        # Post-processing of the DP model only: failing here reveals nothing more about R.
        # (A family whose sampling runs a privacy test on seeds — GeneratorShortfall — states
        # a per-record guarantee only, which its Guarantee says.)
        return Candidate(trial.configuration, None, [], False, str(exc))
    step("evaluate")
    results = evaluate_all(trial.spec, trial.configuration, codes, synth, ctx,
                           once_results=once_results, table=trial.table)
    return Candidate(trial.configuration, synth, list(results), all(r.passed for r in results))

