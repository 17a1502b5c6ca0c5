"""``metadata``: what the datasheet says about the release (no semantic checks beyond shape)."""

from __future__ import annotations

from workbench.specification.model import Metadata
from workbench.validation.sections.context import BuildContext

FIELD = "metadata"


def build(ctx: BuildContext) -> Metadata:
    """The metadata section as a :class:`Metadata`."""
    raw = ctx.doc["metadata"]
    return Metadata(
        title=raw["title"],
        owner=raw["owner"],
        description=raw["description"],
        intended_uses=tuple(raw.get("intended_uses", ())),
        unintended_uses=tuple(raw.get("unintended_uses", ())),
        associations=tuple(dict(a) for a in raw.get("associations", ())),
        privacy_unit=raw.get("privacy_unit", "one record"),
        n_policy=raw.get("n_policy", ""),
        n_epsilon=raw.get("n_epsilon"),
        contact=raw.get("contact", ""),
        dataset=raw.get("dataset"),
    )
