"""Release review dashboard: is this bundle what the frozen spec promised?

Shows the ``verify`` status with the reason of every failed check, the guarantee of the
released records (``guarantee.json``: its label in the header, the section in the Budget tab;
anything other than pure ε-DP is badged), the criteria table with
pass/fail badges, the budget from the ledger, 1-way marginals of the release (optionally
beside the public proxy's, binned by the release's own configuration), and the datasheet.
It reads only the bundle's public files and public proxy data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd

from workbench.engine.verify import Verification, bundle_dir, verify_bundle
from workbench.report.datasheet import TABLE2_COLUMNS, criteria_rows
from workbench.report.guarantee import as_guarantee, guarantee_html
from workbench.report.overview import binned_like_release, overlay_png, shares
from workbench.report.spec_summary import format_number
from workbench.specification import Configuration, Spec
from workbench.widgets.dashboards.pages import badge, esc, message_page, page, table_html, tabs
from workbench.widgets.dashboards.release_overview import overview_page_html

NO_BUNDLE = (
    "This dashboard reviews a release bundle made by <code>workbench run</code>. Start it with "
    "<code>workbench dashboard release RUN_DIR</code>, or add <code>?bundle=PATH</code> to this "
    "page's address, where PATH is the run directory or its <code>release/</code> folder "
    "(absolute, or relative to the repository). Add <code>&amp;proxy=PATH</code> to compare "
    "with other public proxy data.")


@dataclass
class Bundle:
    """The public parts of a release bundle; ``problems`` names the parts that did not load."""

    root: Path
    release: pd.DataFrame | None = None
    criteria: list[dict[str, Any]] = field(default_factory=list)
    all_passed: bool | None = None
    configuration: dict[str, Any] | None = None
    spec: Spec | None = None
    summary: dict[str, Any] | None = None
    guarantee: dict[str, Any] | None = None
    #: ``diagnostics.json`` when the bundle has one (an MCMC release's R̂ and ESS)
    diagnostics: dict[str, Any] | None = None
    readme: str = ""
    problems: dict[str, str] = field(default_factory=dict)


def load_bundle(path: str | Path) -> Bundle:
    """Read every public file that can be read (a tampered bundle still shows what it can)."""
    from workbench.specification import SpecError
    from workbench.validation import load_spec

    root = bundle_dir(path)
    b = Bundle(root)

    def attempt(name: str, read: Any) -> Any:
        try:
            return read()
        except (OSError, ValueError, KeyError, TypeError, SpecError) as exc:
            b.problems[name] = f"{type(exc).__name__}: {exc}"
            return None

    b.release = attempt("release.csv", lambda: pd.read_csv(root / "release.csv", dtype=str,
                                                           keep_default_na=False))
    crit = attempt("criteria.json", lambda: json.loads((root / "criteria.json").read_text()))
    if isinstance(crit, dict):
        b.criteria = list(crit.get("criteria", []))
        b.all_passed = crit.get("all_passed")
    b.configuration = attempt("configuration.json",
                              lambda: json.loads((root / "configuration.json").read_text()))
    b.spec = attempt("spec.json", lambda: load_spec(root / "spec.json"))
    b.summary = attempt("ledger.jsonl", lambda: ledger_summary(root / "ledger.jsonl"))
    b.guarantee = attempt("guarantee.json", lambda: as_guarantee(
        json.loads((root / "guarantee.json").read_text(encoding="utf-8"))).as_dict())
    if (root / "diagnostics.json").is_file():
        b.diagnostics = attempt("diagnostics.json", lambda: json.loads(
            (root / "diagnostics.json").read_text(encoding="utf-8")))
    b.readme = attempt("README.md", lambda: (root / "README.md").read_text(encoding="utf-8")) or ""
    return b


def ledger_summary(path: Path) -> dict[str, Any]:
    """The ledger's closing ``summary`` event (ValueError when there is none)."""
    last: dict[str, Any] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            event = json.loads(line)
            if event.get("event") == "summary":
                last = event
    if last is None:
        raise ValueError("the ledger has no summary event")
    return last


