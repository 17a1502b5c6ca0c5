"""Must-show 2 of issue 15: forecast vs outcome, and how much easier the facts proxy is.

The same dry run of a design (default: the lean example re-derived by ``workbench design``)
at ``--n 95000`` on: the shipped proxy (record sample,
``data_public/proxy_sample_166k.csv.gz``), the facts-based proxy
(``data_public/proxy_facts_166k.csv.gz``), and the stand-in registry (the 160k US sample after
cleaning, 158,500 records, each task on its own 95,000-record subsample). The dry run on a
proxy is the forecast; the one on the stand-in registry is the outcome. Printed per data set:
P(all criteria pass) with its 95% interval, each criterion's pass rate, and the faithfulness
value (mean exact 1 − β_max) beside its floor at n.

Run: python benchmarks/proxy_realism.py [--n 95000] [--reps 6] [--spec PATH] [--workers 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.dryrun import ALL, dry_run_at, make_executor, wilson_interval
from workbench.dryrun.floors import feasibility_floors
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import prepare_proxy
from workbench.evidence.us_natality import read_us_sample
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "israel_births_2014_lean_designed.frozen.json"
REGISTRY = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample160k.csv.gz"
DATA = {
    "shipped proxy (record sample)": REPO / "data_public" / "proxy_sample_166k.csv.gz",
    "facts proxy": REPO / "data_public" / "proxy_facts_166k.csv.gz",
    "stand-in registry (outcome)": REGISTRY,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=95_000)
    ap.add_argument("--reps", type=int, default=6, help="repetitions per configuration")
    ap.add_argument("--spec", type=Path, default=SPEC)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not REGISTRY.exists():
        sys.exit(f"stand-in registry not found: {REGISTRY}")
    spec = load_spec(args.spec)
    configs = list(spec.configurations())
    print(f"design {args.spec.name}: {len(configs)} configuration(s) × {args.reps} repetitions "
          f"at n = {args.n:,}")
    rows = []
    for label, path in DATA.items():
        raw = read_us_sample(path) if path == REGISTRY else str(path)
        frame = prepare_proxy(spec, raw)
        result = dry_run_at(spec, frame, configs, args.n, repetitions=args.reps,
                            seed=args.seed, executor=make_executor(args.workers),
                            progress=False).result
        records = result.records_frame()
        passes, runs = int(records["passed"].sum()), len(records)
        low, high = wilson_interval(passes, runs)
        faith = records["exact:faithfulness"].astype(float)
        floors = {m: feasibility_floors(spec, Evidence(spec, frame), c, args.n, 3)
                  .by_id()["faithfulness"] for m, c in
                  {c.min_count: c for c in configs}.items()}
        f_mean = sum(floors[c.min_count].mean for c in configs) / len(configs)
        f_sd = max(f.sd for f in floors.values())
        rates = result.table[[*result.criteria]].mul(result.table["runs"], axis=0).sum()
        rates = (rates / result.table["runs"].sum()).round(2).to_dict()
        rows.append((label, passes / runs))
        print(f"\n{label}: {len(frame):,} records after cleaning")
        print(f"  P(all pass) = {passes}/{runs} = {passes / runs:.2f} [{low:.2f}, {high:.2f}]")
        print(f"  pass rate per criterion: {rates}")
        threshold = spec.criterion("faithfulness").threshold
        print(f"  faithfulness 1 − β_max: mean {100 * faith.mean():.2f}%, max "
              f"{100 * faith.max():.2f}% (threshold {100 * threshold:.1f}%); "
              f"floor at n (over the configurations' min_count) {100 * f_mean:.2f}% ± "
              f"{100 * f_sd:.2f}; excess over floor {100 * (faith.mean() - f_mean):.2f} points",
              flush=True)
    print(f"\nforecast vs outcome at n = {args.n:,} ({ALL}):")
    outcome = rows[-1][1]
    for label, p in rows[:-1]:
        within = "within" if abs(p - outcome) <= 0.2 else "NOT within"
        print(f"  {label:<32} forecast {p:.2f}  outcome {outcome:.2f}  "
              f"difference {p - outcome:+.2f} ({within} 0.2)")


if __name__ == "__main__":
    main()
