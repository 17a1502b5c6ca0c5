"""The noise source of a dry-run task: OpenDP, or seeded noise so executors agree draw for draw.

OpenDP's samplers read the OS CSPRNG and cannot be seeded, which makes "same seeds, same
records" meaningless. With ``noise="seeded"`` a task's SIMULATION context is built with a
:class:`~workbench.privacy.noise.SeededNoise` source (the same three distributions at the same
scales, from a numpy Generator seeded by the task). Nothing is patched: the source is an
argument of the context, which validates, records and accounts every measurement as usual,
and a confidential context refuses any source but OpenDP.
"""

from __future__ import annotations

import numpy as np

from workbench.dryrun.tasks import NOISE_MODES
from workbench.privacy.noise import NoiseSource, OpenDPNoise, SeededNoise

_NOISE_STREAM = 0x6E6F697365  # "noise": keeps the noise stream apart from ctx.rng's stream


def noise_generator(seed: int) -> np.random.Generator:
    """The numpy Generator a seeded dry-run task draws its noise from."""
    return np.random.default_rng([int(seed), _NOISE_STREAM])


def noise_source(mode: str, seed: int) -> NoiseSource:
    """The noise source of one task: OpenDP, or seeded noise from :func:`noise_generator`."""
    if mode not in NOISE_MODES:
        raise ValueError(f"noise must be one of {', '.join(NOISE_MODES)}")
    return SeededNoise(noise_generator(seed)) if mode == "seeded" else OpenDPNoise()
