"""A widget bound to one JSON path of the draft, with its own inline error display.

Typing into the widget parses the text and applies it to the session; a session change
re-reads the draft into the widget. Messages shown next to the field are the local parse
error, if any, else the spec problems whose path is the field's path or lies below it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
from traitlets import TraitError

from workbench.widgets.model.paths import MISSING
from workbench.widgets.model.session import Session

Parse = Callable[[Any], Any]
Format = Callable[[Any], Any]

#: What a parser returns to remove an optional key instead of setting it.
DELETE: Any = object()


def error_html(messages: Sequence[str]) -> str:
    """Messages as red inline text (escaped); empty when there is nothing to say."""
    if not messages:
        return ""
    body = "<br>".join(html.escape(m) for m in messages)
    return f'<span style="color:#b00020;font-size:90%">{body}</span>'


def warning_html(messages: Sequence[str]) -> str:
    """Warnings as amber inline text (escaped)."""
    if not messages:
        return ""
    body = "<br>".join("⚠ " + html.escape(m) for m in messages)
    return f'<span style="color:#8a5a00;font-size:90%">{body}</span>'


def message_widget() -> widgets.HTML:
    """An HTML line for errors and warnings that takes no space while it is empty."""
    widget = widgets.HTML(layout=widgets.Layout(display="none"))

    def toggle(change: dict[str, Any]) -> None:
        widget.layout.display = None if change["new"] else "none"

    widget.observe(toggle, names="value")
    return widget


def same(a: Any, b: Any) -> bool:
    """Equality that treats 100 and 100.0 as the same draft value but not True and 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


class Field:
    """One editable value of the draft: ``widget`` (set its ``.value``) and ``error`` (HTML)."""

    def __init__(
        self,
        session: Session,
        path: str,
        widget: widgets.ValueWidget,
        *,
        parse: Parse | None = None,
        format: Format | None = None,
        write: Callable[[Any], None] | None = None,
        prefix_below: bool = True,
    ) -> None:
        """Bind ``widget`` to ``path``; ``write`` replaces the plain ``session.apply``;
        ``prefix_below=False`` shows messages of paths below this one without their sub-path
        (a one-value list's ``[0]``)."""
        self.session = session
        self.prefix_below = prefix_below
        self.path = path
        self.widget = widget
        self.parse = parse or (lambda v: v)
        self.format = format or (lambda v: v)
        self.write = write
        self.error = message_widget()
        self.box = widgets.HBox([widget, self.error])  # the widget with its message beside it
        self.local_error: str | None = None
        self._syncing = False
        widget.observe(self._changed, names="value")
        self.sync(reset=True)

    def _changed(self, change: dict[str, Any]) -> None:
        """Parse and apply what the user entered."""
        if self._syncing:
            return
        try:
            value = self.parse(change["new"])
        except ValueError as exc:
            self.local_error = str(exc)
            self.show_errors()
            return
        self.local_error = None
        if self.write is not None:
            self.write(value)
        elif value is DELETE:
            self.session.delete(self.path)
        elif not same(self.session.get(self.path), value):
            self.session.apply(self.path, value)
        self.show_errors()

    def set_widget(self, value: Any) -> None:
        """Show ``value`` without applying it back to the session."""
        if same(self.widget.value, value):
            return
        self._syncing = True
        try:
            self.widget.value = value
        except TraitError:
            pass  # e.g. a dropdown cannot show a malformed draft value; the error says why
        finally:
            self._syncing = False

    def sync(self, *, reset: bool = False) -> None:
        """Re-read the draft; keep half-typed unparseable text unless ``reset``."""
        if self.local_error is not None and not reset:
            self.show_errors()
            return
        self.local_error = None
        self.set_widget(self.format(self.session.get(self.path, MISSING)))
        self.show_errors()

    def show_errors(self) -> None:
        """Show the local parse error, else the spec problems at or below this path."""
        if self.local_error:
            messages = [self.local_error]
        elif self.prefix_below:
            messages = self.session.errors_for(self.path)
        else:
            messages = [m for where, ms in self.session.errors.items() for m in ms
                        if where == self.path or where.startswith((self.path + "[",
                                                                   self.path + "."))]
        self.error.value = error_html(messages)


# --- parsers and formatters for the usual spec values --------------------------------------
def number(text: Any) -> int | float:
    """A JSON number from text or a float widget; whole numbers stay ints."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = float(text)
    else:
        try:
            value = float(str(text).strip())
        except ValueError:
            raise ValueError(f"not a number: {str(text).strip()!r}") from None
    if not math.isfinite(value):
        raise ValueError("numbers must be finite")
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def optional_number(text: Any) -> Any:
    """A number, or DELETE for empty text (the spec's default then applies)."""
    if str(text).strip() == "":
        return DELETE
    return number(text)


def number_list(text: Any) -> list[int | float]:
    """``"18, 20, 25"`` → ``[18, 20, 25]``; commas, semicolons or spaces separate."""
    parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    return [number(p) for p in parts]


def value_list(text: Any) -> list[Any]:
    """A domain list: numbers when every item is a number, else the items as text."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    try:
        return [number(p) for p in parts]
    except ValueError:
        return parts


def show_list(value: Any) -> str:
    """A list as ``"18, 20, 25"`` (empty text for a missing value)."""
    if not isinstance(value, list | tuple):
        return "" if value is MISSING or value is None else str(value)
    return ", ".join(show_number(v) if _is_num(v) else str(v) for v in value)


def show_number(value: Any) -> str:
    """A number without trailing zeros; empty text for a missing value."""
    if value is MISSING or value is None:
        return ""
    if _is_num(value):
        return f"{value:.12g}"
    return str(value)


def float_or(default: float) -> Format:
    """Formatter for float widgets: the draft's number, or ``default`` when it is not one."""
    return lambda v: float(v) if _is_num(v) else default


def _is_num(value: Any) -> bool:
    """A JSON number (bools are not numbers in a spec)."""
    return isinstance(value, int | float) and not isinstance(value, bool)
