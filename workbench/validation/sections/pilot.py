"""``pilot``: the DP pilot this design was made from (its FACTS file, SHA-256 and ε).

The lifetime cap must hold the pilot's ε and the run's ε_total together (checked on the whole
spec, in :mod:`workbench.validation.checks`); the run refuses a spec whose pilot the dataset's
budget store does not hold (``engine.guard.check_pilot``).
"""

from __future__ import annotations

from workbench.specification.own_data import PilotRef
from workbench.validation.sections.context import BuildContext

FIELD = "pilot"


def build(ctx: BuildContext) -> PilotRef | None:
    """The pilot reference (None when the spec names no pilot; old specs are unchanged)."""
    raw = ctx.doc.get("pilot")
    if raw is None:
        return None
    return PilotRef(str(raw["facts"]), str(raw["sha256"]), float(raw["epsilon"]),
                    float(raw.get("delta", 0.0)))
