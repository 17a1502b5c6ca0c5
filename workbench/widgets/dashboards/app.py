"""The co-design app: the guided flow, undo/redo, the preview configuration, one tab per editor.

``CoDesignApp(session).widget`` is the whole UI (display it in a notebook or Voilà).
:data:`TABS` is the ONE list of tabs: each names its title, the guided step it belongs to
(:data:`workbench.widgets.model.steps.STEPS`) and how to make its editor from the app. A new
panel is one line, e.g. ``TABS.append(TabEntry("Missing data", "data", lambda app:
MissingPanel(app.session, app.lab)))``; tabs are shown in step order, so it lands in its step.
:meth:`CoDesignApp.add_tab` adds one to a running app.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from workbench.widgets.dashboards.pages import slug, tabs
from workbench.widgets.editors.budget_planner import BudgetPlanner
from workbench.widgets.editors.constraint_editor import ConstraintEditor
from workbench.widgets.editors.criteria_editor import CriteriaEditor
from workbench.widgets.editors.export_panel import ExportPanel
from workbench.widgets.editors.faithfulness_editor import FaithfulnessEditor
from workbench.widgets.editors.feasibility import FeasibilityPanel
from workbench.widgets.editors.generator_editor import GeneratorEditor
from workbench.widgets.editors.metadata_editor import MetadataEditor
from workbench.widgets.editors.missingness_panel import MissingnessPanel
from workbench.widgets.editors.preview_panel import PreviewPanel
from workbench.widgets.editors.schema_editor import SchemaEditor
from workbench.widgets.model import forecast as forecasts
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session
from workbench.widgets.model.steps import STEPS


@dataclass(frozen=True)
class TabEntry:
    """One tab: its title, its guided step (a key of ``STEPS``), and its editor's factory."""

    title: str
    step: str
    make: Callable[[CoDesignApp], Any]
    attribute: str | None = None  # the app keeps the editor under this name, e.g. app.budget


#: Every tab of the app, in the order shown within a step; extend it with one line.
TABS: list[TabEntry] = [
    TabEntry("Data & schema", "data", lambda a: SchemaEditor(a.session, a.lab), "schema"),
    TabEntry("Metadata", "data", lambda a: MetadataEditor(a.session, a.lab), "metadata"),
    TabEntry("Constraints", "rules", lambda a: ConstraintEditor(a.session, a.lab),
             "constraints"),
    TabEntry("Faithfulness", "rules", lambda a: FaithfulnessEditor(a.session, a.lab),
             "faithfulness"),
    TabEntry("Criteria", "criteria", lambda a: CriteriaEditor(a.session, a.lab), "criteria"),
    TabEntry("Generator", "budget", lambda a: GeneratorEditor(a.session, a.lab), "generator"),
    TabEntry("Budget", "budget", lambda a: BudgetPlanner(a.session, a.lab), "budget"),
    TabEntry("Feasibility", "feasibility", lambda a: FeasibilityPanel(a.session, a.lab),
             "feasibility"),
    TabEntry("Export", "signoff", lambda a: ExportPanel(a.session, a.lab, path=a.export_path,
                                                        forecast=a.forecast_now), "export"),
]


def ordered_tabs(entries: list[TabEntry] | None = None) -> list[TabEntry]:
    """The tabs in step order (stable within a step)."""
    order = {s.key: i for i, s in enumerate(STEPS)}
    return sorted(TABS if entries is None else entries, key=lambda t: order.get(t.step, 99))


class CoDesignApp:
    """All editors on one session; ``widget`` is the root, ``tabs`` the Tab of editors."""

    def __init__(self, session: Session, lab: ProxyLab | None = None,
                 export_path: str = "release_spec.frozen.json") -> None:
        """Build every editor; ``lab`` defaults to a ProxyLab on ``session.proxy`` if any."""
        if lab is None and session.proxy is not None:
            lab = ProxyLab(session.proxy)
        self.session = session
        self.lab = lab
        self.export_path = export_path
        self.preview = PreviewPanel(session, lab) if lab is not None else None
        self.editors: list[Any] = []
        self.steps_of: list[str] = []
        entries = ordered_tabs()
        for entry in entries:
            editor = entry.make(self)
            if entry.attribute:
                setattr(self, entry.attribute, editor)
            self.editors.append(editor)
            self.steps_of.append(entry.step)
        self.tabs = tabs([t.title for t in entries], [e.widget for e in self.editors],
                         "codesign-tabs")
        self.tabs.selected_index = 0
        self.tabs.observe(lambda _c: self._tab_shown(), names="selected_index")
        self._tab_shown()
        if lab is not None:  # issue 16: missing values on the proxy (its own module)
            self.add_tab(MissingnessPanel.title, MissingnessPanel(session, lab), step="data")
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
        if session.draft.get("survey") is not None:  # issue 17: its own module, one hook
            from workbench.widgets.editors.survey_panel import SurveyPanel

            self.add_tab("Survey", SurveyPanel(session, lab), step="data")
        from workbench.widgets.dashboards.guided import GuidedFlow

        self.guide = GuidedFlow(self)
        self.widget = widgets.VBox([self.guide.summary_widget, *header, self.guide.widget,
                                    self.tabs]).add_class("wb-codesign-app")

    def add_tab(self, title: str, editor: Any, index: int | None = None,
                step: str = "feasibility") -> None:
        """Add a tab to a running app (``TABS`` is the way for built-in ones), after the tabs
        of its ``step`` unless ``index`` is given; ``editor`` has ``.widget`` and may have
        ``refresh_preview()``, called when the preview changes."""
        position = self._end_of_step(step) if index is None else index
        selected = self.editors[self.tabs.selected_index or 0]
        self.editors.insert(position, editor)
        self.steps_of.insert(position, step)
        titles = list(self.tabs.titles)
        titles.insert(position, title)
        editor.widget.add_class(f"wb-section-{slug(title)}")
        self.tabs.children = [e.widget for e in self.editors]
        self.tabs.titles = tuple(titles)
        self.tabs.selected_index = self.editors.index(selected)
        self._tab_shown()

    def _end_of_step(self, step: str) -> int:
        """Where a new tab of ``step`` goes: after that step's tabs, so tabs stay in step
        order (Back/Next walk them in the guided order)."""
        order = {s.key: i for i, s in enumerate(STEPS)}
        rank = order.get(step, len(order))
        return sum(1 for s in self.steps_of if order.get(s, len(order)) <= rank)

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

    def target(self) -> float:
        """The target P(all criteria pass) per attempt: the design assistant's box."""
        budget = getattr(self, "budget", None)
        return float(budget.design.target.value) if budget is not None else \
            forecasts.DEFAULT_TARGET

    def forecast_now(self) -> tuple[forecasts.Forecast | None, float]:
        """The forecast of the last valid design (the Feasibility tab's dry run of exactly this
        design, else the quick samples), and the target."""
        spec = self.session.spec
        feasibility = getattr(self, "feasibility", None)
        dry = None if feasibility is None else feasibility.result_for(spec)
        all_pass = None
        if self.lab is not None and spec is not None and spec.criteria and dry is None:
            try:
                all_pass = self.lab.all_pass(spec)
            except (PreviewError, ValueError, KeyError, ArithmeticError):
                all_pass = None
        return forecasts.current(spec, all_pass, dry), self.target()

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