# --- sections ----------------------------------------------------------------------------
def verify_html(v: Verification, facts: str = "") -> str:
    """PASSED or FAILED in large type (with the bundle's key facts), then every failure reason."""
    extra = f" <span style='font-size:14px'>· {esc(facts)}</span>" if facts else ""
    flags = "".join(f"<li>{badge('note', 'warn')} {esc(f)}</li>" for f in v.flags)
    flags = f"<ul class='wb-flags'>{flags}</ul>" if flags else ""
    if v.ok:
        return f"<p class='wb-big'>verify {badge('PASSED', 'pass')}{extra}</p>{flags}"
    reasons = "".join(f"<li>{esc(p)}</li>" for p in v.problems)
    return (f"<p class='wb-big'>verify {badge('FAILED', 'fail')}{extra}</p>"
            f"<ul class='wb-reasons'>{reasons}</ul>{flags}")


def checks_html(v: Verification) -> str:
    """Every check of ``workbench verify`` with its outcome."""
    rows = [[esc(name), badge("failed", "fail") if d.startswith("FAILED") else
             badge("ok", "pass"), esc(d.removeprefix("FAILED: "))] for name, d in v.checks.items()]
    return ("<h3>Checks of <code>workbench verify</code></h3>"
            + table_html(["check", "outcome", "detail"], rows, raw=(0, 1, 2))
            + "<p class='wb-muted'>Each check uses only the bundle's public files; a tampered "
            "file shows under its own check and in the manifest check.</p>")


def criteria_html(results: Sequence[Mapping[str, Any]], all_passed: bool | None) -> str:
    """The Table-2-shaped criteria table, with a pass/fail badge per criterion."""
    if not results:
        return "<p>No criteria results could be read.</p>"
    header = [h for h, _ in TABLE2_COLUMNS]
    passed_at = [k for _, k in TABLE2_COLUMNS].index("passed")
    rows = []
    for result, cells in zip(results, criteria_rows(results), strict=True):
        cells = [esc(c) for c in cells]
        cells[passed_at] = badge("pass", "pass") if result.get("passed") else badge("FAIL", "fail")
        rows.append(cells)
    overall = (badge("all criteria passed", "pass") if all_passed else
               badge("NOT all criteria passed", "fail"))
    return (f"<h3>Acceptance criteria ({len(results)}) {overall}</h3>"
            + table_html(header, rows, numeric=(3, 4, 6, 9, 10), raw=range(len(header)))
            + "<p class='wb-muted'>DP result = exact value + Laplace noise (σ); a criterion "
            "passes when its DP result is below its threshold (for the relative 1-way error, "
            "below the adjusted threshold T′ shown first).</p>")


def guarantee_badge(guarantee: Mapping[str, Any] | None) -> str:
    """The records' guarantee as a header badge: green for pure ε-DP, amber for anything else."""
    if guarantee is None:
        return badge("guarantee unreadable", "fail")
    g = as_guarantee(guarantee)
    return (f"<span class='wb-guarantee-badge'>"
            f"{badge(g.label, 'pass' if g.is_pure else 'warn')}</span>")


def budget_html(summary: Mapping[str, Any] | None, spec: Spec | None,
                configuration: Mapping[str, Any] | None,
                guarantee: Mapping[str, Any] | None = None,
                diagnostics: Mapping[str, Any] | None = None) -> str:
    """The records' guarantee (with an MCMC release's R̂ and ESS), ε_total from the ledger,
    the spec's formula, the configuration."""
    parts = [guarantee_html(guarantee, heading="h3", diagnostics=diagnostics)
             if guarantee is not None else "",
             "<h3>Budget</h3>"]
    if summary is not None:
        eps = summary.get("epsilon_total")
        parts.append(f"<p class='wb-big'>ε_total = {esc(format_number(eps))} "
                     "<span class='wb-muted'>(ledger)</span></p>")
        keys = [("guarantee", "guarantee of the records"),
                ("records_epsilon", "ε per released record"),
                ("records_delta", "δ per released record"),
                ("epsilon_generator", "generator ε"),
                ("epsilon_criteria_in_loop", "criteria ε in the loop"),
                ("epsilon_per_iteration", "ε per iteration"),
                ("private_selection", "private selection"),
                ("epsilon_once", "statistics computed once"), ("neighbour", "neighbours"),
                ("n_records", "records released")]
        rows = [[label, _value(summary[k])] for k, label in keys if k in summary]
        parts.append(table_html(["", "value"], rows, numeric=(1,)))
    if spec is not None:
        parts.append(f"<p>Spec: {esc(spec.budget_plan().formula())}</p>")
        if summary is not None and not math.isclose(float(summary.get("epsilon_total", math.nan)),
                                                     spec.epsilon_total, abs_tol=1e-9):
            parts.append(f"<p>{badge('ledger and spec disagree', 'fail')}</p>")
    if configuration is not None:
        parts.append("<h3>Configuration chosen</h3>"
                     f"<pre>{esc(json.dumps(configuration, indent=2, sort_keys=True))}</pre>")
    return "".join(parts)


