"""Schema and transformation editor: per column its type, bounds or domain, and alternatives.

Each alternative shows its domain size; a histogram shows the cleaned proxy under the
selected binning, so stakeholders see empty or tiny bins before they freeze the design.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from workbench.transform import BinsCodec
from workbench.widgets.editors.base import EditorBase, heading, hidden, note, png_image
from workbench.widgets.editors.fields import (
    Field,
    message_widget,
    number_list,
    show_list,
    value_list,
)
from workbench.widgets.editors.plots import histogram_png
from workbench.widgets.model.lab import ProxyLab, digest
from workbench.widgets.model.paths import MISSING
from workbench.widgets.model.session import Change, Session

COLUMN_TYPES = ("categorical", "ordinal", "integer", "continuous")
POLICIES = ("error", "drop", "clip", "to_missing")


def alternative_size(column: Mapping[str, Any], alternative: Mapping[str, Any]) -> int | None:
    """Number of codes an alternative makes (None when the draft cannot be built yet)."""
    kind = alternative.get("kind")
    try:
        if kind == "identity":
            return len(column.get("domain", []))
        if kind == "groups":
            return len(alternative.get("groups", {}))
        if kind == "bins":
            codec = BinsCodec(
                tuple(alternative["edges"]),
                integer=column.get("type") != "continuous",
                open_below=alternative.get("open_below", True),
                open_above=alternative.get("open_above", True),
                labels=tuple(alternative.get("labels", ())),
                clip=tuple(alternative["clip"]) if "clip" in alternative else None,
            )
            return codec.size
    except (ValueError, TypeError, KeyError):
        return None
    return None


class AlternativeRow:
    """One binning alternative: name, edges, open ends, domain size, remove button."""

    def __init__(self, editor: SchemaEditor, column: str, index: int) -> None:
        self.path = f"transformations.columns.{column}.alternatives[{index}]"
        self.column = column
        self.index = index
        alt = editor.session.get(self.path, {})
        self.kind = str(alt.get("kind", ""))
        self.name = widgets.Text(layout=widgets.Layout(width="160px"), continuous_update=False)
        self.edges = widgets.Text(layout=widgets.Layout(width="420px"), continuous_update=False,
                                  placeholder="edges, e.g. 18, 20, 25")
        self.open_below = widgets.Checkbox(description="open below", indent=False)
        self.open_above = widgets.Checkbox(description="open above", indent=False)
        self.size = widgets.HTML()
        self.remove = widgets.Button(description="remove", layout=widgets.Layout(width="80px"))
        fields = {
            "name": editor.bind(f"{self.path}.name", self.name),
            "edges": editor.bind(f"{self.path}.edges", self.edges, parse=number_list,
                                 format=show_list),
            "open_below": editor.bind(f"{self.path}.open_below", self.open_below,
                                      format=lambda v: True if v is MISSING else bool(v)),
            "open_above": editor.bind(f"{self.path}.open_above", self.open_above,
                                      format=lambda v: True if v is MISSING else bool(v)),
        }
        self.fields: dict[str, Field] = fields
        self.errors = {k: f.error for k, f in fields.items()}
        self.remove.on_click(lambda _b: editor.session.delete(self.path,
                                                              label="remove alternative"))
        bins = self.kind == "bins"
        row = [widgets.HTML(f"<code>{html.escape(self.kind)}</code>"), self.name]
        if bins:
            row += [self.edges, self.open_below, self.open_above]
        row += [self.size, self.remove]
        error_box = widgets.VBox([f.error for f in fields.values()])
        self.widget = widgets.VBox([widgets.HBox(row), error_box])

    def update_size(self, session: Session, schema_path: str) -> None:
        """Show how many codes this alternative makes."""
        size = alternative_size(session.get(schema_path, {}), session.get(self.path, {}))
        self.size.value = "size ?" if size is None else f"<b>{size}</b> codes"
        self.domain_size = size


class ColumnPanel:
    """Everything about one column: declaration, alternatives, coarse bins."""

    def __init__(self, editor: SchemaEditor, index: int, name: str) -> None:
        self.editor = editor
        self.name = name
        self.path = f"schema.columns[{index}]"
        self.transform_path = f"transformations.columns.{name}"
        self.type = widgets.Dropdown(options=COLUMN_TYPES, description="type")
        self.bounds = widgets.Text(description="bounds", continuous_update=False,
                                   placeholder="lower, upper")
        self.domain = widgets.Text(description="domain", continuous_update=False,
                                   layout=widgets.Layout(width="520px"))
        self.out_of_domain = widgets.Dropdown(options=POLICIES, description="out of domain",
                                             style={"description_width": "initial"})
        self.coarse = widgets.Text(description="coarse", continuous_update=False,
                                   placeholder="coarse edges for group-bys")
        fields = {
            "type": editor.bind(f"{self.path}.type", self.type, write=self._set_type),
            "bounds": editor.bind(f"{self.path}.bounds", self.bounds, parse=number_list,
                                  format=show_list),
            "domain": editor.bind(f"{self.path}.domain", self.domain, parse=value_list,
                                  format=show_list),
            "out_of_domain": editor.bind(f"{self.path}.out_of_domain", self.out_of_domain,
                                         format=lambda v: "error" if v is MISSING else v),
            "coarse": editor.bind(f"{self.transform_path}.coarse.edges", self.coarse,
                                  parse=number_list, format=show_list),
        }
        self.fields = fields
        self.errors = {k: f.error for k, f in fields.items()}
        self.errors["column"] = message_widget()
        self.alternatives = [
            AlternativeRow(editor, name, j)
            for j in range(len(editor.session.get(f"{self.transform_path}.alternatives", [])))
        ]
        self.add_alternative = widgets.Button(description="add alternative",
                                               layout=widgets.Layout(width="auto"))
        self.add_alternative.on_click(lambda _b: self._add_alternative())
        for alt in self.alternatives:
            alt.remove.disabled = len(self.alternatives) < 2
        self.widget = widgets.VBox([
            heading(f"Column {name}"),
            fields["type"].box,
            fields["bounds"].box,
            fields["domain"].box,
            fields["out_of_domain"].box,
            self.errors["column"],
            heading("Transformation alternatives"),
            *[a.widget for a in self.alternatives],
            self.add_alternative,
            fields["coarse"].box,
        ])

    def update(self) -> None:
        """Show bounds or domain by type, the sizes, and problems of the whole column."""
        ctype = self.editor.session.get(f"{self.path}.type", "")
        numeric = ctype in ("integer", "continuous")
        hidden(self.fields["bounds"].box, not numeric)
        hidden(self.fields["domain"].box, numeric)
        has_coarse = self.editor.session.get(f"{self.transform_path}.coarse", None) is not None
        hidden(self.fields["coarse"].box, not has_coarse)
        for alt in self.alternatives:
            alt.update_size(self.editor.session, self.path)
        session = self.editor.session
        messages = session.errors_for(self.path, below=False)
        messages += session.errors_for(f"{self.transform_path}.alternatives", below=False)
        messages += session.errors_for(self.transform_path, below=False)
        messages += session.errors_for(f"{self.transform_path}.coarse", below=False)
        from workbench.widgets.editors.fields import error_html

        self.errors["column"].value = error_html(messages)

    def _set_type(self, new_type: str) -> None:
        """Change the type, converting bounds ↔ domain where that is unambiguous."""
        index = int(self.path.split("[")[1].rstrip("]"))

        def fn(doc: dict[str, Any]) -> None:
            col = doc["schema"]["columns"][index]
            col["type"] = new_type
            if new_type in ("categorical", "ordinal") and "bounds" in col and "domain" not in col:
                lo, hi = col["bounds"]
                if float(lo).is_integer() and float(hi).is_integer() and hi - lo <= 1000:
                    del col["bounds"]
                    col["domain"] = list(range(int(lo), int(hi) + 1))
            elif new_type in ("integer", "continuous") and "domain" in col and "bounds" not in col:
                values = col["domain"]
                if values and all(isinstance(v, int | float) for v in values):
                    del col["domain"]
                    col["bounds"] = [min(values), max(values)]

        self.editor.session.edit(fn, label=f"type of {self.name}", paths=(f"{self.path}.type",))

    def _add_alternative(self) -> None:
        """Append a copy of the last alternative under a fresh name."""
        path = f"{self.transform_path}.alternatives"
        alts = self.editor.session.get(path, [])
        if not alts:
            return
        new = copy.deepcopy(alts[-1])
        names = {a.get("name") for a in alts}
        k = 2
        while f"{new.get('name', 'alt')}_{k}" in names:
            k += 1
        new["name"] = f"{new.get('name', 'alt')}_{k}"
        self.editor.session.apply(f"{path}[{len(alts)}]", new,
                                  label=f"add alternative to {self.name}")


class SchemaEditor(EditorBase):
    """Pick a column, edit its declaration and alternatives, see the proxy under each binning."""

    title = "Data & schema"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.column = widgets.Dropdown(description="column")
        self.hist_alternative = widgets.Dropdown(description="binning")
        self.histogram = png_image()
        self.hist_note = widgets.HTML()
        self.proxy_note = widgets.HTML()
        self.panel_box = widgets.VBox()
        self.panels: dict[str, ColumnPanel] = {}
        self._structure: Any = None
        self._hash = ""
        self._hist_key = ""
        self._names: list[str | None] = []
        self._updating = False
        self.column.observe(lambda _c: None if self._updating else self._show_column(),
                            names="value")
        self.hist_alternative.observe(lambda _c: self._draw_histogram(), names="value")
        self.widget = widgets.VBox([
            self.proxy_note,
            self.column,
            self.panel_box,
            heading("Proxy histogram under the selected binning"),
            self.hist_alternative,
            self.hist_note,
            self.histogram,
        ])
        self.refresh()

    def panel(self, name: str) -> ColumnPanel:
        """The panel of one column, built on first use (tests set its widgets' values)."""
        if name not in self.panels:
            index = self._names.index(name)
            self.panels[name] = ColumnPanel(self, index, name)
            self.panels[name].update()
        return self.panels[name]

    def _structure_of(self) -> Any:
        """What forces a rebuild: column names and, per column, the alternatives' kinds."""
        cols = self.session.get("schema.columns", [])
        names = [c.get("name") for c in cols if isinstance(c, Mapping)]
        alts = {
            n: [a.get("kind") for a in self.session.get(
                f"transformations.columns.{n}.alternatives", [])]
            for n in names
        }
        return digest(names, alts)

    def _rebuild(self) -> None:
        """Drop the column panels (after columns or alternatives were added or removed);
        panels are rebuilt when shown, so only the columns a user opens cost widgets."""
        self.fields = []
        self.panels = {}
        cols = self.session.get("schema.columns", [])
        self._names = [c.get("name") if isinstance(c, Mapping) else None for c in cols]
        names = [n for n in self._names if isinstance(n, str)]
        current = self.column.value if self.column.value in names else (names[0] if names else None)
        self._updating = True
        try:
            self.column.options = names
            self.column.value = current
        finally:
            self._updating = False

    def refresh(self, change: Change | None = None) -> None:
        """Rebuild or resync when the schema or transformations changed; redraw the histogram."""
        new_hash = self.session.section_hash("schema", "transformations", "constraints.raw")
        if change is not None and not change.reset and new_hash == self._hash:
            return
        self._hash = new_hash
        structure = self._structure_of()
        if structure != self._structure:
            self._structure = structure
            self._rebuild()
        else:
            super().refresh(change)
        for panel in self.panels.values():
            panel.update()
        self._show_column()
        self._proxy_summary()

    def _show_column(self) -> None:
        """Display the selected column's panel and its alternatives in the histogram picker."""
        name = self.column.value
        if name not in self._names:
            self.panel_box.children = ()
            return
        panel = self.panel(name)
        self.panel_box.children = (panel.widget,)
        alts = [a.name.value for a in panel.alternatives]
        current = self.hist_alternative.value
        self.hist_alternative.options = alts
        if alts:
            self.hist_alternative.value = current if current in alts else alts[0]
        self._draw_histogram()

    def _proxy_summary(self) -> None:
        """Rows in the proxy, and after cleaning under the last valid design."""
        if self.lab is None or self.session.spec is None:
            self.proxy_note.value = note("No proxy data loaded: histograms are unavailable.")
            return
        raw = len(self.lab.proxy)
        kept = len(self.lab.cleaned(self.session.spec))
        self.proxy_note.value = note(
            f"Public proxy: {raw:,} rows, {kept:,} after the raw cleaning rules "
            f"({(raw - kept) / max(raw, 1):.2%} removed)."
        )

    def _draw_histogram(self) -> None:
        """Proxy counts per bin of the selected column and alternative (last valid design)."""
        spec, column, alt = self.session.spec, self.column.value, self.hist_alternative.value
        if self.lab is None or spec is None or column is None or alt is None:
            self.hist_note.value = note("No histogram (no proxy or no valid design).")
            return
        try:
            codec_ok = alt in [a.name for a in spec.transform(column).alternatives]
        except KeyError:
            codec_ok = False
        if not codec_ok:
            self.hist_note.value = note(f"'{alt}' is not in the last valid design yet.")
            return
        key = self.lab.histogram_key(spec, column, alt)
        stale = "" if self.session.valid else " (draft invalid: last valid design shown)"
        if key == self._hist_key:
            return
        labels, counts = self.lab.histogram(spec, column, alt)
        self.histogram.value = histogram_png(labels, counts, f"{column} — {alt}")
        self._hist_key = key
        empty = int((counts == 0).sum())
        self.hist_note.value = note(
            f"{len(labels)} bins, {empty} empty, smallest non-empty count "
            f"{int(counts[counts > 0].min()) if (counts > 0).any() else 0}{stale}"
        )
        self.hist_counts = counts
