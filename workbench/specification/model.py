"""The immutable in-memory spec: typed, validated sections built from a spec document.

Each section of the document becomes one frozen object (built by its module in
:mod:`workbench.validation.sections`); :class:`Spec` holds them, built by keyword only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.constraints import Predicate
from workbench.specification.document import FROZEN_KEY, thaw
from workbench.specification.forecast import RecordedForecast
from workbench.specification.n_policy import NPolicy
from workbench.specification.own_data import CleaningCounts, PilotRef
from workbench.specification.space import Configuration, GeneratorSpace
from workbench.specification.survey import Survey
from workbench.transform import BinsCodec, Codec, ColumnSpec, TableCodec
from workbench.transform.missing import FileFormat

if TYPE_CHECKING:
    from workbench.privacy.budget_plan import BudgetPlan

NUMERIC_TYPES = frozenset({"ordinal", "integer", "continuous"})


@dataclass(frozen=True)
class Alternative:
    """One way to transform a column (a binning or the identity), with its codec."""

    name: str
    kind: str
    codec: Codec


@dataclass(frozen=True)
class ColumnTransform:
    """The alternatives of one column, plus the coarse binning its group-bys use."""

    column: str
    alternatives: tuple[Alternative, ...]
    coarse: BinsCodec | None

    def alternative(self, name: str) -> Alternative:
        for alt in self.alternatives:
            if alt.name == name:
                return alt
        raise KeyError(f"column {self.column!r} has no alternative {name!r}")


@dataclass(frozen=True)
class Rule:
    """A named row-level rule; rows for which ``reject_if`` holds are removed."""

    name: str
    reject_if: str
    predicate: Predicate
    description: str = ""


@dataclass(frozen=True)
class Constraints:
    """Cleaning rules for the raw data and rejection rules for synthetic samples."""

    raw: tuple[Rule, ...]
    synthetic: tuple[Rule, ...]
    partial_bins: str = "keep"
    max_sampling_rounds: int = 20


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion: a DP-evaluated error measure, its threshold and its ε share."""

    id: str
    kind: str
    threshold: float
    epsilon: float
    bounds: tuple[float, float] | None
    params: Mapping[str, Any]
    once: bool = False
    description: str = ""

    @property
    def in_loop(self) -> bool:
        """Charged in every private-selection iteration (as opposed to once, outside)."""
        return not self.once and self.epsilon > 0


@dataclass(frozen=True)
class FaithfulnessRule:
    """When a release row may stand for a real row: exact columns, bin distances, exceptions."""

    exact: tuple[str, ...]
    distance: Mapping[str, float]
    alpha: float
    must_match: tuple[tuple[str, float], ...] = ()
    #: per ``number`` column, the gap in its units that costs α (a distance in units)
    tolerance: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Budget:
    """The neighbour relation and caps; ε_gen and Σ ε_criteria are DERIVED by the validator
    (the largest selectable generator 'epsilon'; the criteria's sum)."""

    epsilon_generator: float
    epsilon_criteria: float
    neighbour: str
    epsilon_total_max: float | None = None
    #: cap on the dataset's cumulative ε over every run (checked by the run's budget guard)
    epsilon_lifetime_max: float | None = None
    #: whether a generator whose guarantee is asymptotic ("aDP, not a guarantee") may run
    allow_asymptotic_dp: bool = False
    #: whether a posterior draw proven ε-DP for an exact draw may be released from MCMC
    allow_mcmc_draw: bool = False
    #: which derived fields the document writes (older specs), checked against the derivation
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExpectedN:
    """The public estimate of the cleaned confidential data's size: a number or [low, high].

    Dry runs rehearse at ``low`` (the smaller registry is the harder one) unless told
    otherwise, and report both ends of a range.
    """

    low: int
    high: int

    @property
    def is_range(self) -> bool:
        return self.high != self.low

    @property
    def size(self) -> int | tuple[int, int]:
        """What dry runs take as ``n``: the number, or the (low, high) range."""
        return (self.low, self.high) if self.is_range else self.low

    def label(self) -> str:
        """``95,000`` or ``95,000–160,000``."""
        return f"{self.low:,}" if not self.is_range else f"{self.low:,}–{self.high:,}"


@dataclass(frozen=True)
class Selection:
    """Private selection with a known threshold: stop probability γ, cap T, and ε₀."""

    gamma: float
    max_iterations: int | None
    epsilon_0: float
    configurations: tuple[Configuration, ...] | None = None
    forecast: RecordedForecast | None = None

    @property
    def unbounded(self) -> bool:
        """γ = 0 and T = ∞: the loop stops only when a candidate passes."""
        return self.gamma == 0 and self.max_iterations is None


@dataclass(frozen=True)
class Metadata:
    """What the datasheet says about the release."""

    title: str
    owner: str
    description: str
    intended_uses: tuple[str, ...] = ()
    unintended_uses: tuple[str, ...] = ()
    #: declared exposure–outcome pairs ({exposure, exposed, outcome, positive}: issue 36);
    #: ``describe --proxy`` warns when the criteria would pass a release with one reversed
    associations: tuple[Mapping[str, Any], ...] = ()
    privacy_unit: str = "one record"
    #: ``public``, ``dp`` or (older specs) a sentence read as ``public``; the parsed relation
    #: is :attr:`Spec.n_policy` (:mod:`workbench.specification.n_policy`)
    n_policy: str = ""
    #: ε of the DP estimate n̂ under ``n_policy: dp`` (charged by every run)
    n_epsilon: float | None = None
    contact: str = ""
    #: stable identifier of the confidential dataset; its budget store is keyed by it
    dataset: str | None = None


