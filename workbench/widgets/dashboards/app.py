"""The co-design app: undo/redo, the preview configuration, and one tab per editor.

``CoDesignApp(session).widget`` is the whole UI (display it in a notebook or Voilà).
:meth:`CoDesignApp.add_tab` is the hook for later tabs (the feasibility dry run).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.widgets.dashboards.pages import slug, tabs
from workbench.widgets.editors.budget_planner import BudgetPlanner
from workbench.widgets.editors.constraint_editor import ConstraintEditor
from workbench.widgets.editors.criteria_editor import CriteriaEditor
from workbench.widgets.editors.export_panel import ExportPanel
from workbench.widgets.editors.faithfulness_editor import FaithfulnessEditor
from workbench.widgets.editors.feasibility import FeasibilityPanel
from workbench.widgets.editors.preview_panel import PreviewPanel
from workbench.widgets.editors.schema_editor import SchemaEditor
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.session import Change, Session

TAB_TITLES = ("Data & schema", "Constraints", "Faithfulness", "Criteria", "Budget",
              "Feasibility", "Export")


class CoDesignApp:
    """All editors on one session; ``widget`` is the root, ``tabs`` the Tab of editors."""

    def __init__(self, session: Session, lab: ProxyLab | None = None,
                 export_path: str = "release_spec.frozen.json") -> None:
        """Build every editor; ``lab`` defaults to a ProxyLab on ``session.proxy`` if any."""
        if lab is None and session.proxy is not None:
            lab = ProxyLab(session.proxy)
        self.session = session
        self.lab = lab
        self.preview = PreviewPanel(session, lab) if lab is not None else None
        self.schema = SchemaEditor(session, lab)
        self.constraints = ConstraintEditor(session, lab)
        self.faithfulness = FaithfulnessEditor(session, lab)
        self.criteria = CriteriaEditor(session, lab)
        self.budget = BudgetPlanner(session, lab)
        self.feasibility = FeasibilityPanel(session, lab)
        self.export = ExportPanel(session, lab, path=export_path)
        self.editors: list[Any] = [self.schema, self.constraints, self.faithfulness,
                                   self.criteria, self.budget, self.feasibility, self.export]
        self.tabs = tabs(TAB_TITLES, [e.widget for e in self.editors], "codesign-tabs")
        self.tabs.selected_index = 0
        self.tabs.observe(lambda _c: self._tab_shown(), names="selected_index")
        self._tab_shown()
        self.undo_button = widgets.Button(description="undo", layout=widgets.Layout(width="80px"))
        self.redo_button = widgets.Button(description="redo", layout=widgets.Layout(width="80px"))
        self.undo_button.on_click(lambda _b: session.undo())
        self.redo_button.on_click(lambda _b: session.redo())
        self.status = widgets.HTML()
        if self.preview is not None:
            self.preview.on_change(self._preview_changed)
        session.observe(self._on_change)
        self._on_change(None)
        header: list[widgets.Widget] = [
            widgets.HBox([self.undo_button, self.redo_button, self.status])
        ]
        if self.preview is not None:
            header.append(widgets.Accordion(children=[self.preview.widget],
                                            titles=("Preview configuration (proxy readouts)",)))
        self.widget = widgets.VBox([*header, self.tabs]).add_class("wb-codesign-app")
        if session.draft.get("survey") is not None:  # issue 17: its own module, one hook
            from workbench.widgets.editors.survey_panel import SurveyPanel

            self.add_tab("Survey", SurveyPanel(session, lab), index=len(self.editors) - 2)

    def add_tab(self, title: str, editor: Any, index: int | None = None) -> None:
        """Add a tab (e.g. Feasibility); ``editor`` has ``.widget`` and may have
        ``refresh_preview()``, called when the preview configuration changes."""
        position = len(self.editors) if index is None else index
        selected = self.editors[self.tabs.selected_index or 0]
        self.editors.insert(position, editor)
        titles = list(self.tabs.titles)
        titles.insert(position, title)
        editor.widget.add_class(f"wb-section-{slug(title)}")
        self.tabs.children = [e.widget for e in self.editors]
        self.tabs.titles = tuple(titles)
        self.tabs.selected_index = self.editors.index(selected)
        self._tab_shown()

    def _tab_shown(self) -> None:
        """Tell editors whether their tab is the one shown (hidden ones skip their plots)."""
        for i, editor in enumerate(self.editors):
            show = getattr(editor, "show", None)
            if show is not None:
                show(i == self.tabs.selected_index)

    def select(self, title: str) -> Any:
        """Show the tab with this title; returns its editor."""
        self.tabs.selected_index = list(self.tabs.titles).index(title)
        return self.tab(title)

    def tab(self, title: str) -> Any:
        """The editor shown under a tab title."""
        return self.editors[list(self.tabs.titles).index(title)]

    def _preview_changed(self) -> None:
        """Tell every editor that proxy readouts must be recomputed."""
        for editor in self.editors:
            refresh = getattr(editor, "refresh_preview", None)
            if refresh is not None:
                refresh()

    def _on_change(self, change: Change | None) -> None:
        """Undo/redo availability and the validity of the draft."""
        s = self.session
        self.undo_button.disabled = not s.can_undo
        self.redo_button.disabled = not s.can_redo
        if s.valid:
            self.status.value = '<span style="color:#1b7f3b">draft valid</span>'
        else:
            n = sum(len(m) for m in s.errors.values())
            first = next(iter(s.errors.items()))
            where = first[0] or "(root)"
            self.status.value = (
                f'<span style="color:#b00020">draft invalid: {n} problem{"s" if n != 1 else ""}'
                f" (first: {html.escape(where)}: {html.escape(first[1][0])}); the last valid "
                "design is kept</span>"
            )

    def _ipython_display_(self) -> None:
        """Display the root widget in a notebook."""
        from IPython.display import display

        display(self.widget)
