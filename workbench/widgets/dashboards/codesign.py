"""Co-design dashboard: the co-design app on a draft and a PUBLIC proxy, with a download link.

Voilà serves it on a server the user may not reach by file: "Freeze and export" writes the
frozen spec to a temporary folder there and offers it as a link the browser saves.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import ipywidgets as widgets

from workbench.spec import SpecError
from workbench.widgets.dashboards.app import CoDesignApp
from workbench.widgets.dashboards.pages import esc, message_page, page
from workbench.widgets.model.session import Session


def download_link(path: Path) -> str:
    """The file as a link the browser saves (the server's copy stays put)."""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<a download="{esc(path.name)}" href="data:application/json;base64,{data}"'
            f' style="font-weight:600">⬇ Download {esc(path.name)}</a>')


def add_download(app: CoDesignApp) -> widgets.HTML:
    """A link under the export status, refreshed after every successful export."""
    link = widgets.HTML().add_class("wb-download")

    def exported(_button: widgets.Button) -> None:
        written = app.export.written
        link.value = "" if written is None else download_link(written[0])

    app.export.freeze.on_click(exported)
    box = app.export.widget
    at = list(box.children).index(app.export.status) + 1
    box.children = (*box.children[:at], link, *box.children[at:])
    return link


def codesign_dashboard(spec_path: Path, proxy_path: Path | None = None,
                       export_dir: Path | None = None) -> widgets.Widget:
    """The app for a draft spec (and proxy), or a page saying why it cannot start."""
    try:
        session = Session.from_files(spec_path, proxy_path)
    except (SpecError, OSError, ValueError) as exc:
        return message_page("cannot start the co-design session",
                            f"<code>{esc(spec_path)}</code>: {esc(exc)}", "fail")
    folder = export_dir or Path(tempfile.mkdtemp(prefix="workbench-export-"))
    app = CoDesignApp(session, export_path=str(folder / f"{spec_path.name.split('.')[0]}"
                                                        ".frozen.json"))
    add_download(app)
    proxy_text = ("no proxy: readouts are off" if proxy_path is None or session.proxy is None
                  else f"public proxy <code>{esc(proxy_path.name)}</code>")
    title = page(f"<p><b>Co-design</b> · {esc(session.get('metadata.title', ''))} · draft "
                 f"<code>{esc(spec_path.name)}</code> · {proxy_text}</p>", "codesign-title")
    return widgets.VBox([title, app.widget]).add_class("wb-codesign")
