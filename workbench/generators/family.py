"""What a generator family declares, once: its hyperparameters, their constraints, its hooks.

A family is a subclass of :class:`GeneratorFamily` (in the spirit of scikit-learn's
``_parameter_constraints``): ``hyperparameters`` maps every name to a
:class:`~workbench.specification.params.Param` (default, constraint, words) and ``exactly_one_of``
names groups of which exactly one must be set. The spec validator checks every value of a
search-space grid with those constraints, ``make_generator`` checks the values it is given
with the same ones (:meth:`GeneratorFamily.check_params`); there is no second validator.

Hooks a family may override:

* :meth:`bind_spec` — the one way a family reads the public spec (the ``workload`` family
  derives its marginals from the criteria): ``generator_for`` calls it before every ``fit``;
* :meth:`spec_problems` — checks that need the spec's column names;
* :meth:`describe` — extra lines for ``workbench describe``;
* :meth:`preflight` — checks of public inputs the spec names but does not hold (a proxy file),
  run by ``workbench run`` before any budget;
* :meth:`bound_problems` — checks that need the whole spec (the validator calls it);
* :meth:`models_jointly` — whether a fit can reproduce a set of columns jointly (the co-design
  app warns about criteria the family cannot serve);
* :meth:`guarantee` — what a release made with these hyperparameters can promise
  (:class:`Guarantee`; pure ε-DP by default). Reports, the bundle and ``verify`` use its words,
  so a family whose output is not pure ε-DP over the dataset says so in one place.

Every family also takes ``epsilon`` in a spec (:data:`COMMON`): ε_gen itself as an
alternative, charged by the budget, never passed to the constructor.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.specification.params import Param, positive

if TYPE_CHECKING:
    import numpy as np

    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Spec
    from workbench.transform import Domain, TableCodec

#: Hyperparameters every family accepts in a spec; the budget, not the family, reads them.
COMMON: Mapping[str, Param] = MappingProxyType({
    "epsilon": Param(None, positive, "ε_gen of this configuration (an alternative to rank)"),
})


@dataclass(frozen=True)
class Guarantee:
    """What a family's release promises, in the words every report and label uses.

    ``kind``: a stable machine name (``pure_epsilon_dp``, ``per_record_plausible_deniability``,
    ``adp_pseudo_posterior`` …) that ``verify`` compares; ``label``: the words every report and
    dashboard shows; ``parameters``: the numbers behind the label (e.g. ε and δ per record).
    ``strict``: a worst-case bound proven, for every dataset, for the mechanism that made the
    release (ε-DP, or (ε, δ) per record) — false for a figure computed on the data itself
    (asymptotic DP, "aDP, not a guarantee") and for an MCMC release, whose proof covers an
    exact posterior draw that was not what ran. ``dataset_level``: the bound composes over the
    whole dataset (pure ε-DP under the budget), as opposed to a bound stated per released
    record. ``proven_for_release``: the stated bound is proven for the release as published,
    as a whole (true for pure ε-DP; false for MCMC, aDP, and per-record plausible
    deniability, whose bound is proven for each released record alone; by default
    ``strict and dataset_level``). ``caveat``: what else
    a reader must know, shown with the label everywhere and flagged by ``verify`` (e.g. a
    proof that covers an exact posterior draw, released from a finite MCMC chain).
    :mod:`workbench.generators.guarantee_rules` states which combinations ``verify`` accepts.

    >>> PURE_EPSILON_DP.label, PURE_EPSILON_DP.strict, PURE_EPSILON_DP.is_pure
    ('ε-DP', True, True)
    >>> PURE_EPSILON_DP.as_dict()["proven_for_release"]
    True
    >>> Guarantee.from_dict(PURE_EPSILON_DP.as_dict()) == PURE_EPSILON_DP
    True
    """

    label: str
    strict: bool = True
    dataset_level: bool = True
    explanation: str = ""
    kind: str = "pure_epsilon_dp"
    parameters: Mapping[str, float | int | str] = field(default_factory=dict)
    caveat: str = ""
    #: None: derived, ``strict and dataset_level`` (a family sets False when its proof does
    #: not cover what ran, e.g. an MCMC approximation of an exact draw).
    proven_for_release: bool | None = None

    def __post_init__(self) -> None:
        """Resolve the derived default of ``proven_for_release``."""
        if self.proven_for_release is None:
            object.__setattr__(self, "proven_for_release", self.strict and self.dataset_level)

    @property
    def is_pure(self) -> bool:
        """Pure ε-DP over the whole dataset, charged to the budget (nothing to flag)."""
        return (self.kind == PURE_KIND and self.strict and self.dataset_level
                and self.proven_for_release)

    @property
    def opt_in(self) -> str | None:
        """The budget flag a spec must set to accept this guarantee (None: none needed)."""
        if self.kind == MCMC_KIND:
            return "allow_mcmc_draw"
        return None if self.strict else "allow_asymptotic_dp"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form, as the bundle's ``guarantee.json`` records it."""
        out: dict[str, object] = {
            "kind": self.kind, "label": self.label, "strict": self.strict,
            "dataset_level": self.dataset_level, "proven_for_release": self.proven_for_release,
            "explanation": self.explanation,
            "parameters": dict(self.parameters)}
        if self.caveat:
            out["caveat"] = self.caveat
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Guarantee:
        """Read :meth:`as_dict`'s form back (KeyError/TypeError on a malformed one; a missing
        ``proven_for_release``, from a bundle made before issue 34, reads as false)."""
        params = data.get("parameters", {})
        if not isinstance(params, Mapping):
            raise TypeError("guarantee parameters must be an object")
        return cls(str(data["label"]), bool(data["strict"]), bool(data["dataset_level"]),
                   str(data.get("explanation", "")), str(data["kind"]), dict(params),
                   str(data.get("caveat", "")), bool(data.get("proven_for_release", False)))


