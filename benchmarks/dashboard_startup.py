"""Benchmark: seconds from launching Voilà to an interactive dashboard, for each dashboard.

For each of codesign (default proxy and example), spec (the example, with the proxy's Δ/σ)
and release (a bundle made here by ``workbench run`` on a small frozen spec), the clock starts
when the Voilà process is launched, exactly as ``workbench dashboard`` launches it, and stops
when the dashboard's tabs (``.widget-tab``) are visible in headless Chromium at 1280×800. The
browser is started first, as a user's browser is already open. Target: ≤ 20 s each.

Run: python benchmarks/dashboard_startup.py [--repeats 3] [--bundle RUN_DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from workbench.cli import dashboard as dash

REPO = Path(__file__).resolve().parents[1]
SELECTOR = ".widget-tab"
TARGET_S = 20.0


def make_bundle(tmp: Path) -> Path:
    """A release bundle from ``workbench run`` on a small frozen spec (about 10 s, untimed)."""
    sys.path.insert(0, str(REPO / "tests"))
    from test_engine import _test_document

    from workbench.cli.main import main
    from workbench.evidence.sampler import sample_proxy
    from workbench.validation import save_spec

    save_spec(_test_document(), tmp / "spec.frozen.json")
    sample_proxy(30_000, seed=11).to_csv(tmp / "data.csv", index=False)
    argv = ["run", str(tmp / "spec.frozen.json"), str(tmp / "data.csv"), "--out",
            str(tmp / "run"), "--quiet"]
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    if status != 0:
        sys.exit("could not make a release bundle")
    return tmp / "run"


def time_to_interactive(context: object, name: str, query: str, tmp: Path) -> float:
    """Launch Voilà, open the page as soon as the port opens, wait for the tabs; seconds."""
    port = dash.free_port()
    page = context.new_page()  # type: ignore[attr-defined]
    start = time.perf_counter()
    process = dash.start_voila(dash.DASHBOARDS[name].notebook_path, port,
                               env=dash.isolated_environment(tmp), log=tmp / f"voila-{name}.log")
    try:
        if not dash.wait_for_port(port, process, timeout=120):
            sys.exit(f"Voilà did not start for {name}; see {tmp / f'voila-{name}.log'}")
        page.goto(f"http://127.0.0.1:{port}/?{query}", timeout=180_000)
        try:
            page.wait_for_selector(SELECTOR, state="visible", timeout=180_000)
        except Exception:
            log = (tmp / f"voila-{name}.log").read_text()[-2000:]
            sys.exit(f"{name}: no tabs after 180 s; the end of Voilà's log:\n{log}")
        return time.perf_counter() - start
    finally:
        page.close()
        dash.stop(process)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bundle", type=Path, help="a run directory (default: make one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as name:
        tmp = Path(name)
        bundle = args.bundle or make_bundle(tmp)
        cases = [("codesign", ""), ("spec", ""),
                 ("release", dash.dashboard_query({"bundle": bundle}))]
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                str(tmp / "chromium"), executable_path="/usr/bin/chromium", headless=True,
                args=list(dash.HEADLESS_CHROMIUM_ARGS), viewport={"width": 1280, "height": 800})
            try:
                load = os.getloadavg()[0]
                print(f"launch → tabs visible, {args.repeats} repeats, {os.cpu_count()} cores, "
                      f"load average {load:.1f} at the start")
                for board, query in cases:
                    times = [time_to_interactive(context, board, query, tmp)
                             for _ in range(args.repeats)]
                    med = statistics.median(times)
                    verdict = "ok" if med <= TARGET_S else "OVER TARGET"
                    print(f"{board:<9} median {med:5.1f} s  (runs: "
                          f"{', '.join(f'{t:.1f}' for t in times)})  target ≤ {TARGET_S:.0f} s: "
                          f"{verdict}")
            finally:
                context.close()


if __name__ == "__main__":
    main()
