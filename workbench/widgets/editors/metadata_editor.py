"""Metadata editor: title, owner, description, privacy unit and the dataset id of the draft.

Every field is bound to its JSON path, so the spec validator's messages (e.g. the dataset id's
form) appear beside it; one validator, no second one here. Beside the dataset id, what
:func:`workbench.widgets.model.metadata.dataset_problems` says: a missing id (``workbench
run`` needs it) or the id of a shipped example (its budget store would be shared).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from workbench.widgets.editors.base import EditorBase, note
from workbench.widgets.editors.fields import DELETE, message_widget, show_number, warning_html
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.metadata import dataset_problems
from workbench.widgets.model.session import Change, Session


def _text(value: Any) -> str:
    """A draft string for a text box (blank when unset)."""
    return "" if value is None else show_number(value)


def _optional(text: Any) -> Any:
    """Blank removes an optional key."""
    return DELETE if not str(text).strip() else str(text).strip()


class MetadataEditor(EditorBase):
    """Text fields for the datasheet's metadata and the dataset id, with their messages."""

    title = "Metadata"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        wide = widgets.Layout(width="720px")
        style = {"description_width": "120px"}
        self.title_box = widgets.Text(description="title", continuous_update=False,
                                      layout=wide, style=style).add_class("wb-meta-title")
        self.owner = widgets.Text(description="owner", continuous_update=False, layout=wide,
                                  style=style).add_class("wb-meta-owner")
        self.dataset = widgets.Text(description="dataset id", continuous_update=False,
                                    placeholder="e.g. my-registry-2024",
                                    layout=widgets.Layout(width="420px"),
                                    style=style).add_class("wb-meta-dataset")
        self.description = widgets.Textarea(description="description", continuous_update=False,
                                            layout=widgets.Layout(width="720px", height="80px"),
                                            style=style).add_class("wb-meta-description")
        self.privacy_unit = widgets.Text(description="privacy unit", continuous_update=False,
                                         layout=wide, style=style)
        self.dataset_note = message_widget()
        self.dataset_note.add_class("wb-meta-dataset-note")
        fields = [
            self.bind("metadata.title", self.title_box, parse=str.strip, format=_text),
            self.bind("metadata.owner", self.owner, parse=str.strip, format=_text),
            self.bind("metadata.dataset", self.dataset, parse=_optional, format=_text),
            self.bind("metadata.description", self.description, parse=str.strip, format=_text),
            self.bind("metadata.privacy_unit", self.privacy_unit, parse=_optional,
                      format=_text),
        ]
        self.widget = widgets.VBox([
            widgets.HTML(note(
                "What the datasheet says about the release. The dataset id names the "
                "confidential dataset: every run of every design with this id is charged to one "
                "budget store (earlier spend, --spend-again, the lifetime cap), so give each "
                "dataset its own id (lower-case letters, digits, '.', '_' and '-').")),
            *[f.box for f in fields[:2]],
            widgets.VBox([fields[2].box, self.dataset_note]),
            *[f.box for f in fields[3:]],
        ])
        self.refresh()

    def refresh(self, change: Change | None = None) -> None:
        """Re-read the fields; what the dataset id still lacks beside it."""
        super().refresh(change)
        problems = dataset_problems({"metadata": self.session.get("metadata", {})},
                                    self.session.source)
        invalid = self.session.errors_for("metadata.dataset")
        self.dataset_note.value = "" if invalid else warning_html(problems)
