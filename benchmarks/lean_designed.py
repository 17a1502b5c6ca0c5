"""Must-show 3 of issue 15: the lean example re-derived by ``workbench design``, on the stand-in
registry.

The stand-in registry is the public US 2019 160k sample (``../shared/data``), mapped onto the
schema and cleaned with the spec's raw rules (158,500 records), used whole and subsampled to
95,000 records without replacement. For each size it runs the spec's iteration
(``engine.run_iteration``: fit at ε_gen, sample, project, every criterion released with DP,
OpenDP noise; the once-statistics released afresh each time, as a new run would) ITERATIONS
times and prints P(all criteria pass) over the DP decisions, each criterion's pass rate, the
median exact faithfulness, its feasibility floor at that n (``dryrun.floors``: a bootstrap of
the registry through the same post-processing) and the generator's excess over it, and
ε_total from the spec (``BudgetPlan``). Thresholds are the spec's (the paper's).

The designed spec is made by (about 20 min on this machine):
    workbench design examples/israel_births_2014_lean_input.json \
        data_public/proxy_sample_166k.csv.gz --n 95000:158500 --target-p 0.6 --eps-gen 2 3 \
        --repetitions 3 --draws 8 --out examples/israel_births_2014_lean_designed.json \
        --freeze examples/israel_births_2014_lean_designed.frozen.json

Run: python benchmarks/lean_designed.py [--spec FROZEN ...] [--iterations 20] [--sizes 95000 0]
(size 0 = the whole cleaned registry).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from workbench.criteria import release_once
from workbench.dryrun.floors import feasibility_floors
from workbench.engine import run_iteration
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import prepare_proxy
from workbench.evidence.us_natality import read_us_sample
from workbench.privacy import PrivacyContext
from workbench.trial import bind
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample160k.csv.gz"
DESIGNED = REPO / "examples" / "israel_births_2014_lean_designed.frozen.json"


def evaluate(spec_path: Path, registry, size: int, iterations: int, floor_draws: int) -> None:
    """Print the pass rates of ``iterations`` simulated iterations at one size."""
    spec = load_spec(spec_path)
    config = next(spec.configurations())
    frame = registry if size == 0 else registry.sample(n=size, random_state=15, replace=False)
    real = spec.table_codec(config).encode(frame)
    passes: dict[str, int] = {c.id: 0 for c in spec.criteria}
    all_pass, faith, start, took = 0, [], time.perf_counter(), []
    for i in range(iterations):
        began = time.perf_counter()
        ctx = PrivacyContext.simulation(seed=1000 + i)  # OpenDP noise: DP decisions
        once = release_once(spec, config, real, ctx)
        cand = run_iteration(bind(spec, config), frame, ctx, once_results=once, real_codes=real)
        took.append(time.perf_counter() - began)
        all_pass += cand.passed
        for r in cand.results:
            passes[r.id] += r.passed
            if r.kind == "faithfulness":
                faith.append(r.value)
    floor = feasibility_floors(spec, Evidence(spec, frame), config, None, floor_draws).by_id()
    fid = next(c.id for c in spec.criteria if c.kind == "faithfulness")
    med = statistics.median(faith) if faith else float("nan")
    print(f"{spec_path.name} at n = {len(frame):,}: ε_total {spec.epsilon_total:g}, "
          f"{iterations} iterations, {time.perf_counter() - start:.0f} s")
    print(f"  one whole iteration (once-statistics + fit + sample + project + criteria): "
          f"median {statistics.median(took):.1f} s, max {max(took):.1f} s "
          f"(first {took[0]:.1f} s, with the JAX compile)")
    print(f"  P(all {len(spec.criteria)} pass) = {all_pass / iterations:.2f}")
    print("  pass rate per criterion: " + ", ".join(
        f"{k} {v / iterations:.2f}" for k, v in passes.items()))
    print(f"  faithfulness (DP value, median) {med:.4f}; floor {floor[fid].mean:.4f} ± "
          f"{floor[fid].sd:.4f}; excess {med - floor[fid].mean:+.4f} (threshold "
          f"{spec.criterion(fid).threshold:g})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", nargs="+", type=Path, default=[DESIGNED])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--sizes", type=int, nargs="+", default=[95_000, 0])
    ap.add_argument("--floor-draws", type=int, default=3)
    args = ap.parse_args()
    first = load_spec(args.spec[0])
    registry = prepare_proxy(first, read_us_sample(REGISTRY))
    print(f"stand-in registry: {REGISTRY.name}, {len(registry):,} records after cleaning")
    for size in args.sizes:
        for path in args.spec:
            evaluate(path, registry, size, args.iterations, args.floor_draws)


if __name__ == "__main__":
    main()
