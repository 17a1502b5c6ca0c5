"""HTML building blocks of the dashboards: styled pages, badges, tables, escaped text.

The styles live in ``dashboard.css`` next to this module; every page carries them, so a page
renders the same in Voilà, JupyterLab and a static export.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from typing import Any

import ipywidgets as widgets


@cache
def css() -> str:
    """The dashboards' stylesheet as a ``<style>`` element (read once from the package)."""
    text = files(__package__).joinpath("dashboard.css").read_text(encoding="utf-8")
    return f"<style>{text}</style>"


def esc(value: Any) -> str:
    """Escaped text of any value.

    >>> esc("<b> & 'x'")
    '&lt;b&gt; &amp; &#x27;x&#x27;'
    """
    return html.escape(str(value))


def badge(text: str, kind: str) -> str:
    """A coloured pill: kind is ``pass``, ``fail`` or ``warn``.

    >>> badge("OK", "pass")
    '<span class="wb-badge wb-pass">OK</span>'
    """
    return f'<span class="wb-badge wb-{kind}">{esc(text)}</span>'


def table_html(header: Sequence[str], rows: Sequence[Sequence[str]],
               numeric: Sequence[int] = (), raw: Sequence[int] = ()) -> str:
    """An HTML table; cells are escaped unless their column index is in ``raw``.

    >>> table_html(["a", "n"], [["<x>", "2"]], numeric=(1,))
    '<table><tr><th>a</th><th>n</th></tr><tr><td>&lt;x&gt;</td><td class="num">2</td></tr></table>'
    """
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            cells.append(f"<td{cls}>{cell if i in raw else esc(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def page(body: str, name: str | None = None) -> widgets.HTML:
    """An HTML widget with the dashboards' styles; ``name`` adds the class ``wb-<name>``."""
    widget = widgets.HTML(css() + f'<div class="wb-page">{body}</div>',
                          layout=widgets.Layout(width="100%"))
    return widget if name is None else widget.add_class(f"wb-{name}")


def message_page(title: str, text: str, kind: str = "warn") -> widgets.HTML:
    """A page that only explains something (a missing or unreadable input)."""
    return page(f"<h3>{badge(title, kind)}</h3><p>{text}</p>", "message")


def slug(title: str) -> str:
    """A title as a class-name fragment.

    >>> slug("Search space"), slug("Data & schema")
    ('search-space', 'data-schema')
    """
    return "-".join("".join(c if c.isalnum() else " " for c in title.lower()).split())


def tabs(titles: Sequence[str], children: Sequence[widgets.Widget], name: str) -> widgets.Tab:
    """A Tab with class ``wb-<name>``; each child gets ``wb-section-<slug of its title>``.

    Tests and page scripts find sections by these classes, never by their position.
    """
    for title, child in zip(titles, children, strict=True):
        child.add_class(f"wb-section-{slug(title)}")
    tab = widgets.Tab(children=list(children)).add_class(f"wb-{name}")
    tab.titles = tuple(titles)
    return tab
