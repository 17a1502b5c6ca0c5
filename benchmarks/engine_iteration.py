"""Benchmark one full iteration of the scheme on the US 2019 sample as stand-in confidential data.

An iteration = fit PrivBayes (ε_gen = 4) + sample with the 4 synthetic constraints + face-privacy
projection + all 8 DP criteria of the paper's design (faithfulness included), exactly as
``workbench.engine.run_iteration`` runs it in the enclave, here in simulation mode.

Prints: the median time of one iteration at ≈166k rows (target ≤ 20 s); the same at ≈4M rows
(tiled ×24; targets ≤ 3 min and peak memory ≤ 8 GB, measured as this process's max RSS); and
the share of iterations passing all 8 criteria over ``--iterations`` (≥ 20) iterations drawn
from the narrowed search space of examples/israel_births_2014_narrowed.frozen.json.

Run: python benchmarks/engine_iteration.py [--iterations 20] [--repeats 3] [--skip-4m]

``--lean`` (issue 15, must-show 4) instead times one iteration of the lean design
(examples/israel_births_2014_lean.json, the workload generator at ε_gen 2) at 166,000 records
(the shipped proxy, data_public/proxy_sample_166k.csv.gz; target ≤ 10 s), with the old fit
(``mbi.estimation.mirror_descent``, a fixed step count, recompiled on every fit) and the new one
(``workbench.generators.mbi_descent``: compiled once per model shape, stopped at convergence),
and prints both pass rates side by side; ``--new-spec PATH`` adds a second design (e.g. the
re-derived lean example) run with the new fit.

    python benchmarks/engine_iteration.py --lean [--iterations 20] [--new-spec PATH]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from workbench.engine import run_iteration
from workbench.evidence.us_natality import read_us_sample
from workbench.privacy import PrivacyContext
from workbench.transform.clean import clean
from workbench.trial import bind
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "israel_births_2014_narrowed.frozen.json"
DATA = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample200k.csv.gz"
N_PAPER, TILES = 165_915, 24


def _rss_gb() -> float:
    """Peak resident memory of this process so far, in GB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-4m", action="store_true")
    ap.add_argument("--lean", action="store_true", help="the lean design, old vs new fit")
    ap.add_argument("--new-spec", type=Path, default=None, help="with --lean: a second design")
    args = ap.parse_args()
    if args.lean:
        from _lean_iteration import lean_iterations

        lean_iterations(args.iterations, args.new_spec)
        return
    if not DATA.exists():
        sys.exit(f"benchmark data not found: {DATA}")
    spec = load_spec(SPEC)
    frame = clean(read_us_sample(DATA), spec)
    configs = list(spec.configurations())
    print(f"data: {DATA.name}, {len(frame):,} rows after cleaning; "
          f"{len(configs)} configurations in the narrowed space")
    table = spec.table_codec(configs[0])
    base = table.encode(frame)
    rng = np.random.default_rng(0)
    r166 = base[rng.choice(len(base), N_PAPER, replace=False)]

    times, passes = [], 0
    trials = [bind(spec, c) for c in configs]  # the engine binds each configuration once
    for i in range(max(args.iterations, args.repeats)):
        ctx = PrivacyContext.simulation(seed=i)
        t = time.perf_counter()
        cand = run_iteration(trials[i % len(trials)], frame, ctx, real_codes=r166)
        times.append(time.perf_counter() - t)
        passes += cand.passed
        failed = [r.id for r in cand.results if not r.passed] or ([cand.failure] if
                                                                  cand.failure else [])
        print(f"  iteration {i + 1:>2}: {times[-1]:5.2f} s, "
              f"{'pass' if cand.passed else 'fail: ' + ', '.join(failed)}")
    n_it = max(args.iterations, args.repeats)
    print(f"one iteration at n = {N_PAPER:,}: median {statistics.median(times):.2f} s "
          f"(target ≤ 20 s)")
    print(f"pass rate over {n_it} iterations (all 8 criteria, ε_gen = 4): "
          f"{passes}/{n_it} = {passes / n_it:.0%} (paper: ≥ 10% per try)")
    if args.skip_4m:
        return
    big = np.tile(r166, (TILES, 1))
    big_times = []
    for r in range(args.repeats):
        ctx = PrivacyContext.simulation(seed=100 + r)
        t = time.perf_counter()
        run_iteration(trials[0], frame, ctx, real_codes=big)
        big_times.append(time.perf_counter() - t)
        print(f"  4M iteration {r + 1}: {big_times[-1]:.1f} s")
    print(f"one iteration at n = {len(big):,}: median {statistics.median(big_times):.1f} s "
          f"(target ≤ 180 s); peak memory {_rss_gb():.2f} GB (target ≤ 8 GB)")


if __name__ == "__main__":
    main()
