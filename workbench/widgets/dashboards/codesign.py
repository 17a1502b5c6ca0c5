"""Co-design dashboard: the co-design app on a draft and a PUBLIC proxy, with a download link.

Every edit is autosaved (:class:`workbench.widgets.model.drafts.DraftStore`: beside the spec,
else ``$WORKBENCH_DRAFTS``, else the state folder), and a page load reopens the autosaved
draft, the steps done and the last export, so a reload in Voilà shows the edited draft;
"start again from the spec file" discards it. "Freeze and export" writes the frozen spec and
its sign-off to the same folder by default, and offers the spec as a link the browser saves
(Voilà may run on a server the user cannot reach by file).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from workbench.specification import SpecError, read_document
from workbench.widgets.dashboards.app import CoDesignApp
from workbench.widgets.dashboards.pages import esc, message_page, page
from workbench.widgets.dashboards.proxy_source import ProxySource, safe_message, shown_name
from workbench.widgets.editors.fields import error_html
from workbench.widgets.model.drafts import DraftStore
from workbench.widgets.model.session import Change, Session


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


class Autosaver:
    """Writes the draft, the steps done and the last export after every change; reopens them."""

    def __init__(self, app: CoDesignApp, store: DraftStore) -> None:
        self.app, self.store = app, store
        self.status = widgets.HTML().add_class("wb-autosave")
        self.saves = 0

    def reopen(self) -> bool:
        """Replace the draft by the autosaved one (undo returns to the spec file's)."""
        saved = self.store.load()
        if saved is None:
            self.status.value = (error_html([self.store.error]) if self.store.error else
                                 f"autosave: <code>{esc(self.store.where())}</code>")
            return False
        if saved.document != self.app.session.draft:
            self.app.session.replace(saved.document, label="reopen the autosaved draft")
        self.app.guide.restore(tuple(saved.done))
        self.app.export.restore(saved.export)
        self.app.guide.refresh()
        self.status.value = (f"reopened the draft autosaved {esc(saved.saved_at)} · autosave: "
                             f"<code>{esc(self.store.where())}</code>")
        return True

    def save(self, _change: Any = None) -> bool:
        """Write the current draft (valid or not) with the steps done and the last export."""
        ok = self.store.save(self.app.session.draft, self.app.guide.did,
                             self.app.export.record)
        self.saves += ok
        self.status.value = (f"autosaved · <code>{esc(self.store.where())}</code>" if ok
                             else error_html([self.store.error or "autosave failed"]))
        return ok

    def start_again(self, spec_path: Path) -> None:
        """Back to the spec file's content (undoable) and forget the autosave."""
        self.app.session.replace(read_document(spec_path), label="start again from the spec")
        self.store.discard()
        self.app.guide.did.clear()
        self.app.guide.refresh()
        self.save()

    def attach(self) -> None:
        """Save after every edit, every step done and every export."""
        self.app.session.observe(lambda _c: self.save())
        for button in (self.app.export.freeze, self.app.budget.accept,
                       self.app.feasibility.run_button, self.app.budget.design.apply_button):
            button.on_click(lambda _b: self.save())
        self.app.tabs.observe(lambda _c: self.save(), names="selected_index")


def codesign_dashboard(spec_path: Path, proxy_path: str | os.PathLike[str] | None = None,
                       export_dir: Path | None = None) -> widgets.Widget:
    """The app for a draft spec (and a PUBLIC proxy: a file or a database URL), or a page
    saying why it cannot start. The page's proxy source field reads another proxy in place
    (the draft is autosaved, so the rebuilt app reopens it)."""
    try:
        session = Session.from_files(spec_path, proxy_path)
    except (SpecError, OSError, ValueError) as exc:
        where = "" if proxy_path is None else os.fspath(proxy_path)
        return message_page("cannot start the co-design session",
                            f"<code>{esc(spec_path)}</code>: {esc(safe_message(exc, where))}",
                            "fail")
    root = widgets.VBox([]).add_class("wb-codesign")

    def reopen(location: str) -> None:
        _mount(root, Session.from_files(spec_path, location), spec_path, location, export_dir,
               source)

    source = ProxySource(reopen, shown_name(proxy_path) if session.proxy is not None else None)
    _mount(root, session, spec_path, proxy_path, export_dir, source)
    return root


def _mount(root: widgets.VBox, session: Session, spec_path: Path,
           proxy: str | os.PathLike[str] | None, export_dir: Path | None,
           source: ProxySource) -> None:
    """Build the app on ``session`` into ``root`` (the proxy recorded by its public name)."""
    store = DraftStore(spec_path)
    export = (export_dir / store.export_path.name) if export_dir else store.export_path
    app = CoDesignApp(session, export_path=str(export))
    add_download(app)
    saver = Autosaver(app, store)
    saver.reopen()
    saver.attach()
    again = widgets.Button(description="start again from the spec file",
                           tooltip="discard the autosaved draft (undo brings it back)",
                           layout=widgets.Layout(width="auto")).add_class("wb-start-again")
    again.on_click(lambda _b: saver.start_again(spec_path))
    proxy_text = ("no proxy: readouts are off" if proxy is None or session.proxy is None
                  else f"public proxy <code>{esc(shown_name(proxy))}</code>")
    title = page(f"<p><b>Co-design</b> · {esc(session.get('metadata.title', ''))} · draft "
                 f"<code>{esc(spec_path.name)}</code> · {proxy_text}</p>", "codesign-title")
    root.children = (title, widgets.HBox([saver.status, again]), source.widget, app.widget)
    root.autosaver = saver  # type: ignore[attr-defined]  # tests and scripts reach it here
    root.proxy_source = source  # type: ignore[attr-defined]
    _keep_title(app.session, title, spec_path, proxy_text)


def _keep_title(session: Session, title: widgets.HTML, spec_path: Path, proxy_text: str) -> None:
    """The page title follows an edited metadata.title."""
    def update(_change: Change | None = None) -> None:
        title.value = page(f"<p><b>Co-design</b> · {esc(session.get('metadata.title', ''))} · "
                           f"draft <code>{esc(spec_path.name)}</code> · {proxy_text}</p>",
                           "codesign-title").value

    session.observe(update)
    update()
