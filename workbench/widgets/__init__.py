"""Co-design widgets: edit a draft spec on public proxy data, with live readouts, then freeze it.

Three layers: ``model`` (pure Python: :class:`Session` holds the draft, validation errors per
JSON path, undo/redo and observers; :class:`ProxyLab` caches every proxy-derived quantity),
``editors`` (one ipywidgets panel per spec section) and ``dashboards`` (:class:`CoDesignApp`
and the Voilà review pages). The editors and the app are imported lazily, so
``from workbench.widgets import Session`` never loads ipywidgets. Nothing here may be given
confidential data.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from workbench.widgets.model.session import Change, Session

_LAZY = {
    "BudgetPlanner": "workbench.widgets.editors.budget_planner",
    "CoDesignApp": "workbench.widgets.dashboards.app",
    "ConstraintEditor": "workbench.widgets.editors.constraint_editor",
    "CriteriaEditor": "workbench.widgets.editors.criteria_editor",
    "ExportPanel": "workbench.widgets.editors.export_panel",
    "FaithfulnessEditor": "workbench.widgets.editors.faithfulness_editor",
    "PreviewPanel": "workbench.widgets.editors.preview_panel",
    "ProxyLab": "workbench.widgets.model.lab",
    "SchemaEditor": "workbench.widgets.editors.schema_editor",
}


def __getattr__(name: str) -> Any:
    """Import editors on first use (they need ipywidgets and matplotlib)."""
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'workbench.widgets' has no attribute {name!r}")


__all__ = ["Change", "Session", *sorted(_LAZY)]
