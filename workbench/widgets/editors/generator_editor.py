"""Generator editor: the family and its hyperparameters, each control made from the registry.

The family dropdown lists the registered families; switching is one undoable edit
(:func:`workbench.widgets.model.generator_choice.switched`). Each hyperparameter the family
declares (:class:`workbench.specification.params.Param`: default, constraint, ``control``) gets the
control of :mod:`workbench.widgets.editors.params`, bound to ``generator.search_space[g].<name>``
as a one-value list (the grid); unset shows the default. A hyperparameter with several
alternatives in the grid is edited as a JSON list. Values are checked by the spec validator
(the session validates every edit), whose messages show beside each field. Under the fields,
the criteria the family cannot serve (:func:`~workbench.widgets.model.generator_choice.unserved`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from workbench.widgets.editors.base import EditorBase, heading, note
from workbench.widgets.editors.fields import DELETE, error_html, message_widget, warning_html
from workbench.widgets.editors.params import param_widget
from workbench.widgets.model.generator_choice import (
    declared,
    family_names,
    family_words,
    switched,
    unserved,
)
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.paths import MISSING
from workbench.widgets.model.session import Change, Session


def _one(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Parse a control's value into the grid's one-value list (DELETE stays DELETE)."""
    def wrapped(value: Any) -> Any:
        parsed = parse(value)
        return DELETE if parsed is DELETE or parsed == [] else [parsed]  # none chosen: unset
    return wrapped


def _first(show: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Show a one-value grid list through the control's own formatter."""
    return lambda v: show(v[0] if isinstance(v, list) and len(v) == 1 else MISSING)


def _json_list(text: Any) -> Any:
    """Several alternatives typed as a JSON list (blank removes the hyperparameter)."""
    t = str(text).strip()
    if not t:
        return DELETE
    try:
        value = json.loads(t)
    except ValueError:
        raise ValueError("type a JSON list of alternatives, e.g. [2, 3]") from None
    if not isinstance(value, list) or not value:
        raise ValueError("type a JSON list of alternatives, e.g. [2, 3]")
    return value


class GeneratorEditor(EditorBase):
    """Family dropdown, its description, one control per declared hyperparameter, and hints."""

    title = "Generator"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.family = widgets.Dropdown(options=family_names(), description="family",
                                       layout=widgets.Layout(width="360px")
                                       ).add_class("wb-generator-family")
        self.grid = widgets.Dropdown(options=[("1", 0)], value=0, description="grid",
                                     layout=widgets.Layout(width="160px", display="none"))
        self.words = widgets.HTML().add_class("wb-generator-words")
        self.grid_error = message_widget()
        self.hints = widgets.HTML().add_class("wb-generator-hints")
        self.params_box = widgets.VBox().add_class("wb-generator-params")
        self.controls: dict[str, widgets.Widget] = {}
        self._structure: Any = None
        self._syncing = False
        self.family.observe(self._family_chosen, names="value")
        self.grid.observe(lambda _c: self._rebuild(force=True), names="value")
        self.widget = widgets.VBox([
            widgets.HTML(note(
                "The generator family fits a DP model of the data and samples the candidate "
                "release; its hyperparameters come from the family's own declaration. A family "
                "that cannot reproduce the columns a criterion reads together cannot pass it, "
                "whatever ε.")),
            widgets.HBox([self.family, self.grid]),
            self.words,
            self.grid_error,
            heading("Hyperparameters (blank: the declared default)"),
            self.params_box,
            self.hints,
        ])
        self.refresh()

    # --- edits -----------------------------------------------------------------------------
    def _family_chosen(self, change: dict[str, Any]) -> None:
        """Switch the draft's family (one undoable edit)."""
        if self._syncing or change["new"] == self.session.get("generator.family", None):
            return
        name = change["new"]
        self.session.edit(lambda doc: switched(doc, name), label=f"generator family {name}",
                          paths=("generator",))

    # --- refresh ---------------------------------------------------------------------------
    def refresh(self, change: Change | None = None) -> None:
        """Family, grid selector, one control per hyperparameter, messages and hints."""
        family = self.session.get("generator.family", "")
        self._syncing = True
        try:
            if family in self.family.options:
                self.family.value = family
        finally:
            self._syncing = False
        grids = self.session.get("generator.search_space", [])
        count = len(grids) if isinstance(grids, list) else 0
        options = [(str(i + 1), i) for i in range(max(count, 1))]
        if list(self.grid.options) != options:
            self.grid.options = options
        self.grid.layout.display = None if count > 1 else "none"
        self.words.value = note(family_words(str(family)))
        self._rebuild(force=change is None or change.reset)
        super().refresh(change)
        path = f"generator.search_space[{self.grid.value or 0}]"
        self.grid_error.value = error_html(
            self.session.errors_for("generator.family")
            + self.session.errors_for("generator.search_space", below=False)
            + self.session.errors_for(path, below=False))
        self.show_hints()

    def _rebuild(self, force: bool = False) -> None:
        """New controls when the family, the grid or a multi-valued hyperparameter changes."""
        family = str(self.session.get("generator.family", ""))
        g = self.grid.value or 0
        grid = self.session.get(f"generator.search_space[{g}]", {})
        grid = grid if isinstance(grid, dict) else {}
        several = tuple(sorted(k for k, v in grid.items() if isinstance(v, list) and len(v) > 1))
        structure = (family, g, several, tuple(self.session.column_names()))
        if structure == self._structure and not force:
            return
        self._structure = structure
        self.fields = []
        self.controls = {}
        rows = []
        for name, param in declared(family).items():
            path = f"generator.search_space[{g}].{name}"
            if name in several:
                widget = widgets.Text(description=name, continuous_update=False,
                                      layout=widgets.Layout(width="320px"))
                field = self.bind(path, widget, parse=_json_list,
                                  format=lambda v: "" if v is MISSING else json.dumps(v))
            else:
                made = param_widget(param, name, self.session.column_names)
                if made is None:
                    continue
                widget, options = made
                field = self.bind(path, widget, parse=_one(options.get("parse", lambda v: v)),
                                  format=_first(options.get("format", lambda v: v)),
                                  prefix_below=False)
            if hasattr(widget.style, "description_width"):
                widget.style.description_width = "160px"
            widget.add_class(f"wb-hp-{name}")
            self.controls[name] = widget
            rows.append(widgets.HBox([field.box, widgets.HTML(note(param.doc))]))
        self.params_box.children = rows

    def show_hints(self) -> None:
        """Criteria the chosen family cannot serve (for the last valid design)."""
        spec = self.session.spec
        hints = [] if spec is None else [h.message for h in unserved(spec)]
        self.hints.value = warning_html(hints) if hints else (
            "" if spec is None or not spec.criteria else
            note(f"The '{spec.generator.family}' family can reproduce what every "
                 "criterion reads (as far as its declaration says)."))
