"""Issue 38's bar, "a whole run no slower than from CSV": the CLI's whole ``workbench run`` of
the lean design (examples/israel_births_2014_lean.frozen.json, rehearsed with one seed) at
4,000,000 rows (the 166k proxy tiled) from CSV, DuckDB and PostgreSQL, the sources taking turns
for ``--rounds`` rounds, so a load that drifts during the benchmark falls on every source alike.

Each run is its own process (``--cli DATA``: the CLI's ``main`` in-process, then its wall time
and peak RSS, VmHWM) writing a release bundle, verified as the CLI always does. Printed: every
run, then per source the median wall time, its spread (min–max) and the largest peak, and each
source's median against CSV's. The read alone (where the sources differ) is
``benchmarks/data_sources.py --read-only``.

    python benchmarks/data_sources_whole.py [--rows 4000000] [--rounds 3]
                                            [--sources csv duckdb postgresql]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from data_sources import REPO, _env, _peak_gb, prepare

FROZEN = REPO / "examples" / "israel_births_2014_lean.frozen.json"
SEED = "7"


def one_run(data: str) -> dict:
    """In this process: the CLI's whole run from DATA into a temporary folder; its exit code,
    wall time and peak RSS."""
    from workbench.cli.main import main

    with tempfile.TemporaryDirectory(prefix="workbench-whole-") as tmp:
        t = time.perf_counter()
        code = main(["run", str(FROZEN), data, "--out", f"{tmp}/run", "--budget-store",
                     f"{tmp}/budgets", "--rehearse", SEED, "--quiet"])
        wall = time.perf_counter() - t
        release = Path(tmp) / "run" / "release" / "release.csv"
        released = release.read_bytes() if code == 0 else b""
    return {"code": code, "wall_s": wall, "peak_rss_gb": _peak_gb(),
            "release_sha256": hashlib.sha256(released).hexdigest()[:16]}


def _summary(runs: dict[str, list[dict]]) -> None:
    """Median wall, spread and largest peak per source, and each source's median against CSV's."""
    medians = {}
    for kind, rs in runs.items():
        walls = [r["wall_s"] for r in rs]
        medians[kind] = statistics.median(walls)
        print(f"{kind:<11} median {medians[kind]:6.1f} s (min {min(walls):.1f}, max "
              f"{max(walls):.1f}, {len(walls)} runs)  peak RSS ≤ "
              f"{max(r['peak_rss_gb'] for r in rs):.2f} GB", flush=True)
    csv = medians.get("csv")
    spread = max(max(r["wall_s"] for r in rs) - min(r["wall_s"] for r in rs)
                 for rs in runs.values())
    for kind, median in medians.items():
        if csv is not None and kind != "csv":
            verdict = "no slower than" if median <= csv else "slower than"
            print(f"{kind}: whole run median {median - csv:+.1f} s ({verdict} CSV's; the "
                  f"largest run-to-run spread of one source: {spread:.1f} s)", flush=True)
    shas = {r["release_sha256"] for rs in runs.values() for r in rs}
    same = "the same bytes from every source and run" if len(shas) == 1 else "DIFFERS"
    print(f"release.csv: {same} (sha256 {', '.join(sorted(shas))})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sources", nargs="+", default=["csv", "duckdb", "postgresql"])
    parser.add_argument("--cli", default=None, help=argparse.SUPPRESS)  # child process
    args = parser.parse_args()
    if args.cli is not None:
        print(json.dumps(one_run(args.cli)))
        return
    with tempfile.TemporaryDirectory(prefix="workbench-bench-whole-") as tmp:
        data, cluster = prepare(args.rows, args.sources, Path(tmp))
        runs: dict[str, list[dict]] = {kind: [] for kind in args.sources}
        try:
            for rnd in range(1, args.rounds + 1):
                order = args.sources if rnd % 2 else args.sources[::-1]
                for kind in order:
                    done = subprocess.run([sys.executable, __file__, "--cli", data[kind]],
                                          capture_output=True, text=True, check=True,
                                          env={**_env(), "PYTHONPATH": str(REPO)})
                    r = json.loads(done.stdout.strip().splitlines()[-1])
                    if r["code"] != 0:
                        raise SystemExit(f"the run from {kind} exited {r['code']}")
                    runs[kind].append(r)
                    print(f"round {rnd} {kind:<11} {r['wall_s']:6.1f} s  peak "
                          f"{r['peak_rss_gb']:.2f} GB", flush=True)
            _summary(runs)
        finally:
            if cluster is not None:
                sys.path.insert(0, str(REPO / "tests"))
                from pg_server import remove

                remove(cluster)


if __name__ == "__main__":
    main()
