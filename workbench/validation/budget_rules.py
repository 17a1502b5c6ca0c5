"""Budget rules of the scheme that the validator states in words (kept apart from the builder)."""

from __future__ import annotations

#: Why ``budget.neighbour: add_remove`` is refused until the scheme supports it end to end.
ADD_REMOVE_REFUSED = (
    "'add_remove' is not supported yet; use 'replace_one'. In this scheme the number of "
    "records n is public: the generators sample exactly n records, and the criteria's "
    "sensitivities (conditional means, regression statistics, the 1/n of the ECDF and "
    "faithfulness) and the face-privacy projection are derived for datasets of the same size. "
    "Under add/remove neighbours n itself changes by one and would have to be released with "
    "DP first, which no generator or criterion does"
)
