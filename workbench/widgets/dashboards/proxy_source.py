"""The co-design page's proxy source: a file or database URL typed into the page (issue 38).

A PUBLIC proxy may live where the confidential data does: a Parquet, Stata, SAS or SPSS file, or
a table behind ``postgresql://…?table=…`` / ``duckdb:///file?table=…`` (``workbench.sources``).
A URL can hold a password, so it never travels in the browser's address (``?proxy=`` takes
files only): it is typed here, read by the kernel, and the field is cleared once read. The page
records and shows it by :func:`~workbench.sources.public_name` only (no password).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import ipywidgets as widgets

from workbench.sources import is_url, public_name
from workbench.widgets.dashboards.pages import esc
from workbench.widgets.editors.fields import error_html

PLACEHOLDER = ("proxy.csv.gz · proxy.parquet · duckdb:///proxy.duckdb?table=births · "
               "postgresql://user@host/db?table=births")


def shown_name(location: str | os.PathLike[str] | None) -> str | None:
    """How a proxy location is recorded: a URL without its password, a file by its name."""
    if location is None:
        return None
    text = os.fspath(location)
    return public_name(text) if is_url(text) else Path(text).name


def safe_message(exc: BaseException, location: str) -> str:
    """An error's text with the typed location replaced by its public name (belt and braces:
    the sources' own messages already name it that way)."""
    text = str(exc)
    return text.replace(location, public_name(location)) if location else text


class ProxySource:
    """A text field and a button: ``open_proxy(location)`` reads the proxy (raising on a bad
    one); the field is then cleared and ``shown`` records the public name."""

    def __init__(self, open_proxy: Callable[[str], None], current: str | None = None) -> None:
        self._open_proxy = open_proxy
        self.shown = current
        self.field = widgets.Text(placeholder=PLACEHOLDER, description="proxy source",
                                  layout=widgets.Layout(width="60%")).add_class("wb-proxy-field")
        self.button = widgets.Button(description="read proxy",
                                     tooltip="read this PUBLIC proxy (a file or a database URL)",
                                     ).add_class("wb-proxy-open")
        self.status = widgets.HTML(self._where()).add_class("wb-proxy-status")
        self.button.on_click(lambda _b: self.open(self.field.value))
        self.widget = widgets.HBox([self.field, self.button, self.status]
                                   ).add_class("wb-proxy-source")

    def _where(self) -> str:
        """The status line for the proxy in use."""
        return ("no proxy" if self.shown is None else
                f"proxy in use: <code>{esc(self.shown)}</code>")

    def open(self, location: str) -> bool:
        """Read the proxy at ``location``; False (with the reason, no password) if it fails."""
        text = location.strip()
        if not text:
            self.status.value = error_html(["give a proxy file or a database URL"])
            return False
        try:
            self._open_proxy(text)
        except (OSError, ValueError, KeyError) as exc:  # SpecError and EncodingError included
            self.field.value = ""
            self.status.value = error_html([safe_message(exc, text)])
            return False
        self.field.value = ""  # the typed URL does not stay in the page's state
        self.shown = shown_name(text)
        self.status.value = self._where()
        return True
