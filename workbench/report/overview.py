"""The overview of a release, shared by ``report.html`` and the release review dashboard.

Each criterion's DP value against its threshold (the margin), sorted into success / warning /
danger like SDMetrics' diagnostics, with a short note on how to read the number, a margin
chart, and overlay plots of the release against public proxy data. Only public inputs: the
bundle's DP results and released records, and public proxy data.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.report.spec_summary import format_number
from workbench.report.tables import CodedRelease, code_column, observed, text_shares
from workbench.transform.display import shown_label

#: success: passed by at least one noise σ; warning: passed by less; danger: failed.
STATUS_WORDS = {
    "success": "passed with room: the DP value is more than one noise σ below the threshold",
    "warning": "passed narrowly: the DP value is within one noise σ of the threshold (within "
               "10% of it where σ is not the noise on the value itself)",
    "danger": "failed: the DP value is above the threshold",
}
#: Where σ is not the noise on the value, "narrow" means within this share of the threshold.
NARROW_SHARE = 0.10
STATUS_COLOURS = {"success": "#1a7f37", "warning": "#bf8700", "danger": "#cf222e"}
#: Columns with more labels than this (numbers on a grid) get a histogram, not bars.
MAX_BARS = 60
#: Equal-width bins of such a histogram over the column's public range.
HIST_BINS = 50


@dataclass(frozen=True)
class CriterionMargin:
    """One criterion's DP value, threshold, margin and status, with a note on reading it."""

    id: str
    kind: str
    value: float | None
    threshold: float
    margin: float | None
    status: str
    note: str


def decision_threshold(result: Mapping[str, Any]) -> float:
    """The threshold the pass decision used, as the kind recorded it in the row."""
    return float(result.get("effective_threshold", result["threshold"]))


def reading_note(result: Mapping[str, Any]) -> str:
    """How to read one DP value (noise can make an error negative; where σ applies)."""
    value, sigma = result.get("value"), result.get("sigma")
    notes = []
    if _noise_not_on_value(str(result.get("kind"))):
        notes.append("Δ and σ are those of the noise on the regression's sufficient statistics "
                     "(X'X, X'y), not of this value; the value is the largest coefficient error "
                     "computed from the noisy statistics")
    elif sigma:
        notes.append(f"exact value + Laplace noise (σ = {format_number(float(sigma))})")
    elif not result.get("epsilon"):
        notes.append("computed on the release alone, without noise")
    if isinstance(value, int | float) and value < 0:
        notes.append("an error is never below 0: a negative DP value means the noise drawn was "
                     "negative; read it as an error close to 0")
    return "; ".join(notes)


def _noise_not_on_value(kind: str) -> bool:
    """Whether the kind's σ is on something else (e.g. the regression's statistics)."""
    from workbench.criteria import kinds

    try:
        return bool(kinds.get(kind).tags.noise_note)
    except ValueError:
        return False


def margins(results: Sequence[Mapping[str, Any]]) -> list[CriterionMargin]:
    """Every criterion's margin (T_eff − DP value) and its success / warning / danger."""
    out = []
    for r in results:
        t = decision_threshold(r)
        value = r.get("value")
        margin = None if not isinstance(value, int | float) else t - float(value)
        sigma = float(r.get("sigma") or 0.0)
        if _noise_not_on_value(str(r.get("kind"))):
            sigma = NARROW_SHARE * abs(t)
        if not r.get("passed"):
            status = "danger"
        elif margin is not None and margin < sigma:
            status = "warning"
        else:
            status = "success"
        out.append(CriterionMargin(str(r.get("id")), str(r.get("kind")),
                                   None if value is None else float(value), t, margin, status,
                                   reading_note(r)))
    return out


def status_counts(rows: Sequence[CriterionMargin]) -> dict[str, int]:
    """How many criteria fall in each status.

    >>> status_counts([CriterionMargin("a", "k", 0.1, 1.0, 0.9, "success", "")])
    {'success': 1, 'warning': 0, 'danger': 0}
    """
    return {s: sum(r.status == s for r in rows) for s in STATUS_WORDS}


