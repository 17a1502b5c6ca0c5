"""DP generative models over encoded codes: PrivBayes and two baselines, behind one protocol.

Every count these generators read goes through ``workbench.privacy.PrivacyContext``; domains
(code counts) come only from ``workbench.transform.Domain``, never from the data.
"""

from workbench.generators.independent import IndependentMarginals
from workbench.generators.perturbed_histogram import PerturbedHistogram
from workbench.generators.privbayes import PrivBayes
from workbench.generators.protocol import Generator
from workbench.generators.registry import FAMILIES, hyperparameters, make_generator

__all__ = [
    "FAMILIES",
    "Generator",
    "IndependentMarginals",
    "PerturbedHistogram",
    "PrivBayes",
    "hyperparameters",
    "make_generator",
]
