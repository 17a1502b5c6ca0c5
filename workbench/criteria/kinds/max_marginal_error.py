"""Criterion 1 (Hod & Canetti §4.5.1): the largest k-way marginal error, as a share of n.

E(R, S) = max over column subsets b (up to ``max_way`` columns) and cells v of
|q_{b←v}(R) − q_{b←v}(S)| / n, computed exactly on distinct cells
(:func:`workbench.criteria.marginals.max_marginal_error`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds.base import CheckContext, Clique, Param, ShareKind, pairs, whole_in
from workbench.criteria.marginals import marginal_errors_from_cells

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class MaxMarginalError(ShareKind):
    """Max k-way marginal error / n; Δ = 1/n, value in [0, 1]."""

    name = "max_marginal_error"
    description = ("the largest gap between a marginal count of R and of the release, over "
                   "every set of up to max_way columns, as a share of n")
    params = MappingProxyType({
        "max_way": Param(None, doc="largest number of columns in a marginal (null: all)",
                         control="number_or_null", label="max way", placeholder="all"),
    })
    position = 10
    tags = replace(ShareKind.tags, dp_n_bound=(
        "under n_policy dp the value is max |q(R) − q(S)|/n̂ with the public n̂ "
        "(|S| = n̂); replace-one moves each count q(R) by ≤ 1 (one cell −1, another "
        "+1 in each marginal), add/remove-one moves one count per marginal by 1, so "
        "each term, and their max, moves by ≤ 1/n̂: Δ = 1/n̂"))

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``max_way`` is null or 1..d."""
        whole_in(ctx, f"{path}.max_way", params.get("max_way"), allow_null=True)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact max marginal error / n, from R's and S's counts on their distinct cells."""
        pc = ev.pc
        return max(marginal_errors_from_cells(pc.cells, pc.real, pc.synth, pc.domain,
                                              max_way=criterion.params.get("max_way"),
                                              n=ev.n).values())

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n: a replaced record leaves one cell of each marginal and enters one, so each
        |q(R) − q(S)|/n moves by ≤ 1/n, and so does their max (Prop. 3). Under n_policy dp,
        n is the public n̂ (``dp_n_bound`` says why 1/n̂ holds for add/remove-one too)."""
        return super().sensitivity(spec, table, criterion, pc)

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """All k-way marginals are too many; the 2-ways carry most of the mass that can go
        wrong."""
        max_way = criterion.params.get("max_way")
        return [] if max_way is not None and int(max_way) < 2 else pairs(spec.column_names)

    def workload_marginals(self, spec: Spec, criterion: Criterion,
                           rule_order: int = 0) -> list[Clique]:
        """Every 1-way marginal as well as the 2-ways: the maximum runs over the 1-way cells
        too, so they are measured for it whatever the workload's ``one_way_share``."""
        return [(name,) for name in spec.column_names] + self.marginals(spec, criterion)

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "bounds": [0, 1], "params": {"max_way": None}},
            BASE, replaced(BASE, 0, (1, 2, 0)), BASE, 1 / 4,
            "S = R; R′ moves one record to another cell: E goes 0 → 1/n (Δ = 1/n)")


KIND = MaxMarginalError()