def _value(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        return format_number(v)
    return str(v)


def markdown_html(text: str) -> str:
    """The datasheet rendered from Markdown (raw HTML in it is shown as text)."""
    try:
        import mistune
    except ImportError:  # mistune comes with nbconvert, which Voilà needs
        return f"<pre>{esc(text)}</pre>"
    render = mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])
    return f"<div class='wb-markdown'>{render(text)}</div>"


# --- marginals ---------------------------------------------------------------------------
def label_orders(spec: Spec | None, configuration: Mapping[str, Any] | None,
                 release: pd.DataFrame) -> dict[str, list[str]]:
    """Bin labels in code order (from the spec), else the labels seen, sorted."""
    if spec is not None and configuration is not None:
        try:
            table = spec.table_codec(Configuration.from_dict(configuration))
            return {n: [str(x) for x in table.codec(n).labels] for n in table.names}
        except (KeyError, ValueError, TypeError):
            pass
    return {c: sorted(release[c].astype(str).unique()) for c in release.columns}


def proxy_labels(proxy: pd.DataFrame, spec: Spec, configuration: Mapping[str, Any]) -> pd.DataFrame:
    """The PUBLIC proxy cleaned by the spec and binned with the release's configuration."""
    return binned_like_release(proxy, spec, configuration)


def marginal_png(column: str, order: Sequence[str], release: pd.Series,
                 proxy: pd.Series | None = None) -> bytes:
    """Bar chart of a column's shares in the release, with the proxy's beside them if given."""
    return overlay_png(column, order, release, proxy, size=(12.5, 3.8))


class Marginals:
    """A column picker, the proxy overlay switch, and the plot."""

    def __init__(self, release: pd.DataFrame, orders: Mapping[str, Sequence[str]],
                 proxy: pd.DataFrame | None, proxy_note: str) -> None:
        self.release = release
        self.orders = orders
        self.proxy = proxy
        self.column = widgets.Dropdown(options=list(release.columns), description="column",
                                       layout=widgets.Layout(width="320px")
                                       ).add_class("wb-marginal-column")
        self.overlay = widgets.Checkbox(value=False, indent=False,
                                        description="overlay the public proxy's marginal",
                                        disabled=proxy is None).add_class("wb-proxy-overlay")
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%")
                                   ).add_class("wb-marginal-plot")
        self.note = widgets.HTML(f"<div style='font-size:12px;line-height:1.4;color:#57606a'>"
                                 f"{esc(proxy_note)}</div>").add_class("wb-proxy-note")
        self.column.observe(lambda _c: self.draw(), names="value")
        self.overlay.observe(lambda _c: self.draw(), names="value")
        self.widget = widgets.VBox([widgets.HBox([self.column, self.overlay]), self.note,
                                    self.image]).add_class("wb-marginals")
        self.draw()

    def draw(self) -> None:
        """Redraw for the selected column and overlay state."""
        col = self.column.value
        order = self.orders.get(col) or sorted(self.release[col].unique())
        proxy = None
        if self.overlay.value and self.proxy is not None and col in self.proxy:
            proxy = shares(self.proxy[col], order)
        self.image.value = marginal_png(col, order, shares(self.release[col], order), proxy)


