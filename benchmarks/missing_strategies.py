"""Missing-data strategies on Adult (issue 16, must-show 2): complete rows vs partial vs impute.

Ground truth G: the Adult rows complete on every column (the paper's setting, Mohapatra et
al. §7). MCAR masks of 10%, 20% and 30% are added to every column but the class Y (public
simulation: the masks are seeded). PrivBayes (θ = 4) is fitted at ε_gen = 1 on the masked
table under each ``missing_strategy`` and sampled without the missingness pattern (the value
model). Printed per strategy and rate:

* the average max-cell error of all 1-way and all 2-way marginals of S against G;
* TSTR: a scikit-learn logistic regression trained on S (one-hot codes), tested on G:
  accuracy and macro-F1 (a non-DP evaluation figure, as in the paper);
* the change against the same strategy with no masks.

Every column of the benchmark's spec is ``allow`` with ``max_missing_rate`` = rate + 0.05
(public here: the masks are ours), so the partial-observation sensitivities use
n·(1 − Σ φ̄) as their row bound; the complete-rows bound is the union bound over all columns,
which is what a spec can honestly promise.

    PYTHONPATH=$PWD python benchmarks/missing_strategies.py [--reps 2] [--rows 0]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.evidence.missingness import Mask, apply_masks  # noqa: E402
from workbench.generators import make_generator  # noqa: E402
from workbench.privacy import PrivacyContext  # noqa: E402
from workbench.transform.raw import apply_domain_policy, read_raw  # noqa: E402
from workbench.validation import build_spec  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "adult" / "adult_train.csv.gz"
STRATEGIES = ("complete_rows", "partial", "impute")
RATES = (0.0, 0.1, 0.2, 0.3)
EPSILON = 1.0


def spec_for(rate: float):
    """The Adult example with every column but Y 'allow' at max rate = rate + 0.05."""
    doc = json.loads((ROOT / "examples" / "adult_missing.json").read_text())
    doc = copy.deepcopy(doc)
    for col in doc["schema"]["columns"]:
        if col["name"] != "Y":
            col["missing"] = "allow"
            col["max_missing_rate"] = round(rate + 0.05, 4)
            col.pop("missing_label", None)
    return build_spec(doc)


def ground_truth(rows: int):
    """Adult's complete rows (optionally the first ``rows``) as raw values."""
    spec = spec_for(0.0)
    frame = read_raw(DATA, spec.columns, spec.file_format)
    frame = apply_domain_policy(frame, spec.columns).dropna().reset_index(drop=True)
    return frame.iloc[:rows] if rows else frame


def marginal_errors(real: np.ndarray, synth: np.ndarray, sizes: list[int], way: int) -> float:
    """Average over all ``way``-column marginals of the max-cell |p_R − p_S|."""
    out = []
    for cols in itertools.combinations(range(len(sizes)), way):
        shape = [sizes[c] for c in cols]
        dists = [np.bincount(np.ravel_multi_index(tuple(x[:, list(cols)].T), shape),
                             minlength=int(np.prod(shape))) / len(x) for x in (real, synth)]
        out.append(float(np.abs(dists[0] - dists[1]).max()))
    return float(np.mean(out))


def tstr(real: np.ndarray, synth: np.ndarray, sizes: list[int]) -> tuple[float, float]:
    """Logistic regression on one-hot S, tested on G: (accuracy, macro-F1)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.preprocessing import OneHotEncoder

    cats = [list(range(s)) for s in sizes[:-1]]
    enc = OneHotEncoder(categories=cats, handle_unknown="ignore")
    x_s, y_s = enc.fit_transform(synth[:, :-1]), synth[:, -1]
    x_r, y_r = enc.transform(real[:, :-1]), real[:, -1]
    if len(np.unique(y_s)) < 2:
        pred = np.full(len(y_r), y_s[0])
    else:
        pred = LogisticRegression(max_iter=300).fit(x_s, y_s).predict(x_r)
    return accuracy_score(y_r, pred), f1_score(y_r, pred, average="macro")


def one_run(truth, rate: float, strategy: str, seed: int) -> dict[str, float]:
    """Mask, fit PrivBayes with ``strategy`` at ε = 1, sample values, score against G."""
    spec = spec_for(rate)
    config = next(iter(spec.configurations()))
    table = spec.table_codec(config)
    masked = apply_masks(truth, [Mask("MCAR", rate)], seed=seed, exclude=["Y"]) if rate else truth
    codes = table.encode(masked)
    real = table.encode(truth)
    gen = make_generator("privbayes", theta=4.0, missing_strategy=strategy)
    gen.bind_spec(spec, table)
    ctx = PrivacyContext.simulation(seed)
    gen.fit(codes, table.domain, EPSILON, ctx)
    gen.pattern_ = None  # the value model: compare values with G, not the mask
    synth = gen.sample(len(truth), ctx.rng)
    sizes = list(table.domain.sizes)
    acc, f1 = tstr(real, synth, sizes)
    return {"one_way": marginal_errors(real, synth, sizes, 1),
            "two_way": marginal_errors(real, synth, sizes, 2), "accuracy": acc, "f1": f1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--rows", type=int, default=0, help="first rows only (0: all)")
    parser.add_argument("--rates", default="0,0.1,0.2,0.3")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    truth = ground_truth(args.rows)
    print(f"Adult complete rows: {len(truth)}; PrivBayes θ = 4, ε_gen = {EPSILON}; "
          f"{args.reps} rep(s) each; MCAR on every column but Y")
    start = time.time()
    table: dict[tuple[str, float], dict[str, float]] = {}
    for strategy in STRATEGIES:
        for rate in rates:
            runs = [one_run(truth, rate, strategy, seed) for seed in range(args.reps)]
            table[strategy, rate] = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
    head = (f"{'strategy':<14} {'MCAR':>5} {'1-way err':>10} {'2-way err':>10} {'TSTR acc':>9} "
            f"{'macro-F1':>9} {'Δ1-way':>8} {'Δ2-way':>8} {'ΔF1':>8}")
    print(head)
    print("-" * len(head))
    for strategy in STRATEGIES:
        base = table.get((strategy, 0.0))
        for rate in rates:
            r = table[strategy, rate]
            def change(key, r=r, base=base):
                return f"{(r[key] / base[key] - 1):+8.1%}" if base else f"{'-':>8}"
            print(f"{strategy:<14} {rate:>5.0%} {r['one_way']:>10.4f} {r['two_way']:>10.4f} "
                  f"{r['accuracy']:>9.3f} {r['f1']:>9.3f} {change('one_way')} "
                  f"{change('two_way')} {change('f1')}")
    if 0.2 in rates:
        cut = 1 - table["partial", 0.2]["two_way"] / table["complete_rows", 0.2]["two_way"]
        verdict = "PASS" if cut >= 0.30 else "FAIL"
        print(f"\nAt 20% MCAR, partial cuts the 2-way error of complete_rows by {cut:.1%} "
              f"(target ≥ 30%): {verdict}")
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
