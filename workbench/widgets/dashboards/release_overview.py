"""The release review's Overview tab: margins, success / warning / danger, overlays, downloads.

The same overview as ``report.html`` (:mod:`workbench.report.overview`), plus links that
save ``release.csv``, ``report.html`` and the whole bundle as a zip. The links carry the
files in the page (data URLs), so the browser never asks any server but Voilà's for them.
"""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.report.overview import (
    column_overlays,
    margin_chart_png,
    margins,
    overview_html,
    png_data_uri,
)
from workbench.widgets.dashboards.pages import esc

#: What the downloads offer, with their MIME types.
DOWNLOADS = (("release.csv", "text/csv"), ("report.html", "text/html"))


def bundle_zip(root: Path) -> bytes:
    """Every file of the bundle folder in one zip (names relative to ``release/``)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            zf.write(path, f"release/{path.relative_to(root).as_posix()}")
    return buf.getvalue()


def _link(name: str, mime: str, data: bytes, slug: str) -> str:
    """One download link carrying the file."""
    encoded = base64.b64encode(data).decode("ascii")
    return (f"<a class='wb-download-{slug}' download='{esc(name)}' "
            f"href='data:{mime};base64,{encoded}' style='font-weight:600;margin-right:18px'>"
            f"⬇ {esc(name)}</a> <span class='wb-muted'>({len(data) / 1024:,.0f} KiB)</span>")


def downloads_html(root: Path) -> str:
    """Links for release.csv, report.html and the bundle zip (files that are missing say so)."""
    links = []
    for name, mime in DOWNLOADS:
        path = root / name
        links.append(_link(name, mime, path.read_bytes(), name.split(".")[0])
                     if path.is_file() else f"<span>{esc(name)} is missing</span>")
    links.append(_link(f"{root.parent.name or 'bundle'}-release.zip", "application/zip",
                       bundle_zip(root), "bundle"))
    return ("<h3>Downloads</h3><p class='wb-downloads'>" + "<br>".join(links) + "</p>"
            "<p class='wb-muted'>The zip holds every file of the bundle; check it after "
            "download with <code>workbench verify</code>.</p>")


def overlays_html(release: pd.DataFrame, orders: Mapping[str, Sequence[str]],
                  proxy: pd.DataFrame | None) -> str:
    """Small overlay plots of every column: the release and the public proxy."""
    figures = [f"<img alt='{esc(col)}' style='max-width:49%' src='{uri}'>"
               for col, uri in column_overlays(release, orders, proxy)]
    what = ("the release (blue) against the public proxy (orange), binned alike"
            if proxy is not None else "the release (no public proxy given)")
    return (f"<h3>Marginals: {what}</h3><div class='wb-overlays'>" + "".join(figures)
            + "</div>")


def overview_page_html(results: Sequence[Mapping[str, Any]], root: Path,
                       release: pd.DataFrame | None, orders: Mapping[str, Sequence[str]],
                       proxy: pd.DataFrame | None) -> str:
    """The whole Overview tab as HTML."""
    rows = margins(results)
    parts = [downloads_html(root)]
    if rows:
        parts.append("<h3>Each DP value against its threshold</h3>"
                     + overview_html(rows, png_data_uri(margin_chart_png(rows))))
    if release is not None:
        parts.append(overlays_html(release, orders, proxy))
    return "".join(parts)
