"""The mean (or max) total-variation distance between the k-way marginals of R and the release.

E(R, S) = aggregate over all ``way``-column subsets b of ½ Σ_v |p_R(b←v) − p_S(b←v)|
(:func:`workbench.criteria.marginal_kinds.tv_marginals_error`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds.base import CheckContext, Clique, Param, ShareKind, whole_in
from workbench.criteria.marginal_kinds import tv_marginals_error
from workbench.specification.params import one_of

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class TvMarginals(ShareKind):
    """Mean or max TV distance of the k-way marginals; Δ = 1/n, value in [0, 1]."""

    name = "tv_marginals"
    description = ("the mean (or largest) total-variation distance between the k-way "
                   "marginal distributions of R and of the release")
    params = MappingProxyType({
        "way": Param(2, doc="columns per marginal", control="whole_number", label="way"),
        "aggregate": Param("mean", one_of("mean", "max"), "mean or max over the marginals",
                           control="choice", label="aggregate", choices=("mean", "max")),
    })
    position = 80
    tags = replace(ShareKind.tags, dp_n_bound=(
        "under n_policy dp each distance is ½Σ_v |q_R(v) − q_S(v)|/n̂ with the public "
        "n̂ = |S|; replace-one moves two cells of a marginal by 1 (½·2/n̂ = 1/n̂), "
        "add/remove-one moves one cell by 1 (½·1/n̂), so each distance, their mean "
        "and their max move by ≤ 1/n̂: Δ = 1/n̂ (attained by replace-one only)"))

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``way`` is 1..d."""
        whole_in(ctx, f"{path}.way", params.get("way", 2), allow_null=False)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact aggregate TV distance on the paired cells."""
        params = criterion.params
        return tv_marginals_error(ev.pc, int(params.get("way", 2)),
                                  str(params.get("aggregate", "mean")))

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n: a replaced record moves two cells of each marginal by 1/n each, times ½;
        a mean or max of such distances keeps 1/n. Under n_policy dp n is the public n̂
        (``dp_n_bound``)."""
        return super().sensitivity(spec, table, criterion, pc)

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The criterion is defined on the k-way marginals themselves."""
        way = int(criterion.params.get("way", 2))
        if way <= 1:
            return []
        return [tuple(c) for c in itertools.combinations(spec.column_names, way)]

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "params": {"way": 2, "aggregate": "mean"}},
            BASE, replaced(BASE, 0, (1, 1, 1)), BASE, 1 / 4,
            "S = R; R′ changes all three columns of one record: every 2-way TV is 1/n "
            "(Δ = 1/n)")


KIND = TvMarginals()
