"""The error of the mean of one numeric column: |mean(S) − mean(R)| with one Laplace draw."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria import distribution as dist
from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds._distribution import StatisticError, value_range

if TYPE_CHECKING:
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells


class MeanError(StatisticError):
    """Δ = (U − L)/n in the column's units."""

    name = "mean_error"
    description = ("the gap between the means of one numeric column in R and in the release, "
                   "in the column's units")

    def statistic(self, values: np.ndarray, counts: np.ndarray) -> float:
        return dist.mean_of(values, counts)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = (U − L)/n: replacing one record of R moves mean(R) by at most (U − L)/n (its
        value changes by at most the public range, n is public), S is fixed, and
        | |a − m′| − |a − m| | ≤ |m′ − m|."""
        return value_range(table, str(criterion.params["column"])) / pc.n, {}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 1.0, "params": {"column": "y"}},
            BASE, replaced(BASE, 0, (0, 0, 2)), BASE, 10 / 4,
            "S = R; R′ moves one y from 0 to 10: the mean moves by (U − L)/n (Δ = 10/4)")


KIND = MeanError()