def png_bytes(fig: Any) -> bytes:
    """A matplotlib Figure as PNG bytes (no pyplot state involved)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def margin_chart_png(rows: Sequence[CriterionMargin]) -> bytes:
    """Bars of each DP value as a share of its threshold; the line at 1 is the threshold."""
    from matplotlib.figure import Figure

    shown = [r for r in rows if r.value is not None and r.threshold > 0]
    fig = Figure(figsize=(7.5, 0.45 * max(len(shown), 1) + 1.2), dpi=90, layout="constrained")
    ax = fig.subplots()
    ratios = [r.value / r.threshold for r in shown]  # type: ignore[operator]
    ax.barh(range(len(shown)), ratios, color=[STATUS_COLOURS[r.status] for r in shown])
    ax.axvline(1.0, color="#24292f", linestyle="--", linewidth=1)
    ax.text(1.0, len(shown) - 0.4, " threshold", va="bottom", fontsize=8)
    ax.set_yticks(range(len(shown)), [r.id for r in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("DP value ÷ threshold (below 1 passes)")
    ax.set_xlim(min(0.0, *ratios, 0.0) * 1.1, max(1.2, *ratios, 1.0) * 1.1)
    ax.grid(axis="x", alpha=0.3)
    return png_bytes(fig)


def overlay_png(column: str, order: Sequence[str], release: pd.Series,
                proxy: pd.Series | None, size: tuple[float, float] = (5.6, 2.8)) -> bytes:
    """A column's shares in the release, and in the public proxy beside them if given."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=90, layout="constrained")
    ax = fig.subplots()
    if len(order) > MAX_BARS:  # a number column on a fine grid: binned shares, not 1 bar a value
        return _binned_overlay(fig, ax, column, order, release, proxy)
    x = range(len(order))
    width = 0.42 if proxy is not None else 0.8
    shift = -width / 2 if proxy is not None else 0.0
    ax.bar([i + shift for i in x], release.to_numpy(), width=width, color="#4c72b0",
           label="release")
    if proxy is not None:
        ax.bar([i + width / 2 for i in x], proxy.to_numpy(), width=width, color="#dd8452",
               label="public proxy")
        ax.legend(frameon=False, fontsize=7)
    many = len(order) > 12
    ax.set_xticks(list(x), [shown_label(o) for o in order], rotation=60 if many else 0, fontsize=7,
                  ha="right" if many else "center")
    ax.set_title(f"{column}: share of records", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    return png_bytes(fig)


def binned_shares(order: Sequence[str], share: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(edges, shares) summed into :data:`HIST_BINS` equal bins of a numeric grid's range.

    >>> edges, sums = binned_shares(["0", "1", "2", "3"], pd.Series([0.1, 0.2, 0.3, 0.4]))
    >>> len(edges) == HIST_BINS + 1, round(float(sums.sum()), 6)
    (True, 1.0)
    """
    values = np.array([float(o) for o in order])
    sums, edges = np.histogram(values, bins=HIST_BINS, range=(values.min(), values.max()),
                               weights=share.to_numpy(dtype=np.float64))
    return edges, sums


def _binned_overlay(fig: Any, ax: Any, column: str, order: Sequence[str], release: pd.Series,
                    proxy: pd.Series | None) -> bytes:
    """Release (and proxy) shares per 1/HIST_BINS of the grid's public range, as steps."""
    edges, sums = binned_shares(order, release)
    ax.stairs(sums, edges, fill=True, alpha=0.55, color="#4c72b0", label="release")
    if proxy is not None:
        ax.stairs(binned_shares(order, proxy)[1], edges, fill=True, alpha=0.55,
                  color="#dd8452", label="public proxy")
        ax.legend(frameon=False, fontsize=7)
    ax.set_title(f"{column}: share of records per 1/{HIST_BINS} of its range", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    return png_bytes(fig)


def png_data_uri(png: bytes) -> str:
    """PNG bytes as a ``data:`` URI for an inline <img>."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def column_overlays(release: pd.DataFrame, orders: Mapping[str, Sequence[str]],
                    proxy: pd.DataFrame | None,
                    coded: CodedRelease | None = None) -> list[tuple[str, str]]:
    """(column, PNG data URI) per column: its shares in the release, the proxy's beside them
    (``coded``: the release already factorized, e.g. by report.html's marginals)."""
    coded = coded if coded is not None else CodedRelease(release)
    out = []
    for col in release.columns:
        order = list(orders.get(col) or observed(coded[col]))
        other = shares(proxy[col], order) if proxy is not None and col in proxy else None
        mine = text_shares(coded[col], order, coded.n)
        out.append((col, png_data_uri(overlay_png(col, order, mine, other))))
    return out


def shares(labels: pd.Series, order: Sequence[str]) -> pd.Series:
    """Share of records per label, in ``order`` (labels not in it are dropped); the numbers of
    ``labels.astype(str).value_counts()`` over ``len(labels)``, counted from codes."""
    return text_shares(code_column(labels), order, len(labels))


def _num(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format_number(x)


def overview_html(rows: Sequence[CriterionMargin], chart_src: str) -> str:
    """The summary line, the margin chart and the margin table (``chart_src``: an image URL)."""
    counts = status_counts(rows)
    pills = " ".join(
        f"<span class='wb-status wb-status-{s}' style='display:inline-block;padding:1px 9px;"
        f"border-radius:10px;color:#fff;background:{STATUS_COLOURS[s]}'>{counts[s]} {s}</span>"
        for s in STATUS_WORDS)
    legend = "".join(f"<li><b>{s}</b>: {html.escape(w)}</li>" for s, w in STATUS_WORDS.items())
    body = []
    for r in rows:
        colour = STATUS_COLOURS[r.status]
        body.append(
            f"<tr><td>{html.escape(r.id)}</td><td class='num'>{_num(r.value)}</td>"
            f"<td class='num'>{_num(r.threshold)}</td><td class='num'>{_num(r.margin)}</td>"
            f"<td style='color:{colour};font-weight:600'>{r.status}</td>"
            f"<td style='font-size:85%'>{html.escape(r.note)}</td></tr>")
    table = ("<table class='wb-margins' style='width:100%;table-layout:auto'><tr><th>criterion"
             "</th><th>DP value</th><th>threshold</th><th>margin</th><th>status</th>"
             "<th>how to read it</th></tr>" + "".join(body) + "</table>")
    return (f"<p class='wb-overview-summary'>{pills}</p><ul style='font-size:90%'>{legend}</ul>"
            f"<img alt='margin chart' class='wb-margin-chart' style='max-width:100%' "
            f"src='{chart_src}'><p style='font-size:90%'>Margin = threshold − DP value "
            "(positive passes).</p>" + table)


def binned_like_release(proxy: pd.DataFrame, spec: Any,
                        configuration: Mapping[str, Any]) -> pd.DataFrame:
    """The PUBLIC proxy cleaned by the spec and binned with the release's configuration."""
    from workbench.specification import Configuration
    from workbench.transform.clean import clean

    table = spec.table_codec(Configuration.from_dict(configuration))
    return table.decode(table.encode(clean(proxy, spec))).astype(str)