class GeneratorShortfall(RuntimeError):
    """A family that releases records only after a test made too few within its cap.

    The iteration fails like a constraint-sampling failure (``run_iteration`` catches both);
    the message holds public parameters only.
    """


#: ``Guarantee.kind`` of the default.
PURE_KIND = "pure_epsilon_dp"
#: ``Guarantee.kind`` of a release whose ε-DP proof covers an exact posterior draw, released
#: from a finite MCMC chain (a spec opts in with ``budget.allow_mcmc_draw``).
MCMC_KIND = "epsilon_dp_exact_posterior_mcmc"

#: The default: the generator spends its ε through the privacy layer, composed by the budget.
PURE_EPSILON_DP = Guarantee(
    "ε-DP", explanation="pure ε-differential privacy for the whole dataset, charged to the budget"
)


class GeneratorFamily(ABC):
    """Base of the generator families: declared hyperparameters, one check, the spec hook."""

    #: The spec's ``generator.family`` string.
    name: ClassVar[str] = ""
    #: Plain words for reviews and describe.
    description: ClassVar[str] = ""
    hyperparameters: ClassVar[Mapping[str, Param]] = MappingProxyType({})
    #: Groups of hyperparameters of which exactly one must be set (not None).
    exactly_one_of: ClassVar[tuple[tuple[str, ...], ...]] = ()
    #: True when one iteration with this family is not ε₁-DP (e.g. its candidate carries a
    #: per-record bound only): the validator then refuses selection.max_iterations ≠ 1.
    single_attempt_only: ClassVar[bool] = False
    #: The family's bound under ``metadata.n_policy: dp`` (the cleaned n differs by one
    #: between neighbours, and the sampler draws the public n̂ records), in words; "" refuses
    #: the family under ``dp`` (e.g. a bound that reads the exact n).
    dp_n_bound: ClassVar[str] = ""

    def __init__(self, **hyperparameters: Any) -> None:
        """Take declared hyperparameters only; the others keep their declared defaults."""
        unknown = sorted(set(hyperparameters) - set(self.hyperparameters))
        if unknown:
            raise ValueError(
                f"generator family {self.name!r} has no hyperparameter(s) {unknown}; "
                f"it accepts {list(self.hyperparameters)}"
            )
        for key, param in self.hyperparameters.items():
            setattr(self, key, hyperparameters.get(key, param.default))

    @classmethod
    def defaults_outside(cls, names: Sequence[str]) -> dict[str, Any]:
        """Declared defaults of the hyperparameters not in ``names`` (those a spec leaves
        unset), skipping unset-by-default ones (None)."""
        return {key: p.default for key, p in cls.hyperparameters.items()
                if key not in names and p.default is not None}

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters' current values."""
        return {key: getattr(self, key) for key in self.hyperparameters}

    @classmethod
    def problems(cls, values: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(name, message) for every value that breaks its declared constraint."""
        out = []
        for key, value in values.items():
            param = cls.hyperparameters.get(key)
            message = None if param is None or value is None else param.problem(value)
            if message:
                out.append((key, message))
        return out

    @classmethod
    def group_problems(cls, present: Sequence[str]) -> list[str]:
        """Messages for ``exactly_one_of`` groups broken by the set of names ``present``."""
        return [f"set exactly one of {', '.join(group)}" for group in cls.exactly_one_of
                if sum(key in present for key in group) != 1]

    def check_params(self) -> None:
        """Validate the hyperparameters once, before any budget is spent (the declared checks
        plus :meth:`check_combination`)."""
        values = self.get_params()
        for key, message in self.problems(values):
            raise ValueError(f"{self.name}: {key} {message}, got {values[key]!r}")
        for message in self.group_problems([k for k, v in values.items() if v is not None]):
            raise ValueError(f"{self.name}: {message}")
        self.check_combination()

    @classmethod
    def models_jointly(cls, params: Mapping[str, Any], clique: Sequence[str]) -> bool | None:
        """Whether a fit with ``params`` can reproduce the joint distribution of ``clique``:
        False when the declaration rules it out (the co-design app then warns that a criterion
        on that clique cannot pass), True when it guarantees it, None when it depends on the
        data (a learnt network) or is not declared (the default)."""
        return None

    @classmethod
    def bound_problems(cls, spec: Spec, params: Mapping[str, Any]) -> list[str]:
        """Problems of ``params`` that only the whole (public) spec shows, such as a derived
        workload that leaves a column unmeasured; the spec validator reports them, so nothing
        that validates fails later in ``describe`` or a run (none by default)."""
        return []

    def check_combination(self) -> None:
        """Constraints between hyperparameters beyond ``exactly_one_of`` (none by default)."""
        return  # an optional hook: nothing by default

    @classmethod
    def spec_problems(cls, grid: Mapping[str, Sequence[Any]],
                      column_names: Sequence[str]) -> list[tuple[str, str]]:
        """(relative path, message) for grid values the spec's columns rule out (none by
        default)."""
        return []

    # --- hooks -------------------------------------------------------------------------------
    #: The public spec and the caller's codec, kept by :meth:`bind_spec` for ``fit``.
    bound_spec_: Spec | None = None
    bound_table_: TableCodec | None = None

    def bind_spec(self, spec: Spec, table: TableCodec | None = None) -> None:
        """Keep the public spec and the codec ``table`` the caller's Trial holds (families
        override to derive more from them).

        This is the one way a family sees the spec; ``generators.generator_for`` (used by
        ``Trial.generator``) calls it on every generator it makes, with the Trial's ``table``.
        """
        self.bound_spec_, self.bound_table_ = spec, table

    def preflight(self) -> None:
        """Refuse (ValueError) before any budget when a public input the bound spec names is
        missing or changed; ``workbench run`` calls it for every configuration (nothing by
        default)."""
        return  # an optional hook: nothing by default

    def guarantee(self) -> Guarantee:
        """What a release made with these hyperparameters promises (pure ε-DP by default)."""
        return PURE_EPSILON_DP

    def describe(self, label: str, epsilon: float) -> list[str]:
        """Extra ``workbench describe`` lines for one hyperparameter set (none by default)."""
        return []

    def release_diagnostics(self, codes: np.ndarray, domain: Domain, epsilon: float,
                            rng: np.random.Generator) -> dict[str, Any] | None:
        """Public diagnostics computed on the RELEASED codes (post-processing), written to the
        bundle's ``diagnostics.json``; None by default (nothing to add)."""
        return None

    # --- the generator protocol ------------------------------------------------------------
    @abstractmethod
    def fit(self, codes: np.ndarray, domain: Domain, epsilon: float,
            privacy: PrivacyContext) -> GeneratorFamily:
        """Spend exactly ``epsilon`` through ``privacy`` to learn a model of ``codes``."""

    @abstractmethod
    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` synthetic rows of codes from the fitted model (post-processing only)."""
