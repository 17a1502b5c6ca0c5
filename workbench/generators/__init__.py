"""DP generative models over encoded codes: PrivBayes, the criteria-aware workload family and
two baselines, behind one protocol.

Every count these generators read goes through ``workbench.privacy.PrivacyContext``; domains
(code counts) come only from ``workbench.transform.Domain``, never from the data.
"""

from workbench.generators.independent import IndependentMarginals
from workbench.generators.perturbed_histogram import PerturbedHistogram
from workbench.generators.privbayes import PrivBayes
from workbench.generators.protocol import Generator
from workbench.generators.registry import FAMILIES, hyperparameters, make_generator
from workbench.generators.workload import Workload, derive_workload
from workbench.generators.workload_generator import WorkloadGenerator

__all__ = [
    "FAMILIES",
    "Generator",
    "IndependentMarginals",
    "PerturbedHistogram",
    "PrivBayes",
    "Workload",
    "WorkloadGenerator",
    "derive_workload",
    "hyperparameters",
    "make_generator",
]
