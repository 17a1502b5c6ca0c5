"""Issue 36: the workload fit with and without ``structure`` rounds on NHANES columns (timing).

The first ``D`` usable columns of ``../shared/data/nhanes`` (IDs, weights and design columns
dropped; columns at least half observed), numbers cut in 8 quantile bins, a missing value its
own code (public data: a quick stand-in encoding, not the NHANES example's spec). Two pairs
are "named" (a workload of two 2-way marginals); the fit (ε_gen 3, 1000 steps) is timed and
the mean pair TV of the unnamed pairs (release vs real, independent vs real, ratio) printed
with the process's peak RSS.

Run: nice -n 10 python benchmarks/structure_fit_timing.py D none|pairs [ROWS] [ROUNDS] [PICKS]
     [SHARE]   (ROWS 0: the file's 20,293 rows)
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.criteria.kinds.structure import pair_means
from workbench.generators import WorkloadGenerator
from workbench.generators.workload import Workload, WorkloadItem
from workbench.privacy import PrivacyContext
from workbench.transform import Domain
from workbench.transform.cells import PairedCells

NHANES = Path(__file__).resolve().parents[2] / "shared" / "data" / "nhanes" / \
    "nhanes_2009_2012_raw.csv.gz"
DROP = ["ID", "WTINT2YR", "WTMEC2YR", "SurveyYr", "SDMVPSU", "SDMVSTRA"]


def encode(d: int, rows: int) -> tuple[np.ndarray, Domain]:
    """Codes and domain of the first ``d`` usable columns (module doc)."""
    frame = pd.read_csv(NHANES, low_memory=False).drop(columns=DROP)
    cols = [c for c in frame.columns if frame[c].notna().mean() > 0.5][:d]
    codes, sizes = [], []
    for c in cols:
        s = frame[c]
        if s.dtype.kind in "if" and s.nunique() > 8:
            s = pd.qcut(s, 8, duplicates="drop")
        k = pd.factorize(s.astype(str).fillna("nan"))[0]
        codes.append(k)
        sizes.append(int(k.max()) + 1)
    out = np.stack(codes, 1).astype(np.int64)
    if rows:
        out = out[np.random.default_rng(0).integers(0, len(out), rows)]
    return out, Domain(tuple(cols), tuple(sizes))


def main(argv: list[str]) -> int:
    """Fit once and print one line."""
    d, structure = int(argv[0]), argv[1]
    rows, rounds, picks = (int(argv[i]) if len(argv) > i else v
                           for i, v in ((2, 0), (3, 3), (4, 1)))
    share = float(argv[5]) if len(argv) > 5 else 0.2
    codes, dom = encode(d, rows)
    cols = dom.names
    named = [(cols[0], cols[1]), (cols[2], cols[3])]
    gen = WorkloadGenerator(structure=structure, iters=1000, structure_rounds=rounds,
                            structure_picks=picks, structure_share=share)
    gen.bind_workload(Workload(cols, tuple(WorkloadItem(q, 1.0, ("named",)) for q in named),
                               0.25))
    ctx = PrivacyContext.simulation(seed=1)
    start = time.perf_counter()
    gen.fit(codes, dom, 3.0, ctx)
    fit = time.perf_counter() - start
    synth = gen.sample(len(codes), np.random.default_rng(1))
    unnamed = [(a, b) for i, a in enumerate(cols) for b in cols[i + 1:] if (a, b) not in named]
    u, dd = pair_means(PairedCells.from_codes(codes, synth, dom), unnamed)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"d={d} n={len(codes)} structure={structure} rounds={rounds} picks={picks} "
          f"share={share}: fit {fit:.1f}s U {u:.4f} D {dd:.4f} ratio {u / dd:.3f} "
          f"ε {ctx.epsilon_recorded():.6g} selected {len(getattr(gen, 'structure_', []))} "
          f"peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
