"""``report.html``: one self-contained page (images inlined) built from the release only."""

from __future__ import annotations

import html
import io
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from workbench.report.datasheet import (
    TABLE2_COLUMNS,
    TIMING_NOTE,
    criteria_rows,
    epsilon_words,
    prior_spend_lines,
    total_loss_line,
)
from workbench.report.guarantee import as_guarantee, guarantee_html
from workbench.report.overview import (
    MAX_BARS,
    column_overlays,
    margin_chart_png,
    margins,
    overlay_png,
    overview_html,
    png_data_uri,
)
from workbench.report.spec_summary import format_number
from workbench.report.tables import (
    CodedRelease,
    observed,
    pair_shares,
    text_shares,
    value_shares,
)
from workbench.specification import Spec
from workbench.specification.n_policy import n_statement
from workbench.transform.display import shown_label

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#1b1b1b;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.92rem;margin:.5rem 0}
th,td{border:1px solid #ccc;padding:.3rem .55rem;text-align:left}
th{background:#f0f3f7}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fde8e8}.pill{display:inline-block;padding:.1rem .6rem;
border-radius:1rem;background:#e6f4ea;color:#135c2b;font-weight:600}
.muted{color:#555}figure{display:inline-block;margin:.4rem}img{max-width:520px}
pre{background:#f6f8fa;padding:.6rem;overflow:auto}
.fit{max-width:100%;overflow-x:auto}.fit table{width:100%;font-size:.8rem}
.fit td,.fit th{overflow-wrap:anywhere;padding:.25rem .4rem}img.wide{max-width:100%}
@media print{.fit table{font-size:.7rem}}
"""


def _png(fig: Any) -> str:
    """Inline a matplotlib figure as a base64 <img>."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return f'<img alt="plot" src="{png_data_uri(buf.getvalue())}">'


def marginal_plots(release: pd.DataFrame, label_order: Mapping[str, Sequence[str]],
                   max_pairs: int = 6, coded: CodedRelease | None = None) -> list[str]:
    """1-way bar charts for every column and 2-way heatmaps for the first pairs (release only);
    the tables come from each column factorized once (``coded``), not from per-row pandas."""
    import matplotlib

    matplotlib.use("Agg")  # before seaborn imports pyplot: no display; figures below skip pyplot
    import seaborn as sns
    from matplotlib.figure import Figure

    coded = coded if coded is not None else CodedRelease(release)
    out = []
    many = {c for c in release.columns if len(label_order.get(c, ())) > MAX_BARS}
    for col in release.columns:
        order = list(label_order[col] if col in label_order else observed(coded[col]))
        if col in many:  # a number column: shares per bin of its public range, not 1 bar a value
            png = overlay_png(col, order, text_shares(coded[col], order, coded.n), None,
                              size=(5.2, 2.6))
            out.append(f'<figure><img alt="plot" src="{png_data_uri(png)}"></figure>')
            continue
        share = value_shares(coded[col], order, coded.n)
        fig = Figure(figsize=(5.2, 2.6))
        ax = fig.subplots()
        # one value a bar: no error bar (seaborn bootstrapped 1,000 resamples of it per bar
        # to draw zero-length lines; the PNG is the same without them)
        sns.barplot(x=[shown_label(o) for o in order], y=share.to_numpy(), ax=ax,
                    color="#4c72b0", errorbar=None)
        ax.set_title(f"{col}: share of records")
        ax.tick_params(axis="x", rotation=60, labelsize=7)
        out.append(f"<figure>{_png(fig)}</figure>")
    pairs = [p for p in itertools.combinations(release.columns, 2) if not many & set(p)]
    for a, b in pairs[:max_pairs]:
        table = pair_shares(coded[a], coded[b], label_order.get(a), label_order.get(b))
        table.index = [shown_label(x) for x in table.index]
        table.columns = [shown_label(x) for x in table.columns]
        fig = Figure(figsize=(5.2, 3.6))
        ax = fig.subplots()
        sns.heatmap(table, ax=ax, cmap="Blues", cbar_kws={"label": "share"})
        ax.set_title(f"{a} × {b}")
        out.append(f"<figure>{_png(fig)}</figure>")
    return out


def _overlays(release: pd.DataFrame, label_order: Mapping[str, Sequence[str]],
              proxy: pd.DataFrame | None, coded: CodedRelease) -> str:
    """Overlay plots of the release against the PUBLIC proxy (binned like the release)."""
    if proxy is None:
        return ("<p class='muted'>No public proxy was given to <code>workbench run --proxy"
                "</code>: the release review dashboard overlays one.</p>")
    figures = [f'<figure><img alt="{html.escape(col)}" src="{uri}"></figure>'
               for col, uri in column_overlays(release, label_order, proxy, coded)]
    return ("<h2 id='overlays'>The release against the public proxy</h2><p class='muted'>The "
            "proxy is public data standing in for a different population: differences are "
            "expected; it is shown for orientation only.</p>" + "".join(figures))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]],
           fails: Sequence[bool] = ()) -> str:
    """An HTML table with escaped cells."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = ' class="fail"' if i < len(fails) and fails[i] else ""
        cells = "".join(f"<td>{html.escape(c)}</td>" for c in row)
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_report(
    spec: Spec,
    configuration: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    budget: Mapping[str, Any],
    release: pd.DataFrame,
    label_order: Mapping[str, Sequence[str]],
    guarantee: Mapping[str, Any] | None = None,
    proxy_labels: pd.DataFrame | None = None,
    diagnostics: Mapping[str, Any] | None = None,
) -> str:
    """The whole page: guarantee, overview, criteria table, budget, plots, configuration,
    datasheet; ``proxy_labels`` (PUBLIC proxy binned like the release) adds overlay plots;
    ``diagnostics`` (``diagnostics.json``) an MCMC release's R̂ and ESS."""
    md = spec.metadata
    promise = as_guarantee(guarantee)
    eps = float(budget["epsilon_total"])
    crit = _table([h for h, _ in TABLE2_COLUMNS], criteria_rows(results),
                  [not r.get("passed", True) for r in results])
    budget_rows = [[k, format_number(v) if isinstance(v, float | int) else str(v)]
                   for k, v in budget.items()]
    coded = CodedRelease(release)  # each column factorized once for every figure below
    plots = "".join(marginal_plots(release, label_order, coded=coded))
    rows = margins(results)
    overview = overview_html(rows, png_data_uri(margin_chart_png(rows)))
    overlays = _overlays(release, label_order, proxy_labels, coded)
    uses = "".join(f"<li>{html.escape(u)}</li>" for u in md.intended_uses)
    not_uses = "".join(f"<li>{html.escape(u)}</li>" for u in md.unintended_uses)
    guaranteed = "".join(
        f"<li><b>{html.escape(str(r.get('id')))}</b> ({html.escape(str(r.get('kind')))})</li>"
        for r in results
    )
    e = html.escape
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(md.title)} — DP release report</title><style>{_CSS}</style></head>
<body>
<h1>{e(md.title)}</h1>
<p class="muted">{e(md.owner)} · spec SHA-256 <code>{e(spec.sha256)}</code></p>
<p><span class="pill">ε_total = {e(format_number(eps))}</span>
 <span class="pill">{e(promise.label)}</span>
 &nbsp;{len(release):,} synthetic records · every acceptance criterion passed with DP</p>
{guarantee_html(promise, diagnostics=diagnostics)}
<h2 id="criteria">Acceptance criteria</h2>
<p class="muted">Layout of the paper's Table 2. The DP result is what was compared with the
threshold; Δ is the global sensitivity and σ the standard deviation of the noise. For the
regression coefficients, Δ and σ are those of the noise on the sufficient statistics (X'X, X'y),
not of the coefficient error itself. A DP error can be negative: the noise was negative; read it
as an error close to 0.</p>
<div class="fit">{crit}</div>
<h2 id="overview">Overview: each DP value against its threshold</h2>
<div class="fit">{overview}</div>
<h2 id="budget">Privacy budget</h2>
<p>{e(total_loss_line(eps, guarantee))}</p>
{_table(["item", "value"], budget_rows)}
{"".join(f"<p>{e(line[2:])}</p>" for line in prior_spend_lines(budget))}
<p>{e(epsilon_words(eps, guarantee))}</p>
<p class="muted">{e(TIMING_NOTE)}</p>
<h2 id="plots">Marginals of the release</h2>
<p class="muted">Computed from the released records only.</p>
{plots}
{overlays}
<h2 id="configuration">Configuration</h2>
<pre>{e(json.dumps(configuration, indent=2, ensure_ascii=False, sort_keys=True))}</pre>
<h2 id="datasheet">Datasheet</h2>
<p>{e(md.description)}</p>
<h3>Intended uses</h3><ul>{uses}</ul>
<h3>Queries with accuracy guarantees</h3><ul>{guaranteed}</ul>
<h3>Queries without guarantees</h3><ul>{not_uses}
<li>cells, combinations or subgroups finer than the released bins</li></ul>
<h3>Privacy unit</h3><p>{e(md.privacy_unit)}; neighbouring datasets:
{e(spec.budget.neighbour.replace("_", "-"))}. {e(n_statement(spec.n_policy))}</p>
</body></html>
"""
