"""The one way a generator reads counts: a marginal table released through the PrivacyContext."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal
from workbench.privacy.records import discrete_laplace_sigma
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext


def noisy_marginal(
    data: CellCounts,
    names: tuple[str, ...],
    privacy: PrivacyContext,
    epsilon: float,
    purpose: str,
) -> np.ndarray:
    """Release the count table over ``names`` with discrete Laplace noise (ε-DP on its own).

    Sensitivity: each record adds 1 to exactly one cell of the table. Replacing a record moves
    one unit between two cells (L1 change 2); adding or removing one changes one cell by 1.
    ``privacy.histogram_sensitivity()`` returns that Δ for the configured neighbour relation,
    and the noise scale per cell is Δ/ε (PrivBayes, Zhang et al. 2014, §4, noisy conditionals).
    The shape comes from the public domain, so empty cells are released too.
    """
    true = data.marginal(names)
    noisy = privacy.discrete_laplace(
        true.ravel(),
        sensitivity=privacy.histogram_sensitivity(),
        epsilon=epsilon,
        purpose=purpose,
    )
    return np.asarray(noisy.value, dtype=np.int64).reshape(true.shape)


def measure_marginal(data: CellCounts, clique: tuple[str, ...], epsilon: float,
                     privacy: PrivacyContext) -> NoisyMarginal:
    """A workload marginal released by :func:`noisy_marginal` at ``epsilon``, with the noise std
    Private-PGM weighs it by (σ of discrete Laplace at Δ/ε, public)."""
    counts = noisy_marginal(data, clique, privacy, epsilon,
                            purpose=f"workload marginal: {' x '.join(clique)}")
    return NoisyMarginal(clique, counts,
                         discrete_laplace_sigma(privacy.histogram_sensitivity(), epsilon))
