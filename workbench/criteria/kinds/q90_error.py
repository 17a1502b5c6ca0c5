"""The error of the 90th percentile of one numeric column: |q(S) − q̃(R)|, q̃(R) released by the
exponential mechanism over a public grid (Δ = 1, derived in
:class:`~workbench.criteria.kinds._distribution.QuantileError`)."""

from __future__ import annotations

from workbench.criteria.kinds._distribution import QuantileError


class Q90Error(QuantileError):
    """q = 0.9."""

    name = "q90_error"
    description = ("the gap between the 90th percentile of one numeric column in the release and a "
                   "DP estimate of it in R, in the column's units")
    q = 0.9


KIND = Q90Error()
