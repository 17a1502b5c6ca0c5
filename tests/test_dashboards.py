"""Dashboards: the query contract, the review pages' content, and real-browser sessions.

The browser tests (marked slow) start their own Voilà server on a free port, with Jupyter,
IPython and matplotlib config in a temporary folder, drive Debian's Chromium with Playwright,
block every request that leaves 127.0.0.1 (the dashboards must work offline), write
screenshots to ``artifacts/dashboards/`` and stop the server by its PID.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import ADULT_DRAFT, adult_proxy_csv, widget_by_class

from workbench.cli import dashboard as dash
from workbench.cli.main import build_parser, main
from workbench.validation import load_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "israel_births_2014.json"
ARTIFACTS = REPO / "artifacts" / "dashboards"
CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync"]
WIDGETS_TIMEOUT_MS = 120_000


# --- fixtures ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release bundle made by ``workbench run`` on a small frozen spec and a proxy sample."""
    from test_engine import _test_document

    from workbench.evidence.sampler import sample_proxy

    work = tmp_path_factory.mktemp("bundle")
    save_spec(_test_document(), work / "spec.frozen.json")
    sample_proxy(30_000, seed=11).to_csv(work / "data.csv", index=False)
    argv = ["run", str(work / "spec.frozen.json"), str(work / "data.csv"), "--out",
            str(work / "run"), "--quiet"]
    assert main(argv) == 0
    return work / "run"


