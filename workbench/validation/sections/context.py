"""The state every section builder shares: the document, the problems found, the built parts.

It is also the :class:`~workbench.criteria.kinds.base.CheckContext` the criterion kinds
validate against (columns, transformation alternatives, the other criteria's kinds).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from workbench.specification.errors import Problem
from workbench.transform import ColumnSpec


class ColumnTable(dict):
    """Column lookup where a non-string (a list or dict from a malformed spec) is simply unknown."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and dict.__contains__(self, key)


class BuildContext:
    """One validation run: walks a schema-valid document, records problems, keeps results."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.doc = document
        self.problems: list[Problem] = []
        self.columns: dict[str, ColumnSpec] = ColumnTable()
        #: Spec keyword -> the model object its section built (later sections read earlier ones).
        self.built: dict[str, Any] = {}

    def problem(self, path: str, message: str) -> None:
        """Record a problem at a JSON path."""
        self.problems.append(Problem(path, message))

    def unknown_column(self, path: str, name: Any) -> None:
        """Record an unknown column name, with the closest known one as a hint."""
        hint = difflib.get_close_matches(str(name), list(self.columns), n=1)
        extra = f" (did you mean {hint[0]!r}?)" if hint else ""
        self.problem(path, f"unknown column {str(name)!r}{extra}")

    # --- what criterion kinds may ask (CheckContext) ---------------------------------------
    def _transform(self, column: Any) -> Mapping[str, Any]:
        section = self.doc["transformations"]["columns"]
        return section.get(column, {}) if isinstance(column, str) else {}

    def alternatives(self, column: str) -> int:
        """How many transformation alternatives ``column`` declares (0 if none)."""
        return len(self._transform(column).get("alternatives", []))

    def has_coarse(self, column: str) -> bool:
        """Whether ``column`` declares a coarse binning."""
        return "coarse" in self._transform(column)

    @property
    def criterion_kinds(self) -> dict[str, str]:
        """Every criterion id of the document and its kind (the last one wins on duplicates)."""
        return {c["id"]: c["kind"] for c in self.doc["criteria"]}
