"""Generator families by name, so a frozen spec can name a family and its hyperparameters.

The built-in families are registered here; a test (or a plug-in) may :func:`register` its own
:class:`~workbench.generators.family.GeneratorFamily` subclass and :func:`unregister` it.
The spec validator, :func:`make_generator`, :func:`generator_for` and ``describe`` all read
the registered classes' declarations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.generators.bayesian import BayesianPosterior
from workbench.generators.family import GeneratorFamily
from workbench.generators.independent import IndependentMarginals
from workbench.generators.perturbed_histogram import PerturbedHistogram
from workbench.generators.plausible_deniability import PlausibleDeniability
from workbench.generators.privbayes import PrivBayes
from workbench.generators.workload_generator import WorkloadGenerator

if TYPE_CHECKING:
    from workbench.specification.model import Spec
    from workbench.specification.space import Configuration
    from workbench.transform import TableCodec

#: Registered families by name (read it through :func:`registered` / :func:`family_class`).
FAMILIES: dict[str, type[GeneratorFamily]] = {}


def register(cls: type[GeneratorFamily]) -> type[GeneratorFamily]:
    """Add a family class (a new name only); usable as a class decorator."""
    if not (isinstance(cls, type) and issubclass(cls, GeneratorFamily)):
        raise TypeError("a generator family must be a subclass of GeneratorFamily")
    if not cls.name or not cls.name.isidentifier():
        raise ValueError(f"generator family name {cls.name!r} must be a non-empty identifier")
    if cls.name in FAMILIES:
        raise ValueError(f"generator family {cls.name!r} is already registered")
    if "epsilon" in cls.hyperparameters:
        raise ValueError(f"generator family {cls.name!r}: 'epsilon' is common to every "
                         "family (ε_gen) and cannot be a hyperparameter of its own")
    FAMILIES[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove a family (tests that registered a toy family clean up with this)."""
    FAMILIES.pop(name, None)


def registered() -> tuple[type[GeneratorFamily], ...]:
    """Every registered family class, in registration order."""
    return tuple(FAMILIES.values())


def family_class(name: str) -> type[GeneratorFamily]:
    """Look a family up, naming the known ones on failure."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown generator family {name!r}; known families: {sorted(FAMILIES)}"
        ) from None


def hyperparameters(name: str) -> tuple[str, ...]:
    """Names a family accepts, from its declaration."""
    return tuple(family_class(name).hyperparameters)


def make_generator(family: str, **hyperparameters_: Any) -> GeneratorFamily:
    """Build an unfitted generator, failing fast on an unknown family or hyperparameter.

    >>> make_generator("privbayes", degree=2, epsilon_split=0.25).degree
    2
    """
    generator = family_class(family)(**hyperparameters_)
    generator.check_params()
    return generator


def generator_for(spec: Spec, configuration: Configuration, table: TableCodec) -> GeneratorFamily:
    """The configuration's unfitted generator, bound to the (public) spec and its codec
    ``table``: the one place where a family reads the spec (:meth:`GeneratorFamily.bind_spec`)."""
    generator = make_generator(configuration.family, **configuration.generator_params)
    generator.bind_spec(spec, table)
    return generator


for _cls in (PrivBayes, IndependentMarginals, PerturbedHistogram, WorkloadGenerator,
             PlausibleDeniability, BayesianPosterior):
    register(_cls)
