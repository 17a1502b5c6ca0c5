"""Relative risk of a declared exposure–outcome pair (issue 36).

E(R, S) = |log RR(R) − log RR(S)|, RR = P(outcome | exposed)/P(outcome | not exposed), each
risk smoothed as (yes + c)/(rows + 2c). The DP release is R's 2×2 exposure × outcome table with
Laplace noise (Δ = 2 replace-one, 1 add/remove: :mod:`._association`); the ratio is computed
from the noisy table. A threshold T keeps the released RR within a factor e^T of R's, so
T < |log RR(R)| also keeps its direction.
"""

from __future__ import annotations

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds._association import PairKind


class RelativeRisk(PairKind):
    """|log RR(R̃) − log RR(S)| from the noisy 2×2 table; Δ of the table = 2."""

    name = "relative_risk"
    description = ("how far the release's relative risk of an outcome for the exposed is "
                   "from the real one, as |log RR(real) − log RR(release)|")
    position = 120

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return _pair_case(self.name)


def _pair_case(kind: str) -> AuditCase:
    """The 2×2 kinds' case: exposure g = b, outcome x = 2."""
    return AuditCase(
        {"kind": kind, "threshold": 0.5,
         "params": {"exposure": "g", "exposed": ["b"], "outcome": "x", "positive": [2]}},
        BASE, replaced(BASE, 0, (1, 2, 0)), BASE, 2.0,
        "record (a, x = 0) becomes (b, x = 2): the 2×2 table loses 1 in (unexposed, no) and "
        "gains 1 in (exposed, yes), L1 2 (Δ = 2)",
        mechanism="Laplace on the 2×2 exposure × outcome table (vector)")


KIND = RelativeRisk()
