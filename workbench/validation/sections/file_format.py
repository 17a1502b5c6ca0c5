"""``schema.file_format``: how the data file spells missing values (declared, never guessed)."""

from __future__ import annotations

from workbench.transform.missing import FileFormat
from workbench.validation.sections.context import BuildContext

FIELD = "file_format"


def build(ctx: BuildContext) -> FileFormat:
    """The declared markers and separator rule; an undeclared section keeps pandas' defaults."""
    raw = ctx.doc["schema"].get("file_format")
    if raw is None:
        return FileFormat()
    return FileFormat(tuple(raw["missing_markers"]), bool(raw.get("skip_initial_space", False)),
                      declared=True)
