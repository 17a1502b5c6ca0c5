"""The shared base of the distribution-error kinds of one numeric column (avg-ECDF, mean and
quantile errors), so each kind module only states its statistic and its Δ."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import distribution as dist
from workbench.criteria.audit_case import AuditCase, replaced, rows
from workbench.criteria.kinds.base import (
    CheckContext,
    CriterionKind,
    Param,
    join_path,
    numeric_column,
    template_target,
)
from workbench.specification.params import optional, whole_at_least

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells

COLUMN = Param(None, doc="the numeric column", control="column", label="column")


def value_range(table: TableCodec, column: str) -> float:
    """U − L of the column's public values (from the spec's codecs, never the data)."""
    numbers = table.codec(column).numbers()
    return float(np.max(numbers) - np.min(numbers))


class StatisticError(CriterionKind):
    """|stat(S) − stat(R)| of one numeric column, in the column's units; bounds [0, U − L]."""

    params = MappingProxyType({"column": COLUMN})
    position = 101

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """``column`` is numeric; the value lies in [0, U − L] of its declared bounds."""
        name = params.get("column")
        if not numeric_column(ctx, join_path(path, "params.column"), name):
            return None
        col = ctx.columns[name]
        lo, hi = col.bounds if col.bounds is not None else (min(col.domain), max(col.domain))
        if threshold <= 0:
            ctx.problem(join_path(path, "threshold"), "must be > 0 (in the column's units)")
        return (0.0, float(hi - lo))

    @abstractmethod
    def statistic(self, values: np.ndarray, counts: np.ndarray) -> float:
        """The statistic of a column from its counts on sorted values."""

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """|stat(S) − stat(R)| on the column's 1-way counts (values by the bin-to-number rule)."""
        values, real, synth = dist.sorted_counts(ev.pc, ev.table, str(criterion.params["column"]))
        return abs(self.statistic(values, synth) - self.statistic(values, real))

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The last numeric column of the draft."""
        return {name: (template_target(document)[0] if name == "column" else p.default)
                for name, p in self.params.items()}

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Threshold a twentieth of the column's range."""
        out = super().template(criterion_id, document)
        lo, hi = template_target(document)[1]
        return out | {"threshold": (hi - lo) / 20}


class QuantileError(StatisticError):
    """|q(S) − DP q(R)|: R's quantile released by the exponential mechanism over a public grid
    (utility −|#{r ≤ g} − q·n|, Δ = 1), then compared with S's quantile (post-processing)."""

    q = 0.5
    params = MappingProxyType({
        "column": COLUMN,
        "grid_points": Param(None, optional(whole_at_least(2)),
                             "candidates of the DP quantile (default: every public value)",
                             control="optional_number"),
    })
    tags = replace(StatisticError.tags,
                   noise_note="exponential mechanism on R's quantile over a public grid")

    def audit_case(self) -> AuditCase:
        """n = 20 with k = 20q values at y = 0, one at 5, the rest at 10; one y = 0 → 10 moves
        #{r ≤ 0} from qn to qn − 1 (score −1) and #{r ≤ 5} from qn + 1 to qn (score +1)."""
        k = round(20 * self.q)
        ys = [0] * k + [1] + [2] * (19 - k)
        real = rows(*[(i % 2, i % 3, y) for i, y in enumerate(ys)])
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "params": {"column": "y"}},
            real, replaced(real, 0, (0, 0, 2)), real, 1.0,
            f"n = 20, {k} of y at 0: one moves to 10; the scores at 0 and 5 move by −1 and +1 "
            "(L∞ Δ = 1 attained)",
            mechanism="exponential mechanism on R's quantile over the public grid")

    def statistic(self, values: np.ndarray, counts: np.ndarray) -> float:
        return dist.quantile_of(values, counts, self.q)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1 for the score −|#{r ≤ g} − q·n|: one replaced record leaves one value and
        enters another, so each count #{r ≤ g} moves by at most 1 and q·n (n public) not at
        all. The exponential mechanism is then ε-DP (McSherry & Talwar; here OpenDP's
        permute-and-flip, as private at the same ε)."""
        return 1.0, {"q": self.q}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """One ``ctx.exponential`` over the grid, then |q(S) − released q(R)|."""
        from workbench.criteria.evaluation_state import purpose

        values, real, synth = dist.sorted_counts(ev.pc, ev.table, str(criterion.params["column"]))
        grid = dist.public_grid(values, criterion.params.get("grid_points"))
        scores = dist.quantile_scores(values, real, grid, self.q)
        noisy = ev.ctx.exponential(scores, sensitivity=1.0, epsilon=criterion.epsilon,
                                   purpose=purpose(criterion))
        released = float(grid[int(noisy.value)])
        value = abs(self.statistic(values, synth) - released)
        return self.result(criterion, value, record=noisy.record,
                           details={"q": self.q, "grid_points": len(grid)})
