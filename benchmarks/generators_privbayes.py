"""Benchmark PrivBayes on the public US 2019 births sample: fit+sample time at 166k and 4M rows,
and the exact maximum k-way marginal error (criterion 1 of Hod & Canetti, Table 2) over 5 runs.

Run: python benchmarks/generators_privbayes.py [--runs 5] [--epsilon 4] [--skip-4m]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.generators import make_generator
from workbench.privacy import PrivacyContext
from workbench.transform import Domain

DATA = Path("/work/shared/data/us_births_2019_singleton_sample160k.csv.gz")
N_PAPER = 166_000
N_LARGE = 4_000_000

# Right-open bin edges (a value v gets the number of edges <= v), the paper's Table 1 binning.
EDGES: dict[str, list[int]] = {
    "mother_age": [18, 20, 25, 30, 35, 37, 40, 43, 45],  # <18,18-19,...,43-44,44<
    "parity": [2, 4, 7, 11],  # 1, 2-3, 4-6, 7-10, 10<
    "gestation_week": [29, 32, 34, 37, 42],  # <29, 29-31, 32-33, 34-36, 37-41, 41<
    "birth_weight": list(range(1500, 4501, 100)),  # <1500, 1500-1599, ..., 4400-4499, 4499<
}
DOMAIN = Domain(
    ("birth_month", "mother_age", "parity", "gestation_week", "birth_sex", "birth_weight"),
    (12, 10, 5, 6, 2, 32),
)


def load_codes(path: Path) -> np.ndarray:
    """Read, clean and encode the public sample into the (n, 6) code matrix of ``DOMAIN``."""
    if not path.exists():
        sys.exit(f"benchmark data not found: {path} (the shared public sample is required)")
    raw = pd.read_csv(path)
    keep = raw["birth_weight"].between(500, 5500) & raw["gestation_week"].between(22, 44)
    raw = raw[keep]
    month = pd.to_datetime(raw["date_of_birth"]).dt.month.to_numpy() - 1
    sex = np.where(raw["is_female"].astype(str).str.lower() == "true", 0, 1)  # F=0, M=1
    cols = {
        "birth_month": month,
        "birth_sex": sex,
        **{
            name: np.searchsorted(np.asarray(edges), raw[name].to_numpy(), side="right")
            for name, edges in EDGES.items()
        },
    }
    return np.stack([np.asarray(cols[name], dtype=np.int64) for name in DOMAIN.names], axis=1)


def tile(codes: np.ndarray, n: int) -> np.ndarray:
    """Exactly n rows: the sample repeated in order (a subsample when n is smaller)."""
    return codes[np.arange(n) % codes.shape[0]]


def max_marginal_error(real: np.ndarray, synth: np.ndarray, sizes: tuple[int, ...]) -> float:
    """max over all non-empty column subsets and their cells of |count_R − count_S| / n, exactly."""
    total = int(np.prod(sizes))
    diff = (
        np.bincount(np.ravel_multi_index(tuple(real.T), sizes), minlength=total)
        - np.bincount(np.ravel_multi_index(tuple(synth.T), sizes), minlength=total)
    ).reshape(sizes)
    d = len(sizes)
    worst = 0
    for k in range(1, d + 1):
        for subset in itertools.combinations(range(d), k):
            drop = tuple(a for a in range(d) if a not in subset)
            worst = max(worst, int(np.abs(diff.sum(axis=drop)).max()))
    return worst / real.shape[0]


def run_once(codes: np.ndarray, hyper: dict, epsilon: float, seed: int) -> tuple[float, float]:
    """One fit+sample; returns (seconds, max k-way marginal error)."""
    ctx = PrivacyContext.simulation(seed=seed)
    start = time.perf_counter()
    model = make_generator("privbayes", **hyper).fit(codes, DOMAIN, epsilon, ctx)
    synth = model.sample(codes.shape[0], ctx.rng)
    seconds = time.perf_counter() - start
    return seconds, max_marginal_error(codes, synth, DOMAIN.sizes)


def main() -> None:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--splits", type=float, nargs="+", default=[0.1, 0.25, 0.5])
    parser.add_argument("--skip-4m", action="store_true")
    args = parser.parse_args()

    base = load_codes(DATA)
    paper = tile(base, N_PAPER)
    print(f"data: {base.shape[0]} clean rows of {DATA.name}; tiled to {N_PAPER} and {N_LARGE}")
    print(f"epsilon = {args.epsilon}, {args.runs} runs per row, error = max k-way marginal error")
    header = (
        f"{'config':<10} {'split':>5} {'t166k (s)':>10} {'t4M (s)':>8} "
        f"{'mean err':>9} {'max err':>8} {'runs<1%':>8}"
    )
    print(header)
    print("-" * len(header))
    large = None if args.skip_4m else tile(base, N_LARGE)
    best: dict[int, tuple[float, float]] = {}
    for degree in (2, 3):
        for split in args.splits:
            hyper = {"degree": degree, "epsilon_split": split}
            results = [run_once(paper, hyper, args.epsilon, seed) for seed in range(args.runs)]
            times, errors = np.array(results).T
            t_large = float("nan")
            if large is not None:
                t_large, _ = run_once(large, hyper, args.epsilon, seed=10_000)
            print(
                f"degree {degree:<3} {split:>5} {times.mean():>10.2f} {t_large:>8.1f} "
                f"{errors.mean():>9.3%} {errors.max():>8.3%} "
                f"{int((errors < 0.01).sum()):>4}/{args.runs}"
            )
            if degree not in best or errors.mean() < best[degree][1]:
                best[degree] = (split, float(errors.mean()))
    for degree, (split, err) in best.items():
        print(f"best epsilon_split for degree {degree}: {split} (mean error {err:.3%})")


if __name__ == "__main__":
    main()