@dataclass(frozen=True, kw_only=True)
class Spec:
    """A validated release design. Immutable; edit a copy of ``to_document()`` instead.

    Built by keyword from the sections (``Spec(document=..., sha256=..., frozen=...,
    **sections)``), never positionally.
    """

    document: Mapping[str, Any]
    sha256: str
    frozen: bool
    metadata: Metadata
    columns: tuple[ColumnSpec, ...]
    transformations: tuple[ColumnTransform, ...]
    constraints: Constraints
    criteria: tuple[Criterion, ...]
    faithfulness: FaithfulnessRule
    min_counts: tuple[int, ...]
    generator: GeneratorSpace
    budget: Budget
    selection: Selection
    #: ``schema.expected_n``, when the spec declares it
    expected_n: ExpectedN | None = None
    survey: Survey | None = None
    #: how the data file spells missing values (``schema.file_format``)
    file_format: FileFormat = field(default_factory=FileFormat)
    #: the DP pilot this design was made from (``pilot``), when the spec names one
    pilot: PilotRef | None = None
    #: how the bundle states the cleaning counts; None: they never leave the run
    cleaning_counts: CleaningCounts | None = None
    #: the declared relation for n (``metadata.n_policy``): public n, or a DP estimate n̂
    n_policy: NPolicy = field(default_factory=NPolicy)

    # --- lookups -----------------------------------------------------------------
    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"no column {name!r} in the spec")

    def transform(self, name: str) -> ColumnTransform:
        for t in self.transformations:
            if t.column == name:
                return t
        raise KeyError(f"no transformation for column {name!r}")

    @property
    def allow_columns(self) -> tuple[str, ...]:
        """Columns whose missing values are kept as missing (policy ``allow``)."""
        return tuple(c.name for c in self.columns if c.missing == "allow")

    def complete_rows_lower_bound(self, n: int, names: tuple[str, ...] | list[str]) -> int:
        """Public lower bound on the rows complete on ``names``: n·(1 − Σ max_missing_rate).

        Union bound over the columns' declared maxima (enforced when the data is read, before
        any noise); at least 1, so a normalised count's Δ = 1/bound stays finite.
        """
        from workbench.transform.missing import DEFAULT_MAX_MISSING_RATE

        lost = 0.0
        for name in names:
            col = self.column(name)
            if col.missing == "allow":
                lost += (col.max_missing_rate if col.max_missing_rate is not None
                         else DEFAULT_MAX_MISSING_RATE)
        return max(1, int(np.floor(n * max(0.0, 1.0 - lost) + 1e-9)))

    def criterion(self, criterion_id: str) -> Criterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(f"no criterion {criterion_id!r}")

    # --- budget ------------------------------------------------------------------
    def budget_plan(self, *, prior: float = 0.0, once_reused: bool = False) -> BudgetPlan:
        """The one budget plan of this design, derived from its document as a draft's is
        (:func:`workbench.specification.derived.document_plan`), after ``prior`` ε."""
        from workbench.specification.derived import document_plan

        plan = document_plan(self.document)
        if plan is None:  # the validator derived ε_gen and checked the selection
            raise ValueError("budget: the spec's ε cannot be composed")
        return plan.with_prior(prior, once_reused=once_reused and plan.epsilon_once > 0)

    @property
    def epsilon_once(self) -> float:
        """ε of the statistics computed once, outside the loop (from the budget plan)."""
        return self.budget_plan().epsilon_once

    @property
    def epsilon_total(self) -> float:
        """ε_total = 2·ε₁ + ε₀ + Σ ε_once (ε₁ + Σ once if T = 1), by the one budget plan."""
        return self.budget_plan().epsilon_total

    # --- configurations ----------------------------------------------------------
    def configuration_count(self) -> int:
        """Size of the search space (or of the narrowed list, when the spec has one)."""
        if self.selection.configurations is not None:
            return len(self.selection.configurations)
        return math.prod((self.generator.count(), len(self.min_counts),
                          *(len(t.alternatives) for t in self.transformations)))

    def configurations(self) -> Iterator[Configuration]:
        """Every configuration in a fixed order (the narrowed list when present)."""
        if self.selection.configurations is not None:
            yield from self.selection.configurations
        else:
            yield from self.full_space()

    def full_space(self) -> Iterator[Configuration]:
        """The full Cartesian space in a fixed, documented order (a narrowed list ignored)."""
        cols = [t.column for t in self.transformations]
        hyper = list(self.generator.hyperparameter_sets())
        for alts in itertools.product(*([a.name for a in t.alternatives]
                                        for t in self.transformations)):
            transforms = tuple(zip(cols, alts, strict=True))
            for h in hyper:
                for m in self.min_counts:
                    yield Configuration(transforms, self.generator.family,
                                        tuple(sorted(h.items())), m)

    def table_codec(self, configuration: Configuration) -> TableCodec:
        """Codecs of one configuration, in schema column order."""
        return TableCodec(
            tuple(
                (t.column, t.alternative(configuration.transform_of(t.column)).codec)
                for t in self.transformations
            )
        )

    # --- serialisation -----------------------------------------------------------
    def to_document(self) -> dict[str, Any]:
        """A plain, mutable copy of the design (without the freeze record)."""
        return {k: thaw(v) for k, v in self.document.items() if k != FROZEN_KEY}
