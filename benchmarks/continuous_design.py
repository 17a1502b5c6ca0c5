"""Must-show 3 of issue 28: the continuous birth-weight example on a registry it was not tuned on.

``examples/us_birth_weight_continuous.frozen.json`` was made by ``workbench design --families``
(the generator family chosen at equal ε on its criteria: q15, median and q90 each within
100 g) on the public 200k US 2019 sample at n = 95,000. Here it runs on the 160k US 2019
sample, cleaned by the spec, at two sizes (records drawn without replacement, seed 28), with
``workbench run --rehearse SEED`` for a few seeds: the run's own code path (fit, sample, every
criterion released with DP, the single attempt's decision, the bundle) in a simulation context
seeded by SEED, with a temporary budget store. Per run it prints the bundle's generator and
guarantee label (configuration.json, guarantee.json), ε_total, whether a release was made, and
the released q15 / q50 / q90 of birth weight against the drawn records' (numpy's
``inverted_cdf`` quantile on both), with the largest gap. ``--contrast`` also runs the design
the assistant did not choose (the Censor_uw input, frozen on the fly) the same way.

    python benchmarks/continuous_design.py [--sizes 95000 158500] [--seeds 1 2 3] [--contrast]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.engine import run
from workbench.evidence.prepare import prepare_proxy
from workbench.trial import bind
from workbench.validation import load_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
REGISTRY = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample160k.csv.gz"
CHOSEN = REPO / "examples" / "us_birth_weight_continuous.frozen.json"
INPUT = REPO / "examples" / "us_birth_weight_continuous_input.json"
QUANTILES = (("q15", 0.15), ("q50", 0.5), ("q90", 0.9))
TOLERANCE = 100.0  # grams: each quantile within 100 g (the example's criteria)


def quantiles(values: np.ndarray) -> dict[str, float]:
    return {k: float(np.quantile(values, q, method="inverted_cdf")) for k, q in QUANTILES}


def one_run(spec_path: Path, data: Path, truth: dict[str, float], seed: int,
            work: Path) -> dict[str, object]:
    """``workbench run --rehearse SEED`` of the frozen spec on the drawn records."""
    out = work / f"run-{spec_path.stem}-{data.stem}-{seed}"
    start = time.perf_counter()
    outcome = run(spec_path, data, out, quiet=True, rehearsal=seed)
    row: dict[str, object] = {"status": outcome.status, "seconds": time.perf_counter() - start,
                              "epsilon_total": outcome.epsilon_total}
    if outcome.release_dir is None:  # ⊥: the generator and its guarantee from the spec
        spec = load_spec(spec_path)
        config = next(iter(spec.configurations()))
        detail = config.generator_params.get("mechanism", "")
        return row | {"generator": f"{config.family} ({detail})" if detail else config.family,
                      "guarantee": bind(spec, config).guarantee.label, "gap": float("nan"),
                      "diagnosis": outcome.diagnosis}
    bundle = outcome.release_dir
    config = json.loads((bundle / "configuration.json").read_text(encoding="utf-8"))
    guarantee = json.loads((bundle / "guarantee.json").read_text(encoding="utf-8"))
    generator = dict(config.get("configuration", config)["generator"])
    family = generator.pop("family")
    detail = generator.get("mechanism") or (f"number_bins {generator['number_bins']}"
                                            if "number_bins" in generator else "")
    released = pd.read_csv(bundle / "release.csv")["birth_weight"].to_numpy(float)
    got = quantiles(released)
    gaps = {k: got[k] - truth[k] for k in got}
    return row | {"generator": f"{family} ({detail})" if detail else family,
                  "guarantee": guarantee["label"], "released": got,
                  "gap": max(abs(v) for v in gaps.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[95_000, 158_500])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--contrast", action="store_true",
                    help="also run the Censor_uw input design the assistant did not choose")
    args = ap.parse_args()
    chosen = load_spec(CHOSEN)
    registry = prepare_proxy(chosen, pd.read_csv(REGISTRY))
    print(f"registry: {REGISTRY.name}, {len(registry):,} records after the spec's cleaning; "
          f"design: {CHOSEN.name} (ε_total {chosen.epsilon_total:g}, forecast p "
          f"{chosen.selection.forecast.p:.2f} at n = {chosen.selection.forecast.n:,} on "
          f"{chosen.selection.forecast.proxy})")
    with tempfile.TemporaryDirectory(prefix="continuous-design-") as tmp:
        work = Path(tmp)
        specs = [CHOSEN]
        if args.contrast:
            specs.append(work / "us_birth_weight_continuous_input.frozen.json")
            save_spec(json.loads(INPUT.read_text(encoding="utf-8")), specs[-1])
        print("| design | n | seed | generator | guarantee | ε_total | release | q15 released/true "
              "| q50 released/true | q90 released/true | max gap (g) | ≤ 100 g |")
        print("|---" * 12 + "|")
        notes: list[str] = []
        for size in args.sizes:
            drawn = registry.sample(n=size, random_state=28, replace=False)
            data = work / f"registry{size}.csv"
            drawn.to_csv(data, index=False)
            truth = quantiles(drawn["birth_weight"].to_numpy(float))
            for spec_path in specs:
                name = "chosen" if spec_path == CHOSEN else "input (Censor_uw)"
                for seed in args.seeds:
                    r = one_run(spec_path, data, truth, seed, work)
                    got = r.get("released")
                    shown = got if isinstance(got, dict) else {}
                    cells = [f"{shown[k]:.0f}/{truth[k]:.0f}" if k in shown
                             else f"—/{truth[k]:.0f}" for k, _ in QUANTILES]
                    gap = r["gap"]
                    ok = "—" if gap != gap else ("yes" if gap <= TOLERANCE else "NO")
                    print(f"| {name} | {size:,} | {seed} | {r['generator']} | {r['guarantee']} | "
                          f"{r['epsilon_total']:g} | {r['status']} | " + " | ".join(cells)
                          + f" | {gap:.0f} | {ok} |", flush=True)
                    if r.get("diagnosis"):
                        notes.append(f"{name}, n = {size:,}, seed {seed}: ⊥ — "
                                     + " ".join(d.strip() for d in r["diagnosis"]))
        for note in notes:
            print(note)


if __name__ == "__main__":
    main()
