"""``face_privacy``: the ``min_count`` alternatives of the face-privacy projection."""

from __future__ import annotations

from workbench.validation.sections.context import BuildContext

FIELD = "min_counts"


def build(ctx: BuildContext) -> tuple[int, ...]:
    """The min_count values (shape checked by the schema: unique whole numbers 1..1000)."""
    return tuple(ctx.doc["face_privacy"]["min_count"])
