"""Issue 19 follow-up: is the posterior-draw sampler's convergence robust across data and seeds?

The privacy proof covers an exact draw from the (censored) posterior, so every fit must
converge, not just the benchmark's. This grid fits the birth-weight normal linear model
(gestation group × sex × parity group, ε = 5, replace-one clamp) on several public slices of
the US 2019 natality samples × several seeds and prints, per fit, R̂ max (split, 2 chains),
ESS min and acceptance, then the share of fits with R̂ < 1.01.

* Censor_uw on 10k-row slices (the 10k file, three slices of the 200k file) at the spec's
  default public counts (20000 kept + 5000 burn-in iterations);
* Censor_w (public weights α(y) of the regression test) on 3k-row slices, one of them the
  test case of ``tests/test_bayesian.py``, at the test's counts (3000 + 1500): its
  record-by-record likelihood is ~30× dearer per step than Censor_uw's sorted-cell total.

    python benchmarks/bayesian_convergence.py [--seeds 5] [--jobs 2] [--quick]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import draw
from workbench.privacy.noise import SamplerStream

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BOUNDS = (200.0, 7000.0)  # the example spec's public bounds
OFFSET, SCALE = (BOUNDS[0] + BOUNDS[1]) / 2, (BOUNDS[1] - BOUNDS[0]) / 6
WEIGHTS = {"knots": [-3.0, -1.5, 0.0, 1.5, 3.0], "alpha": [0.1, 0.6, 1.0, 0.6, 0.1]}
SMALL, BIG = "us_births_2019_singleton_sample10k.csv", "us_births_2019_singleton_sample200k.csv.gz"
#: (mechanism, file, first row, rows, iterations, burn-in); None: the command line's counts.
GRID = [("censor_uw", SMALL, 0, 10_000, None, None),
        ("censor_uw", BIG, 0, 10_000, None, None),
        ("censor_uw", BIG, 60_000, 10_000, None, None),
        ("censor_uw", BIG, 120_000, 10_000, None, None),
        ("censor_w", SMALL, 0, 3_000, 3000, 1500),
        ("censor_w", BIG, 30_000, 3_000, 3000, 1500),
        ("censor_w", BIG, 90_000, 3_000, 3000, 1500)]


def load(name: str, first: int, rows: int) -> ModelData:
    """Birth weight on the working scale and the (gestation, sex, parity) cell of a slice."""
    frame = pd.read_csv(DATA / name)
    frame = frame[(frame.birth_weight >= BOUNDS[0]) & (frame.birth_weight <= BOUNDS[1])]
    frame = frame.iloc[first:first + rows]
    g = np.searchsorted([28, 32, 37, 39, 41], frame.gestation_week.to_numpy(), side="right")
    s = frame.is_female.astype(str).eq("True").to_numpy().astype(int)
    p = np.searchsorted([2, 3], frame.parity.to_numpy(), side="right")
    return ModelData((frame.birth_weight.to_numpy(float) - OFFSET) / SCALE,
                     np.ravel_multi_index((g, s, p), (6, 2, 3)), one_hot_design((6, 2, 3)))


def fit(job: tuple) -> tuple:
    """One fit: (job, R̂ max, ESS min, acceptance, seconds)."""
    mechanism, name, first, rows, iterations, burn_in, seed = job
    data = load(name, first, rows)
    start = time.perf_counter()
    result = draw(MODELS["normal_linear"], data, mechanism, 5.0, "replace_one",
                  SamplerStream(seed), iterations=iterations, burn_in=burn_in,
                  weight_function=WEIGHTS, count_censored=False)
    diag = result.chains.diagnostics()
    return (job, diag["rhat_max"], diag["ess_min"], diag["acceptance"],
            time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--burn-in", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="the first two rows of the grid")
    args = parser.parse_args()
    jobs = [(m, name, first, rows, it or args.iterations, burn or args.burn_in, seed)
            for m, name, first, rows, it, burn in (GRID[:1] + GRID[4:5] if args.quick else GRID)
            for seed in range(1, args.seeds + 1)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(fit, jobs))
    print(f"normal linear model of birth weight | gestation group, sex, parity group; ε = 5, "
          f"replace-one clamp [-1.25, 1.25]; {len(jobs)} fits in "
          f"{time.perf_counter() - start:.0f} s wall ({args.jobs} processes)")
    print(f"{'mechanism':<10} {'slice':<22} {'kept+burn':>11} {'seed':>4} {'R-hat max':>10} "
          f"{'ESS min':>8} {'accept':>7} {'s':>5}")
    for (m, name, first, rows, it, burn, seed), rhat, ess, acc, took in results:
        where = f"{'10k' if name == SMALL else '200k'} [{first // 1000}k:{(first + rows) // 1000}k]"
        flag = "" if rhat < 1.01 else "  <-- R-hat >= 1.01"
        print(f"{m:<10} {where:<22} {f'{it}+{burn}':>11} {seed:>4} {rhat:>10.4f} {ess:>8.0f} "
              f"{acc:>7.3f} {took:>5.0f}{flag}")
    for mechanism in dict.fromkeys(r[0][0] for r in results):
        rh = [r[1] for r in results if r[0][0] == mechanism]
        print(f"{mechanism}: {sum(v < 1.01 for v in rh)}/{len(rh)} fits with R-hat < 1.01 "
              f"(worst {max(rh):.4f})")
    good = sum(r[1] < 1.01 for r in results)
    print(f"all: {good}/{len(results)} fits with R-hat < 1.01 ({100 * good / len(results):.0f}%)")


if __name__ == "__main__":
    main()
