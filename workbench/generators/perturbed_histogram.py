"""Perturbed-histogram baseline (Hu, Williams & Savitsky's comparison method, on codes): the full
noisy joint histogram over a few chosen columns; every other column from its own noisy 1-way
histogram, sampled independently.

Budget: the joint table and each remaining 1-way histogram are released once each, so with r
remaining columns there are 1 + r releases and each gets ε/(1 + r); with ``columns`` covering
every column (the default) the joint gets all of ε.

Columns released as numbers (``number`` transformation) are histogrammed in ``number_bins``
equal-width bins of their public grid, chosen without the data, and a released record gets a
uniform grid value inside its bin (the paper's baseline for a continuous variable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.arguments import check_epsilon, check_n
from workbench.generators.conditional import ConditionalTable
from workbench.generators.family import GeneratorFamily
from workbench.generators.measurement import noisy_marginal
from workbench.specification.params import Param, name_list, optional, whole_at_least
from workbench.transform import Domain, NumberCodec
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Spec
    from workbench.transform import TableCodec


class PerturbedHistogram(GeneratorFamily):
    """Noisy joint over ``columns`` (all columns if None); ``max_cells`` caps that joint's size."""

    name = "perturbed_histogram"
    description = ("the noisy joint histogram of a few columns, every other column from its "
                   "own noisy 1-way histogram (a baseline)")
    dp_n_bound = ("every released table (the joint and each 1-way) has L1 Δ = 2 under "
                  "replace-one and Δ = 1 under add/remove-one (one record, one cell), so the "
                  "replace-one Δ = 2 covers both; no step reads n, and sampling n̂ rows is "
                  "post-processing")
    hyperparameters = MappingProxyType({
        "columns": Param(None, name_list, "the joint's columns (default: all)", control="columns"),
        "max_cells": Param(10_000_000, whole_at_least(1), "cap on the joint's cells",
                           control="whole_number"),
        "number_bins": Param(None, optional(whole_at_least(1)),
                             "equal-width bins of each number column (default: every value)",
                             control="optional_number"),
    })

    @classmethod
    def models_jointly(cls, params: Mapping[str, Any], clique: Sequence[str]) -> bool | None:
        """The joint of ``columns`` (all by default); a column outside it stands alone."""
        joint = params.get("columns")
        return len(clique) <= 1 or joint is None or set(clique) <= set(joint)

    #: Number columns (from the bound spec) and their grid sizes.
    _numbers: Mapping[str, int] = MappingProxyType({})

    def bind_spec(self, spec: Spec, table: TableCodec | None = None) -> None:
        """Which columns are released as numbers (public: the configuration's codecs)."""
        super().bind_spec(spec, table)
        if table is not None:
            self._numbers = {n: c.size for n, c in table.codecs if isinstance(c, NumberCodec)}

    def _binned(self, domain: Domain) -> dict[str, int]:
        """Number columns histogrammed in ``number_bins`` bins (grid size per column)."""
        if self.number_bins is None:
            return {}
        return {n: size for n, size in self._numbers.items()
                if n in domain.names and size > self.number_bins}

    def _to_bins(self, codes: np.ndarray, domain: Domain) -> tuple[np.ndarray, Domain]:
        """Grid codes → equal-width bin codes floor(k·m/size) of the binned number columns."""
        binned = self._binned(domain)
        out = np.array(codes, dtype=np.int64, copy=True)
        for name, size in binned.items():
            j = domain.index(name)
            out[:, j] = out[:, j] * self.number_bins // size
        sizes = tuple(self.number_bins if n in binned else s
                      for n, s in zip(domain.names, domain.sizes, strict=True))
        return out, Domain(domain.names, sizes)

    def _from_bins(self, out: np.ndarray, rng: np.random.Generator) -> None:
        """A uniform grid value inside each sampled bin (post-processing)."""
        for name, size in self._binned(self.grid_domain_).items():
            j = self.grid_domain_.index(name)
            b = out[:, j]
            lo = -((-b * size) // self.number_bins)
            hi = -((-(b + 1) * size) // self.number_bins)
            out[:, j] = lo + (rng.random(len(b)) * (hi - lo)).astype(np.int64)

    @classmethod
    def spec_problems(cls, grid: Mapping[str, Sequence[Any]],
                      column_names: Sequence[str]) -> list[tuple[str, str]]:
        """Every joint column must be a column of the spec."""
        out = []
        for j, value in enumerate(grid.get("columns", ())):
            if isinstance(value, list | tuple):
                out += [(f"columns[{j}]", f"unknown column {c!r}")
                        for c in value if c not in column_names]
        return out

    def _joint_columns(self, domain: Domain) -> tuple[str, ...]:
        """The public joint columns, checked against the domain and the cell cap."""
        cols = domain.names if self.columns is None else tuple(self.columns)
        unknown = [c for c in cols if c not in domain.names]
        if unknown:
            raise ValueError(f"perturbed_histogram: columns {unknown} are not in the domain")
        if domain.size(cols) > self.max_cells:
            raise ValueError(
                f"perturbed_histogram: joint over {cols} has {domain.size(cols)} cells, "
                f"above max_cells={self.max_cells}"
            )
        return cols

    def fit(
        self, codes: np.ndarray, domain: Domain, epsilon: float, privacy: PrivacyContext
    ) -> PerturbedHistogram:
        """Release the joint and the other 1-way histograms, ε/(1 + r) each.

        Sensitivity of every released table: Δ = privacy.histogram_sensitivity() (one record
        occupies one cell: 2 under replace-one, 1 under add/remove; the note's Lap(2/ε) is the
        replace-one case). Per-cell scale (1 + r)·Δ/ε, discrete Laplace.
        """
        self.check_params()
        eps = check_epsilon(epsilon)
        self.grid_domain_ = domain
        codes, domain = self._to_bins(codes, domain)
        cols = self._joint_columns(domain)
        data = CellCounts.from_codes(codes, domain)
        rest = tuple(c for c in domain.names if c not in cols)
        share = eps / (1 + len(rest))
        joint = noisy_marginal(
            data, cols, privacy, share, purpose=f"perturbed histogram joint: {', '.join(cols)}"
        )
        joint_table = ConditionalTable.from_noisy_counts(joint.ravel())
        self.joint_ = joint_table.probs[0].reshape(joint.shape)
        self._joint = (tuple(domain.index(c) for c in cols), joint.shape, joint_table)
        self.marginals_: dict[str, np.ndarray] = {}
        self._rest: list[tuple[int, ConditionalTable]] = []
        for name in rest:
            noisy = noisy_marginal(
                data, (name,), privacy, share, purpose=f"perturbed histogram marginal: {name}"
            )
            table = ConditionalTable.from_noisy_counts(noisy)
            self.marginals_[name] = table.probs[0]
            self._rest.append((domain.index(name), table))
        self.domain_ = domain
        self.joint_columns_ = cols
        self.release_epsilon_ = share
        self.noise_scale_ = privacy.histogram_sensitivity() / share
        return self

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw joint cells, unravel them into their columns, then the rest independently."""
        if not hasattr(self, "_joint"):
            raise RuntimeError("perturbed_histogram: call fit before sample")
        n = check_n(n)
        zeros = np.zeros(n, dtype=np.int64)
        out = np.empty((n, len(self.domain_)), dtype=np.int64)
        idx, shape, table = self._joint
        flat = table.sample(zeros, rng)
        out[:, list(idx)] = np.stack(np.unravel_index(flat, shape), axis=1)
        for j, marginal in self._rest:
            out[:, j] = marginal.sample(zeros, rng)
        self._from_bins(out, rng)
        return out
