"""The noise source of a dry-run task: OpenDP, or seeded noise so executors agree draw for draw.

OpenDP's samplers read the OS CSPRNG and cannot be seeded, which makes "same seeds, same
records" meaningless. With ``noise="seeded"`` a task's SIMULATION context is built with a
:class:`~workbench.privacy.noise.SeededNoise` source (the same three distributions at the same
scales, from a numpy Generator seeded by the task). Nothing is patched: the source is an
argument of the context, which validates, records and accounts every measurement as usual,
and a confidential context refuses any source but OpenDP.
"""

from __future__ import annotations

from workbench.dryrun.tasks import NOISE_MODES
from workbench.privacy.noise import NoiseSource, OpenDPNoise, rehearsal_noise


def noise_source(mode: str, seed: int) -> NoiseSource:
    """The noise source of one task: OpenDP, or the seeded noise of a rehearsal with this seed
    (:func:`workbench.privacy.noise.rehearsal_noise`, what ``workbench run --rehearse`` uses)."""
    if mode not in NOISE_MODES:
        raise ValueError(f"noise must be one of {', '.join(NOISE_MODES)}")
    return rehearsal_noise(seed) if mode == "seeded" else OpenDPNoise()
