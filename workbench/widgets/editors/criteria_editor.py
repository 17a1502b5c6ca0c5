"""Criteria editor: add or remove criteria of each kind, edit them, and watch live readouts.

Per criterion: threshold, ε, [L, U] where the kind takes them, and the kind's parameters
(λ and p of the relative 1-way error, target and group-by of a conditional mean, …), each
shown with the control its kind declares (:mod:`workbench.criteria.kinds`), so a registered
kind needs no edit here. The readouts (Δ, σ, T′, the value on the proxy, P(false pass),
P(false fail)) come from :meth:`ProxyLab.readouts`, i.e. from the engine's sensitivity code
and ``laplace_sigma``; beside each threshold, its feasibility floor at the expected n
(:mod:`workbench.widgets.editors.criteria_floors`).
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.criteria import kinds
from workbench.criteria.kinds.base import CriterionKind
from workbench.criteria.kinds.tags import Reads
from workbench.dryrun.floors import Floor
from workbench.widgets.editors.base import EditorBase, heading, note
from workbench.widgets.editors.criteria_floors import FloorsBar, floor_html
from workbench.widgets.editors.criteria_readouts import readout_html
from workbench.widgets.editors.fields import (
    DELETE,
    Field,
    error_html,
    float_or,
    message_widget,
    number,
    number_list,
    show_list,
    warning_html,
)
from workbench.widgets.editors.params import param_widget
from workbench.widgets.model.criteria_templates import fresh_id, kind_names, new_criterion
from workbench.widgets.model.floors import is_share
from workbench.widgets.model.generator_choice import hints_by_criterion
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.paths import MISSING
from workbench.widgets.model.readouts import Readout
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session

#: Attribute names for parameters whose spec names are not identifiers or are long.
ATTRIBUTE = {"lambda": "lam", "false_pass_probability": "p"}


def _kind(name: str) -> CriterionKind | None:
    """The registered kind, or None for a draft's unknown kind (its error shows on the row)."""
    try:
        return kinds.get(name)
    except ValueError:
        return None


