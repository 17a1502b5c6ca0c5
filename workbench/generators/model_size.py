"""How big a generator's model will be, from the public spec alone (issue 36's size guards).

A workload model is a Markov random field on the junction tree of its measured cliques
(Private-PGM): its parameters are one table per maximal clique of the triangulated graph, so
a criterion over every pair of 10 columns makes one 10-column table (about 1e8 cells, 12
minutes and 2.3 GB before anyone killed it). Nothing here reads data: the cliques come from
the criteria (:func:`~workbench.generators.workload.derive_workload`), the table sizes from
the configuration's codecs, the triangulation from mbi's own greedy elimination rule (the one
the fit uses), so the estimate is the fit's own table layout. Other families:

* ``perturbed_histogram``: the joint of its columns (one table);
* ``privbayes``: one (X, Π) table per column, X's bins × its k largest possible parents
  (k = ``degree``; with θ any number of parents), each capped by ``max_cells``;
* ``plausible_deniability``: one table per column, its bins × ``maxcost`` parent buckets;
* ``bayesian``: the other columns' joint capped by ``max_cells``, and the target's bins;
* anything else (``independent``): the 1-way tables.

An ``allow`` column adds its missing code to every table it is in. The bytes are cells × 8
(float64) × :data:`COPIES`, the copies the mirror-descent solver holds at once (potentials,
beliefs, the gradient and the line search's previous step). The estimate is the largest over
the spec's configurations; :func:`size_refusal` compares it with ``generator.model_limit``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.generators.model_limit import (
    COPIES,
    DEFAULT_BYTES,
    DEFAULT_CELLS,
    Clique,
    ModelLimit,
    cap_cells,
    junction_tables,
)

if TYPE_CHECKING:
    from workbench.specification import Configuration, Spec

@dataclass(frozen=True)
class ModelSize:
    """One configuration's model: its tables (clique, cells), largest first, and their sum."""

    family: str
    tables: tuple[tuple[Clique, int], ...]
    configuration: Configuration | None = None
    sources: Mapping[Clique, tuple[str, ...]] | None = None

    @property
    def cells(self) -> int:
        """Cells of all tables together."""
        return sum(c for _, c in self.tables)

    @property
    def bytes(self) -> int:
        """Memory of the fit: cells × 8 bytes × COPIES."""
        return self.cells * 8 * COPIES

    @property
    def largest(self) -> tuple[Clique, int]:
        """The widest table (the one a smaller workload must cut)."""
        return self.tables[0] if self.tables else ((), 0)

    def over(self, limit: ModelLimit) -> bool:
        """Whether this model exceeds the limit's cells or bytes."""
        return self.cells > limit.cells or self.bytes > limit.bytes

    def words(self, limit: ModelLimit | None = None) -> str:
        """One line: cells, memory, the widest table and the limit."""
        clique, cells = self.largest
        text = (f"model size ({self.family}): {_num(self.cells)} cells, about "
                f"{_mem(self.bytes)} to fit; widest table {' × '.join(clique) or '-'} "
                f"({_num(cells)} cells)")
        if limit is not None:
            text += f"; limit {_num(limit.cells)} cells / {_mem(limit.bytes)}"
        return text


#: The pseudo-table that stands for the workload's ``structure`` rounds in an estimate.
STRUCTURE_TABLE = ("(unnamed structure, up to generator.model_limit)",)


def _num(x: float) -> str:
    """A count as people read it: 12,345 or 1.2e+08."""
    return f"{x:,.0f}" if x < 1e7 else f"{x:.2g}"


def _mem(b: float) -> str:
    """Bytes in MB or GB."""
    return f"{b / 1e9:.3g} GB" if b >= 1e9 else f"{b / 1e6:.3g} MB"


def _sizes(spec: Spec, configuration: Configuration) -> dict[str, int]:
    """Codes per column under the configuration, plus the missing code of ``allow`` columns."""
    domain = spec.table_codec(configuration).domain
    allow = set(spec.allow_columns)
    return {n: int(s) + (n in allow) for n, s in zip(domain.names, domain.sizes, strict=True)}


