"""A quick synthetic sample S of the PUBLIC proxy, made exactly as an engine iteration makes one.

Fit the configuration's generator (DP, simulation mode: the numpy rng is seeded, the DP noise
still comes from OpenDP and is not reproducible) → sample n rows with the synthetic rejection
rules (``workbench.postprocess.sample_valid_for``) → face-privacy projection
(``project_min_count``): the same calls as ``workbench.engine.iteration.run_iteration``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from workbench.engine.iteration import fit_generator
from workbench.postprocess import SamplingError, project_min_count, sample_valid_for
from workbench.privacy import PrivacyContext
from workbench.spec import Configuration, Spec


class PreviewError(RuntimeError):
    """A proxy readout could not be computed; the message is shown in place of the readout."""


@dataclass(frozen=True)
class QuickSample:
    """The synthetic codes and how they were made (public: made from the proxy only)."""

    codes: np.ndarray
    family: str
    params: dict = field(default_factory=dict)
    epsilon: float = 0.0
    seed: int = 0
    note: str = ""


def quick_sample(
    spec: Spec, config: Configuration, real_codes: np.ndarray, seed: int = 0
) -> QuickSample:
    """Fit the configuration's generator on the proxy codes and draw one release candidate."""
    n = int(real_codes.shape[0])
    if n == 0:
        raise PreviewError("the cleaned proxy has no rows")
    ctx = PrivacyContext.simulation(seed, neighbour=spec.budget.neighbour)
    generator = fit_generator(spec, config, real_codes, ctx)
    try:
        codes = sample_valid_for(spec, config, generator, n, ctx.rng)
    except SamplingError as exc:  # shown in the editors instead of the readouts
        raise PreviewError(str(exc)) from None
    codes = project_min_count(codes, config.min_count, ctx.rng)
    return QuickSample(np.asarray(codes, dtype=np.int64), config.family, config.params,
                       spec.generator_epsilon(config), seed)
