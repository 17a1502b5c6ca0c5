"""Must-show 1 of issue 15: the faithfulness floor of an ideal generator depends on n.

The ideal generator is a bootstrap resample of the data itself (``workbench.dryrun.floors``):
S = a size-n bootstrap of R, through the synthetic rules and the min_count projection, then
1 − β_max(R, S) under the lean design's cost rule. Data: the stand-in registry
(``../shared/data/us_births_2019_singleton_sample160k.csv.gz`` after the spec's cleaning,
158,500 records), whole and subsampled without replacement to 95,000; and the shipped proxy.
Columns: no projection (m = 1), m = 2, m = 3; mean ± SD over ``--draws`` draws.

Run: python benchmarks/feasibility_floors.py [--draws 5] [--all-criteria]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from workbench.dryrun.floors import feasibility_floors
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import prepare_proxy
from workbench.evidence.us_natality import read_us_sample
from workbench.validation import load_spec

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "israel_births_2014_lean.json"
REGISTRY = REPO.parent / "shared" / "data" / "us_births_2019_singleton_sample160k.csv.gz"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
FACTS = REPO / "data_public" / "proxy_facts_166k.csv.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--all-criteria", action="store_true", help="print every criterion's floor")
    args = ap.parse_args()
    if not REGISTRY.exists():
        sys.exit(f"stand-in registry not found: {REGISTRY}")
    spec = load_spec(SPEC)
    base = next(spec.configurations())
    registry = prepare_proxy(spec, read_us_sample(REGISTRY))
    rows = [("stand-in registry (160k sample)", registry, 95_000),
            ("stand-in registry (160k sample)", registry, None),
            ("shipped proxy (record sample)", prepare_proxy(spec, str(PROXY)), 95_000),
            ("facts proxy", prepare_proxy(spec, str(FACTS)), 95_000)]
    print(f"1 − β_max of a bootstrap resample vs the data (lean design's cost rule), "
          f"mean ± SD over {args.draws} draws")
    print(f"{'data':<34} {'n':>8}  {'no projection':>15} {'m = 2':>15} {'m = 3':>15}")
    for label, frame, n in rows:
        cells, extra = [], []
        for m in (1, 2, 3):
            config = dataclasses.replace(base, min_count=m)
            table = feasibility_floors(spec, Evidence(spec, frame), config, n, args.draws, seed=m)
            f = table.by_id()["faithfulness"]
            cells.append(f"{100 * f.mean:6.2f}% ± {100 * f.sd:4.2f}")
            if args.all_criteria and m > 1:
                extra.append(f"  m = {m}:\n" + table.summary())
        print(f"{label:<34} {table.n:>8,}  {cells[0]:>15} {cells[1]:>15} {cells[2]:>15}",
              flush=True)
        for block in extra:
            print(block)


if __name__ == "__main__":
    main()
