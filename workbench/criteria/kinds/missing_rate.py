"""Missing rates: the largest gap between a column's share of missing values in R and in S.

E(R, S) = max over the chosen columns c of |#{r ∈ R: r_c missing}/n − #{s ∈ S: s_c missing}/n|
(:func:`workbench.criteria.missing_values.missing_rate_error`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import MISSING, MISSING_BASE, AuditCase, rows
from workbench.criteria.kinds.base import CheckContext, Param, ShareKind
from workbench.criteria.missing_values import check_missing_columns as _check
from workbench.criteria.missing_values import chosen, missing_rate_error

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class MissingRate(ShareKind):
    """Max per-column missing-rate gap; Δ = 1/n, value in [0, 1]."""

    name = "missing_rate"
    description = ("the largest gap between the share of missing values of a column in R and "
                   "in the release")
    params = MappingProxyType({
        "columns": Param(None, doc="columns to compare (null: every column that may be missing)",
                         control="columns", label="columns"),
    })
    position = 110

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``columns`` may be missing (policy category or allow)."""
        _check(ctx, params, path, least=1)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact max missing-rate gap."""
        return missing_rate_error(ev.real, ev.synth, ev.table, chosen(ev.table, criterion.params))

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n: replacing one record changes each column's missing count in R by at most
        1 (S fixed), so each |rate_R − rate_S| moves by ≤ 1/n, and so does their max."""
        return super().sensitivity(spec, table, criterion, pc)

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "bounds": [0, 1], "params": {}},
            MISSING_BASE, rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 0, 1)), MISSING_BASE, 1 / 4,
            "S = R; R′ fills x's one missing value: its rate 1/4 → 0 (Δ = 1/n)",
            design=MISSING)


KIND = MissingRate()
