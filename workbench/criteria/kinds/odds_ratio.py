"""Odds ratio of a declared exposure–outcome pair (issue 36).

E(R, S) = |log OR(R) − log OR(S)|, OR = (a + c)(d + c)/((b + c)(e + c)) of the 2×2 table
[exposed, unexposed] × [yes, no] smoothed by c. The DP release is R's 2×2 table with Laplace
noise (Δ = 2 replace-one, 1 add/remove: :mod:`._association`); the ratio is post-processing.
"""

from __future__ import annotations

from workbench.criteria.audit_case import AuditCase
from workbench.criteria.kinds._association import PairKind
from workbench.criteria.kinds.relative_risk import _pair_case


class OddsRatio(PairKind):
    """|log OR(R̃) − log OR(S)| from the noisy 2×2 table; Δ of the table = 2."""

    name = "odds_ratio"
    description = ("how far the release's odds ratio of an outcome for the exposed is from "
                   "the real one, as |log OR(real) − log OR(release)|")
    position = 121

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return _pair_case(self.name)


KIND = OddsRatio()
