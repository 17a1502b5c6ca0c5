"""Maximal error of conditional means with the resize trick (Hod & Canetti §4.5.3, Alg. 2).

Ê(R, S) = max over group-by columns b (coarse bins) and values v, and the overall mean, of
|q^{m̂}_{a|b←v}(R) − q_{a|b←v}(S)|, R's mean resized to the public size m̂ from S
(:mod:`workbench.criteria.means`). The exact error (for public co-design) uses R's plain means.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import AuditCase, rows
from workbench.criteria.kinds.base import (
    CheckContext,
    Clique,
    CriterionKind,
    Param,
    is_number,
    join_path,
    numeric_column,
    template_target,
)
from workbench.criteria.kinds.tags import KindTags
from workbench.criteria.means import (
    conditional_mean_error,
    exact_conditional_mean_error,
    mean_groups,
)

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class ConditionalMean(CriterionKind):
    """Resized conditional means; Δ = (U − L)/min m̂; the stakeholder sets [L, U]."""

    name = "conditional_mean"
    description = ("the largest gap between a mean of the target column in R and in the "
                   "release, overall and within each group of the group-by columns")
    params = MappingProxyType({
        "target": Param(None, doc="the averaged numeric column", control="column",
                        label="target"),
        "group_by": Param((), doc="group-by columns (their coarse bins)", control="columns",
                          label="group by"),
        "include_overall": Param(True, doc="also compare the overall mean",
                                 control="checkbox", label="overall mean"),
        "resize_slack": Param(0.0, doc="T_abs in [0, 1), or the id of a max_marginal_error "
                              "criterion whose threshold it is", control="number_or_id",
                              label="resize slack"),
        "pad_value": Param(None, doc="w, the padding value in [L, U] (default: midpoint)"),
    })
    tags = KindTags(bounds_editable=True, workload_group="mean")
    position = 30

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """Bounds required; target numeric; group-bys known, not the target, configuration-
        independent; slack a share or a criterion 1 id; pad value within [L, U]."""
        ppath = join_path(path, "params")
        if bounds is None:
            ctx.problem(path, "'bounds' [L, U] are required for a conditional mean")
        target = params.get("target")
        numeric_column(ctx, join_path(ppath, "target"), target)
        gb = params.get("group_by", [])
        if not isinstance(gb, list):
            ctx.problem(join_path(ppath, "group_by"), "must be a list of columns")
            gb = []
        if not gb and not params.get("include_overall", True):
            ctx.problem(ppath, "needs group_by columns or include_overall")
        for j, g in enumerate(gb):
            gpath = f"{ppath}.group_by[{j}]"
            if g not in ctx.columns:
                ctx.unknown_column(gpath, g)
            elif g == target:
                ctx.problem(gpath, "the target cannot be its own group-by column")
            elif not ctx.has_coarse(g) and ctx.alternatives(g) > 1:
                ctx.problem(gpath, f"column {g!r} has several alternatives but no coarse "
                            "binning, so its groups would change with the configuration")
        slack = params.get("resize_slack", 0.0)
        spath = join_path(ppath, "resize_slack")
        if isinstance(slack, str):
            if ctx.criterion_kinds.get(slack) != "max_marginal_error":
                ctx.problem(spath, f"{slack!r} is not the id of a max_marginal_error criterion")
        elif not (is_number(slack) and 0 <= slack < 1):
            ctx.problem(spath, "must be a number in [0, 1) or the id of a max_marginal_error "
                        "criterion")
        pad = params.get("pad_value")
        if (pad is not None and bounds is not None
                and not (is_number(pad) and bounds[0] <= pad <= bounds[1])):
            ctx.problem(join_path(ppath, "pad_value"), "must lie within the criterion's bounds")
        return bounds

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """E(R, S) with R's plain group means (no resizing): for public diagnostics."""
        groups = mean_groups(ev.spec, ev.table, criterion, ev.pc)
        return exact_conditional_mean_error(
            groups, ev.pc, bool(criterion.params.get("include_overall", True)))

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = (U − L)/min m̂ (Props. 3, 7, 8).

        For any fixed randomness the m̂ averaged values of a resized mean (sampled, all, or
        padded with w ∈ [L, U]) differ between neighbours in at most one value, which moves
        by ≤ U − L, so each resized mean moves by ≤ (U − L)/m̂; random subsampling keeps ε-DP
        (Prop. 8); the max over groups takes the smallest m̂. The overall mean uses m̂ = n.
        """
        groups = mean_groups(spec, table, criterion, pc)
        return groups.sensitivity, {"m_hat_min": int(groups.m_hat.min()),
                                    "groups": len(groups.labels)}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Alg. 2 with public sizes m̂ from S and one draw of the subsample (``ctx.rng``)."""
        groups = mean_groups(ev.spec, ev.table, criterion, ev.pc)
        include = bool(criterion.params.get("include_overall", True))
        value = conditional_mean_error(groups, ev.pc, ev.ctx.rng, include)
        details = {"target": groups.target, "groups": len(groups.labels),
                   "m_hat_min": int(groups.m_hat.min()), "resize_slack": groups.slack,
                   "pad_value": groups.pad}
        return self.laplace_result(ev, criterion, value, groups.sensitivity,
                                   (groups.low, groups.high), details=details)

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """A mean of the target by a group-by column is a function of their 2-way marginal."""
        target = str(criterion.params["target"])
        return [(target, str(b)) for b in criterion.params.get("group_by", ()) if b != target]

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """The last numeric column by nothing yet; slack from criterion 1 when there is one."""
        target, bounds = template_target(document)
        marginals = next((c.get("id") for c in document.get("criteria", [])
                          if isinstance(c, Mapping) and c.get("kind") == "max_marginal_error"),
                         None)
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.01,
                "threshold": (bounds[1] - bounds[0]) / 20, "bounds": bounds,
                "params": {"target": target, "group_by": [], "include_overall": True,
                           "resize_slack": marginals if marginals else 0.0}}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "bounds": [0, 10],
             "params": {"target": "y", "group_by": ["g"], "include_overall": True,
                        "resize_slack": 0}},
            rows((0, 0, 0), (0, 1, 0), (1, 2, 1), (1, 0, 1)),
            rows((0, 0, 0), (0, 1, 2), (1, 2, 1), (1, 0, 1)),
            rows((0, 0, 2), (0, 1, 2), (1, 2, 1), (1, 0, 1)), 10 / 2,
            "group g = a has m̂ = 2 (slack 0); one of its y = 0 becomes 10: its mean 0 → 5 "
            "(Δ = (U − L)/min m̂ = 10/2)")


KIND = ConditionalMean()
