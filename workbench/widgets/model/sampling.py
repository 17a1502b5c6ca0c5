"""A quick synthetic sample S of the PUBLIC proxy, made exactly as an engine iteration makes one.

Fit the configuration's generator (DP, simulation mode: the numpy rng is seeded, the DP noise
still comes from OpenDP and is not reproducible) → sample n rows with the synthetic rejection
rules → face-privacy projection: ``workbench.engine.iteration.synthesize_candidate``, the
function ``run_iteration`` itself calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from workbench.engine.iteration import synthesize_candidate
from workbench.postprocess import SamplingError
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import NoiseSource
from workbench.specification import Configuration, Spec
from workbench.trial import bind


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
    spec: Spec,
    config: Configuration,
    real_codes: np.ndarray,
    seed: int = 0,
    noise: NoiseSource | None = None,
) -> QuickSample:
    """Fit the configuration's generator on the proxy codes and draw one release candidate."""
    n = int(real_codes.shape[0])
    if n == 0:
        raise PreviewError("the cleaned proxy has no rows")
    ctx = PrivacyContext.simulation(seed, neighbour=spec.budget.neighbour, noise=noise)
    try:
        trial = bind(spec, config)
        codes = synthesize_candidate(trial, real_codes, ctx)
    except SamplingError as exc:  # shown in the editors instead of the readouts
        raise PreviewError(str(exc)) from None
    return QuickSample(np.asarray(codes, dtype=np.int64), config.family, config.params,
                       trial.epsilon_generator, seed)
