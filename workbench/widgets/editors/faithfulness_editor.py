"""Faithfulness editor: per column exact match or bin distance with a weight, α, must-match rules.

Stakeholders express the cost rule c(s, r) without code. The locked bins of every must-match
exception are shown per alternative (live); "Preview β_max" matches the proxy with the quick
synthetic sample by :func:`workbench.faithfulness.beta_max` and shows 1 − β_max against the
faithfulness criterion's threshold, with the share of rows matched at each cost level.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

import ipywidgets as widgets

from workbench.faithfulness import FaithfulnessCost
from workbench.specification import Configuration
from workbench.widgets.editors.base import EditorBase, heading, hidden, note, png_image
from workbench.widgets.editors.fields import error_html, float_or, message_widget, number
from workbench.widgets.editors.plots import cost_histogram_png
from workbench.widgets.model.lab import FaithfulnessPreview, ProxyLab
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session

MODES = ("exact", "distance")


def parse_must_match(text: Any) -> list[dict[str, Any]]:
    """``"mother_age = 37, gestation_week = 37"`` → must-match entries.

    >>> parse_must_match("mother_age = 37")
    [{'column': 'mother_age', 'value': 37}]
    """
    out = []
    for part in str(text).replace(";", ",").split(","):
        if not part.strip():
            continue
        column, sep, value = part.partition("=")
        if not sep or not column.strip():
            raise ValueError(f"write each exception as column = value, not {part.strip()!r}")
        out.append({"column": column.strip(), "value": number(value)})
    return out


def show_must_match(value: Any) -> str:
    """The inverse of :func:`parse_must_match`."""
    if not isinstance(value, list):
        return ""
    return ", ".join(f"{m.get('column')} = {m.get('value')}" for m in value if isinstance(m, dict))


class ColumnRule:
    """One column's rule: exact or distance, and the distance weight."""

    def __init__(self, editor: FaithfulnessEditor, column: str) -> None:
        self.column = column
        self.editor = editor
        self.mode = widgets.Dropdown(options=MODES, description=column,
                                     style={"description_width": "140px"})
        self.weight = widgets.FloatText(description="weight", layout=widgets.Layout(width="180px"))
        self.mode_field = editor.bind("faithfulness", self.mode, format=self._mode_of,
                                      write=self._set_mode)
        self.weight_field = editor.bind(f"faithfulness.distance.{column}", self.weight,
                                        parse=number, format=float_or(1.0))
        self.errors = {"weight": self.weight_field.error}
        self.widget = widgets.HBox([self.mode, self.weight, self.errors["weight"]])

    def _mode_of(self, section: Any) -> str:
        """'distance' when the column has a weight, else 'exact'."""
        if isinstance(section, dict) and self.column in section.get("distance", {}):
            return "distance"
        return "exact"

    def _set_mode(self, mode: str) -> None:
        """Move the column between the exact list and the distance weights."""
        column = self.column

        def fn(doc: dict[str, Any]) -> None:
            section = doc.setdefault("faithfulness", {})
            exact = [c for c in section.get("exact", []) if c != column]
            distance = {k: v for k, v in section.get("distance", {}).items() if k != column}
            if mode == "exact":
                exact.append(column)
                section["must_match"] = [m for m in section.get("must_match", [])
                                         if m.get("column") != column]
            else:
                distance[column] = 1
            section["exact"], section["distance"] = exact, distance

        self.editor.session.edit(fn, label=f"faithfulness of {column}: {mode}",
                                 paths=("faithfulness",))

    def update(self) -> None:
        """Hide the weight of exact columns."""
        hidden(self.weight, self.mode.value != "distance")


