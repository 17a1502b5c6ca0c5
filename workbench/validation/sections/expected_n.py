"""``schema.expected_n``: the public estimate of the cleaned confidential data's size.

A number or a ``[low, high]`` range (from published totals, never from the confidential
data). Dry runs and feasibility floors rehearse at the low end by default: the faithfulness
floor grows as n shrinks, so the smaller registry is the one that counts (issue 15).
"""

from __future__ import annotations

from workbench.specification.model import ExpectedN
from workbench.validation.sections.context import BuildContext

FIELD = "expected_n"
PATH = "schema.expected_n"


def build(ctx: BuildContext) -> ExpectedN | None:
    """The estimate as an :class:`ExpectedN` (None when the spec does not declare one)."""
    raw = ctx.doc["schema"].get("expected_n")
    if raw is None:
        return None
    low, high = (raw, raw) if isinstance(raw, int) else (raw[0], raw[1])
    if low > high:
        ctx.problem(PATH, "a range must be [low, high] with low <= high")
        low, high = high, low
    return ExpectedN(low=int(low), high=int(high))
