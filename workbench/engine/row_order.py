"""Whether a run's outputs depend on its data only through the multiset of cleaned rows (issue 38).

A database may then return distinct rows with their counts (``GROUP BY``) instead of every row:
the rows arrive in another order, and nothing the run publishes can tell. Checked step by step
for the families and kinds listed here (any other keeps the source's own row order):

* cleaning acts row by row and its tallies are counts; the missing checks are counts over the
  table; the budget store's fingerprint sorts the rows (``table_fingerprint``); n is a count;
* the ``workload`` and ``privbayes`` families fit on ``CellCounts.from_codes`` (counts of
  distinct cells, sorted keys) and sample from their model alone; their 'allow'-column routes
  (``workload_missing``, ``privbayes_missing``) are not checked, so a spec with an ``allow``
  column is excluded;
* the listed criterion kinds read ``Evaluation.pc`` (R and S as counts on their sorted distinct
  cells) or ``distinct_cells`` (the DP regression release), never R's rows in order;
* a survey weight (its check and raking sum floats over rows in order) is excluded.

Adding a family or kind here needs the same check; ``tests/test_row_order.py`` runs a listed
design on shuffled rows and compares the bundle byte for byte.
"""

from __future__ import annotations

from workbench.specification import Spec

#: Generator families that fit on cell counts only (see the module docstring).
ORDER_FREE_FAMILIES = frozenset({"workload", "privbayes"})
#: Criterion kinds that compute on paired cell counts or distinct cells only.
ORDER_FREE_KINDS = frozenset({"max_marginal_error", "relative_one_way", "conditional_mean",
                              "regression_coefficients", "regression_mae", "faithfulness"})


def order_free(spec: Spec) -> bool:
    """Whether a run of ``spec`` gives the same bytes whatever order its rows are read in."""
    return (spec.generator.family in ORDER_FREE_FAMILIES
            and spec.survey is None
            and not spec.allow_columns
            and all(c.kind in ORDER_FREE_KINDS for c in spec.criteria))
