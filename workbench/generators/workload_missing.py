"""The ``workload`` family with ``allow`` columns: complete rows, partial observation, imputation.

``missingness_share``·ε goes to the missingness pattern (``generators.missing``); the rest is
allocated over the workload as usual (algorithm ``fixed``). Each marginal is a count table, so
its Δ₁ stays ``privacy.histogram_sensitivity()`` whichever rows it reads (a replaced record
leaves at most one cell and enters at most one; ``generators.missing``). Private-PGM takes
marginals with their own totals: a table read from n_c rows is rescaled to the public n by
n / n̂_c, where n̂_c is its own noisy total clamped to the public lower bound on n_c (both
post-processing), and its noise std is rescaled by the same factor.

* ``complete_rows`` — every table from the rows complete on all ``allow`` columns;
* ``partial`` — each table from the rows complete on its own clique (PrivBayesE's idea for
  marginal methods);
* ``impute`` — column-wise: the 1-way tables (each column's DP model) are released from the
  observed values first; each column's missing values are drawn from its own noisy 1-way
  distribution; the multi-way tables are then released from the imputed rows (a replaced
  record changes one imputed row: Δ₁ unchanged);
* ``as_value`` (the default here) — no pattern and nothing in this module's fit: the family fits
  the whole domain, missing codes included, so every 1-way carries a column's missing rate and
  every measured pair its co-missingness and how missingness depends on values.
  :func:`co_missing_chains` adds what a ``co_missingness`` criterion needs under it: the pairs
  of consecutive columns of its list, so a group missing together (a lab panel) is measured
  as a chain of count tables (Δ₁ of each as above) and stays together in the release.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import kinds
from workbench.generators.conditional import ConditionalTable
from workbench.generators.mbi_model import NoisyMarginal, fit_graphical_model, sampling_plan
from workbench.generators.measurement import measure_marginal
from workbench.generators.missing import (
    AS_VALUE,
    MissingLayout,
    ObservedCounts,
    PatternModel,
)
from workbench.generators.workload import Workload, WorkloadItem, need
from workbench.privacy.records import discrete_laplace_sigma
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from collections.abc import Mapping

    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Spec

#: The criterion kind whose pairs ride in the model's marginals under ``as_value``.
CO_MISSING_KIND = "co_missingness"


def missing_words(spec: Spec | None, strategy: str) -> list[str]:
    """Under 'as_value', what keeps co-missingness: only measured pairs (describe's line)."""
    if spec is None or len(spec.allow_columns) < 2 or strategy != AS_VALUE:
        return []
    if any(c.kind == CO_MISSING_KIND for c in spec.criteria):
        return ["  'allow' columns: missing is a value in every marginal (as_value); "
                "co_missingness criteria's columns are measured as chains of pairs"]
    return ["  'allow' columns: missing is a value in every marginal (as_value), so each "
            "rate rides in its 1-way; columns missing together stay together only where a "
            "pair of them is measured: add a co_missingness criterion over such a group"]


def co_missing_chains(spec: Spec, workload: Workload, multipliers: Mapping[str, float]
                      ) -> Workload:
    """``workload`` plus, for each ``co_missingness`` criterion, the pairs of consecutive
    columns of its list (null: every column that may be missing, in the spec's order), with
    the criterion's weight (multiplier · need, as every criterion's) split evenly over them.

    A chain keeps the junction tree's cliques at pairs, yet a group missing together stays
    together: each link carries P(next missing | this one missing). Public inputs only."""
    order = {name: i for i, name in enumerate(spec.column_names)}
    weights = {i.clique: i.weight for i in workload.items}
    sources = {i.clique: list(i.sources) for i in workload.items}
    for c in spec.criteria:
        if c.kind != CO_MISSING_KIND:
            continue
        kind = kinds.get(c.kind)
        columns = list(c.params.get("columns") or [
            col.name for col in spec.columns if col.missing in ("allow", "category")])
        links = {tuple(sorted(p, key=order.__getitem__)) for p in pairwise(columns)}
        weight = float(multipliers.get(kind.tags.workload_group, 1.0)) * need(kind, c)
        for q in links:
            weights[q] = weights.get(q, 0.0) + weight / len(links)
            sources.setdefault(q, []).append(c.id)
    items = tuple(WorkloadItem(q, weights[q], tuple(sources[q]))
                  for q in sorted(weights, key=lambda q: (len(q), [order[x] for x in q]))
                  if weights[q] > 0)
    return Workload(workload.columns, items, workload.one_way_share)


def fit_workload_missing(strategy: str, share: float, iters: int, codes: np.ndarray,
                         layout: MissingLayout, workload: Workload, eps: float,
                         privacy: PrivacyContext, structure: Callable[..., Any] | None = None
                         ) -> tuple[PatternModel, list[tuple[tuple[str, ...], float]], Any]:
    """Pattern (``share``·ε), then every workload marginal under ``strategy``; spends ``eps``.

    Returns the fitted pattern, the allocation and the value model for the family to hold.
    ``structure`` (the workload's unnamed-structure rounds, their own ε) then reads and
    measures further cliques through the same view, each a count table of Δ₁ as above.
    """
    codes = np.asarray(codes, dtype=np.int64)
    layout.check_rates(codes)
    eps_pattern = eps * float(share)
    pattern = PatternModel(layout).fit(codes, privacy, eps_pattern)
    allocation = workload.allocate(eps - eps_pattern)
    if strategy == "impute":
        measured, data = _impute_and_measure(codes, layout, allocation, privacy)
        truth, measure = data.marginal, lambda c, e: measure_marginal(data, c, e, privacy)
    else:
        view = ObservedCounts(codes, layout, complete_rows=strategy == "complete_rows")
        measured = [measure_observed(view, c, e, privacy) for c, e in allocation]
        truth, measure = view.marginal, lambda c, e: measure_observed(view, c, e, privacy)
    if structure is None:
        return pattern, allocation, fit_graphical_model(layout.values, measured, len(codes),
                                                        iters)
    model = structure(layout.values, measured, len(codes), truth, measure)
    return pattern, allocation, sampling_plan(layout.values, model)


def measure_observed(view: ObservedCounts, clique: tuple[str, ...], eps: float,
             privacy: PrivacyContext) -> NoisyMarginal:
    """One table over the rows ``view`` reads for ``clique``, rescaled to the public n."""
    true = view.marginal(clique)
    delta = privacy.histogram_sensitivity()
    noisy = privacy.discrete_laplace(true.ravel(), sensitivity=delta, epsilon=eps,
                                     purpose=f"workload marginal (observed): {' x '.join(clique)}")
    counts = np.asarray(noisy.value, dtype=np.float64).reshape(true.shape)
    rows = max(float(counts.sum()), float(view.rows_bound(clique)))
    scale = view.n / rows
    return NoisyMarginal(clique, counts * scale, discrete_laplace_sigma(delta, eps) * scale)


def _impute_and_measure(codes: np.ndarray, layout: MissingLayout,
                        allocation: list[tuple[tuple[str, ...], float]],
                        privacy: PrivacyContext) -> tuple[list[NoisyMarginal], CellCounts]:
    """1-way tables from observed values, column-wise imputation, then the multi-way tables;
    also the imputed rows' counts (the structure rounds read further tables from them)."""
    view = ObservedCounts(codes, layout, complete_rows=False)
    measured = [measure_observed(view, c, e, privacy) for c, e in allocation if len(c) == 1]
    work = codes.copy()
    for m in measured:
        i = layout.domain.index(m.clique[0])
        if i not in layout.allow:
            continue
        gone = work[:, i] == layout.domain.sizes[i] - 1
        if gone.any():
            table = ConditionalTable.from_noisy_counts(m.counts[None, :])
            work[gone, i] = table.sample(np.zeros(int(gone.sum()), dtype=np.int64), privacy.rng)
    data = CellCounts.from_codes(work, layout.values)
    delta = privacy.histogram_sensitivity()
    for clique, eps in allocation:
        if len(clique) == 1:
            continue
        true = data.marginal(clique)
        noisy = privacy.discrete_laplace(true.ravel(), sensitivity=delta, epsilon=eps,
                                         purpose=f"workload marginal (imputed): "
                                                 f"{' x '.join(clique)}")
        measured.append(NoisyMarginal(clique, np.asarray(noisy.value).reshape(true.shape),
                                      discrete_laplace_sigma(delta, eps)))
    return measured, data
