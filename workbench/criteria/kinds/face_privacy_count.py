"""Face privacy: release rows in cells seen once (or fewer than min_count times), on S alone.

It reads the release candidate only, so it needs no noise and no ε; it passes when the count
is at most the threshold (a threshold of 0 means "none allowed").
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.kinds.base import CriterionKind, Param
from workbench.criteria.kinds.tags import KindTags, Reads
from workbench.criteria.record_kinds import FACE_MEASURES, face_privacy_count
from workbench.criteria.result import CriterionResult
from workbench.specification.params import one_of

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion


class FacePrivacyCount(CriterionKind):
    """S-only count; no noise, no ε."""

    name = "face_privacy_count"
    description = ("release rows in cells that occur only once (or fewer than min_count "
                   "times), counted on the release alone")
    params = MappingProxyType({
        "measure": Param("unique_rows", one_of(*FACE_MEASURES), "what is counted",
                         control="choice", label="measure", choices=FACE_MEASURES),
    })
    # a count on the release alone: at most the threshold passes (0 means "none allowed")
    tags = KindTags(reads=Reads.S_ONLY, strict=False)
    position = 90

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """The count on S alone."""
        measure = str(criterion.params.get("measure", "unique_rows"))
        return float(face_privacy_count(ev.pc.synth, measure, ev.config.min_count))

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """No noise and no ε; passes when at most the threshold."""
        return self.result(criterion, self.exact(ev, criterion),
                           stage="loop" if ev.ctx.iteration is not None else "once",
                           details={"measure": str(criterion.params.get("measure", "unique_rows")),
                                    "min_count": ev.config.min_count})

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0, "epsilon": 0, "params": {"measure": "unique_rows"}},
            BASE, replaced(BASE, 0, (1, 1, 0)), BASE, 0.0,
            "computed on S alone, without noise and without ε: R′ must not change the value",
            noiseless=True)


KIND = FacePrivacyCount()