@pytest.fixture(scope="module")
def tampered(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundle with one record removed from release.csv."""
    copy = tmp_path_factory.mktemp("tampered") / "release"
    shutil.copytree(bundle / "release", copy)
    lines = (copy / "release.csv").read_text().splitlines(keepends=True)
    (copy / "release.csv").write_text("".join(lines[:1] + lines[2:]))
    return copy


# --- the query contract and the command ---------------------------------------------------
def test_query_parameters_decode_the_kernel_query_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUERY_STRING", "spec=%2Fa%2Fb%20c.json&proxy=none&proxy=x.csv")
    assert dash.query_parameters() == {"spec": "/a/b c.json", "proxy": "x.csv"}
    monkeypatch.delenv("QUERY_STRING")
    assert dash.query_parameters() == {}


def test_resolve_path_defaults_none_and_repository_relative() -> None:
    assert dash.resolve_path(None, dash.DEFAULT_SPEC) == dash.DEFAULT_SPEC
    assert dash.resolve_path("  ", dash.DEFAULT_PROXY) == dash.DEFAULT_PROXY
    assert dash.resolve_path("None", dash.DEFAULT_PROXY) is None
    assert dash.resolve_path("examples/x.json") == REPO / "examples" / "x.json"
    assert dash.resolve_path("/tmp/b") == Path("/tmp/b")


def test_dashboard_query_round_trips_absolute_paths(tmp_path: Path) -> None:
    query = dash.dashboard_query({"bundle": tmp_path / "run dir", "proxy": "none",
                                  "dryrun": None})
    assert dash.query_parameters(query) == {"bundle": str(tmp_path / "run dir"),
                                            "proxy": "none"}


def test_every_dashboard_has_its_notebook_without_outputs() -> None:
    for board in dash.DASHBOARDS.values():
        nb = json.loads(board.notebook_path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
        assert "fast_kernel_imports()" in "".join(code[0]["source"])


def test_voila_command_is_local_with_culling_and_no_retries(tmp_path: Path) -> None:
    cmd = dash.voila_command(tmp_path / "x.ipynb", 8123)
    assert "--Voila.ip=127.0.0.1" in cmd and "--port=8123" in cmd and "--no-browser" in cmd
    assert "--Voila.port_retries=0" in cmd
    assert set(dash.CULL_FLAGS) <= set(cmd)
    assert not any("preheat" in c for c in cmd)


def test_dashboard_subcommand_parses_and_rejects_missing_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["dashboard", "spec", str(EXAMPLE), "--dryrun", "d.json"])
    assert (args.dashboard, args.path, args.dryrun) == ("spec", str(EXAMPLE), "d.json")
    assert main(["dashboard", "release", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["dashboard", "other"])


def test_fast_kernel_imports_keeps_spec_validation_working() -> None:
    code = ("from workbench.cli.dashboard import fast_kernel_imports; fast_kernel_imports(); "
            "import sys; from workbench.validation import load_spec; "
            f"print(load_spec({str(EXAMPLE)!r}).epsilon_total, "
            "sys.modules.get('rfc3987_syntax', 'absent'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "9.98" and out[1] in ("None", "absent")


# --- spec review content -------------------------------------------------------------------
def test_criterion_review_false_pass_by_kind(example_spec: Any) -> None:
    from workbench.widgets.dashboards.spec_review import MARGIN_5PCT, criterion_reviews
    from workbench.widgets.model.readouts import Readout

    c = example_spec.criterion("mean_birth_weight")
    readout = Readout(c.id, c.kind, c.threshold, c.epsilon, 1000, sensitivity=0.34, sigma=2.83)
    reviews = {r.id: r for r in criterion_reviews(example_spec, {c.id: readout})}
    bw = reviews["mean_birth_weight"]
    # the one definition: a true value 10% above T = 100, b = 0.34 / 0.17 = 2: ½·e^(−10/2)
    assert bw.false_pass == f"{0.5 * math.exp(-5):.2%}" == "0.34%" and bw.sigma == 2.83
    assert bw.margin == pytest.approx(0.34 / 0.17 * MARGIN_5PCT)
    assert reviews["relative_1way"].false_pass.startswith("5%")
    assert reviews["regression_coefficients"].false_pass == "—"
    assert reviews["marginals"].sigma is None and reviews["marginals"].margin is None
    assert len(reviews) == 8


def test_spec_review_widget_shows_hash_budget_and_every_section(example_spec: Any) -> None:
    from workbench.widgets.dashboards.spec_review import SpecReview

    review = SpecReview(example_spec, source="example.json")
    header = widget_by_class(review.widget, "wb-review-header").value
    assert example_spec.sha256 in header and "NOT FROZEN" in header and "9.98" in header
    assert list(review.tabs.titles) == list(SpecReview.TABS)

    def section(name: str) -> str:
        return widget_by_class(review.widget, f"wb-section-{name}").value

    assert all(c.id in section("criteria") for c in example_spec.criteria)
    assert "2 × (4 + 0.99) + 0 + 0 = 9.98" in section("budget")
    space = section("search-space")
    assert "1,440 configurations" in space and "No dry-run results" in space
    assert "grams_100" in section("columns")
    assert "Drop a confidential record if birth weight is below 500" in section("constraints")


def _dryrun_file(spec: Any, path: Path, probabilities: list[float]) -> Path:
    """The result file ``workbench dryrun --write-result`` writes, for a made-up result."""
    from test_dryrun import _synthetic_result

    from workbench.dryrun import write_result

    return write_result(_synthetic_result(spec, probabilities, reps=10), spec, path, "proxy")


def test_dryrun_results_give_expected_iterations(example_spec: Any, tmp_path: Path) -> None:
    from workbench.dryrun import read_pass_rates
    from workbench.widgets.dashboards.spec_review import search_space_html

    run = read_pass_rates(_dryrun_file(example_spec, tmp_path / "d.json", [0.1, 0.3]))
    assert [(p, n) for _, p, n in run.pass_probabilities] == [(0.1, 10), (0.3, 10)]
    assert run.spec_sha256 == example_spec.sha256 and run.data == "proxy"
    text = search_space_html(example_spec, run)
    assert "Mean pass probability p = 20.0%" in text
    assert "E[iterations] = 5.0" in text and "P(⊥) = 0.0%" in text
    bad = _write(tmp_path / "bad.json", {"format": "workbench.dryrun/1", "configurations": [
        {"configuration": {"transforms": {}}, "pass_probability": 0.5, "trials": 2}]})
    with pytest.raises(ValueError, match=r"configurations\[0\]"):
        read_pass_rates(bad)
    with pytest.raises(ValueError, match="format"):
        read_pass_rates(_write(tmp_path / "other.json", {"configurations": []}))


def test_dryrun_records_give_the_same_pass_rates_as_the_result_file(
        example_spec: Any, tmp_path: Path) -> None:
    from test_dryrun import _synthetic_result

    from workbench.dryrun import read_pass_rates, read_records, write_records, write_result

    result = _synthetic_result(example_spec, [0.5, 0.0, 0.25])
    path = write_records(result.records, tmp_path / "records.jsonl")
    assert read_records(path) == list(result.records)
    from_records = read_pass_rates(path)
    from_result = read_pass_rates(write_result(result, example_spec, tmp_path / "d.json"))
    assert [(c.key, p, n) for c, p, n in from_records.pass_probabilities] == [
        (c.key, p, n) for c, p, n in from_result.pass_probabilities] == [
        (c.key, p, 4) for c, p in zip(result.configurations, (0.5, 0.0, 0.25), strict=True)]
    path.write_text(path.read_text().splitlines()[0] + "\nnot json\n")
    with pytest.raises(ValueError, match="line 2"):
        read_pass_rates(path)


def test_dryrun_command_writes_the_file_the_spec_review_reads(tmp_path: Path) -> None:
    from test_dryrun import _cheap_document

    from workbench.dryrun import read_pass_rates, read_records
    from workbench.evidence.sampler import sample_proxy
    from workbench.widgets.dashboards.spec_review import search_space_html

    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_cheap_document()))
    sample_proxy(6_000, seed=2).to_csv(proxy_path, index=False)
    result, records = tmp_path / "result.json", tmp_path / "records.jsonl"
    assert main(["dryrun", str(spec_path), str(proxy_path), "--limit", "2", "--repetitions",
                 "2", "--workers", "0", "--no-cache", "--quiet", "--noise", "seeded",
                 "--write-result", str(result), "--records", str(records)]) == 0
    spec = load_spec(spec_path)
    rates = read_pass_rates(result)
    assert rates.spec_sha256 == spec.sha256 and rates.data == "proxy.csv"
    assert len(rates.pass_probabilities) == 2 and len(read_records(records)) == 4
    assert {c.key: p for c, p, _ in rates.pass_probabilities} == {
        c.key: p for c, p, _ in read_pass_rates(records).pass_probabilities}
    assert "Expected iterations (from dry runs)" in search_space_html(spec, rates)


def _write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc))
    return path


# --- release review content ----------------------------------------------------------------
def test_report_html_has_the_overview_notes_and_fits_the_page(bundle: Path) -> None:
    text = (bundle / "release" / "report.html").read_text()
    assert 'id="overview"' in text and "margin chart" in text and "DP value ÷ threshold" not in text
    assert "sufficient statistics" in text and "noise was negative" in text
    assert text.count('<div class="fit">') == 2 and ".fit table{width:100%" in text


def test_release_review_of_a_good_bundle(bundle: Path) -> None:
    from workbench.engine import verify_bundle
    from workbench.widgets.dashboards.release_review import ReleaseReview, load_bundle

    review = ReleaseReview(load_bundle(bundle), verify_bundle(bundle))
    header = widget_by_class(review.widget, "wb-review-header").value
    assert "PASSED" in header and "FAILED" not in header
    criteria = widget_by_class(review.widget, "wb-section-criteria").value
    assert criteria.count("wb-pass\">pass<") == 3 and "all criteria passed" in criteria
    assert "8.08" in widget_by_class(review.widget, "wb-section-budget").value
    plot = widget_by_class(review.widget, "wb-marginal-plot")
    assert plot is review.marginals.image and plot.value[:4] == b"\x89PNG"
    assert "<h2>Intended uses</h2>" in widget_by_class(review.widget,
                                                       "wb-section-datasheet").value


def test_release_review_of_a_tampered_bundle_names_the_reason(tampered: Path) -> None:
    from workbench.engine import verify_bundle
    from workbench.widgets.dashboards.release_review import ReleaseReview, load_bundle

    verification = verify_bundle(tampered)
    review = ReleaseReview(load_bundle(tampered), verification)
    assert "FAILED" in review.header.value
    assert verification.problems and all(p.split(":")[0] in review.header.value
                                         for p in verification.problems)


def test_release_review_overlays_the_proxy_binned_like_the_release(bundle: Path) -> None:
    from workbench.widgets.dashboards.release_review import release_review_dashboard

    root = release_review_dashboard(bundle, dash.DEFAULT_PROXY)
    overlay = widget_by_class(root, "wb-proxy-overlay")
    plot = widget_by_class(root, "wb-marginal-plot")
    plain = plot.value
    assert not overlay.disabled
    assert "after cleaning" in widget_by_class(root, "wb-proxy-note").value
    overlay.value = True
    assert plot.value != plain


def test_release_overview_sorts_margins_and_offers_the_bundle_files(bundle: Path) -> None:
    """Overview tab: success / warning / danger from margin vs σ, a margin chart, overlays
    against the proxy, and downloads carrying release.csv, report.html and the bundle zip."""
    import base64
    import io
    import zipfile

    from workbench.report.overview import margins, status_counts
    from workbench.widgets.dashboards.release_review import release_review_dashboard

    root = release_review_dashboard(bundle, dash.DEFAULT_PROXY)
    html_text = widget_by_class(root, "wb-release-overview").value
    results = json.loads((bundle / "release" / "criteria.json").read_text())["criteria"]
    rows = margins(results)
    counts = status_counts(rows)
    assert sum(counts.values()) == 3 and counts["danger"] == 0
    assert f"{counts['success']} success" in html_text and "margin chart" in html_text
    assert "against the public proxy" in html_text
    for r, row in zip(results, rows, strict=True):
        sigma = r["sigma"] or 0.0
        t = min(r["threshold"], r["adjusted_threshold"] or r["threshold"])
        assert row.margin == pytest.approx(t - r["value"])
        assert row.status == ("success" if t - r["value"] >= sigma else "warning")

    def payload(slug: str) -> bytes:
        m = re.search(rf"wb-download-{slug}' download='[^']+' href='data:[^;]+;base64,([^']+)'",
                      html_text)
        return base64.b64decode(m.group(1))

    release = bundle / "release"
    assert payload("release") == (release / "release.csv").read_bytes()
    assert payload("report") == (release / "report.html").read_bytes()
    names = zipfile.ZipFile(io.BytesIO(payload("bundle"))).namelist()
    assert {f"release/{p.name}" for p in release.iterdir()} == set(names)


def test_report_shows_the_overview_and_how_to_read_each_value() -> None:
    from workbench.report.overview import margins, reading_note

    results = [
        {"id": "reg", "kind": "regression_coefficients", "threshold": 30.0, "value": 12.0,
         "passed": True, "epsilon": 0.5, "sigma": 95.33, "adjusted_threshold": None},
        {"id": "mae", "kind": "regression_mae", "threshold": 0.2, "value": -0.15,
         "passed": True, "epsilon": 0.08, "sigma": 0.05, "adjusted_threshold": None},
        {"id": "m", "kind": "max_marginal_error", "threshold": 0.01, "value": 0.02,
         "passed": False, "epsilon": 0.01, "sigma": 0.001, "adjusted_threshold": None},
    ]
    assert "sufficient statistics" in reading_note(results[0])
    assert "noise drawn was negative" in reading_note(results[1])
    assert [r.status for r in margins(results)] == ["success", "success", "danger"]


def test_release_review_explains_how_to_pass_a_bundle() -> None:
    from workbench.widgets.dashboards.release_review import release_review_dashboard

    assert "?bundle=PATH" in widget_by_class(release_review_dashboard(None),
                                             "wb-message").value


def test_datasheet_markdown_is_rendered_and_raw_html_escaped() -> None:
    from workbench.widgets.dashboards.release_review import markdown_html

    out = markdown_html("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<script>x</script>")
    assert "<h1>Title</h1>" in out and "<td>1</td>" in out
    assert "<script>" not in out and "&lt;script&gt;" in out


# --- co-design dashboard ------------------------------------------------------------------
def test_codesign_dashboard_offers_the_frozen_spec_as_a_download(tmp_path: Path) -> None:
    import base64

    from workbench.widgets.dashboards.codesign import codesign_dashboard

    root = codesign_dashboard(EXAMPLE, None, tmp_path)
    assert "no proxy: readouts are off" in widget_by_class(root, "wb-codesign-title").value
    link = widget_by_class(root, "wb-download")
    assert link.value == ""
    freeze = next(w for w in widget_by_class(root, "wb-section-export").children
                  if getattr(w, "description", "") == "Freeze and export")
    freeze.click()  # no proxy, so no forecast: the export needs an acknowledgement
    assert link.value == "" and not (tmp_path / "israel_births_2014.frozen.json").exists()
    widget_by_class(root, "wb-export-acknowledge").value = True
    freeze.click()
    written = tmp_path / "israel_births_2014.frozen.json"
    data = re.search(r"base64,([A-Za-z0-9+/=]+)", link.value).group(1)
    assert base64.b64decode(data) == written.read_bytes()
    assert load_spec(written, require_frozen=True).epsilon_total == pytest.approx(9.98)
    broken = codesign_dashboard(tmp_path / "missing.json", None, tmp_path)
    assert "cannot start" in widget_by_class(broken, "wb-message").value


# --- real browser --------------------------------------------------------------------------
def _environment(tmp: Path) -> dict[str, str]:
    """Jupyter, IPython and matplotlib write their config to ``tmp``, not to ``~``."""
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter_config"), ("JUPYTER_DATA_DIR", "jupyter_data"),
                     ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib")):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    env["MPLBACKEND"] = "Agg"
    return env


@contextmanager
def voila(name: str, tmp: Path) -> Iterator[str]:
    """A Voilà server for one dashboard; yields its base URL and stops it by PID."""
    port = dash.free_port()
    log = tmp / f"voila-{name}.log"
    process = dash.start_voila(dash.DASHBOARDS[name].notebook_path, port,
                               env=_environment(tmp), log=log)
    try:
        assert dash.wait_for_port(port, process, timeout=90), log.read_text()[-3000:]
        yield f"http://127.0.0.1:{port}/"
    finally:
        dash.stop(process)


@contextmanager
def browser(tmp: Path, base: str, requests: list[str] | None = None) -> Iterator[Any]:
    """A 1280×800 Chromium page that may only talk to ``base``; yields (page, blocked URLs).

    Every request the browser makes (pages, scripts, styles, fonts, images, websockets) is
    recorded in ``requests``; one to any host but 127.0.0.1 fails the test (offline for real).
    """
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    blocked: list[str] = []
    seen: list[str] = [] if requests is None else requests

    def route(r: Any) -> None:
        if r.request.url.startswith(base):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp / "chromium"), executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS,
            viewport={"width": 1280, "height": 800}, accept_downloads=True)
        try:
            ctx.on("request", lambda r: seen.append(r.url))
            page = ctx.new_page()
            page.on("websocket", lambda ws: seen.append(ws.url))
            page.set_default_timeout(WIDGETS_TIMEOUT_MS)
            page.route("**/*", route)
            yield page, blocked
        finally:
            ctx.close()
    assert not blocked, blocked
    assert not outside_hosts(seen), outside_hosts(seen)


def outside_hosts(urls: list[str]) -> list[str]:
    """URLs whose host is not 127.0.0.1 (data: and blob: URLs stay in the page)."""
    from urllib.parse import urlsplit

    return [u for u in urls if urlsplit(u).scheme not in ("data", "blob")
            and urlsplit(u).hostname != "127.0.0.1"]


def _open(page: Any, url: str, selector: str = ".wb-review-tabs") -> None:
    page.goto(url, timeout=WIDGETS_TIMEOUT_MS)
    page.wait_for_selector(selector, state="visible")


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _tab(page: Any, title: str) -> None:
    page.get_by_role("tab", name=title, exact=True).click()
    page.wait_for_timeout(400)


def _readout_cell(page: Any, criterion_id: str, column: str) -> str:
    """The text of one readout cell in the criteria editor row of ``criterion_id``."""
    return page.evaluate(
        """([id, column]) => {
            const input = [...document.querySelectorAll('input')].find(i => i.value === id);
            const table = input.closest('.wb-criterion-row').querySelector('.wb-readout table');
            const heads = [...table.querySelectorAll('th')].map(th => th.textContent);
            return table.querySelectorAll('td')[heads.indexOf(column)].textContent;
        }""", [criterion_id, column])


def _row_input(page: Any, criterion_id: str, label: str) -> Any:
    """A labelled input of the criteria editor row of ``criterion_id``."""
    page.evaluate(
        """(id) => { const input = [...document.querySelectorAll('input')]
                        .find(i => i.value === id);
                     input.closest('.wb-criterion-row').setAttribute('data-test-row', id); }""",
        criterion_id)
    row = page.locator(f"[data-test-row='{criterion_id}']")
    return row.locator(".widget-text", has=page.locator(f"label:text-is('{label}')")).locator(
        "input")


def _set_threshold(page: Any, criterion_id: str, value: float) -> None:
    box = _row_input(page, criterion_id, "threshold")
    box.fill(str(value))
    box.press("Enter")
    page.wait_for_timeout(1500)


def _export(page: Any, saved: Path, shot: str) -> Path:
    """Freeze and export (acknowledging a forecast below the target when the panel asks for
    it), download the frozen spec to ``saved`` and take a screenshot."""
    page.wait_for_selector(".wb-export-forecast >> text=Forecast signed off on")
    ack = page.locator(".wb-export-acknowledge input")
    if ack.is_visible():
        ack.check()
    page.get_by_role("button", name="Freeze and export").click()
    link = page.locator(".wb-download a[download]")
    link.wait_for()
    with page.expect_download() as info:
        link.click()
    info.value.save_as(saved)
    _shot(page, shot)
    return saved


def _readouts(page: Any) -> tuple[str, str, int]:
    """The Criteria tab's readout cells, the summary line and the number of spread charts."""
    _tab(page, "Criteria")
    page.wait_for_selector("text=P(false pass)")
    page.wait_for_selector(".wb-spread")
    cells = page.locator(".wb-section-criteria .wb-readout").all_inner_texts()
    return "\n".join(cells), page.locator(".wb-summary").inner_text(), \
        page.locator(".wb-spread").count()


def _only_local_requests(requests: list[str]) -> None:
    """Every request of the page (HTML, scripts, styles, fonts, images, websockets) was
    recorded and none left 127.0.0.1 (Font Awesome comes from Voilà's own bundle)."""
    assert len(requests) > 10
    assert not outside_hosts(requests), outside_hosts(requests)
    assert not any("cdn" in u for u in requests)


@pytest.mark.slow
def test_codesign_dashboard_in_a_browser(tmp_path: Path) -> None:
    """One Voilà server and page serve several checks (each page load is a new kernel): the
    same seed gives the same readouts on two page loads, the false-pass readout changes at
    threshold 80, edits reach the exported frozen spec, no request leaves 127.0.0.1."""
    requests: list[str] = []
    with voila("codesign", tmp_path) as base, browser(tmp_path, base, requests) as (page, _b):
        _open(page, base, ".wb-codesign-tabs")
        first = _readouts(page)
        _open(page, base, ".wb-codesign-tabs")
        assert "Public proxy: 166,000 rows" in page.inner_text("body")
        _shot(page, "codesign_data")
        second = _readouts(page)
        assert first == second
        assert first[2] >= 8 and "from 5 quick samples of the proxy" in first[0]
        assert "forecast P(all pass)" in first[1]

        before = _readout_cell(page, "mean_birth_weight", "P(false pass)")
        _set_threshold(page, "mean_birth_weight", 80)
        assert _row_input(page, "mean_birth_weight", "threshold").input_value() == "80"
        assert _readout_cell(page, "mean_birth_weight", "P(false pass)") != before
        # The readout is live: a threshold below the proxy's value makes it a (false) failure.
        _set_threshold(page, "mean_birth_weight", 1)
        assert re.fullmatch(r"[\d.]+%|[\d.]+e[-+]\d+", _readout_cell(
            page, "mean_birth_weight", "P(false pass)"))
        _set_threshold(page, "mean_birth_weight", 80)
        _shot(page, "codesign_criteria")

        _tab(page, "Budget")
        total = page.locator(".wb-budget-total")
        assert "= 9.98" in total.inner_text()
        readout = page.locator(".wb-eps-generator .widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("3")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.body.innerText.includes('= 7.98')")
        page.wait_for_timeout(2000)  # let the redrawn bar chart arrive before the screenshot
        _shot(page, "codesign_budget")

        _tab(page, "Export")
        assert page.locator(".wb-export-acknowledge input").is_visible()  # 13% < 60%
        saved = _export(page, tmp_path / "downloaded.frozen.json", "codesign_export")

    _only_local_requests(requests)
    spec = load_spec(saved, require_frozen=True)
    assert spec.criterion("mean_birth_weight").threshold == 80
    assert spec.budget.epsilon_generator == 3 and spec.epsilon_total == pytest.approx(7.98)


@pytest.mark.slow
def test_spec_review_dashboard_in_a_browser(tmp_path: Path, example_spec: Any) -> None:
    dryrun = _dryrun_file(example_spec, tmp_path / "dryrun.json", [0.1, 0.3])
    requests: list[str] = []
    with voila("spec", tmp_path) as base, browser(tmp_path, base, requests) as (page, _b):
        _open(page, base)
        header = page.locator(".wb-review-header").inner_text()
        assert "ε_total = 9.98" in header and example_spec.sha256 in header
        rows = page.locator(".wb-section-criteria table").locator("tr")
        assert rows.count() == 1 + 8
        body = page.inner_text("body")
        assert all(c.id in body for c in example_spec.criteria)
        assert page.locator(".wb-section-criteria .wb-floor").count() == 8  # default proxy
        _shot(page, "spec_review_criteria")
        _tab(page, "Budget")
        assert "2 × (4 + 0.99) + 0 + 0 = 9.98" in page.inner_text("body")
        _shot(page, "spec_review_budget")
        _tab(page, "Constraints")
        _shot(page, "spec_review_constraints")

        _open(page, base + "?" + dash.dashboard_query({"dryrun": dryrun, "proxy": "none"}))
        _tab(page, "Search space")
        assert "E[iterations] = 5.0" in page.inner_text("body")
        _shot(page, "spec_review_search_space")
    _only_local_requests(requests)


@pytest.mark.slow
def test_release_review_dashboard_passed_in_a_browser(tmp_path: Path, bundle: Path) -> None:
    requests: list[str] = []
    with voila("release", tmp_path) as base, browser(tmp_path, base, requests) as (page, _b):
        _open(page, base + "?" + dash.dashboard_query({"bundle": bundle}))
        header = page.locator(".wb-review-header").inner_text()
        assert "verify PASSED" in header and "FAILED" not in header
        table = page.locator(".wb-section-criteria table")
        assert table.locator("tr").count() == 1 + 3
        assert table.locator(".wb-pass").count() == 3
        _shot(page, "release_review_criteria")
        _tab(page, "Marginals")
        page.get_by_text("overlay the public proxy's marginal").click()
        page.wait_for_timeout(1500)
        _shot(page, "release_review_marginals")
        _tab(page, "Datasheet")
        assert "Intended uses" in page.inner_text("body")
        _shot(page, "release_review_datasheet")
    _only_local_requests(requests)


@pytest.mark.slow
def test_release_review_dashboard_failed_in_a_browser(tmp_path: Path, tampered: Path) -> None:
    from workbench.engine import verify_bundle

    reasons = verify_bundle(tampered).problems
    with voila("release", tmp_path) as base, browser(tmp_path, base) as (page, _blocked):
        _open(page, base + "?" + dash.dashboard_query({"bundle": tampered}))
        header = page.locator(".wb-review-header").inner_text()
        assert "verify FAILED" in header
        assert reasons and all(reason in header for reason in reasons)
        _shot(page, "release_review_failed")
        _tab(page, "Verify checks")
        _shot(page, "release_review_failed_checks")


@pytest.mark.slow
def test_guided_flow_from_an_empty_draft_to_an_exported_frozen_spec(tmp_path: Path) -> None:
    draft = REPO / "examples" / "births_empty_draft.json"
    with voila("codesign", tmp_path) as base, browser(tmp_path, base) as (page, _blocked):
        _open(page, base + "?" + dash.dashboard_query({"spec": draft}), ".wb-codesign-tabs")
        page.wait_for_selector(".wb-checklist")
        assert "no acceptance criterion yet" in page.locator(".wb-checklist").inner_text()
        assert "ε_total = 1" in page.locator(".wb-summary").inner_text()
        _shot(page, "guided_empty_draft")
        page.locator(".wb-step-data").click()
        page.locator(".wb-next").click()  # Data & schema → Constraints
        page.locator(".wb-step-criteria").click()
        page.locator(".wb-section-criteria select").first.select_option("max_marginal_error")
        page.get_by_role("button", name="add criterion").click()
        page.wait_for_function("() => !document.querySelector('.wb-checklist').innerText"
                               ".includes('no acceptance criterion yet')")
        page.wait_for_selector(".wb-section-criteria .wb-readout table")
        assert "from 5 quick samples of the proxy" in page.locator(
            ".wb-section-criteria").inner_text()
        page.locator(".wb-step-budget").click()
        page.locator(".wb-step-data").click()
        _tab(page, "Metadata")
        dataset = page.locator(".wb-meta-dataset input")
        dataset.fill("births-guided-test")
        dataset.press("Enter")
        page.locator(".wb-step-signoff").click()
        saved = _export(page, tmp_path / "guided.frozen.json", "guided_exported")
        page.wait_for_function("() => document.querySelector('.wb-checklist').innerText"
                               ".includes('Sign-off & export: done')")
    spec = load_spec(saved, require_frozen=True)
    assert [c.kind for c in spec.criteria] == ["max_marginal_error"]
    assert spec.epsilon_total == pytest.approx(1.0 + spec.criteria[0].epsilon)


@pytest.mark.slow
def test_release_dashboard_downloads(tmp_path: Path, bundle: Path) -> None:
    import zipfile

    release = bundle / "release"
    with voila("release", tmp_path) as base, browser(tmp_path, base) as (page, _blocked):
        _open(page, base + "?" + dash.dashboard_query({"bundle": bundle}))
        page.wait_for_selector(".wb-release-overview .wb-margins")
        assert "success" in page.locator(".wb-overview-summary").inner_text()
        _shot(page, "release_review_overview")
        saved = {}
        for slug in ("release", "report", "bundle"):
            with page.expect_download() as info:
                page.locator(f".wb-download-{slug}").click()
            saved[slug] = tmp_path / info.value.suggested_filename
            info.value.save_as(saved[slug])
    assert saved["release"].read_bytes() == (release / "release.csv").read_bytes()
    assert saved["report"].read_bytes() == (release / "report.html").read_bytes()
    with zipfile.ZipFile(saved["bundle"]) as zf:
        assert zf.read("release/MANIFEST.json") == (release / "MANIFEST.json").read_bytes()


@pytest.mark.slow
def test_dashboard_command_prints_a_working_url_and_stops_voila(tmp_path: Path) -> None:
    import urllib.request

    cmd = [sys.executable, "-m", "workbench.cli.main", "dashboard", "spec", str(EXAMPLE)]
    process = subprocess.Popen(cmd, env=_environment(tmp_path), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        match = re.search(r"(http://127\.0\.0\.1:(\d+)/\?spec=\S+)", line)
        assert match, line + process.stderr.read()  # type: ignore[union-attr]
        with urllib.request.urlopen(match.group(1), timeout=120) as response:
            page = response.read().decode("utf-8")
        assert "application/vnd.jupyter.widget-view+json" in page
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    port = int(match.group(2))
    deadline = time.monotonic() + 15
    while dash.wait_for_port(port, timeout=0.5) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not dash.wait_for_port(port, timeout=0.5)


@pytest.mark.slow
def test_codesign_walk_on_a_new_schema_survives_a_reload_and_signs_off_the_forecast(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27, must-show 3: from the empty draft of a schema the project never shipped a proxy
    for (Adult's columns, a small public proxy built here): edit the metadata, choose a
    generator and a hyperparameter, reload the page (the autosaved draft survives), export.
    The sign-off records the forecast."""
    monkeypatch.delenv("WORKBENCH_DRAFTS")  # autosave beside the draft, as a user gets it
    draft = tmp_path / "census_draft.json"
    shutil.copy(ADULT_DRAFT, draft)
    proxy = adult_proxy_csv(tmp_path)
    autosave = tmp_path / "census_draft.autosave.json"
    with voila("codesign", tmp_path) as base, browser(tmp_path, base) as (page, _blocked):
        url = base + "?" + dash.dashboard_query({"spec": draft, "proxy": proxy})
        _open(page, url, ".wb-codesign-tabs")
        page.wait_for_selector(".wb-checklist")
        assert "no criteria yet: nothing to forecast" in page.locator(".wb-summary").inner_text()
        assert "done ✓" not in page.locator(".wb-checklist").inner_text()

        _tab(page, "Metadata")
        for css, text in ((".wb-meta-title input", "Census extract 2024"),
                          (".wb-meta-owner input", "Statistics office"),
                          (".wb-meta-dataset input", "Census 2024!")):
            page.locator(css).fill(text)
            page.locator(css).press("Enter")
        page.wait_for_selector("text=must be lower-case letters")  # the validator's words
        page.locator(".wb-meta-dataset input").fill("census-extract-2024")
        page.locator(".wb-meta-dataset input").press("Enter")
        page.wait_for_function("() => !document.body.innerText.includes('must be lower-case')")

        _tab(page, "Criteria")
        page.locator(".wb-section-criteria select").first.select_option("max_marginal_error")
        page.get_by_role("button", name="add criterion").click()
        page.wait_for_selector(".wb-section-criteria >> text=cannot reproduce")  # independent
        _shot(page, "codesign_new_schema_hint")

        _tab(page, "Generator")
        page.locator(".wb-generator-family select").select_option("perturbed_histogram")
        page.wait_for_selector(".wb-hp-max_cells input")
        page.locator(".wb-hp-max_cells input").fill("500000")
        page.locator(".wb-hp-max_cells input").press("Enter")
        page.wait_for_selector("text=can reproduce what every criterion reads")
        _shot(page, "codesign_new_schema_generator")
        _tab(page, "Budget")
        page.get_by_role("button", name="use this budget").click()
        page.wait_for_function("() => document.querySelector('.wb-checklist').innerText"
                               ".includes('Budget: done')")
        page.wait_for_timeout(1000)
        assert autosave.exists()

        page.reload()  # a new kernel: the draft must come back from the autosave
        page.wait_for_selector(".wb-codesign-tabs", state="visible")
        page.wait_for_selector(".wb-autosave >> text=reopened the draft")
        assert "Census extract 2024" in page.locator(".wb-codesign-title").inner_text()
        assert "Budget: done" in page.locator(".wb-checklist").inner_text()
        _tab(page, "Generator")
        assert page.locator(".wb-generator-family select").input_value() == \
            "perturbed_histogram"
        assert page.locator(".wb-hp-max_cells input").input_value() == "500000"

        _tab(page, "Export")
        forecast = page.locator(".wb-export-forecast").inner_text()
        assert "Forecast signed off on: P(all criteria pass) per attempt =" in forecast
        saved = _export(page, tmp_path / "downloaded.frozen.json", "codesign_new_schema_export")

    spec = load_spec(saved, require_frozen=True)
    assert spec.metadata.title == "Census extract 2024" and spec.metadata.dataset == \
        "census-extract-2024" and spec.metadata.owner == "Statistics office"
    assert spec.generator.family == "perturbed_histogram"
    assert list(spec.generator.hyperparameter_sets()) == [{"max_cells": 500000}]
    assert spec.column_names == ("age", "education", "sex", "hours_per_week", "income")
    signoff = (tmp_path / "census_draft.frozen.signoff.md").read_text(encoding="utf-8")
    assert spec.sha256 in signoff and "## Forecast" in signoff
    lines = [x for x in signoff.splitlines() if x.startswith("- ") and (
        "P(all criteria pass)" in x or "Target" in x or "Acknowledged" in x)]
    assert lines and "P(all criteria pass) per attempt =" in lines[0]
    print("\nsign-off forecast lines:\n" + "\n".join(lines))
