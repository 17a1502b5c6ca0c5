"""Plausible-deniability synthesis: a DP Bayesian network on disjoint splits, seeded partial
resynthesis with ω, and the randomized privacy test (Bindschaedler et al. 2017).

Modules: ``structure`` (noisy-entropy CFS on D_T), ``model`` (Dirichlet-posterior parameters
on D_P, seeded synthesis, the group-by index of D_S), ``family`` (the registered family).
"""

from workbench.generators.plausible_deniability.family import (
    LABEL,
    PlausibleDeniability,
    split_indices,
)

__all__ = ["LABEL", "PlausibleDeniability", "split_indices"]
