"""DP generative models over encoded codes: PrivBayes, the criteria-aware workload family and
two baselines, behind one protocol and one registry.

Every count these generators read goes through ``workbench.privacy.PrivacyContext``; domains
(code counts) come only from ``workbench.transform.Domain``, never from the data. Each family
declares its hyperparameters once (:class:`GeneratorFamily`); the spec validator,
:func:`make_generator` and ``describe`` read that declaration from the registry.
"""

from workbench.generators.family import (
    COMMON,
    MCMC_KIND,
    PURE_EPSILON_DP,
    GeneratorFamily,
    GeneratorShortfall,
    Guarantee,
)
from workbench.generators.guarantee_rules import guarantee_problems, records_plan
from workbench.generators.independent import IndependentMarginals
from workbench.generators.perturbed_histogram import PerturbedHistogram
from workbench.generators.privbayes import PrivBayes
from workbench.generators.registry import (
    FAMILIES,
    family_class,
    generator_for,
    make_generator,
    register,
    registered,
    unregister,
)
from workbench.generators.workload import Workload, derive_workload
from workbench.generators.workload_generator import WorkloadGenerator

__all__ = [
    "COMMON",
    "FAMILIES",
    "MCMC_KIND",
    "PURE_EPSILON_DP",
    "GeneratorFamily",
    "GeneratorShortfall",
    "Guarantee",
    "IndependentMarginals",
    "PerturbedHistogram",
    "PrivBayes",
    "Workload",
    "WorkloadGenerator",
    "derive_workload",
    "family_class",
    "generator_for",
    "guarantee_problems",
    "make_generator",
    "records_plan",
    "register",
    "registered",
    "unregister",
]
