"""Must-show 3 and 4 of issue 19 on the US 2019 birth-weight sample (public data).

3. The paper's application table in its shape: at ε = 5 the mechanisms (Weighted,
   Weighted-ε, Censor_w, Censor_uw) of the normal linear model of birth weight given
   gestation group, sex and parity group, and the perturbed histogram (equal-width bins of
   the public range, uniform within the bin), each synthesising birth weight for the same
   predictor records; rows: ε (aDP figures marked), max-ECDF, avg-ECDF, mean, median, q15,
   q90 (the "Data" column is the sample itself). The aDP columns' ε is the local
   ε_x computed on the data: a figure, not a guarantee.
4. Sampler diagnostics (R̂ over 2 chains, ESS, acceptance) for every fit, and the time of
   one Censor_uw fit at 166k records (target ≤ 30 s).

    python benchmarks/bayesian_birth_weight.py [--n 10000] [--fit-n 166000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.criteria.distribution import avg_ecdf
from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import draw
from workbench.generators.bayesian.risk import risk_view
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SamplerStream, SeededNoise

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BOUNDS = (200.0, 7000.0)  # the example spec's public bounds
OFFSET, SCALE = (BOUNDS[0] + BOUNDS[1]) / 2, (BOUNDS[1] - BOUNDS[0]) / 6
GESTATION = [28, 32, 37, 39, 41]
PARITY = [2, 3]
EPS = 5.0


def load(n: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(birth weight in grams, predictor cell) of the 200k sample (first n rows)."""
    frame = pd.read_csv(DATA / "us_births_2019_singleton_sample200k.csv.gz")
    frame = frame[(frame.birth_weight >= BOUNDS[0]) & (frame.birth_weight <= BOUNDS[1])]
    if n is not None:
        frame = frame.iloc[:n]
    g = np.searchsorted(GESTATION, frame.gestation_week.to_numpy(), side="right")
    s = frame.is_female.astype(str).eq("True").to_numpy().astype(int)
    p = np.searchsorted(PARITY, frame.parity.to_numpy(), side="right")
    return frame.birth_weight.to_numpy(float), np.ravel_multi_index((g, s, p), (6, 2, 3))


def model_data(x: np.ndarray, cells: np.ndarray) -> ModelData:
    return ModelData((x - OFFSET) / SCALE, cells, one_hot_design((6, 2, 3)))


def synthesise(theta: np.ndarray, data: ModelData, seed: int) -> np.ndarray:
    u = np.clip(SamplerStream(seed).uniform(data.n), 1e-12, 1 - 1e-12)
    y = MODELS["normal_linear"].synthesise(theta, data.cells, data, u)
    return np.clip(np.rint(y * SCALE + OFFSET), *BOUNDS)


def perturbed_histogram(x: np.ndarray, bins: int, seed: int) -> np.ndarray:
    """Equal-width bins of the public range, counts + Laplace(2/ε) (replace-one) via the
    privacy layer, clamped at 0, then a uniform value inside each drawn bin."""
    edges = np.linspace(*BOUNDS, bins + 1)
    counts = np.histogram(x, edges)[0]
    ctx = PrivacyContext.simulation(seed, noise=SeededNoise(seed))
    noisy = ctx.laplace(counts.astype(float), sensitivity=ctx.histogram_sensitivity(),
                        epsilon=EPS, purpose="perturbed histogram").value
    p = np.clip(noisy, 0, None)
    stream = SamplerStream(seed + 1)
    b = np.searchsorted(np.cumsum(p / p.sum()), stream.uniform(len(x)), side="right")
    b = np.minimum(b, bins - 1)
    return np.rint(edges[b] + stream.uniform(len(x)) * (edges[b + 1] - edges[b]))


def ecdfs(real: np.ndarray, synth: np.ndarray) -> tuple[float, float]:
    grid = np.arange(BOUNDS[0], BOUNDS[1] + 1)
    r = np.bincount((real - BOUNDS[0]).astype(int), minlength=len(grid)).astype(float)
    s = np.bincount((synth - BOUNDS[0]).astype(int), minlength=len(grid)).astype(float)
    return float(np.abs(np.cumsum(r - s)).max() / len(real)), avg_ecdf(r, s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--fit-n", type=int, default=166_000)
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--burn-in", type=int, default=5000)
    args = parser.parse_args()
    x, cells = load(args.n)
    data = model_data(x, cells)
    proxy_x, proxy_cells = load(None)
    proxy = model_data(proxy_x[-20_000:], proxy_cells[-20_000:])  # rows disjoint from the data
    view = risk_view(MODELS["normal_linear"], proxy, [EPS], "replace_one")
    weights = mech.fit_weight_function(proxy.y, view.weights)
    columns = {"Data": (x, "")}
    diagnostics = []
    for k, mechanism in enumerate(("weighted", "weighted_eps", "censor_w", "censor_uw")):
        fit = draw(MODELS["normal_linear"], data, mechanism, EPS, "replace_one",
                   SamplerStream(k), iterations=args.iterations, burn_in=args.burn_in,
                   weight_function=weights)
        eps = f"{fit.local_epsilon:.2f} (aDP)" if fit.local_epsilon is not None else f"{EPS:.2f}"
        columns[mechanism] = (synthesise(fit.theta, data, 100 + k), eps)
        diagnostics.append((mechanism, fit.chains.diagnostics(), fit.censored))
    columns["perturbed histogram"] = (perturbed_histogram(x, 68, 7), f"{EPS:.2f}")
    rows = {"ε": [], "max-ECDF": [], "avg-ECDF": [], "mean": [], "median": [], "q15": [],
            "q90": []}
    for name, (values, eps) in columns.items():
        m, a = ecdfs(x, values) if name != "Data" else ("", "")
        rows["ε"].append(eps)
        rows["max-ECDF"].append(f"{m:.4f}" if m != "" else "")
        rows["avg-ECDF"].append(f"{a:.5f}" if a != "" else "")
        for key, q in (("mean", None), ("median", 0.5), ("q15", 0.15), ("q90", 0.9)):
            v = values.mean() if q is None else np.quantile(values, q)
            rows[key].append(f"{v:.0f}")
    names = list(columns)
    print(f"US 2019 birth weight (g), n = {len(x)}, normal linear model | gestation group, "
          f"sex, parity group; ε = {EPS:g}, replace-one clamp [{-EPS / 4:g}, {EPS / 4:g}]")
    print("| | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for key, cells_ in rows.items():
        print(f"| {key} | " + " | ".join(cells_) + " |")
    print("\nSampler diagnostics (2 chains; kept iterations per chain):")
    for mechanism, diag, censored in diagnostics:
        print(f"  {mechanism:<13} R-hat max {diag['rhat_max']:.4f}  ESS min {diag['ess_min']:.0f}"
              f"  acceptance {diag['acceptance']:.3f}  censored records {censored}")
    print(f"proxy risk view (20k public rows): {view.table()}")
    big_x, big_cells = load(args.fit_n)
    big = model_data(big_x, big_cells)
    start = time.perf_counter()
    fit = draw(MODELS["normal_linear"], big, "censor_uw", EPS, "replace_one", SamplerStream(9),
               iterations=args.iterations, burn_in=args.burn_in)
    took = time.perf_counter() - start
    diag = fit.chains.diagnostics()
    print(f"\nCensor_uw fit at n = {big.n}: {took:.1f} s (target ≤ 30 s), R-hat max "
          f"{diag['rhat_max']:.4f}, ESS min {diag['ess_min']:.0f}, acceptance "
          f"{diag['acceptance']:.3f}")


if __name__ == "__main__":
    main()
