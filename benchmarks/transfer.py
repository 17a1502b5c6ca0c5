"""Issue 26, must-show 3: does a forecast made on the shipped proxy survive registries unlike it?

For each example (a frozen spec), size n and stand-in, the forecast is the frozen file
rehearsed at n on the SHIPPED proxy raked to the stand-in's own published 1-way tables
(`_standins.published_document`: births per cell of the design, as a statistics office
publishes its registry's year, with the cross-tables of mother's age × birth order and
gestation × birth weight; exact, so the range is that one scenario's bootstrap at n;
``--rounded 0.001`` publishes shares rounded to 0.1 points instead and adds the shifts within
that rounding) (`workbench.dryrun.robust` on an `Evidence` with the tables): its low end is what
`workbench design` aims at. Rounded shares erase rare cells (26 births in 95,000 is 0.0%), which
made the thinned stand-in's forecast 0.00 against an outcome of 0.30.
``--proxy-only`` adds the forecast without the tables (the shipped proxy and its five
scenarios), one per size: a single number cannot match stand-ins whose outcomes differ by
0.95, which is why the registry's own tables are the anchor. The outcome on each stand-in
registry (`benchmarks/_standins.py`:
the separate 160k US sample; re-weighted 1-way marginals; rare cells thinned and thickened) is
the share of seeded iterations that pass every criterion, by the run's own iteration (a dry-run
task is the run's iteration: `tests/test_rehearsal.py`). The outcome's runs use the forecast's
task seeds (common random numbers: iteration k of both draws the same noise, so their
difference is the registries' and not the noise's; each is still an unbiased estimate of its
own p; ``--independent-seeds`` seeds them apart). The binding criterion is the one that fails
most often. Target: |forecast low − outcome| ≤ 0.15 everywhere, and a lean-style design
at ε_total ≤ 3.5 with outcome ≥ 0.7 on every stand-in.

``lean_robust`` is the lean design input with each column's rare tail merged into one bin
(`examples/israel_births_2014_lean_robust_input.json`, derived by `workbench design`): the
100 g / split-tail bins put 17% of the thickened registry's births in sparse cells where no
smooth generator matches rows one-to-one (faithfulness 0.063 even at ε_gen 50).
``frugal`` is the same input with the cheaper regression releases of issue 37
(`examples/israel_births_2014_frugal_input.json`); its bar is ε_total ≤ 2 with outcome ≥ 0.9
on every stand-in (must-show 2), each within 0.15 of its forecast. ``--standins us_high_parity
us_older us_preterm`` checks the hold-out group (`_standins.HOLDOUT`), which no design saw.

Usage: python benchmarks/transfer.py [--examples lean_designed paper lean_robust frugal]
       [--sizes 95k 158k] [--runs 20] [--forecast-reps 10] [--workers 2] [--proxy-only]
       [--rounded STEP] [--independent-seeds] [--standins us_sample ... us_preterm]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from _standins import HOLDOUT, SIZES, published_document, standin

from workbench.dryrun import dry_run
from workbench.dryrun.executors import make_executor
from workbench.dryrun.result import ALL
from workbench.dryrun.robust import robust_forecast
from workbench.evidence.prepare import as_evidence
from workbench.evidence.published import published_tables
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
EXAMPLES = {
    "lean_designed": REPO / "examples" / "israel_births_2014_lean_designed.frozen.json",
    "paper": REPO / "examples" / "israel_births_2014_narrowed.frozen.json",
    "lean": REPO / "examples" / "israel_births_2014_lean.frozen.json",
    "lean_robust": REPO / "examples" / "israel_births_2014_lean_robust.frozen.json",
    "frugal": REPO / "examples" / "israel_births_2014_frugal.frozen.json",
}
#: Must-show 3(b): a lean-style design at ε_total ≤ this with outcome ≥ FLOOR on every stand-in.
EPSILON_CAP, FLOOR = 3.5, 0.7
#: Issue 37, must-show 2: the frugal design's own bar (ε_total cap, outcome floor).
TARGETS = {"frugal": (2.0, 0.9)}
STANDINS = ("us_sample", "us_reweighted", "us_thinned", "us_thickened")


def within_target(forecast: float, outcome: float, target: float = 0.15) -> bool:
    """|forecast − outcome| ≤ target, with shares of whole counts compared as decimals (0.75 −
    0.60 is 0.15000000000000002 in floats)."""
    return abs(forecast - outcome) <= target + 1e-9


def outcome(spec, frame, configs, runs: int, seed: int,
            executor) -> tuple[float, str, float, str]:
    """(P(all pass) per iteration, the binding criterion, its pass rate, what failed in the
    failing iterations) on one stand-in."""
    result = dry_run(spec, frame, configs, repetitions=runs, seed=seed, noise="seeded",
                     executor=executor, progress=False)
    return float(np.mean(result.table[ALL])), *binding_of(result), failures_of(result)


def failures_of(result) -> str:
    """Which criteria failed in the failing iterations ("2 of 20 failed: a ×2, b ×1"), so a
    miss is read by its cause and not only by the least-passed criterion."""
    failing = [r for r in result.records if not r.passed]
    if not failing:
        return f"0 of {len(result.records)} failed"
    counts: dict[str, int] = {}
    for r in failing:
        for cid in result.criteria:
            if not (r.criteria.get(cid) and r.criteria[cid].passed):
                counts[cid] = counts.get(cid, 0) + 1
        if r.failure is not None:
            counts["sampling failure"] = counts.get("sampling failure", 0) + 1
    words = ", ".join(f"{c} ×{k}" for c, k in sorted(counts.items(), key=lambda x: -x[1]))
    reps = ", ".join(str(r.rep) for r in failing)  # common seeds: the same rep, the same noise
    return f"{len(failing)} of {len(result.records)} failed (iterations {reps}): {words}"


def binding_of(result) -> tuple[str, float]:
    """The criterion that passes least often in a dry run, and its pass rate."""
    rates = {c: float(np.mean(result.table[c])) for c in result.criteria}
    binding = min(rates, key=rates.get)
    return binding, rates[binding]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="*", default=["lean_designed", "paper", "lean_robust"])
    parser.add_argument("--specs", nargs="*", default=[],
                        help="more frozen specs to check, by path")
    parser.add_argument("--sizes", nargs="+", default=list(SIZES))
    parser.add_argument("--standins", nargs="+", default=list(STANDINS),
                        choices=[*STANDINS, *HOLDOUT],
                        help="stand-ins to check (the hold-out group is never a default)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--forecast-reps", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--independent-seeds", action="store_true",
                        help="seed the outcome's runs apart from the forecast's (default: the "
                        "same task seeds, common random numbers)")
    parser.add_argument("--rounded", type=float, default=None, metavar="STEP",
                        help="publish shares rounded to STEP instead of exact counts")
    parser.add_argument("--proxy-only", action="store_true",
                        help="also print the forecast from the shipped proxy alone")
    args = parser.parse_args()
    executor = make_executor(args.workers)
    specs = {name: EXAMPLES[name] for name in args.examples}
    for name, path in specs.items():
        if not path.exists():
            parser.error(f"--examples {name}: {path.relative_to(REPO)} has not been made")
    specs |= {Path(p).stem: Path(p) for p in args.specs}
    rows = []
    for name, path in specs.items():
        spec = load_spec(path)
        configs = list(spec.configurations())
        print(f"{name}: ε_total {spec.epsilon_total:.4g}, {len(configs)} configuration(s)",
              flush=True)
        for size in args.sizes:
            n = SIZES[size]
            if args.proxy_only:
                t = time.perf_counter()
                fc = robust_forecast(spec, PROXY, configs, n, repetitions=args.forecast_reps,
                                     seed=args.seed, executor=executor)
                print(f"  n = {n:,}, the shipped proxy alone: forecast {fc.words()} "
                      f"({time.perf_counter() - t:.0f} s)", flush=True)
            for which in args.standins:
                item = standin(f"{which}_{size}")
                t = time.perf_counter()
                tables = published_tables(spec, published_document(item, path, args.rounded))
                evidence = as_evidence(spec, PROXY, tables)
                fc = robust_forecast(spec, evidence, configs, n, repetitions=args.forecast_reps,
                                     seed=args.seed, executor=executor)
                p, binding, rate, failed = outcome(spec, item.frame, configs, args.runs,
                                                   args.seed + args.independent_seeds, executor)
                iterations = args.runs * len(configs)
                se = math.sqrt(max(p * (1 - p), 1 / iterations) / iterations)
                rows.append((name, spec.epsilon_total, which, n, fc.low, fc.high, p, se,
                             binding, rate, fc.scenarios["published"]))
                f_binding, f_rate = binding_of(fc.result)
                print(f"  n = {n:,} {which:<14} forecast {fc.words()}\n"
                      f"    forecast's binding criterion {f_binding} ({f_rate:.2f})\n"
                      f"    outcome {p:.2f} ± {se:.2f}  binding {binding} ({rate:.2f})  "
                      f"({time.perf_counter() - t:.0f} s)\n    outcome's iterations: {failed}",
                      flush=True)
    print("\nexample          ε_total  stand-in        n        forecast (low–high)  published"
          "  outcome        |low − outcome|  |published − outcome|  binding criterion")
    for name, eps, which, n, low, high, p, se, binding, rate, anchor in rows:
        ok = "ok" if within_target(low, p) else "MISS"
        ok_anchor = "ok" if within_target(anchor, p) else "MISS"
        print(f"{name:<16} {eps:7.4g}  {which:<14} {n:>8,}  {low:.2f}–{high:.2f}          "
              f"{anchor:.2f}       {p:.2f} ± {se:.2f}    {abs(low - p):.2f} {ok:<4}       "
              f"{abs(anchor - p):.2f} {ok_anchor:<4}             {binding} ({rate:.2f})")
    within = sum(within_target(r[4], r[6]) for r in rows)
    anchored = sum(within_target(r[10], r[6]) for r in rows)
    print(f"\n{within} of {len(rows)} (example, stand-in, n) within 0.15 of the forecast's low "
          f"end; {anchored} of {len(rows)} within 0.15 of the published-tables anchor")
    for name in specs:
        mine = [r for r in rows if r[0] == name]
        worst = min(r[6] for r in mine)
        cap, floor = TARGETS.get(name, (EPSILON_CAP, FLOOR))
        meets = mine[0][1] <= cap + 1e-9 and worst >= floor - 1e-9
        print(f"{name}: ε_total {mine[0][1]:.4g}, lowest outcome over the stand-ins {worst:.2f} "
              f"({'meets' if meets else 'misses'} ε_total ≤ {cap:g} with outcome ≥ "
              f"{floor:g} on each of the {len(mine)} (stand-in, n) run here)")


if __name__ == "__main__":
    main()
