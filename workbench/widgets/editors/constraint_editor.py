"""Constraint editor: add, edit and remove row rules, with the share of proxy rows each removes.

A rule's text is parsed on every change with :func:`workbench.constraints.parse`, so a syntax
error shows at once, with a caret under the position. Warnings: a rule removing more than
``max_share`` of the proxy, a rule removing every record, and two rules that contradict
(together remove every record; see :mod:`workbench.widgets.model.rule_checks`). Raw cleaning rules
are measured on the raw proxy; synthetic rules on the cleaned proxy (raw values) and, in bin
space, on the encoded proxy under the preview configuration.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.constraints import ConstraintSyntaxError, Predicate, parse
from workbench.transform import ColumnSpec
from workbench.widgets.editors.base import EditorBase, heading, note
from workbench.widgets.editors.fields import error_html, message_widget, warning_html
from workbench.widgets.model.lab import ProxyLab, digest
from workbench.widgets.model.paths import MISSING
from workbench.widgets.model.rule_checks import conflict_warnings
from workbench.widgets.model.session import Change, Session

SECTIONS = ("raw", "synthetic")
PARTIAL = ("keep", "reject")


def syntax_message(exc: ConstraintSyntaxError) -> str:
    """The parser's message with the rule and a caret under the failing position."""
    rule = exc.rule or ""
    caret = " " * max(0, min(exc.position, len(rule))) + "^"
    return f"syntax error: {exc}\n{rule}\n{caret}" if rule else f"syntax error: {exc}"


class RuleRow:
    """One rule: name, text, removed share, warnings, errors, remove button."""

    def __init__(self, editor: ConstraintEditor, section: str, index: int) -> None:
        self.editor = editor
        self.section = section
        self.path = f"constraints.{section}[{index}]"
        self.name = widgets.Text(layout=widgets.Layout(width="200px"), continuous_update=False)
        self.reject_if = widgets.Text(layout=widgets.Layout(width="520px"),
                                      continuous_update=False)
        self.share = widgets.HTML()
        self.warning = message_widget()
        self.error = message_widget()
        self.remove = widgets.Button(description="remove", layout=widgets.Layout(width="80px"))
        self.name_field = editor.bind(f"{self.path}.name", self.name)
        self.rule_field = editor.bind(f"{self.path}.reject_if", self.reject_if)
        self.remove.on_click(lambda _b: editor.session.delete(self.path, label="remove rule"))
        self.predicate: Predicate | None = None
        self.syntax_error: str | None = None
        self.removed_share: float | None = None
        self.binned_share: float | None = None
        self.widget = widgets.VBox([
            widgets.HBox([self.name, self.reject_if, self.share, self.remove]),
            self.name_field.error,
            self.error,
            self.warning,
        ])

    def parse_rule(self) -> None:
        """Parse the current text (the draft's, or the widget's while it is half-typed)."""
        text = self.reject_if.value
        try:
            self.predicate = parse(text)
            self.syntax_error = None
        except ConstraintSyntaxError as exc:
            self.predicate = None
            self.syntax_error = syntax_message(exc)

    def show_errors(self) -> None:
        """The syntax error at once, else the spec problems of the rule (e.g. unknown column)."""
        if self.syntax_error:
            body = html.escape(self.syntax_error).replace("\n", "<br>")
            self.error.value = (
                f'<pre style="color:#b00020;font-size:90%;margin:0">{body}</pre>'
            )
        else:
            self.error.value = error_html(self.editor.session.errors_for(self.path))


