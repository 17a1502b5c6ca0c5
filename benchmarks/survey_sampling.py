"""Sampling error beside DP noise: 1% and 5% SRS from the US 2019 200k sample as population.

For a proportion (share of female births) and a mean (birth weight, clipped to [500, 6000] g)
it prints bias and SD for "sampling only" and "sampling + DP" at ε ∈ {0.1, 0.5, 1, 2}, and the
crossover ε (DP noise SD = sampling SD), measured on the paired repetitions vs the formula
ε* = √(2/(n·p(1−p)·fpc)) (proportion) and √2·Δ/SD_sampling (mean, Δ = U − L).

    python benchmarks/survey_sampling.py [--reps 100] [--fractions 0.01 0.05]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from workbench.survey.design import (  # noqa: E402
    Design,
    crossover_epsilon,
    crossover_epsilon_proportion,
)
from workbench.survey.simulation import mean, proportion, simulate  # noqa: E402

POPULATION = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample200k.csv.gz"
EPSILONS = (0.1, 0.5, 1.0, 2.0)
LOW, HIGH = 500.0, 6000.0


def run(fraction: float, reps: int, population: pd.DataFrame) -> list[str]:
    """One design: the bias/SD table and the crossover readouts."""
    design = Design(fraction)
    big_n = len(population)
    w = 1 / fraction  # SRS base weight N/n
    truth = {"share female": float((population["is_female"]).mean()),
             "mean birth weight": float(population["birth_weight"].clip(LOW, HIGH).mean())}
    result = simulate(population, design,
                      {"share female": proportion("is_female", True, w, w),
                       "mean birth weight": mean("birth_weight", LOW, HIGH, w, w)},
                      truth, EPSILONS, reps, seed=2019)
    n, fpc = result.n, design.fpc(big_n)
    lines = [f"\n{design.name}: N = {big_n:,}, n = {n:,}, {reps} repetitions, fpc = {fpc:.3f}",
             f"{'estimator':<18} {'method':<24} {'bias':>12} {'SD':>12}"]
    for row in result.summary().itertuples():
        lines.append(f"{row.estimator:<18} {row.method:<24} {row.bias:>12.5g} {row.sd:>12.5g}")
    p = truth["share female"]
    sd_mean = float(population["birth_weight"].clip(LOW, HIGH).std()) * math.sqrt(fpc / n)
    formulas = {"share female": crossover_epsilon_proportion(n, p, fpc),
                # Δ of the weighted sum is w·(U − L); divided by Σw = N it is (U − L)/n
                "mean birth weight": crossover_epsilon((HIGH - LOW) / n, sd_mean)}
    for name, formula in formulas.items():
        lines.append(f"crossover ε {name:<18} measured {result.measured_crossover(name):.4f}"
                     f"   formula {formula:.4f}")
    return lines


def main(argv: list[str] | None = None) -> None:
    """Print both designs' tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.05])
    args = ap.parse_args(argv)
    if not POPULATION.is_file():
        sys.exit(f"population file not found: {POPULATION}")
    population = pd.read_csv(POPULATION, usecols=["is_female", "birth_weight"])
    print(f"population: US 2019 natality 200k sample ({POPULATION.name}); "
          "DP with replace-one neighbours")
    for fraction in args.fractions:
        print("\n".join(run(fraction, args.reps, population)))


if __name__ == "__main__":
    main()
