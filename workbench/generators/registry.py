"""Generator families by name, so a frozen spec can name a family and its hyperparameters."""

from __future__ import annotations

import inspect

from workbench.generators.independent import IndependentMarginals
from workbench.generators.perturbed_histogram import PerturbedHistogram
from workbench.generators.privbayes import PrivBayes
from workbench.generators.protocol import Generator
from workbench.generators.workload_generator import WorkloadGenerator

FAMILIES: dict[str, type] = {
    "privbayes": PrivBayes,
    "independent": IndependentMarginals,
    "perturbed_histogram": PerturbedHistogram,
    "workload": WorkloadGenerator,
}


def hyperparameters(family: str) -> tuple[str, ...]:
    """Names a family accepts, read from its constructor so the two cannot drift apart."""
    cls = _family(family)
    params = inspect.signature(cls.__init__).parameters
    return tuple(p for p in params if p != "self")


def make_generator(family: str, **hyperparameters_: object) -> Generator:
    """Build an unfitted generator, failing fast on an unknown family or hyperparameter.

    >>> make_generator("privbayes", degree=2, epsilon_split=0.25).degree
    2
    """
    cls = _family(family)
    allowed = hyperparameters(family)
    unknown = sorted(set(hyperparameters_) - set(allowed))
    if unknown:
        raise ValueError(
            f"generator family {family!r} has no hyperparameter(s) {unknown}; "
            f"it accepts {list(allowed)}"
        )
    generator = cls(**hyperparameters_)
    generator.check_params()
    return generator


def _family(family: str) -> type:
    """Look a family up, naming the known ones on failure."""
    try:
        return FAMILIES[family]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown generator family {family!r}; known families: {sorted(FAMILIES)}"
        ) from None
