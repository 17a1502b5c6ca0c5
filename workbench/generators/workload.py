"""The criteria-aware workload: which marginals to measure, and with what share of ε_gen.

Every criterion kind declares the marginals its error measure depends on and the multiplier
group that scales it (``marginals`` and ``workload_group`` of its
:class:`~workbench.criteria.kinds.base.CriterionKind`); the spec's criteria turn that into one
weighted list of cliques, and :meth:`Workload.allocate` splits ε_gen over it. Everything here
reads only the public spec (column names, criteria, faithfulness rule), never data, so the
workload can be shown by ``workbench describe`` before any run.

Weights (issue 36). A criterion's weight is ``multiplier(kind) · need``, where ``need`` is
its kind's :meth:`~workbench.criteria.kinds.base.CriterionKind.workload_need`: what the
criterion needs of the generator, read from its public threshold and never from its own ε (a
test's ε used to set it, so cutting a criterion's ε starved its marginals and raising it to
tighten the test changed the release it tests). A share criterion (threshold in shares of n)
needs 0.05/T: a marginal's per-cell share noise is √2·Δ/(ε·n), so holding it to a fixed
fraction of T needs ε ∝ 1/T; a criterion whose threshold is in a column's units needs 1 (such
thresholds cannot be compared across kinds without data); one reading S only needs 0. The
per-kind multipliers are hyperparameters of the search space.

The proxy's cell sizes. When the spec pins a public proxy (``public_measurements: joint``: its
file and SHA-256 are part of the spec, its counts public), a criterion whose measure divides by
cells — a rate or a ratio: the 2×2 association kinds, ``rate_by_group`` — gets the need its
noise calls for: a marginal at ε adds about √2·Δ/(ε·n·p) to a rate over a cell of share p, so
holding it to the same fraction of T as a share criterion's needs REFERENCE_SHARE/(T·p), p the
smallest such cell of the proxy (``CriterionKind.workload_cell_share``; at least one proxy row,
so an empty cell does not ask for all of ε_gen). A share of n needs no p (its noise does not
depend on the cell's size), nor does ``rare_cell_rate`` (its cells are chosen from S at each
iteration, so none is known before the fit). Still never the criterion's own ε. A criterion
spreads its weight
evenly over the multi-way cliques it declares and a clique's weight is the sum it receives.
The 1-way marginal of every column is always measured, with ``one_way_share`` of ε_gen split
evenly over the columns (0: the multi-way cliques carry the 1-ways); the rest goes to the
multi-way cliques in proportion to their weight. Two options of issue 15: faithfulness's
cliques derived from its cost rule, and weights scaled by the cliques' cell counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.criteria import kinds
from workbench.criteria.kinds.base import REFERENCE_SHARE, WORKLOAD_GROUPS, Clique, pairs

if TYPE_CHECKING:
    from workbench.criteria.kinds.base import CriterionKind
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import CellCounts


@dataclass(frozen=True)
class WorkloadItem:
    """One marginal to measure, its weight and the criteria that asked for it."""

    clique: Clique
    weight: float
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Workload:
    """1-way marginals of ``columns`` plus weighted multi-way ``items``; no data inside."""

    columns: tuple[str, ...]
    items: tuple[WorkloadItem, ...]
    one_way_share: float

    def allocate(self, epsilon: float) -> list[tuple[Clique, float]]:
        """(clique, ε) per measurement; the ε add up to ``epsilon`` (sequential composition)."""
        if not self.columns:
            raise ValueError("workload: no columns")
        total_weight = sum(i.weight for i in self.items)
        share = self.one_way_share if total_weight > 0 else 1.0
        covered = {c for i in self.items if i.weight > 0 for c in i.clique}
        if share == 0 and not set(self.columns) <= covered:
            raise ValueError("workload: one_way_share 0 needs every column in a weighted clique")
        one = epsilon * share / len(self.columns)
        out: list[tuple[Clique, float]] = [((c,), one) for c in self.columns] if share else []
        rest = epsilon - one * len(self.columns)
        out += [(i.clique, rest * i.weight / total_weight) for i in self.items if i.weight > 0]
        # Put the rounding residue on the last measurement so the ε add up exactly.
        clique, last = out[-1]
        out[-1] = (clique, last + (epsilon - sum(e for _, e in out)))
        return out

    def describe(self, epsilon: float | None = None) -> list[str]:
        """One line per measurement: clique, weight, ε if given, and the criteria behind it."""
        eps = dict(self.allocate(epsilon)) if epsilon is not None else {}
        lines = [
            f"1-way marginals of all {len(self.columns)} columns, share {self.one_way_share:g}"
        ]
        if epsilon is not None and self.one_way_share:
            lines[0] += f" (ε {eps[(self.columns[0],)]:.4g} each)"
        for item in self.items:
            e = f", ε {eps[item.clique]:.4g}" if item.clique in eps else ""
            lines.append(
                f"{' × '.join(item.clique)}: weight {item.weight:.4g}{e} "
                f"(from {', '.join(item.sources)})"
            )
        return lines


def size_factors(cliques: Sequence[Clique], sizes: Mapping[str, int],
                 power: float) -> dict[Clique, float]:
    """(cells of c / geometric mean of cells)^power per clique: with Laplace noise the L1 error
    of a marginal grows with its cell count, so wider marginals need more of the budget."""
    if power == 0 or not cliques:
        return dict.fromkeys(cliques, 1.0)
    cells = {q: math.prod(sizes[c] for c in q) for q in cliques}
    mean = math.exp(sum(math.log(v) for v in cells.values()) / len(cells))
    return {q: (cells[q] / mean) ** power for q in cliques}


def need(kind: CriterionKind, criterion: Criterion,
         proxy: tuple[TableCodec, CellCounts] | None = None) -> float:
    """The criterion's need (module doc): its kind's, or, with a pinned public proxy (its codec
    and counts) and a measure that divides by cells, REFERENCE_SHARE/(T·p)."""
    base = kind.workload_need(criterion)
    if not base or proxy is None:
        return base
    share = kind.workload_cell_share(proxy[0], criterion, proxy[1])
    if share is None:
        return base
    p = max(share, 1.0 / max(proxy[1].n, 1))
    return REFERENCE_SHARE / (max(float(criterion.threshold), 1e-6) * p)


def derive_workload(
    spec: Spec,
    *,
    one_way_share: float = 0.25,
    multipliers: Mapping[str, float] | None = None,
    faithfulness_order: int = 0,
    size_power: float = 0.0,
    sizes: Mapping[str, int] | None = None,
    proxy: tuple[TableCodec, CellCounts] | None = None,
) -> Workload:
    """The weighted marginal workload of ``spec``'s criteria (public inputs only).

    ``faithfulness_order`` 2 or 3 replaces the faithfulness criterion's cliques by those its
    cost rule derives (the kind's ``workload_marginals``; 0 keeps the kind's own);
    ``size_power`` scales each clique's weight by :func:`size_factors` of the configuration's
    public bin counts ``sizes``; ``proxy`` (the configuration's codec and the pinned public
    proxy's counts in it) sizes the needs of the criteria that divide by cells (module doc).
    """
    mult = {g: 1.0 for g in WORKLOAD_GROUPS} | dict(multipliers or {})
    criteria = list(spec.criteria)
    weights: dict[Clique, float] = {}
    sources: dict[Clique, list[str]] = {}
    order = {name: i for i, name in enumerate(spec.column_names)}
    for c in criteria:
        kind = kinds.get(c.kind)
        weight = float(mult[kind.tags.workload_group]) * need(kind, c, proxy)
        declared = kind.workload_marginals(spec, c, faithfulness_order)
        cliques = {tuple(sorted(q, key=order.__getitem__)) for q in declared}
        for q in sorted(cliques, key=lambda q: [order[x] for x in q]):
            weights[q] = weights.get(q, 0.0) + weight / len(cliques)
            sources.setdefault(q, []).append(c.id)
    if size_power and sizes is not None:
        factor = size_factors(list(weights), sizes, size_power)
        weights = {q: w * factor[q] for q, w in weights.items()}
    items = tuple(
        WorkloadItem(q, weights[q], tuple(sources[q]))
        for q in sorted(weights, key=lambda q: (len(q), [order[x] for x in q]))
        if weights[q] > 0
    )
    return Workload(tuple(spec.column_names), items, float(one_way_share))


def all_pairs_workload(columns: Sequence[str], one_way_share: float = 0.25) -> Workload:
    """Fallback without a spec: every 2-way marginal, equal weights."""
    items = tuple(WorkloadItem(q, 1.0, ("all pairs",)) for q in pairs(columns))
    return Workload(tuple(columns), items, float(one_way_share))
