"""Risk difference of a declared exposure–outcome pair (issue 36).

E(R, S) = |RD(R) − RD(S)|, RD = P(outcome | exposed) − P(outcome | not exposed), each risk
smoothed as (yes + c)/(rows + 2c): an absolute difference of rates, in [0, 2]. The DP release
is R's 2×2 table with Laplace noise (Δ = 2 replace-one, 1 add/remove: :mod:`._association`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.criteria.audit_case import AuditCase
from workbench.criteria.kinds._association import PairKind
from workbench.criteria.kinds.relative_risk import _pair_case


class RiskDifference(PairKind):
    """|RD(R̃) − RD(S)| from the noisy 2×2 table; Δ of the table = 2."""

    name = "risk_difference"
    description = ("how far the release's risk difference (exposed minus unexposed) of an "
                   "outcome is from the real one")
    position = 122

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """ε 0.05, threshold 0.02 (two points of risk)."""
        return {**super().template(criterion_id, document), "threshold": 0.02}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return _pair_case(self.name)


KIND = RiskDifference()
