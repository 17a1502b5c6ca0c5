"""Issue 28, must-show 1: the Adult examples on a split their design never saw.

``scripts/adult_data.py`` splits the UCI Adult extract into two halves with a fixed public
seed. The designs (``examples/adult_plausible_deniability.json``, ``examples/adult_missing.json``)
were derived by ``workbench design`` on the PUBLIC half, which is also where their network's
structure comes from (``structure: public``). Here the OTHER half stands in for new
confidential data: R is a third of it (about 5,400 records, a different n from the design's
5,000) and the remaining two thirds are real held-out records. Each frozen example runs through
``workbench run --rehearse SEED`` (the run's own code path, seeded) on R; a logistic
regression and a decision tree are trained on the release and tested on the held-out records.

Printed per example and seed: the run's outcome (⊥ when a criterion failed: a single attempt
then releases nothing), its DP criterion values, the two accuracies, the held-out majority
share, the gain over it (points), ε_total and the records' guarantee (plausible deniability's
per-record (ε, δ) of Theorem 1).

Usage: ``python benchmarks/unseen_adult.py [--seeds 1 2 3 4 5] [--work out/unseen_adult]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.engine import run
from workbench.specification.space import Configuration
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, read_raw
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "scripts"))
from plausible_deniability import tstr_accuracy  # noqa: E402

#: example → (its unseen half as written by scripts/adult_data.py, the class column)
EXAMPLES = {
    "adult_plausible_deniability": ("adult_confidential.csv", "income"),
    "adult_missing": ("adult_raw_confidential.csv", "Y"),
}
CLASSIFIERS = (("logistic", "logistic_regression"), ("tree", "decision_tree"))


@contextlib.contextmanager
def working_directory(path: Path):
    """Run where ``out/adult/…`` (the examples' relative public proxies) resolves."""
    here = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(here)


def split_lines(source: Path, r_path: Path, test_path: Path, seed: int = 28) -> None:
    """A third of ``source``'s records (a fixed public permutation) to ``r_path``, the rest to
    ``test_path``; lines are copied as they are (the raw file keeps its own format)."""
    header, *rows = [x for x in source.read_text(encoding="utf-8").splitlines() if x.strip()]
    order = np.random.default_rng(seed).permutation(len(rows))
    third = len(rows) // 3
    for path, part in ((r_path, order[:third]), (test_path, order[third:])):
        path.write_text("\n".join([header] + [rows[i] for i in np.sort(part)]) + "\n",
                        encoding="utf-8")


def codes_of(spec, config, path: Path) -> np.ndarray:
    """Real records read, cleaned and encoded like the run reads R."""
    frame = read_raw(path, spec.columns, spec.file_format)
    return spec.table_codec(config).encode(clean(apply_domain_policy(frame, spec.columns), spec))


def measure(example: str, seed: int, work: Path) -> dict:
    """One rehearsal of the frozen example on R, and TSTR on the held-out records."""
    half, target = EXAMPLES[example]
    frozen = REPO / "examples" / f"{example}.frozen.json"
    r_path, test_path = work / f"{example}_R.csv", work / f"{example}_test.csv"
    if not r_path.exists():
        split_lines(work / "out" / "adult" / half, r_path, test_path)
    out = work / f"{example}_seed{seed}"
    with working_directory(work):
        outcome = run(frozen, r_path, out, quiet=True, rehearsal=seed)
    spec = load_spec(frozen)
    row = {"example": example, "seed": seed, "outcome": outcome.status}
    if outcome.status != "complete":
        return row
    bundle = outcome.release_dir
    config = Configuration.from_dict(json.loads((bundle / "configuration.json").read_text()))
    table = spec.table_codec(config)
    released = table.encode_labels(pd.read_csv(bundle / "release.csv", dtype=str,
                                               keep_default_na=False))
    test = codes_of(spec, config, test_path)
    names, sizes = list(table.domain.names), list(table.domain.sizes)
    y = names.index(target)
    majority = float(np.bincount(test[:, y]).max() / len(test))
    row |= {"n_R": len(released), "majority": majority}
    for short, name in CLASSIFIERS:
        acc = tstr_accuracy(released, test, sizes, y, name)
        row |= {short: acc, f"{short} gain": 100 * (acc - majority)}
    criteria = json.loads((bundle / "criteria.json").read_text())["criteria"]
    row["criteria (DP)"] = ", ".join(f"{c['id']} {c['value']:.3g}" for c in criteria)
    summary = [json.loads(x) for x in (bundle / "ledger.jsonl").read_text().splitlines()][-1]
    row["ε_total"] = summary["epsilon_total"]
    guarantee = json.loads((bundle / "guarantee.json").read_text())
    p = guarantee["parameters"]
    row["records"] = (f"({p['epsilon']:.4g}, {p['delta']:.3g}) per record"
                      if "delta" in p else guarantee["label"])
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--work", type=Path, default=REPO / "out" / "unseen_adult")
    parser.add_argument("--examples", nargs="+", default=list(EXAMPLES), choices=list(EXAMPLES))
    args = parser.parse_args(argv)
    from adult_data import main as make_halves

    args.work.mkdir(parents=True, exist_ok=True)
    make_halves(["--out", str(args.work / "out" / "adult")])
    rows = [measure(example, seed, args.work.resolve())
            for example in args.examples for seed in args.seeds]
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_colwidth", 80):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    done = table[table["outcome"] == "complete"]
    for example, part in done.groupby("example"):
        print(f"{example}: {len(part)} of {int((table['example'] == example).sum())} released; "
              f"gain over the majority class, mean (min): logistic "
              f"{part['logistic gain'].mean():.1f} ({part['logistic gain'].min():.1f}), tree "
              f"{part['tree gain'].mean():.1f} ({part['tree gain'].min():.1f}) points")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
