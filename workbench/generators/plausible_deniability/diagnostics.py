"""Test 1 (deterministic: release if k′ ≥ k, no noise) as a diagnostic on public data only.

Test 1 is not differentially private (a single seed can flip a decision with certainty), so it
never runs in a confidential context: :func:`deterministic_pass_share` refuses one. On a
public proxy it shows how often candidates have at least k plausible seeds, which is what the
randomized Test 2 decides noisily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.plausible_deniability.model import PrefixIndex, synthesize
from workbench.privacy import PrivacyMode

if TYPE_CHECKING:
    from workbench.generators.plausible_deniability.family import PlausibleDeniability
    from workbench.privacy import PrivacyContext


def deterministic_pass_share(generator: PlausibleDeniability, public_codes: np.ndarray,
                             candidates: int, ctx: PrivacyContext) -> float:
    """Share of ``candidates`` made from PUBLIC seeds that pass Test 1 (k′ ≥ k, no noise)."""
    if ctx.mode is PrivacyMode.CONFIDENTIAL:
        raise ValueError("Test 1 is not DP: it is a diagnostic on public data only and never "
                         "runs in a confidential context")
    seeds = np.asarray(public_codes, dtype=np.int64)
    sizes = [int(seeds[:, c].max()) + 1 for c in range(seeds.shape[1])]
    sizes = [max(s, int(n.table.n_codes)) for s, n in
             zip(sizes, sorted(generator.nodes_, key=lambda n: n.column), strict=True)]
    index = PrefixIndex(seeds, generator.order_, sizes)
    low, high = generator.omega_range()
    picked = seeds[ctx.rng.integers(0, seeds.shape[0], size=candidates)]
    omegas = ctx.rng.integers(low, high + 1, size=candidates)
    rows = synthesize(generator.nodes_, picked, omegas, ctx.rng)
    return float(np.mean(index.plausible_counts(rows, omegas) >= generator.k))
