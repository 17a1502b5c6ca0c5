"""Co-missingness: the largest gap between the share of rows missing both columns of a pair.

E(R, S) = max over pairs (a, b) of the chosen columns of
|#{r: r_a and r_b missing}/n − #{s: s_a and s_b missing}/n|
(:func:`workbench.criteria.missing_values.co_missing_error`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import MISSING, MISSING_BASE, AuditCase, rows
from workbench.criteria.kinds.base import CheckContext, Param, ShareKind
from workbench.criteria.missing_values import check_missing_columns, chosen, co_missing_error

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class CoMissingness(ShareKind):
    """Max pairwise co-missingness gap; Δ = 1/n, value in [0, 1]."""

    name = "co_missingness"
    description = ("the largest gap between the share of rows missing both columns of a pair "
                   "in R and in the release")
    params = MappingProxyType({
        "columns": Param(None, doc="columns whose pairs are compared (null: every column that "
                         "may be missing)", control="columns", label="columns"),
    })
    position = 111

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """At least two columns that may be missing."""
        check_missing_columns(ctx, params, path, least=2)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact max co-missingness gap."""
        return co_missing_error(ev.real, ev.synth, ev.table, chosen(ev.table, criterion.params))

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n: a replaced record enters or leaves each pair's 'both missing' count at most
        once (S fixed), so every gap, and their max, moves by ≤ 1/n."""
        return super().sensitivity(spec, table, criterion, pc)

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "bounds": [0, 1], "params": {}},
            rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 2, 2)), MISSING_BASE,
            rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 2, 2)), 1 / 4,
            "S = R; R has one row missing x and z, R′ fills its z: co-missing share 1/4 → 0",
            design=MISSING)


KIND = CoMissingness()
