"""Bayesian posterior-draw synthesisers (Hu, Williams & Savitsky): plug-in models, the
censored and weighted mechanisms, the numpy sampler, the per-record risk view."""

from workbench.generators.bayesian.family import (
    ADP,
    MCMC_LABEL,
    BayesianPosterior,
    mcmc_guarantee,
)

__all__ = ["ADP", "MCMC_LABEL", "BayesianPosterior", "mcmc_guarantee"]