def _workload(spec: Spec, configuration: Configuration,
              sizes: dict[str, int]) -> ModelSize:
    """The junction tree of every clique the workload may measure (AIM: all its candidates);
    with ``structure`` rounds, what they may add up to the budget (their eligibility rule),
    so the estimate bounds any selection they make."""
    from workbench.generators.registry import generator_for

    generator = generator_for(spec, configuration, spec.table_codec(configuration))
    items = generator.workload.items if generator.workload is not None else ()
    sources = {i.clique: i.sources for i in items}
    tables = junction_tables(sizes, [i.clique for i in items])
    room = cap_cells(ModelLimit.of(spec)) - sum(c for _, c in tables)
    if getattr(generator, "structure", "none") != "none" and room > 0:
        tables = sorted([*tables, (STRUCTURE_TABLE, room)], key=lambda t: -t[1])
    return ModelSize("workload", tuple(tables), configuration, sources)


def _largest_others(sizes: dict[str, int], column: str, k: int) -> int:
    """The product of the k largest other columns' sizes."""
    others = sorted((s for n, s in sizes.items() if n != column), reverse=True)[:k]
    return math.prod(others)


def _privbayes(spec: Spec, params: Mapping[str, Any],
               sizes: dict[str, int]) -> list[tuple[Clique, int]]:
    """One capped (X, Π) table per column (module doc); with θ and ``schema.expected_n`` the
    cap is also PrivBayes's θ-usefulness bound n·ε/(d·θ) at the high n and the largest ε_gen
    (``PrivBayes.theta_cell_bound`` with Δ ≥ 1 and ε₂ ≤ ε, so never below the fit's)."""
    cap = int(params.get("max_cells") or 1_000_000)
    theta, expected = params.get("theta"), spec.expected_n
    if theta and expected is not None and sizes:
        eps = float(params.get("epsilon") or spec.budget.epsilon_generator)
        cap = min(cap, max(1, math.ceil(expected.high * eps / (len(sizes) * float(theta)))))
    k = int(params.get("degree") or max(len(sizes) - 1, 0))
    return [((n,), min(cap, s * _largest_others(sizes, n, k))) for n, s in sizes.items()]


def _family_tables(spec: Spec, family: str, params: Mapping[str, Any],
                   sizes: dict[str, int]) -> list[tuple[Clique, int]]:
    """The tables of the families without a workload (module doc)."""
    if family == "perturbed_histogram":
        cols = tuple(params.get("columns") or sizes)
        return [(cols, math.prod(sizes[c] for c in cols))]
    if family == "privbayes":
        return _privbayes(spec, params, sizes)
    if family == "plausible_deniability":
        buckets = int(params.get("maxcost") or 64)
        return [((n,), s * buckets) for n, s in sizes.items()]
    if family == "bayesian":
        target = params.get("target")
        others = tuple(n for n in sizes if n != target)
        cap = int(params.get("max_cells") or 1_000_000)
        return [(others, min(cap, math.prod(sizes[c] for c in others)))] + \
            ([((target,), sizes[target])] if target in sizes else [])
    return [((n,), s) for n, s in sizes.items()]


def configuration_size(spec: Spec, configuration: Configuration) -> ModelSize:
    """The model one configuration would fit (public: spec and codecs only)."""
    sizes = _sizes(spec, configuration)
    if configuration.family == "workload":
        return _workload(spec, configuration, sizes)
    tables = _family_tables(spec, configuration.family, configuration.generator_params, sizes)
    return ModelSize(configuration.family, tuple(sorted(tables, key=lambda t: -t[1])),
                     configuration)


def model_size(spec: Spec) -> ModelSize:
    """The largest model over the spec's configurations (min_count does not change it)."""
    seen: dict[Any, ModelSize] = {}
    for configuration in spec.configurations():
        key = (configuration.transforms, configuration.family,
               repr(configuration.generator_params))
        if key not in seen:
            seen[key] = configuration_size(spec, configuration)
    return max(seen.values(), key=lambda m: m.cells)


__all__ = ["COPIES", "DEFAULT_BYTES", "DEFAULT_CELLS", "STRUCTURE_TABLE", "Clique", "ModelLimit",
           "ModelSize", "cap_cells", "configuration_size", "junction_tables", "model_size"]
