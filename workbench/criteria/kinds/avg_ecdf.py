"""The average squared gap between the ECDFs of one numeric column in R and in the release
(Woo et al.'s U_a, the source paper's avg-ECDF)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria import distribution as dist
from workbench.criteria.audit_case import AuditCase, rows
from workbench.criteria.kinds._distribution import COLUMN
from workbench.criteria.kinds.base import CheckContext, ShareKind, numeric_column, template_target

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class AvgEcdf(ShareKind):
    """U_a = Σ over pooled records (F_R − F_S)²/(2n); Δ = 2.5/n, value in [0, 1]."""

    name = "avg_ecdf"
    description = ("the average squared gap between the cumulative distributions of one "
                   "numeric column in R and in the release, over the pooled records")
    params = MappingProxyType({"column": COLUMN})
    position = 100

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``column`` is a numeric column."""
        numeric_column(ctx, f"{path}.column", params.get("column"))

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """U_a on the column's 1-way counts, values by the bin-to-number rule."""
        _, real, synth = dist.sorted_counts(ev.pc, ev.table, str(criterion.params["column"]))
        return dist.avg_ecdf(real, synth)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 2.5/n. Write U_a = Σ_x w_x d_x² with d_x = F_R(x) − F_S(x) ∈ [−1, 1] and pooled
        weights w_x = (r_x + s_x)/(2n) summing to 1. Replacing one record of R moves every
        d_x by at most 1/n, so |d′² − d²| = |d′ − d|·|d′ + d| ≤ 2/n and Σ w_x·(d′² − d²) is
        at most 2/n; it also moves weight 1/(2n) from one value to another, changing
        Σ (w′ − w)·d′² by at most 1/(2n). Together 2/n + 1/(2n) = 2.5/n."""
        return 2.5 / pc.n, {}

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The last numeric column of the draft."""
        return {"column": template_target(document)[0]}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "params": {"column": "y"}},
            rows((0, 0, 0), (0, 1, 0), (1, 2, 0), (1, 0, 0)),
            rows((0, 0, 2), (0, 1, 0), (1, 2, 0), (1, 0, 0)),
            rows((0, 0, 2), (0, 1, 2), (1, 2, 2), (1, 0, 2)), 2.5 / 4,
            "R all at 0, S all at 10 (U_a = ½); one y = 0 → 10: U_a = (n−1)³/(2n³), a move of "
            "0.289 of the derived bound Δ = 2.5/n (not attainable: the bound is conservative)",
            tightness=(0.5 - 27 / 128) / 0.625,
            unflaggable="Δ = 2.5/n is a proven but loose bound: the worst pair found moves U_a "
                        "by 0.46 of Δ at n = 4, so a noise scale of Δ/2 cannot be caught")


KIND = AvgEcdf()
