"""Benchmark: every acceptance criterion of the example spec, with DP, on 166k vs 166k rows.

R = the public proxy (data_public/proxy_sample_166k.csv.gz), cleaned and encoded with the
paper's chosen configuration (mother_age ten_bins_35_39, parity five_bins, gestation_week
six_bins); S = a second proxy sample (another seed), cleaned, encoded the same way and cut to
the same n. ``evaluate_all`` runs 5 times (fresh simulation context each time, noise from
OpenDP); the median wall time is compared with the target.

Target (issue 4): all criteria including faithfulness, with DP, in ≤ 15 s.

Run: python benchmarks/criteria_all.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from workbench.criteria import sensitivity as sens
from workbench.criteria.dispatch import evaluate_all, evaluate_criterion
from workbench.criteria.result import format_table
from workbench.evidence.sampler import sample_proxy
from workbench.privacy import PrivacyContext, laplace_sigma
from workbench.specification.model import Spec
from workbench.specification.space import Configuration
from workbench.transform.clean import clean
from workbench.transform.raw import read_raw
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
PAPER_TRANSFORMS = {
    "mother_age": "ten_bins_35_39",
    "parity": "five_bins",
    "gestation_week": "six_bins",
}
TARGET_SECONDS = 15.0
N_PAPER = 165_915


def print_paper_figures() -> None:
    """Table 2's Δ and σ recomputed from the sensitivity functions at the paper's n."""
    rel = sens.relative_one_way(50, 2.0)
    rows = [
        ("max marginal error, Δ = 1/n, ε 0.01", sens.one_over_n(N_PAPER), 0.01),
        ("relative 1-way, s_min 50, λ 2, ε 0.3", rel, 0.3),
        ("birth-weight mean, m̂ 6972, ε 0.17", sens.resized_mean(1400, 4600, 6972), 0.17),
        ("MAE, [1400, 4600], ε 0.04", sens.regression_mae(1400, 4600, N_PAPER), 0.04),
        ("faithfulness, Δ = 1/n, ε 0.01", sens.one_over_n(N_PAPER), 0.01),
    ]
    print(f"Table 2 sensitivities recomputed at the paper's n = {N_PAPER:,}:")
    for name, delta, eps in rows:
        print(f"  {name:<40} Δ = {delta:.4g}  σ = {laplace_sigma(delta, eps):.4g}")
    t_prime = sens.false_pass_threshold(2.0, 0.05, rel, 0.3)
    print(f"  relative 1-way adjusted threshold T′ (p = 0.05) = {t_prime:.3f}  (paper: ≈ 1.4)")


def paper_configuration(spec: Spec) -> Configuration:
    """The configuration the paper released with (first hyperparameters, min_count 2)."""
    return next(
        c
        for c in spec.configurations()
        if all(c.transform_of(k) == v for k, v in PAPER_TRANSFORMS.items())
    )


def load_data(spec: Spec, config: Configuration) -> tuple[np.ndarray, np.ndarray]:
    """R from the proxy file and S from a second proxy sample, same n, same encoding."""
    table = spec.table_codec(config)
    real = table.encode(clean(read_raw(PROXY, spec.columns), spec))
    n = real.shape[0]
    raw_s = sample_proxy(int(n * 1.05), seed=2024)[list(spec.column_names)]
    synth = table.encode(clean(raw_s, spec))
    if synth.shape[0] < n:
        raise SystemExit("the second proxy sample has too few rows after cleaning")
    return real, synth[:n]


def main(runs: int = 5) -> None:
    print_paper_figures()
    spec = load_spec(REPO / "examples" / "israel_births_2014.json")
    config = paper_configuration(spec)
    t0 = time.perf_counter()
    real, synth = load_data(spec, config)
    print(f"data: R {real.shape[0]:,} rows, S {synth.shape[0]:,} rows, {real.shape[1]} columns")
    print(f"load + clean + encode: {time.perf_counter() - t0:.2f} s")
    print(f"criteria: {', '.join(c.id for c in spec.criteria)}")

    times, results = [], []
    for i in range(runs):
        ctx = PrivacyContext.simulation(i)
        ctx.begin_iteration(1)
        t = time.perf_counter()
        results = evaluate_all(spec, config, real, synth, ctx, table=spec.table_codec(config))
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"evaluate_all, {runs} runs: " + ", ".join(f"{t:.2f}" for t in times) + " s")
    verdict = "OK" if med <= TARGET_SECONDS else "MISSED"
    print(f"median {med:.2f} s (target ≤ {TARGET_SECONDS:g} s): {verdict}")

    print("\nper criterion (one run each, evaluate_criterion; includes the shared cell summary):")
    ctx = PrivacyContext.simulation(99)
    for c in spec.criteria:
        t = time.perf_counter()
        evaluate_criterion(spec, config, c.id, real, synth, ctx, table=spec.table_codec(config))
        print(f"  {c.id:<24} {time.perf_counter() - t:6.2f} s")

    print("\nCriteria table (paper Table 2 shape; DP values of the last run):")
    print(format_table(results))
    passed = sum(r.passed for r in results)
    print(f"\n{passed}/{len(results)} criteria passed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    main(parser.parse_args().runs)
