"""PrivBayes with ``allow`` columns: complete rows, PrivBayesE (partial) or column-wise imputation.

Budget: ``missingness_share``·ε for the missingness pattern (``generators.missing``), the rest
for the value model exactly as PrivBayes splits it. The strategies differ only in which rows
each noisy statistic reads (Mohapatra et al., "Differentially private data generation with
missing data", §6):

* ``complete_rows`` — every statistic from the rows complete on all ``allow`` columns;
* ``partial`` (PrivBayesE) — every score and conditional table from the rows complete on its
  own attributes; the counts keep Δ₁ = 2 (replace-one), the mutual-information scores take
  their Δ at the public lower bound on those rows (``ObservedCounts.mi_sensitivity``);
* ``impute`` (column-wise, KaminoI-style) — the structure as in ``partial``; then, in network
  order, each conditional P(X | Π) is released from the rows where X is observed (Π is
  complete: its columns come earlier and are already imputed) and X's missing values are
  drawn from that same noisy conditional. Each imputed row depends only on its own observed
  values and DP output, so a replaced record still changes one row of every later table
  (Δ₁ = 2); nothing is imputed without DP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.conditional import ConditionalTable
from workbench.generators.missing import MissingLayout, ObservedCounts, PatternModel

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext

#: The conditionals column-wise imputation gives PrivBayes to hold: (network, tables, plan).
Imputed = tuple[list[tuple[str, tuple[str, ...]]], dict[str, np.ndarray], list[Any]]


def fit_with_missing(strategy: str, share: float, fit_view: Callable[..., None],
                     codes: np.ndarray, layout: MissingLayout, eps: float,
                     privacy: PrivacyContext) -> PatternModel:
    """The pattern (``share``·ε), then the value model by PrivBayes' ``fit_view`` under
    ``strategy``; spends ``eps`` and returns the pattern for the family to hold."""
    codes = np.asarray(codes, dtype=np.int64)
    layout.check_rates(codes)
    eps_pattern = eps * float(share)
    view = ObservedCounts(codes, layout, complete_rows=strategy == "complete_rows")
    pattern = PatternModel(layout).fit(codes, privacy, eps_pattern)
    impute = None
    if strategy == "impute":
        def impute(network: list, eps2: float) -> Imputed:
            return _impute_parameters(codes, layout, network, eps2, privacy)
    fit_view(view, eps - eps_pattern, privacy, impute=impute)
    return pattern


def _impute_parameters(codes: np.ndarray, layout: MissingLayout,
                       network: list[tuple[int, tuple[int, ...]]], eps2: float,
                       privacy: PrivacyContext) -> Imputed:
    """Column-wise conditionals with imputation, ε₂/d each (module docstring: Δ₁ = 2)."""
    values = layout.values
    names, sizes = values.names, values.sizes
    d = len(names)
    work = codes.copy()
    gone = {i: codes[:, i] == layout.domain.sizes[i] - 1 for i in layout.allow}
    out: Imputed = ([], {}, [])
    for x, pi in network:
        observed = ~gone[x] if x in gone else np.ones(len(work), dtype=bool)
        parent_sizes = tuple(sizes[p] for p in pi)
        config = (np.ravel_multi_index(tuple(work[:, list(pi)].T), parent_sizes)
                  if pi else np.zeros(len(work), dtype=np.int64))
        flat = config[observed] * sizes[x] + work[observed, x]
        true = np.bincount(flat, minlength=int(np.prod(parent_sizes, dtype=np.int64)) * sizes[x])
        cols = tuple(names[c] for c in (*pi, x))
        noisy = privacy.discrete_laplace(
            true, sensitivity=privacy.histogram_sensitivity(), epsilon=eps2 / d,
            purpose=f"privbayes imputing marginal: {names[x]} | {', '.join(cols[:-1]) or '∅'}")
        counts = np.asarray(noisy.value, dtype=np.int64).reshape(-1, sizes[x])
        table = ConditionalTable.from_noisy_counts(counts)
        if x in gone and gone[x].any():  # impute from the DP conditional (post-processing)
            work[gone[x], x] = table.sample(config[gone[x]], privacy.rng)
        out[0].append((names[x], cols[:-1]))
        out[1][names[x]] = table.probs.reshape((*parent_sizes, sizes[x]))
        out[2].append((x, pi, parent_sizes, table))
    return out