class FaithfulnessEditor(EditorBase):
    """The cost rule, its locked bins, and a β_max preview on the proxy."""

    title = "Faithfulness"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.alpha = widgets.FloatText(description="α")
        self.must_match = widgets.Text(description="must match", continuous_update=False,
                                       placeholder="column = value, …",
                                       layout=widgets.Layout(width="420px"))
        self.alpha_field = self.bind("faithfulness.alpha", self.alpha, parse=number,
                                     format=float_or(0.0))
        self.must_field = self.bind("faithfulness.must_match", self.must_match,
                                    parse=parse_must_match, format=show_must_match)
        self.errors = {"alpha": self.alpha_field.error, "must_match": self.must_field.error,
                       "section": message_widget()}
        self.locked = widgets.HTML()
        self.preview_button = widgets.Button(description="Preview β_max on the proxy",
                                             layout=widgets.Layout(width="240px"))
        self.preview = widgets.HTML()
        self.cost_plot = png_image()
        self.last_preview: FaithfulnessPreview | None = None
        self.preview_button.on_click(lambda _b: self.run_preview())
        self.columns: dict[str, ColumnRule] = {}
        self.rule_box = widgets.VBox()
        self._names: tuple[str, ...] = ()
        self._hash = ""
        self.widget = widgets.VBox([
            widgets.HTML(note(
                "A release row s may stand for a real row r when c(s, r) ≤ α: exact columns "
                "must be equal; distance columns add weight × |bin difference|."
            )),
            heading("Per column"),
            self.rule_box,
            self.alpha_field.box,
            self.must_field.box,
            self.errors["section"],
            self.locked,
            heading("Preview on the proxy"),
            self.preview_button,
            self.preview,
            self.cost_plot,
        ])
        self.refresh()

    def refresh(self, change: Change | None = None) -> None:
        """Resync when the faithfulness section or the columns changed."""
        new_hash = self.session.section_hash("faithfulness", "schema", "transformations")
        if change is not None and not change.reset and new_hash == self._hash:
            return
        self._hash = new_hash
        names = tuple(self.session.column_names())
        if names != self._names:
            self._names = names
            self.fields = [self.alpha_field, self.must_field]
            self.columns = {n: ColumnRule(self, n) for n in names}
            self.rule_box.children = [r.widget for r in self.columns.values()]
        else:
            super().refresh(change)
        for rule in self.columns.values():
            rule.update()
        self.errors["section"].value = error_html(
            self.session.errors_for("faithfulness", below=False)
            + self.session.errors_for("faithfulness.exact")
        )
        self._show_locked()
        if self.last_preview is not None:
            self.preview.value = self._preview_html(self.last_preview, stale=True)

    def refresh_preview(self) -> None:
        """A new preview configuration makes the last β_max stale."""
        self._show_locked()
        if self.last_preview is not None:
            self.preview.value = self._preview_html(self.last_preview, stale=True)

    def _show_locked(self) -> None:
        """Bins each must-match exception locks, per alternative of its column."""
        spec = self.session.spec
        if spec is None or not spec.faithfulness.must_match:
            self.locked.value = ""
            return
        base = self.lab.configuration(spec) if self.lab is not None else next(
            spec.configurations())
        lines = []
        for column, value in spec.faithfulness.must_match:
            for alt in spec.transform(column).alternatives:
                config = _with_transform(base, column, alt.name)
                table = spec.table_codec(config)
                cost = FaithfulnessCost.from_rule(spec.faithfulness, table)
                labels = cost.locked_labels(table).get(column, [])
                shown = ", ".join(labels) if labels else "nothing (value on an edge)"
                lines.append(f"{column} = {value:g} under <i>{html.escape(alt.name)}</i>: "
                             f"locks {html.escape(shown)}")
        self.locked.value = note("Must-match exceptions (last valid design):") + "<br>" + \
            "<br>".join(lines)

    def run_preview(self) -> FaithfulnessPreview | None:
        """β_max between the proxy and the quick sample under the last valid rule."""
        spec = self.session.spec
        if self.lab is None or spec is None:
            self.preview.value = note("No proxy or no valid design.")
            return None
        try:
            result = self.lab.faithfulness_preview(spec)
        except (PreviewError, ValueError) as exc:
            self.preview.value = error_html([str(exc)])
            return None
        self.last_preview = result
        self.preview.value = self._preview_html(result, stale=False)
        self.cost_plot.value = cost_histogram_png(result.levels, result.cost_shares, result.alpha)
        return result

    def _preview_html(self, result: FaithfulnessPreview, *, stale: bool) -> str:
        """β_max, 1 − β_max against the threshold, and whether the numbers are stale."""
        verdict = ""
        if result.threshold is not None:
            ok = result.error < result.threshold
            verdict = (f" — {'below' if ok else 'ABOVE'} the criterion's threshold "
                       f"{result.threshold:g}")
        text = (f"β_max = <b>{result.beta:.4f}</b>; 1 − β_max = <b>{result.error:.4f}</b>"
                f"{verdict} (n = {result.n:,}, α = {result.alpha:g})")
        if stale:
            text += "<br>" + note("The rule or the preview changed: press Preview again.")
        return text


def _with_transform(config: Configuration, column: str, alternative: str) -> Configuration:
    """The same configuration with one column's alternative replaced."""
    transforms = tuple((c, alternative if c == column else a) for c, a in config.transforms)
    return dataclasses.replace(config, transforms=transforms)

