"""The rate of a yes/no outcome in each level of a group column (issue 36), e.g. the NICU rate
by gestation group, which ``conditional_mean`` cannot write (it needs a numeric target).

E(R, S) = max over the group column's codes g (its domain under the configuration, missing
code excluded) of |rate_g(R) − rate_g(S)|, rate_g = (yes_g + c)/(rows_g + 2c). The DP release
is R's k×2 group × outcome table with Laplace noise; its cells come from the codec, never from
R, and are disjoint, so Δ = 2 (replace-one) or 1 (add/remove-one) (:mod:`._association`). The
rates are computed from the noisy table (negative counts clipped to 0), so a group with few
rows gets a rate pulled towards ½ by c and by noise alike in R̃: T must allow for that.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import associations as assoc
from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds._association import (
    OUTCOME,
    POSITIVE,
    SMOOTHING_PARAM,
    TableKind,
    smoothing,
)
from workbench.criteria.kinds.base import Clique, Param, join_path
from workbench.criteria.kinds.tags import KindTags

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.kinds.checks import CheckContext
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import CellCounts


class RateByGroup(TableKind):
    """max_g |rate_g(R̃) − rate_g(S)| from the noisy group × outcome table; Δ = 2."""

    name = "rate_by_group"
    description = ("the largest gap between the rate of a yes/no outcome in R and in the "
                   "release, within each level of a group column")
    params = MappingProxyType({
        "group": Param(None, doc="the group column (its codes under the configuration)",
                       control="column", label="group"),
        "outcome": OUTCOME,
        "positive": POSITIVE,
        "smoothing": SMOOTHING_PARAM,
    })
    tags = KindTags(clip=(0.0, 1.0), sigma_by_simulation=True,
                    noise_note=TableKind.tags.noise_note,
                    dp_n_bound=TableKind.tags.dp_n_bound)
    position = 123

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """The group is a known column other than the outcome."""
        group = params.get("group")
        if assoc.check_column(ctx, join_path(path, "group"), group) and (
                group == params.get("outcome")):
            ctx.problem(join_path(path, "group"), "the group and the outcome must be "
                        "different columns")

    def tables(self, ev: Evaluation, criterion: Criterion) -> tuple[np.ndarray, np.ndarray]:
        """R's and S's group × outcome counts over every code of the group column."""
        group = [str(criterion.params["group"])]
        keys = assoc.domain_keys(ev.table, group)
        return assoc.group_table(ev.pc, ev.table, group, str(criterion.params["outcome"]),
                                 criterion.params["positive"], keys)

    def workload_cell_share(self, table: TableCodec, criterion: Criterion,
                            proxy: CellCounts) -> float | None:
        """The smallest group (non-missing, held by the proxy) as a share of the proxy's rows
        with a group and an outcome: a rate's noise from a marginal at ε is about
        √2·Δ/(ε·n·p_g)."""
        group, outcome = str(criterion.params["group"]), str(criterion.params["outcome"])
        o = assoc.yes_codes(table, outcome, criterion.params["positive"])
        counts = proxy.marginal((group, outcome))[:, o >= 0].sum(axis=1)
        keys = assoc.domain_keys(table, [group])
        groups = counts[keys][counts[keys] > 0]
        return float(groups.min()) / float(groups.sum()) if groups.size else None

    def value(self, real: np.ndarray, synth: np.ndarray, criterion: Criterion) -> float:
        """The largest |rate gap| over the groups (0 without groups)."""
        c = smoothing(criterion)
        gaps = np.abs(assoc.rates(real, c) - assoc.rates(synth, c))
        return float(gaps.max()) if gaps.size else 0.0

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The rates are a function of the group × outcome 2-way marginal."""
        return [(str(criterion.params["group"]), str(criterion.params["outcome"]))]

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The draft's first column as the group, the last column with a domain as outcome."""
        cols = [c for c in document.get("schema", {}).get("columns", [])
                if isinstance(c, Mapping)]
        named = [c for c in cols if c.get("domain")]
        outcome = named[-1] if named else {"name": None, "domain": [None]}
        group = next((c.get("name") for c in cols if c.get("name") != outcome.get("name")),
                     None)
        return {"group": group, "outcome": outcome.get("name"),
                "positive": list(outcome["domain"][:1]), "smoothing": assoc.SMOOTHING}

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """ε 0.05, threshold 0.05 (five points of rate in every group)."""
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.05, "threshold": 0.05,
                "params": self.template_params(document)}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5,
             "params": {"group": "g", "outcome": "x", "positive": [2]}},
            BASE, replaced(BASE, 0, (1, 2, 0)), BASE, 2.0,
            "record (a, x = 0) becomes (b, x = 2): the g × outcome table loses 1 in (a, no) and "
            "gains 1 in (b, yes), L1 2 (Δ = 2)",
            mechanism="Laplace on the group × outcome table (vector)")


KIND = RateByGroup()
