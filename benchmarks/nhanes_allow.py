"""Issue 36: the NHANES example with its 14 partly missing numbers declared ``missing: allow``,
fitted once on half A (seeded noise, the example's configuration: workload, ε_gen 3) — each
column's missing rate in A and in the release, and the lab panel's co-missingness.

``--strategy partial`` is the old default (a 2^14-cell pattern at 5% of ε_gen: every rate near
½); the workload's default ``as_value`` carries the rates in its 1-ways. ``--co-missing`` adds a
``co_missingness`` criterion over the lab panel (its chain of pairs keeps the panel together).
Half A is the one ``benchmarks/nhanes_wide.py`` treats as confidential (the public file).

Usage: python benchmarks/nhanes_allow.py [--strategy as_value|partial|...] [--co-missing]
       [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nhanes_wide import DATA, REPO, half_a

from workbench.evidence.prepare import prepare_proxy
from workbench.generators.missing import AS_VALUE, layout_for
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.trial.bind import bind
from workbench.validation import build_spec

LAB = ("Pulse", "BPSysAve", "BPDiaAve", "TotChol", "DirectChol")


def allow_document(strategy: str | None, co_missing: bool) -> dict:
    """The example with every column that declares a max_missing_rate set to 'allow'."""
    doc = json.loads((REPO / "examples" / "nhanes_wide.json").read_text(encoding="utf-8"))
    for column in doc["schema"]["columns"]:
        if column.get("max_missing_rate") is not None:
            column["missing"] = "allow"
    doc["selection"].pop("forecast", None)
    if co_missing:
        doc["criteria"].append({"id": "lab_panel", "kind": "co_missingness", "threshold": 0.05,
                                "epsilon": 0.02, "bounds": [0, 1],
                                "params": {"columns": list(LAB)}})
    if strategy is not None:
        doc["generator"]["search_space"][0]["missing_strategy"] = [strategy]
        for config in doc["selection"].get("configurations", []):
            config["generator"]["missing_strategy"] = strategy
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default=None, help="missing_strategy (default: family's)")
    parser.add_argument("--co-missing", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = build_spec(allow_document(args.strategy, args.co_missing))
    trial = bind(spec, next(spec.configurations()))
    frame = pd.read_csv(DATA, dtype=str, keep_default_na=False)
    codes = trial.encode(prepare_proxy(spec, frame[half_a(frame["ID"])]))
    gen = trial.generator()
    ctx = PrivacyContext.simulation(args.seed, noise=SeededNoise(args.seed))
    start = time.perf_counter()
    gen.fit(codes, trial.domain, trial.epsilon_generator, ctx)
    synth = gen.sample(len(codes), ctx.rng)
    print(f"n {len(codes)}, strategy {gen.missing_strategy}, ε recorded "
          f"{ctx.epsilon_recorded():.6g} of ε_gen {trial.epsilon_generator:g}, fit and sample "
          f"{time.perf_counter() - start:.1f} s")
    layout = layout_for(spec, trial.domain, AS_VALUE)
    real, release = layout.missing(codes), layout.missing(synth)
    for name, r, s in zip(layout.allow_names, real.mean(0), release.mean(0), strict=True):
        print(f"  {name:16s} real {r:.3f}  release {s:.3f}  gap {s - r:+.3f}")
    lab = [layout.allow_names.index(c) for c in LAB]
    for label, m in (("real", real), ("release", release)):
        panel = m[:, lab]
        print(f"  lab panel, {label:7s}: all missing {panel.all(1).mean():.3f}, any missing "
              f"{panel.any(1).mean():.3f}, all | any "
              f"{panel.all(1).sum() / max(panel.any(1).sum(), 1):.3f}")
    gaps = np.abs(real.mean(0) - release.mean(0))
    print(f"max rate gap {gaps.max():.3f}")


if __name__ == "__main__":
    main()
