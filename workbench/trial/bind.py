"""``bind(spec, configuration)``: what the spec means for one configuration, resolved once.

The engine's iteration, the dry run's tasks, the design assistant and the co-design widgets all
run "this spec at this configuration". Each used to re-derive it from ``(spec, configuration)``
— the codec (up to five times per iteration), ε_gen, each criterion's kind and ε, the
generator — and the copies drifted. A :class:`Trial` holds the resolved plan, built once per
configuration, and those four users take it instead:

* the table codec and its domain;
* ε_gen of this configuration (its search-space 'epsilon', else the derived budget's) and the
  budget plan (ε₁, ε_total);
* every criterion bound to its registered kind, with its ε, the cliques it reads, its
  effective threshold given Δ, and the kind's pass decisions;
* the generator family and hyperparameters, made and bound to the public spec on demand
  (a fitted generator holds state, so each fit gets a fresh one);
* the configuration's guarantee.

The Trial sits above the registries it reads (criteria kinds, generator families) and below
everything that runs it; the spec model stays low (``docs/architecture.md``, Layers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.criteria import kinds
from workbench.generators import Guarantee, generator_for
from workbench.privacy.budget_plan import BudgetPlan
from workbench.specification import Configuration, Criterion, Spec
from workbench.specification.derived import configuration_epsilon
from workbench.transform import Domain, TableCodec

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from workbench.criteria.kinds.base import Clique, CriterionKind
    from workbench.generators.family import GeneratorFamily


@dataclass(frozen=True)
class BoundCriterion:
    """A criterion with its kind resolved: ε, cliques, Δ and the pass decision in one place."""

    criterion: Criterion
    kind: CriterionKind
    cliques: tuple[Clique, ...]

    @property
    def id(self) -> str:
        return self.criterion.id

    @property
    def epsilon(self) -> float:
        return self.criterion.epsilon

    def effective_threshold(self, delta: float | None, details: Mapping[str, Any]) -> float:
        """min(T, T′) as the kind decides it."""
        return self.kind.effective_threshold(self.criterion, delta, details)

    def pass_probability(self, exact: float, delta: float | None,
                         details: Mapping[str, Any]) -> float | None:
        """The kind's P(pass | exact value) at this criterion's ε."""
        return self.kind.pass_probability(self.criterion, exact, delta,
                                          self.effective_threshold(delta, details))


@dataclass(frozen=True)
class Trial:
    """One configuration of a spec, resolved once (see the module docstring)."""

    spec: Spec
    configuration: Configuration
    table: TableCodec
    epsilon_generator: float
    criteria: tuple[BoundCriterion, ...]
    plan: BudgetPlan
    _guarantee: list[Guarantee] = field(default_factory=list, repr=False, compare=False)

    @property
    def domain(self) -> Domain:
        return self.table.domain

    @property
    def family(self) -> str:
        return self.configuration.family

    @property
    def cliques(self) -> dict[str, tuple[Clique, ...]]:
        """The multi-way marginals each criterion reads (what a workload measures for it)."""
        return {c.id: c.cliques for c in self.criteria}

    def criterion(self, criterion_id: str) -> BoundCriterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(f"no criterion {criterion_id!r}")

    def generator(self) -> GeneratorFamily:
        """A fresh, unfitted generator of this configuration, bound to the public spec."""
        return generator_for(self.spec, self.configuration, self.table)

    @property
    def guarantee(self) -> Guarantee:
        """What a release of this configuration promises (its family's declaration)."""
        if not self._guarantee:
            self._guarantee.append(self.generator().guarantee())
        return self._guarantee[0]

    def encode(self, frame: pd.DataFrame, *, narrow: bool = False) -> np.ndarray:
        """Codes of a cleaned table under this configuration's transformation (``narrow``:
        the domain's smallest unsigned dtype, ``TableCodec.encode``)."""
        return self.table.encode(frame, narrow=narrow)

    def label_order(self) -> dict[str, tuple[str, ...]]:
        """The bin labels of every column in code order (plots, verification)."""
        return {name: tuple(str(v) for v in self.table.codec(name).labels)
                for name in self.table.names}


def bind(spec: Spec, configuration: Configuration | Mapping[str, Any]) -> Trial:
    """Resolve ``spec`` at one configuration (a Configuration or its dict form); an unknown
    transformation alternative fails here, naming the column."""
    config = (configuration if isinstance(configuration, Configuration)
              else Configuration.from_dict(configuration))
    bound = []
    for c in spec.criteria:
        kind = kinds.get(c.kind)
        bound.append(BoundCriterion(c, kind, tuple(kind.marginals(spec, c))))
    return Trial(spec=spec, configuration=config, table=spec.table_codec(config),
                 epsilon_generator=configuration_epsilon(spec, config.params),
                 criteria=tuple(bound), plan=spec.budget_plan())
