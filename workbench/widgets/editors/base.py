"""What every editor shares: a session to observe, the proxy lab, bound fields, a root widget."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.widgets.editors.fields import Field
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.session import Change, Session


class EditorBase:
    """An editor observes the session and refreshes itself; ``widget`` is its root box."""

    title = ""

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        """Register with the session; subclasses build widgets, then call ``refresh``."""
        self.session = session
        self.lab = lab
        self.fields: list[Field] = []
        self.widget: widgets.Box = widgets.VBox()
        self.visible = True  # the app clears it while the editor's tab is not shown
        session.observe(self._on_change)

    def bind(self, path: str, widget: widgets.ValueWidget, **options: Any) -> Field:
        """A field bound to ``path`` and remembered for syncing."""
        field = Field(self.session, path, widget, **options)
        self.fields.append(field)
        return field

    def _on_change(self, change: Change) -> None:
        """Session observer: every change refreshes the editor."""
        self.refresh(change)

    def refresh(self, change: Change | None = None) -> None:
        """Re-read the draft (subclasses add their readouts)."""
        reset = change is None or change.reset
        for field in self.fields:
            field.sync(reset=reset)

    def show(self, visible: bool) -> None:
        """The editor's tab was shown or hidden; plots are drawn only while shown."""
        was = self.visible
        self.visible = visible
        if visible and not was:
            self.on_show()

    def on_show(self) -> None:
        """Bring anything skipped while hidden up to date (default: nothing)."""

    def refresh_preview(self) -> None:
        """The preview configuration changed: recompute proxy readouts (default: nothing)."""

    def close(self) -> None:
        """Stop observing the session."""
        self.session.unobserve(self._on_change)


def heading(text: str) -> widgets.HTML:
    """A small section heading."""
    return widgets.HTML(f"<b>{html.escape(text)}</b>")


def note(text: str) -> str:
    """Grey explanatory text (escaped)."""
    return f'<span style="color:#555;font-size:90%">{html.escape(text)}</span>'


def png_image() -> widgets.Image:
    """An image for matplotlib PNGs: natural size, hidden until something is drawn."""
    image = widgets.Image(format="png", layout=widgets.Layout(
        display="none", width="auto", max_width="100%", align_self="flex-start"))

    def toggle(change: dict[str, Any]) -> None:
        image.layout.display = None if change["new"] else "none"

    image.observe(toggle, names="value")
    return image


def hidden(widget: widgets.Widget, hide: bool) -> None:
    """Show or hide a widget without removing it from its box."""
    widget.layout.display = "none" if hide else None
