"""Starting points for a new criterion of each kind, filled from the draft's public schema.

Each kind declares its own template (:meth:`~workbench.criteria.kinds.base.CriterionKind.template`);
this module only asks the registry, so a registered kind is offered without a widget edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.criteria import kinds


def kind_names() -> tuple[str, ...]:
    """The registered criterion kinds, in menu order."""
    return kinds.names()


def new_criterion(kind: str, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
    """A valid-looking criterion of ``kind``; thresholds are placeholders to tune on the proxy."""
    if kind not in kinds.names():
        raise ValueError(f"unknown criterion kind {kind!r}")
    return kinds.get(kind).template(criterion_id, document)


def fresh_id(kind: str, document: Mapping[str, Any]) -> str:
    """``kind``, or ``kind_2``, ``kind_3``… when taken."""
    taken = {c.get("id") for c in document.get("criteria", []) if isinstance(c, Mapping)}
    if kind not in taken:
        return kind
    k = 2
    while f"{kind}_{k}" in taken:
        k += 1
    return f"{kind}_{k}"
