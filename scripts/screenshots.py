"""Screenshots of the three dashboards for the README, taken in Debian's Chromium by Playwright.

    python scripts/screenshots.py [--bundle RUN_DIR] [--out docs/screenshots]

Each dashboard is served by its own Voilà server on 127.0.0.1 (started and stopped by PID,
Jupyter/IPython/matplotlib config in a temporary folder) and every request that leaves
127.0.0.1 is refused and reported. Without ``--bundle`` the release review shows a bundle made
here by ``workbench run`` of the lean example on the public proxy (a fresh budget store in a
temporary folder, the proxy overlaid in the report).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.cli import dashboard as dash  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
LEAN = REPO / "examples" / "israel_births_2014_lean.frozen.json"


def make_bundle(tmp: Path) -> Path:
    """A release bundle of the lean example on the public proxy (fresh budget store)."""
    run = tmp / "run"
    cmd = [sys.executable, "-m", "workbench.cli.main", "run", str(LEAN), str(PROXY), "--out",
           str(run), "--budget-store", str(tmp / "budgets"), "--proxy", str(PROXY), "--quiet"]
    subprocess.run(cmd, cwd=REPO, check=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    return run


def shoot(name: str, query: dict, selector: str, out: Path, tmp: Path,
          actions: list | None = None) -> Path:
    """Serve one dashboard, open it, run ``actions`` on the page and save a screenshot."""
    from playwright.sync_api import sync_playwright

    port = dash.free_port()
    process = dash.start_voila(dash.DASHBOARDS[name].notebook_path, port,
                               env=dash.isolated_environment(tmp), log=tmp / f"voila-{name}.log")
    outside: list[str] = []
    try:
        if not dash.wait_for_port(port, process, timeout=120):
            raise SystemExit(f"Voilà did not start; see {tmp / f'voila-{name}.log'}")
        base = f"http://127.0.0.1:{port}/"
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                str(tmp / f"chromium-{name}"), executable_path=CHROMIUM, headless=True,
                args=list(dash.HEADLESS_CHROMIUM_ARGS), viewport={"width": 1280, "height": 900})
            try:
                page = ctx.new_page()
                page.set_default_timeout(240_000)

                def route(r):
                    if r.request.url.startswith(base):
                        r.continue_()
                    else:
                        outside.append(r.request.url)
                        r.abort()

                page.route("**/*", route)
                page.goto(base + ("?" + dash.dashboard_query(query) if query else ""))
                page.wait_for_selector(selector, state="visible")
                for action in actions or []:
                    action(page)
                page.wait_for_timeout(2500)
                target = out / f"{name}.png"
                page.screenshot(path=str(target), full_page=False)
            finally:
                ctx.close()
    finally:
        dash.stop(process)
    if outside:
        raise SystemExit(f"{name}: requests outside 127.0.0.1: {outside}")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=None, help="run directory to review")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="workbench-shots-") as folder:
        tmp = Path(folder)
        bundle = args.bundle or make_bundle(tmp)

        def criteria(page) -> None:
            page.get_by_role("tab", name="Criteria", exact=True).click()
            page.wait_for_selector(".wb-spread")

        shots = [
            shoot("codesign", {}, ".wb-codesign-tabs", args.out, tmp, [criteria]),
            shoot("spec", {}, ".wb-review-tabs", args.out, tmp),
            shoot("release", {"bundle": bundle}, ".wb-release-overview", args.out, tmp),
        ]
    for shot in shots:
        print(f"wrote {shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
