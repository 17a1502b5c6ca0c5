"""Issue 36, "wide schemas at speed": the NHANES design's wall time and a whole iteration's
time, at the file's size and at 100,000 rows, against the targets (design ≤ 10 min,
iteration ≤ 30 s).

For each size n (default: half A's own size, then 100,000 rows of half A resampled, for timing
only, as ``benchmarks/nhanes_wide.py --rows`` does): a proxy of n rows from the shipped pilot
FACTS (``data_public/nhanes_half_a_facts.json``, public), then
``workbench design examples/nhanes_wide.json PROXY --n n --target-p 0.7 --workers W
--eps-gen 6 --divisors 2 3 4 6`` (the example's options; one pool for the whole design), then
whole iterations of the shipped frozen spec on half A at n (``workbench dryrun … --workers 0
--records``: the run's own iteration, one process, the first one cold): each step a CLI child
timed by ``/usr/bin/time`` (wall, the child's own CPU, peak RSS). The machine's load is
printed before and after: on a shared machine the wall times move with it.

Usage: python benchmarks/design_speed.py [--rows 100000] [--workers 2] [--iterations 3]
       [--keep DIR] [--sizes file 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nhanes_wide import DATA, REPO, halves, step

SPEC = REPO / "examples" / "nhanes_wide.json"
FROZEN = REPO / "examples" / "nhanes_wide.frozen.json"
FACTS = REPO / "data_public" / "nhanes_half_a_facts.json"
DESIGN_TARGET, ITERATION_TARGET = 600.0, 30.0


def load() -> str:
    """The 1, 5 and 15 minute load averages (2 cores on the reference machine)."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


def at_size(label: str, rows: int | None, args: argparse.Namespace, folder: Path) -> dict:
    """Proxy, design and iterations at one size; their figures."""
    sub = folder / label
    sub.mkdir(parents=True, exist_ok=True)
    half_a, _half_b, n_a, _n_b = halves(DATA, sub, rows)
    timings: list[tuple[str, float, float]] = []
    print(f"\n== {label}: half A {n_a:,} rows ({load()})", flush=True)
    step("proxy build", ["proxy", "build", str(SPEC), str(FACTS), "--n", str(n_a), "--out",
                         "proxy.csv.gz"], sub, timings)
    out = step("design", ["design", str(SPEC), "proxy.csv.gz", "--n", str(n_a), "--target-p",
                          "0.7", "--workers", str(args.workers), "--eps-gen", "6",
                          "--divisors", "2", "3", "4", "6", "--quiet"], sub, timings,
               ok=(0, 2))
    print("  " + next((line for line in out.splitlines() if "recorded forecast" in line), ""))
    records = sub / "records.jsonl"
    step("iterations", ["dryrun", str(FROZEN), str(half_a), "--n", str(n_a), "--repetitions",
                        str(args.iterations), "--noise", "seeded", "--min-pass", "0",
                        "--floor-draws", "0", "--records", str(records), "--no-cache",
                        "--workers", "0", "--quiet"], sub, timings)
    seconds = [json.loads(line)["seconds"] for line in records.read_text().splitlines()
               if line.strip()]
    design_s = next(t[1] for t in timings if t[0] == "design")
    figures = {"n": n_a, "design": design_s, "first": seconds[0],
               "warm": float(np.median(seconds[1:])) if len(seconds) > 1 else seconds[0],
               "max": max(seconds)}
    print(f"  iteration at n = {n_a:,}: first (cold) {seconds[0]:.1f} s, then median "
          f"{figures['warm']:.1f} s, max {figures['max']:.1f} s ({load()})", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["file", "100000"],
                        help="'file' (half A as it is) and/or row counts (resampled)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep the files")
    args = parser.parse_args()
    if not DATA.exists():
        raise SystemExit(f"the NHANES file is not at {DATA}")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="design_speed_"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"start: {load()}; folder {folder}")
    results = [(size, at_size(size, None if size == "file" else int(size), args, folder))
               for size in args.sizes]
    print(f"\nend: {load()}")
    print("| size | n | design (target ≤ 10 min) | iteration cold / warm / max "
          "(target ≤ 30 s) |")
    print("|---|---|---|---|")
    for size, f in results:
        ok_design = "met" if f["design"] <= DESIGN_TARGET else "NOT met"
        ok_iter = "met" if f["max"] <= ITERATION_TARGET else "NOT met"
        print(f"| {size} | {f['n']:,} | {f['design']:.0f} s ({ok_design}) | "
              f"{f['first']:.1f} / {f['warm']:.1f} / {f['max']:.1f} s ({ok_iter}) |")
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
