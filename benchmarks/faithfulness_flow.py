"""Benchmark: β_max by max flow on distinct cells vs row-by-row matching.

R is the bundled proxy (data_public/proxy_births_166k.csv.gz), S an independent proxy sample
with another seed; both cleaned with the spec's raw rules and encoded with the paper's chosen
bins (mother_age ten_bins_35_39, parity five_bins, gestation_week six_bins).

Targets (issue 4): 166k vs 166k ≤ 10 s; 4M vs 4M ≤ 2 min (flow method).
Row-by-row matching (Hopcroft–Karp on the row graph) ran for more than 12 minutes on the full
166k without finishing, so it is timed on nested subsamples, where both methods must agree;
``--full-per-row`` tries the full size under a time limit.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.faithfulness import FaithfulnessCost, cell_graph, max_matching, max_matching_per_row
from workbench.proxy import sample_proxy
from workbench.spec import load_spec
from workbench.transform.clean import clean

REPO = Path(__file__).resolve().parents[1]
CHOSEN = {"mother_age": "ten_bins_35_39", "parity": "five_bins", "gestation_week": "six_bins"}
TARGET_166K_S = 10.0
TARGET_4M_S = 120.0


def _config(spec):
    for c in spec.configurations():
        if all(c.transform_of(k) == v for k, v in CHOSEN.items()):
            return c
    raise SystemExit("the paper's configuration is not in the example spec")


def _encoded_proxy(spec, table, n: int, seed: int) -> np.ndarray:
    """n cleaned, encoded proxy rows (draws 3% extra to cover the rows cleaning removes)."""
    frame = clean(sample_proxy(int(n * 1.03) + 1000, seed=seed), spec)
    if len(frame) < n:
        raise SystemExit("cleaning removed more proxy rows than expected")
    return table.encode(frame.iloc[:n])


def _timed(fn, *args, repeat: int = 1) -> tuple[int, float]:
    best, value = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return value, best


def _per_row_worker(real, synth, cost, queue) -> None:
    queue.put(_timed(max_matching_per_row, real, synth, cost))


def _per_row_with_limit(real, synth, cost, limit_s: float) -> tuple[int, float] | None:
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_per_row_worker, args=(real, synth, cost, queue))
    proc.start()
    proc.join(limit_s)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return queue.get()


def main(full_per_row: bool, per_row_limit_s: float) -> None:
    spec = load_spec(REPO / "examples" / "israel_births_2014.json")
    config = _config(spec)
    table = spec.table_codec(config)
    cost = FaithfulnessCost.from_spec(spec, config)
    print(f"configuration: {dict(config.transforms)}")
    print(f"cost rule: {len(cost.offsets)} offset vectors, locked bins {cost.locked_labels(table)}")

    raw = pd.read_csv(REPO / "data_public" / "proxy_births_166k.csv.gz")
    real = table.encode(clean(raw, spec))
    n = len(real)
    synth = _encoded_proxy(spec, table, n, seed=20_140_002)
    matched, secs = _timed(max_matching, real, synth, cost, repeat=3)
    ok = "meets" if secs <= TARGET_166K_S else "MISSES"
    print(f"\n[flow] n = {n:,}: beta_max = {matched / n:.5f} (1 - beta = {1 - matched / n:.3%})")
    print(f"[flow] n = {n:,}: {secs:.3f} s (best of 3); target <= {TARGET_166K_S:.0f} s: {ok}")
    print(f"[row graph] n = {n:,} would hold {cell_graph(real, synth, cost).row_pairs:,} edges")

    for k in (10_000, 20_000, 40_000):
        flow, t_flow = _timed(max_matching, real[:k], synth[:k], cost)
        rows, t_rows = _timed(max_matching_per_row, real[:k], synth[:k], cost)
        agree = "agree" if flow == rows else "DISAGREE"
        print(
            f"[per-row] n = {k:,}: matched {rows:,} in {t_rows:.2f} s; "
            f"flow {flow:,} in {t_flow:.3f} s ({agree})"
        )
    if full_per_row:
        got = _per_row_with_limit(real, synth, cost, per_row_limit_s)
        if got is None:
            print(f"[per-row] n = {n:,}: not finished within {per_row_limit_s:.0f} s")
        else:
            agree = "agree" if got[0] == matched else "DISAGREE"
            print(f"[per-row] n = {n:,}: matched {got[0]:,} in {got[1]:.1f} s ({agree} with flow)")

    big = 4_000_000
    t0 = time.perf_counter()
    real4 = _encoded_proxy(spec, table, big, seed=20_140_003)
    synth4 = _encoded_proxy(spec, table, big, seed=20_140_004)
    prep = time.perf_counter() - t0
    matched4, secs4 = _timed(max_matching, real4, synth4, cost)
    ok4 = "meets" if secs4 <= TARGET_4M_S else "MISSES"
    print(f"\n[flow] n = {big:,}: beta_max = {matched4 / big:.5f} (data prep {prep:.1f} s)")
    print(f"[flow] n = {big:,}: {secs4:.2f} s; target <= {TARGET_4M_S:.0f} s: {ok4}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full-per-row", action="store_true", help="try per-row at full size")
    parser.add_argument("--per-row-limit", type=float, default=600.0, help="seconds (default 600)")
    args = parser.parse_args()
    main(args.full_per_row, args.per_row_limit)
