"""Benchmark a full public dry run: 24 configurations × 5 repetitions on the 166k-row proxy.

The 24 configurations are the paper's 12 transformation combinations (3 mother_age × 2 parity
× 2 gestation_week binnings) × PrivBayes degree 2 with epsilon_split 0.1 and 0.25, at
min_count 2, from examples/israel_births_2014.json. Each task is one full iteration of the
enclave's code (``run_iteration``: fit, sample with constraints, project, 8 DP criteria) plus
the exact errors; 2 worker processes (a 2-core machine), OpenDP noise, a fresh cache.

Prints: wall time (target ≤ 5 min), the per-task time, a second run served from the cache,
the top of the sorted table and the private-selection forecast after narrowing at 10%.

Run: python benchmarks/dryrun.py [--repetitions 5] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from workbench.dryrun import ALL, DryRunCache, LocalExecutor, dry_run
from workbench.specification import Configuration
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "israel_births_2014.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
TARGET_S = 300.0


def configurations(spec) -> list[Configuration]:
    """12 transformation combinations × degree 2 × epsilon_split {0.1, 0.25}, min_count 2."""
    return [c for c in spec.configurations()
            if c.min_count == 2 and c.params.get("degree") == 2
            and c.params.get("epsilon_split") in (0.1, 0.25)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    spec = load_spec(SPEC)
    configs = configurations(spec)
    n_tasks = len(configs) * args.repetitions
    print(f"dry run: {len(configs)} configurations × {args.repetitions} repetitions = "
          f"{n_tasks} iterations on {PROXY.name}, {args.workers} worker processes")
    with tempfile.TemporaryDirectory() as tmp:
        cache = DryRunCache(tmp)
        start = time.perf_counter()
        result = dry_run(spec, PROXY, configs, repetitions=args.repetitions, seed=0,
                         executor=LocalExecutor(args.workers), cache=cache, progress=False)
        wall = time.perf_counter() - start
        start = time.perf_counter()
        again = dry_run(spec, PROXY, configs, repetitions=args.repetitions, seed=0,
                        executor=LocalExecutor(args.workers), cache=cache, progress=False)
        cached_wall = time.perf_counter() - start
    secs = [r.seconds for r in result.records]
    print(f"wall time: {wall:.1f} s (target ≤ {TARGET_S:.0f} s: "
          f"{'met' if wall <= TARGET_S else 'NOT met'})")
    print(f"per iteration: median {statistics.median(secs):.2f} s, max {max(secs):.2f} s, "
          f"sum {sum(secs):.0f} s over {len(secs)} ({sum(secs) / wall:.2f} busy workers)")
    print(f"second run from the cache: {again.cached}/{n_tasks} cached, {cached_wall:.1f} s")
    sampling = sum(r.failure is not None for r in result.records)
    print(f"candidates passing all 8 criteria: {sum(r.passed for r in result.records)}/"
          f"{n_tasks}; sampling failures: {sampling}")
    print("top of the sorted table:")
    print(result.summary(rows=10))
    kept = result.narrow(0.1)
    print(f"narrowed at 10%: {len(kept)} of {len(configs)} configurations "
          f"(mean pass probability over all: {result.table[ALL].mean():.2f})")
    if kept:
        sel = spec.selection
        print("forecast: " + result.selection_forecast(sel.gamma, sel.max_iterations,
                                                       0.1).summary())


if __name__ == "__main__":
    main()
