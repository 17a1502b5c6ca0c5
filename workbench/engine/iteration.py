"""One iteration of the scheme: transform, fit, sample with constraints, project, evaluate.

Shared by the confidential run (``workbench.engine.run``) and public dry runs on proxy data,
so what stakeholders rehearse is exactly what runs in the enclave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.criteria import CriterionResult, evaluate_all
from workbench.generators import GeneratorShortfall, generator_for
from workbench.postprocess import SamplingError, project_min_count, sample_valid_for
from workbench.privacy import PrivacyContext
from workbench.spec import Configuration, Spec

Progress = Callable[[str], None]


@dataclass
class Candidate:
    """What one iteration produced; ``codes`` is public once ``passed`` (it is the release)."""

    configuration: Configuration
    codes: np.ndarray | None
    results: list[CriterionResult] = field(default_factory=list)
    passed: bool = False
    failure: str | None = None


def fit_generator(spec: Spec, configuration: Configuration, codes: np.ndarray,
                  ctx: PrivacyContext) -> Any:
    """The configuration's generator fitted with ε_gen; shared by runs, dry runs and widgets.

    ``generator_for`` makes it and hands it the public spec (the family's ``bind_spec`` hook).
    """
    generator = generator_for(spec, configuration)
    generator.fit(codes, spec.table_codec(configuration).domain,
                  spec.generator_epsilon(configuration), ctx)
    return generator


def release_diagnostics(spec: Spec, configuration: Configuration, codes: np.ndarray,
                        rng: np.random.Generator) -> dict[str, Any] | None:
    """The chosen family's public diagnostics of the RELEASED codes (post-processing: e.g. an
    MCMC draw's R̂ and ESS of its sampler re-run on them), or None."""
    return generator_for(spec, configuration).release_diagnostics(
        codes, spec.table_codec(configuration).domain, spec.generator_epsilon(configuration),
        rng)


def synthesize_candidate(spec: Spec, configuration: Configuration, codes: np.ndarray,
                         ctx: PrivacyContext, progress: Progress | None = None) -> np.ndarray:
    """Fit on ``codes``, sample as many valid rows, project: the candidate S before evaluation.

    Shared by :func:`run_iteration` and the co-design widgets' quick sample, so the proxy
    preview is made by the enclave's own steps. Raises ``SamplingError`` when the rejection
    rules leave too few rows (post-processing of the DP model: it reveals nothing more).
    """
    step = progress or (lambda _name: None)
    step("fit")
    generator = fit_generator(spec, configuration, codes, ctx)
    step("sample")
    synth = sample_valid_for(spec, configuration, generator, int(codes.shape[0]), ctx.rng)
    step("project")
    return project_min_count(synth, configuration.min_count, ctx.rng)


def encode_real(spec: Spec, configuration: Configuration, frame: pd.DataFrame) -> np.ndarray:
    """Codes of the cleaned data R under one configuration's transformation."""
    return spec.table_codec(configuration).encode(frame)


def run_iteration(
    spec: Spec,
    configuration: Configuration,
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
    table = spec.table_codec(configuration)
    codes = table.encode(frame) if real_codes is None else real_codes
    try:
        synth = synthesize_candidate(spec, configuration, codes, ctx, step)
    except (SamplingError, GeneratorShortfall) as exc:
        # Post-processing of the DP model only: failing here reveals nothing more about R.
        # (A family whose sampling runs a privacy test on seeds — GeneratorShortfall — states
        # a per-record guarantee only, which its Guarantee says.)
        return Candidate(configuration, None, [], False, str(exc))
    step("evaluate")
    results = evaluate_all(spec, configuration, codes, synth, ctx, once_results=once_results)
    return Candidate(configuration, synth, list(results), all(r.passed for r in results))


def label_order(spec: Spec, configuration: Configuration) -> dict[str, Sequence[str]]:
    """The bin labels of every column in code order (for plots and verification)."""
    table = spec.table_codec(configuration)
    return {name: tuple(str(v) for v in table.codec(name).labels) for name in table.names}
