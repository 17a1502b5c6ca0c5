"""Must-show 1 of issue 19: the paper's simulation (Hu, Williams & Savitsky §4).

R datasets of n = 2000 from Beta(0.5, 3); at ε ∈ {5, 4, 3} fit Censor_uw (add/remove clamp
[−ε/2, ε/2], as in the paper, and the replace-one clamp of width ε/2 the workbench uses) and
Censor_w (weights from a function fitted on one separate public proxy draw), synthesise n
records from the one released θ, and print the median censored counts (paper, Censor_uw:
244 / 419 / 806; Censor_w: 0 / 425 / 741) and the median synthetic mean, median, q15 and q90
with their errors against the analytic values 0.142857, 0.079033, 0.006455, 0.386249.
Public simulation: seeded streams (SamplerStream), no confidential data.

    python benchmarks/bayesian_simulation.py [--reps 100] [--iterations 1500]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import draw
from workbench.generators.bayesian.risk import risk_view
from workbench.privacy.noise import SamplerStream

ANALYTIC = {"mean": 0.142857, "median": 0.079033, "q15": 0.006455, "q90": 0.386249}
PAPER_COUNTS = {"censor_uw": {5: 244, 4: 419, 3: 806}, "censor_w": {5: 0, 4: 425, 3: 741}}
N = 2000


def _data(y: np.ndarray) -> ModelData:
    return ModelData(y, np.zeros(len(y), np.int64), one_hot_design(()))


def _stats(x: np.ndarray) -> dict[str, float]:
    return {"mean": float(x.mean()), "median": float(np.median(x)),
            "q15": float(np.quantile(x, 0.15)), "q90": float(np.quantile(x, 0.9))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=1500)
    args = parser.parse_args()
    model = MODELS["beta"]
    gen = np.random.default_rng(20240519)  # public simulation data
    proxy = _data(stats.beta.rvs(0.5, 3, size=N, random_state=gen))
    weight_fn = mech.fit_weight_function(proxy.y, risk_view(model, proxy, [], "add_remove").weights)
    runs = [("censor_uw", "add_remove"), ("censor_uw", "replace_one"), ("censor_w", "add_remove")]
    counts: dict[tuple, list[int]] = {}
    values: dict[tuple, list[dict[str, float]]] = {}
    rhats: dict[str, list[float]] = {}
    start = time.perf_counter()
    for r in range(args.reps):
        d = _data(stats.beta.rvs(0.5, 3, size=N, random_state=gen))
        for eps in (5, 4, 3):
            for mechanism, neighbour in runs:
                fit = draw(model, d, mechanism, eps, neighbour, SamplerStream(1000 * r + eps),
                           iterations=args.iterations, burn_in=args.iterations,
                           weight_function=weight_fn)
                key = (mechanism, neighbour, eps)
                counts.setdefault(key, []).append(fit.censored)
                u = np.clip(SamplerStream(10**6 + 1000 * r + eps).uniform(N), 1e-12, 1 - 1e-12)
                synth = model.synthesise(fit.theta, np.zeros(N, np.int64), d, u)
                values.setdefault(key, []).append(_stats(synth))
                rhats.setdefault(f"{mechanism} {neighbour}", []).append(
                    float(fit.chains.rhat.max()))
    took = time.perf_counter() - start
    print(f"Beta(0.5, 3), n = {N}, {args.reps} datasets, {args.iterations} burn-in + "
          f"{args.iterations} kept iterations x 2 chains per fit ({took:.0f} s)")
    print(f"{'mechanism':<10} {'neighbour':<11} {'ε':>2} {'censored (median)':>18} "
          f"{'paper':>6}  " + "  ".join(f"{k:>16}" for k in ANALYTIC))
    for (mechanism, neighbour, eps), c in counts.items():
        paper = PAPER_COUNTS[mechanism][eps] if neighbour == "add_remove" else "-"
        med = {k: float(np.median([v[k] for v in values[(mechanism, neighbour, eps)]]))
               for k in ANALYTIC}
        cells = "  ".join(f"{med[k]:.4f} ({med[k] - ANALYTIC[k]:+.4f})" for k in ANALYTIC)
        print(f"{mechanism:<10} {neighbour:<11} {eps:>2} {int(np.median(c)):>18} {paper!s:>6}  "
              f"{cells}")
    print("analytic: " + ", ".join(f"{k} {v}" for k, v in ANALYTIC.items())
          + "; cells: median synthetic value (error against analytic)")
    for name, values_ in rhats.items():
        print(f"R-hat {name}: max over fits {max(values_):.4f}, median {np.median(values_):.4f}")


if __name__ == "__main__":
    main()
