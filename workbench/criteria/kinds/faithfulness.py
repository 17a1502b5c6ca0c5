"""Faithfulness (Hod & Canetti §3.5.1): the share of release rows with no faithful real match.

E(R, S) = 1 − β_max(R, S), with β_max the largest share of S matched one-to-one to rows of R
at cost ≤ α under the spec's cost rule (exact columns, bin distances, must-match exceptions);
computed as a max flow between distinct cells (:mod:`workbench.faithfulness`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds.base import Clique, ShareKind, pairs
from workbench.criteria.record_kinds import faithfulness_error_cells

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


def rule_cliques(spec: Spec, order: int = 2) -> list[Clique]:
    """Cliques the faithfulness cost rule needs (issue 15): a record matches within α only if
    its exact-match columns agree and its ordinal (distance) columns are close, so the joint of
    those columns decides β_max, not the distance columns' 2-ways alone. ``order`` 2: every
    pair of the rule's columns; 3: also each pair of ordinal columns with one other rule column
    (an exact one, or the third ordinal), the smallest cliques that tie a cell's neighbours
    (one ordinal step) to the columns that must match."""
    rule = spec.faithfulness
    names = [c for c in spec.column_names if c in rule.exact or c in rule.distance]
    out = pairs(names)
    if order >= 3:
        ordinal = [c for c in names if c in rule.distance]
        for a, b in pairs(ordinal):
            out += [(a, b, x) for x in names if x not in (a, b)]
    return out


class Faithfulness(ShareKind):
    """1 − β_max; Δ = 1/n, value in [0, 1]."""

    name = "faithfulness"
    description = ("the share of release rows that cannot be matched one-to-one to a real "
                   "row within the spec's faithfulness cost α (1 − β_max)")
    tags = replace(ShareKind.tags, workload_group="faithfulness")
    position = 60

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """Exact 1 − β_max(R, S) under the spec's cost rule, from the paired cell counts."""
        return faithfulness_error_cells(ev.spec, ev.table, ev.pc)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/n (Prop. 10): replacing one real row changes the maximum matching by at most
        one edge, so β_max moves by ≤ 1/n."""
        return super().sensitivity(spec, table, criterion, pc)

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The full joint is too big to measure; the distance columns' 2-ways shape the
        matching."""
        return pairs([c for c in spec.column_names if c in spec.faithfulness.distance])

    def workload_marginals(self, spec: Spec, criterion: Criterion,
                           rule_order: int = 0) -> list[Clique]:
        """With ``rule_order`` 2 or 3, the cliques the cost rule derives
        (:func:`rule_cliques`) instead of the distance columns' 2-ways."""
        return rule_cliques(spec, rule_order) if rule_order else self.marginals(spec, criterion)

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5},
            BASE, replaced(BASE, 0, (1, 1, 0)), BASE, 1 / 4,
            "S = R, all rows distinct; R′'s new row matches no row of S: β_max 1 → 3/4 "
            "(Δ = 1/n)")


KIND = Faithfulness()