class CriterionRow:
    """Widgets of one criterion; ``readout`` holds the exact numbers shown in ``readout_html``."""

    def __init__(self, editor: CriteriaEditor, index: int) -> None:
        self.editor = editor
        self.index = index
        self.path = f"criteria[{index}]"
        session = editor.session
        self.kind = str(session.get(f"{self.path}.kind", ""))
        kind = _kind(self.kind)
        self.id = widgets.Text(description="id", continuous_update=False,
                               layout=widgets.Layout(width="260px"))
        self.threshold = widgets.FloatText(description="threshold",
                                           layout=widgets.Layout(width="200px"))
        self.epsilon = widgets.FloatText(description="ε", layout=widgets.Layout(width="160px"),
                                         step=0.01)
        self.remove = widgets.Button(description="remove", layout=widgets.Layout(width="80px"))
        self.remove.on_click(lambda _b: session.delete(self.path, label=f"remove {self.id.value}"))
        self.readout: Readout | None = None
        self.readout_html = widgets.HTML().add_class("wb-readout")
        self.floor: Floor | None = None
        self.floor_html = widgets.HTML(layout=widgets.Layout(margin="0 12px 0 2px")
                                       ).add_class("wb-floor")  # beside the threshold
        self.row_error = message_widget()
        self.hint: str | None = None
        fields: dict[str, Field] = {
            "id": editor.bind(f"{self.path}.id", self.id),
            "threshold": editor.bind(f"{self.path}.threshold", self.threshold, parse=number,
                                     format=float_or(0.0)),
            "epsilon": editor.bind(f"{self.path}.epsilon", self.epsilon, parse=number,
                                   format=float_or(0.0)),
        }
        if kind is not None and kind.tags.bounds_editable:
            self.bounds = widgets.Text(description="[L, U]", continuous_update=False,
                                       layout=widgets.Layout(width="220px"))
            fields["bounds"] = editor.bind(f"{self.path}.bounds", self.bounds,
                                           parse=lambda t: DELETE if not str(t).strip()
                                           else number_list(t), format=show_list)
        if kind is not None and kind.tags.reads is Reads.R_ALONE:
            self.once = widgets.Checkbox(description="once (outside the loop)", indent=False)
            fields["once"] = editor.bind(f"{self.path}.once", self.once,
                                         format=lambda v: bool(v) if v is not MISSING else False)
        for name, widget, options in self._param_widgets(kind):
            attr = ATTRIBUTE.get(name, name)
            setattr(self, attr, widget)
            fields[attr] = editor.bind(f"{self.path}.params.{name}", widget, **options)
        self.fields = fields
        for f in fields.values():
            if hasattr(f.widget.style, "description_width"):
                f.widget.style.description_width = "initial"  # labels as wide as their text
        self.errors: dict[str, widgets.HTML] = {k: f.error for k, f in fields.items()}
        self.errors["row"] = self.row_error
        main = [fields[k].widget for k in ("id", "threshold", "epsilon", "bounds", "once")
                if k in fields]
        main.insert(2, self.floor_html)
        params = [f.widget for k, f in fields.items()
                  if k not in ("id", "threshold", "epsilon", "bounds", "once")]
        words = kind.description if kind is not None else "unknown kind"
        self.widget = widgets.VBox([
            widgets.HBox([widgets.HTML(
                f"<b>{index + 1}.</b> <code title='{html.escape(words)}'>"
                f"{html.escape(self.kind)}</code>"), *main, self.remove]),
            widgets.HBox(params, layout=widgets.Layout(flex_flow="row wrap")),
            widgets.VBox([f.error for f in fields.values()] + [self.row_error]),
            self.readout_html,
        ], layout=widgets.Layout(border="1px solid #ddd", padding="4px", margin="2px 0")
        ).add_class("wb-criterion-row")

    def _param_widgets(self, kind: CriterionKind | None
                       ) -> list[tuple[str, widgets.Widget, dict[str, Any]]]:
        """The kind's declared parameters: (spec name, widget, field options)."""
        if kind is None:
            return []
        out = []
        for name, param in kind.params.items():
            made = param_widget(param, name, self.editor.session.column_names)
            if made is not None:
                out.append((name, *made))
        return out

    def show_errors(self, hint: str | None = None) -> None:
        """Problems of the whole criterion (those of single fields show beside them), and the
        hint when the generator family cannot serve it."""
        session = self.editor.session
        own = session.errors_for(self.path, below=False)
        own += session.errors_for(f"{self.path}.params", below=False)
        self.hint = hint
        self.row_error.value = error_html(own) + (warning_html([hint]) if hint else "")

    def show_readout(self, readout: Readout | None, stale: bool) -> None:
        """Render the readout."""
        self.readout = readout
        self.readout_html.value = readout_html(readout, stale)

    def show_floor(self, floor: Floor | None, n: int, threshold: float | None,
                   stale: bool) -> None:
        """Render the feasibility floor beside the threshold (with the table's flag)."""
        self.floor = floor
        self.floor_html.value = floor_html(floor, n, share=is_share(self.kind),
                                           threshold=threshold, stale=stale)