class ConstraintEditor(EditorBase):
    """Raw cleaning rules and synthetic rejection rules, each with proxy shares and warnings."""

    title = "Constraints"

    def __init__(self, session: Session, lab: ProxyLab | None = None,
                 max_share: float = 0.05) -> None:
        super().__init__(session, lab)
        self.max_share = widgets.BoundedFloatText(value=max_share, min=0.0, max=1.0, step=0.01,
                                                  description="warn above")
        self.partial_bins = widgets.Dropdown(options=PARTIAL, description="partial bins")
        self.max_sampling_rounds = widgets.IntText(description="max rounds")
        self.rows: dict[str, list[RuleRow]] = {s: [] for s in SECTIONS}
        self.new_name = {s: widgets.Text(placeholder="rule name", continuous_update=False,
                                         layout=widgets.Layout(width="200px"))
                         for s in SECTIONS}
        self.new_rule = {s: widgets.Text(placeholder="reject_if, e.g. birth_weight < 500",
                                         continuous_update=False,
                                         layout=widgets.Layout(width="520px"))
                         for s in SECTIONS}
        self.add_button = {s: widgets.Button(description="add rule",
                                             layout=widgets.Layout(width="auto"))
                           for s in SECTIONS}
        self.add_error = {s: message_widget() for s in SECTIONS}
        self.total = {s: widgets.HTML() for s in SECTIONS}
        self.section_box = {s: widgets.VBox() for s in SECTIONS}
        for s in SECTIONS:
            self.add_button[s].on_click(lambda _b, s=s: self.add_rule(s))
        self.max_share.observe(lambda _c: self._update_rows(), names="value")
        self._settings_fields = [
            self.bind("constraints.partial_bins", self.partial_bins,
                      format=lambda v: "keep" if v is MISSING else v),
            self.bind("constraints.max_sampling_rounds", self.max_sampling_rounds,
                      format=lambda v: 20 if v is MISSING else v),
        ]
        self._structure: Any = None
        self._hash = ""
        self._conflicts: dict[str, tuple[str, dict[str, list[str]]]] = {}
        parts: list[widgets.Widget] = [
            widgets.HTML(note(
                "Rules describe records to REJECT. Raw rules clean the original data; "
                "synthetic rules reject generated records (evaluated on bins)."
            )),
            self.max_share,
        ]
        for s, title in zip(SECTIONS, ("Raw cleaning rules", "Synthetic rejection rules"),
                            strict=True):
            parts += [
                heading(title),
                self.total[s],
                self.section_box[s],
                widgets.HBox([self.new_name[s], self.new_rule[s], self.add_button[s]]),
                self.add_error[s],
            ]
        parts += [heading("Sampling with rules"), *(f.box for f in self._settings_fields)]
        self.widget = widgets.VBox(parts)
        self.refresh()

    # --- edits -----------------------------------------------------------------------------
    def add_rule(self, section: str) -> bool:
        """Append the rule typed in the add boxes; refuses an empty name or a syntax error."""
        name, text = self.new_name[section].value.strip(), self.new_rule[section].value.strip()
        if not name or not text:
            self.add_error[section].value = error_html(["give the rule a name and a text"])
            return False
        try:
            parse(text)
        except ConstraintSyntaxError as exc:
            self.add_error[section].value = error_html([syntax_message(exc)])
            return False
        self.add_error[section].value = ""
        rules = self.session.get(f"constraints.{section}", [])
        self.session.apply(f"constraints.{section}[{len(rules)}]",
                           {"name": name, "reject_if": text}, label=f"add rule {name}")
        self.new_name[section].value = ""
        self.new_rule[section].value = ""
        return True

    # --- refresh ---------------------------------------------------------------------------
    def refresh(self, change: Change | None = None) -> None:
        """Rebuild on added/removed rules, resync texts, recompute shares and warnings."""
        new_hash = self.session.section_hash("constraints", "schema")
        if change is not None and not change.reset and new_hash == self._hash:
            return
        self._hash = new_hash
        structure = tuple(len(self.session.get(f"constraints.{s}", [])) for s in SECTIONS)
        if structure != self._structure:
            self._structure = structure
            self._rebuild()
        else:
            super().refresh(change)
        self._update_rows()

    def refresh_preview(self) -> None:
        """Binned shares depend on the preview configuration."""
        self._update_rows()

    def _rebuild(self) -> None:
        """Recreate the rule rows of both sections."""
        self.fields = list(self._settings_fields)
        for s in SECTIONS:
            count = len(self.session.get(f"constraints.{s}", []))
            self.rows[s] = [RuleRow(self, s, i) for i in range(count)]
            self.section_box[s].children = [r.widget for r in self.rows[s]]

    def _columns(self) -> dict[str, ColumnSpec]:
        """Declared columns of the last valid design (for the contradiction checks)."""
        spec = self.session.spec
        return {} if spec is None else {c.name: c for c in spec.columns}

    def _update_rows(self) -> None:
        """Parse every rule, measure its share on the proxy and collect warnings."""
        columns = self._columns()
        for s in SECTIONS:
            for row in self.rows[s]:
                row.parse_rule()
                row.show_errors()
                self._measure(row, s)
            conflicts = self._section_conflicts(s, columns)
            limit = float(self.max_share.value)
            for row in self.rows[s]:
                warnings = list(conflicts.get(row.name.value, []))
                if row.removed_share is not None and row.removed_share > limit:
                    warnings.insert(0, f"removes {row.removed_share:.2%} of the proxy, more than "
                                       f"{limit:.2%}")
                row.warnings = warnings
                row.warning.value = warning_html(warnings)
            self._section_total(s)

    def _measure(self, row: RuleRow, section: str) -> None:
        """Shares a parsed rule removes from the proxy (unknown columns give no share)."""
        row.removed_share = row.binned_share = None
        spec = self.session.spec
        if row.predicate is None or self.lab is None or spec is None:
            row.share.value = ""
            return
        if not row.predicate.columns <= set(spec.column_names):
            row.share.value = note("unknown column")
            return
        try:
            if section == "raw":
                row.removed_share = self.lab.share(row.predicate)
                row.share.value = f"removes <b>{row.removed_share:.2%}</b> of the raw proxy"
            else:
                row.removed_share = self.lab.share(row.predicate, cleaned_for=spec)
                row.binned_share = self.lab.binned_share(spec, row.predicate)
                row.share.value = (f"removes <b>{row.removed_share:.2%}</b> of the cleaned proxy"
                                   f" ({row.binned_share:.2%} in bins)")
        except (ValueError, KeyError) as exc:
            row.share.value = error_html([str(exc)])

    def _section_conflicts(self, section: str, columns: dict[str, ColumnSpec]) -> dict[str, Any]:
        """Contradiction warnings for a section, cached on its rule texts and the schema."""
        rules = [(r.name.value, r.predicate) for r in self.rows[section] if r.predicate]
        key = digest([(n, p.text) for n, p in rules], sorted(columns), self.session.section_hash(
            "schema"))
        cached = self._conflicts.get(section)
        if cached is not None and cached[0] == key:
            return cached[1]
        result = conflict_warnings(rules, columns) if columns else {}
        self._conflicts[section] = (key, result)
        return result

    def _section_total(self, section: str) -> None:
        """For raw rules: the share removed by all of them together (the cleaning loss)."""
        spec = self.session.spec
        if section != "raw" or self.lab is None or spec is None:
            self.total[section].value = ""
            return
        raw, kept = len(self.lab.proxy), len(self.lab.cleaned(spec))
        self.total[section].value = note(
            f"All raw rules and domain policies of the last valid design remove "
            f"{(raw - kept) / max(raw, 1):.2%} of the proxy ({raw - kept:,} of {raw:,} rows)."
        )
