"""The largest gap between the empirical CDFs of one numeric column in R and in the release.

E(R, S) = max over values x of |F_R(x) − F_S(x)| (the Kolmogorov–Smirnov distance), values
ordered by the bin-to-number rule (:func:`workbench.criteria.marginal_kinds.max_ecdf_error`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds.base import (
    CheckContext,
    Param,
    ShareKind,
    numeric_column,
    template_target,
)
from workbench.criteria.marginal_kinds import max_ecdf_error

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class MaxEcdf(ShareKind):
    """KS distance of one column; Δ = 1/n, value in [0, 1]."""

    name = "max_ecdf"
    description = ("the largest gap between the cumulative distributions of one numeric "
                   "column in R and in the release (Kolmogorov–Smirnov distance)")
    params = MappingProxyType({"column": Param(None, doc="the numeric column", control="column",
                              label="column")})
    position = 70
    tags = replace(ShareKind.tags, dp_n_bound=(
        "under n_policy dp F_R(x) is R's cumulative count up to x over the public "
        "n̂ = |S|; replace-one moves each cumulative count by ≤ 1 (out at one value, "
        "in at another), add/remove-one by ≤ 1 (every x at or above the record's "
        "value), so each gap and their max move by ≤ 1/n̂: Δ = 1/n̂"))

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``column`` is a numeric column."""
        numeric_column(ctx, f"{path}.column", params.get("column"))

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact KS distance on the column's 1-way counts."""
        return max_ecdf_error(ev.pc, ev.table, str(criterion.params["column"]))

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n: a replaced record moves each F_R(x) by ≤ 1/n (it leaves one value and
        enters another), so the max over x moves by ≤ 1/n (Prop. 3). Under n_policy dp n is
        the public n̂ (``dp_n_bound``)."""
        return super().sensitivity(spec, table, criterion, pc)

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The last numeric column of the draft."""
        return {"column": template_target(document)[0]}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "params": {"column": "y"}},
            BASE, replaced(BASE, 0, (0, 0, 2)), BASE, 1 / 4,
            "S = R; R′ moves one y from 0 to 10: the ECDF of y moves by 1/n (Δ = 1/n)")


KIND = MaxEcdf()