# --- the dashboard -----------------------------------------------------------------------
class ReleaseReview:
    """Header with the verify status, then tabs; ``widget`` is the root."""

    TABS = ("Overview", "Criteria", "Budget", "Marginals", "Datasheet", "Verify checks")

    def __init__(self, bundle: Bundle, verification: Verification,
                 proxy: pd.DataFrame | None = None, proxy_note: str = "") -> None:
        self.bundle = bundle
        self.verification = verification
        b = bundle
        self.header = page(self._header(), "review-header")
        orders = {} if b.release is None else label_orders(b.spec, b.configuration, b.release)
        self.overview = page(overview_page_html(b.criteria, b.root, b.release, orders, proxy),
                             "release-overview")
        if b.release is not None:
            self.marginals: Marginals | None = Marginals(b.release, orders, proxy, proxy_note)
            marginals: widgets.Widget = self.marginals.widget
        else:
            self.marginals = None
            marginals = page("<p>release.csv could not be read.</p>")
        self.tabs = tabs(self.TABS, [
            self.overview,
            page(criteria_html(b.criteria, b.all_passed) + self._problems("criteria.json")),
            page(budget_html(b.summary, b.spec, b.configuration, b.guarantee, b.diagnostics)
                 + self._problems("ledger.jsonl") + self._problems("guarantee.json")),
            marginals,
            page(markdown_html(b.readme) if b.readme else self._problems("README.md")),
            page(checks_html(verification)),
        ], "review-tabs")
        self.widget = widgets.VBox([self.header, self.tabs],
                                   layout=widgets.Layout(max_width="1260px")
                                   ).add_class("wb-release-review")

    def _header(self) -> str:
        b = self.bundle
        title = b.spec.metadata.title if b.spec is not None else "Release bundle"
        facts = []
        if b.summary is not None:
            facts.append(f"ε_total = {format_number(b.summary.get('epsilon_total'))}")
            if "n_records" in b.summary:
                facts.append(f"{int(b.summary['n_records']):,} records")
        if b.criteria:
            n_pass = sum(bool(r.get("passed")) for r in b.criteria)
            facts.append(f"{n_pass} of {len(b.criteria)} criteria passed")
        sha = f" · spec SHA-256 <code>{esc(b.spec.sha256)}</code>" if b.spec else ""
        return (f"<h2 style='margin:2px 0 6px'>{esc(title)}</h2>"
                f"<p>bundle <code>{esc(b.root)}</code>{sha}</p>"
                f"<p>guarantee of the records: {guarantee_badge(b.guarantee)}</p>"
                + verify_html(self.verification, " · ".join(facts)))

    def _problems(self, name: str) -> str:
        reason = self.bundle.problems.get(name)
        return "" if reason is None else f"<p>{badge(f'cannot read {name}', 'fail')} " \
                                         f"{esc(reason)}</p>"


def release_review_dashboard(bundle_path: Path | None,
                             proxy_path: Path | None = None) -> widgets.Widget:
    """The dashboard for a bundle, or a page explaining how to pass one."""
    if bundle_path is None:
        return message_page("no bundle given", NO_BUNDLE)
    if not bundle_path.exists():
        return message_page("bundle not found", f"<code>{esc(bundle_path)}</code> does not "
                            f"exist.<br>{NO_BUNDLE}", "fail")
    verification = verify_bundle(bundle_path)
    bundle = load_bundle(bundle_path)
    proxy, note = _proxy(bundle, proxy_path)
    return ReleaseReview(bundle, verification, proxy, note).widget


def _proxy(bundle: Bundle, proxy_path: Path | None) -> tuple[pd.DataFrame | None, str]:
    """The proxy binned like the release, or why there is none."""
    if proxy_path is None:
        return None, "No public proxy given (pass ?proxy=PATH to compare)."
    if bundle.spec is None or bundle.configuration is None:
        return None, "The proxy cannot be binned: the bundle's spec or configuration is unreadable."
    from workbench.transform import EncodingError
    from workbench.transform.raw import read_raw

    try:
        spec = bundle.spec
        binned = proxy_labels(read_raw(proxy_path, spec.columns, spec.file_format), spec,
                              bundle.configuration)
    except (OSError, EncodingError, ValueError, KeyError) as exc:
        return None, f"The proxy {proxy_path.name} could not be binned: {exc}"
    return binned, (f"Proxy: {proxy_path.name} ({len(binned):,} records after cleaning), public "
                    "data binned with the release's configuration. It stands in for a different "
                    "population, so differences are expected; it is shown for orientation only.")