class CriteriaEditor(EditorBase):
    """All criteria, an add box, and live readouts on the proxy."""

    title = "Criteria"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.new_kind = widgets.Dropdown(options=kind_names(), description="kind")
        self.new_id = widgets.Text(description="id", placeholder="(automatic)",
                                   continuous_update=False)
        self.add_button = widgets.Button(description="add criterion",
                                         layout=widgets.Layout(width="auto"))
        self.add_button.on_click(lambda _b: self.add_criterion())
        self.message = message_widget()
        self.rows: list[CriterionRow] = []
        self.rows_box = widgets.VBox()
        self.readouts: dict[str, Readout] = {}
        self._structure: Any = None
        self._hash = ""
        self._readout_key: Any = None
        self._generation = 0
        self.floors_bar = FloorsBar(session)
        self._floors_due = True
        self.widget = widgets.VBox([
            widgets.HTML(note(
                "A criterion passes when its DP value is below its threshold. Readouts use the "
                "cleaned proxy as R and several quick synthetic samples as S (their number and "
                "seed are in the preview configuration above)."
            )),
            self.message,
            self.floors_bar.widget,
            self.rows_box,
            heading("Add a criterion"),
            widgets.HBox([self.new_kind, self.new_id, self.add_button]),
        ])
        self.refresh()

    def row(self, criterion_id: str) -> CriterionRow:
        """The row of a criterion by id."""
        for r in self.rows:
            if r.id.value == criterion_id:
                return r
        raise KeyError(f"no criterion {criterion_id!r}")

    def add_criterion(self) -> bool:
        """Append a new criterion of the selected kind."""
        draft = self.session.draft
        cid = self.new_id.value.strip() or fresh_id(self.new_kind.value, draft)
        crit = new_criterion(self.new_kind.value, cid, draft)
        n = len(draft.get("criteria", []))
        valid = self.session.apply(f"criteria[{n}]", crit, label=f"add criterion {cid}")
        self.new_id.value = ""
        return valid

    def refresh(self, change: Change | None = None) -> None:
        """Rebuild on added/removed/renamed criteria, resync, then update the readouts."""
        self.floors_bar.sync(reset=change is None or change.reset)
        if tuple(self.new_kind.options) != kind_names():  # a kind registered since
            self.new_kind.options = kind_names()
        new_hash = self.session.section_hash("criteria", "schema.columns")
        if change is None or change.reset or new_hash != self._hash:
            self._hash = new_hash
            crits = self.session.get("criteria", [])
            structure = (tuple((c.get("id"), c.get("kind")) for c in crits if isinstance(c, dict)),
                         tuple(self.session.column_names()))  # the column pickers
            if structure != self._structure or len(structure[0]) != len(crits):
                self._structure = structure
                self.fields = []
                self.rows = [CriterionRow(self, i) for i in range(len(crits))]
                self._generation += 1
                self.rows_box.children = [r.widget for r in self.rows]
            else:
                super().refresh(change)
        hints = hints_by_criterion(self.session.spec if self.session.valid else None)
        for r in self.rows:
            r.show_errors(hints.get(r.id.value))
        self.update_readouts()

    def refresh_preview(self) -> None:
        """Recompute readouts for a new preview configuration."""
        self._readout_key = None
        self.update_readouts()

    def update_readouts(self) -> None:
        """Readouts of the last valid design, shown per row (marked stale if the draft is not)."""
        spec = self.session.spec
        key = (None if spec is None else spec.sha256, self.session.valid, self._generation)
        if key == self._readout_key:
            return
        self._readout_key = key
        self.message.value = ""
        self.readouts = {}
        if self.lab is not None and spec is not None:
            try:
                self.readouts = self.lab.readouts(spec)
            except (PreviewError, ValueError, KeyError, ArithmeticError) as exc:
                self.message.value = error_html([f"readouts unavailable: {exc}"])
        elif self.lab is None:
            self.message.value = note("No proxy loaded: readouts are unavailable.")
        stale = not self.session.valid
        for r in self.rows:
            r.show_readout(self.readouts.get(r.id.value), stale)
        self._floors_due = True
        self.update_floors()

    def update_floors(self) -> None:
        """Floors of the last valid design beside each threshold; computed only while the tab
        is shown (``on_show`` catches up), cached by the lab."""
        if not self.visible:
            return
        self._floors_due = False
        spec = self.session.spec
        table = self.floors_bar.update(spec, self.lab)
        floors = {} if table is None else table.by_id()
        thresholds = {} if spec is None else {c.id: c.threshold for c in spec.criteria}
        for r in self.rows:
            cid = r.id.value
            r.show_floor(floors.get(cid), 0 if table is None else table.n, thresholds.get(cid),
                         not self.session.valid)

    def on_show(self) -> None:
        """The tab is shown: bring the floors up to date."""
        if self._floors_due:
            self.update_floors()
