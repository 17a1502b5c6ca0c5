"""Bayesian posterior-draw synthesisers (Hu, Williams & Savitsky): plug-in models, the
censored and weighted mechanisms, the numpy sampler, the per-record risk view."""

from workbench.generators.bayesian.family import ADP, STRICT_DP, BayesianPosterior
from workbench.generators.bayesian.models import MODELS, BayesianModel, ModelData
from workbench.generators.bayesian.posterior import PosteriorFit, draw

__all__ = ["ADP", "MODELS", "STRICT_DP", "BayesianModel", "BayesianPosterior", "ModelData",
           "PosteriorFit", "draw"]
