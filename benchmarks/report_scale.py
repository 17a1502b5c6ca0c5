"""Issue 38: report.html at registry scale — each step's seconds and peak RSS at 4,000,000 rows.

The release is built as ``engine.bundle.write_bundle`` gets it: a code matrix decoded to bin
labels by ``TableCodec.decode``. By default the codes are the PUBLIC 166k proxy
(data_public/proxy_sample_166k.csv.gz) cleaned and binned by the lean design
(examples/israel_births_2014_lean.frozen.json) at the configuration below, tiled to ``--rows``;
``--release DIR`` uses a bundle's release.csv, spec.json and configuration.json instead.

Steps: the figures' tables the old way (per-row pandas: ``value_counts``,
``astype(str).value_counts``, ``pd.crosstab(normalize=True)``) and the new way
(``workbench.report.tables``: each column factorized once, ``np.bincount``), checked equal; the
drawing alone (``render_report`` on 1,000 rows: the same figures, so independent of n); the
whole ``render_report`` at full size, without and with the proxy overlays (``--html OUT``
writes the last page, to ``cmp`` against the old code's). Each step prints wall and CPU
seconds (CPU is steadier on a shared machine) and peak RSS: the process's VmHWM, reset before
each step (``/proc/self/clear_refs``), so that step's peak, and how far it rose over the
RSS held when the step began. Without ``workbench.report.tables`` (the code before issue 38's
report work, e.g. ``PYTHONPATH=/work/main``) the new-table step is skipped.

    python benchmarks/report_scale.py [--rows 4000000] [--release DIR] [--no-proxy]
                                      [--html OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "israel_births_2014_lean.frozen.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"
#: The lean design's configuration of the 4M release measured in session 46.
CONFIGURATION = {
    "transforms": {"birth_month": "month", "mother_age": "ten_bins_35_39",
                   "parity": "five_bins", "gestation_week": "six_bins", "birth_sex": "sex",
                   "birth_weight": "grams_100"},
    "generator": {"family": "workload", "algorithm": "fixed", "one_way_share": 0.25,
                  "regression_weight": 2},
    "min_count": 2,
}
MAX_PAIRS = 6


def _status(key: str) -> float:
    """One VmRSS / VmHWM figure of this process in GB (NaN off Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("nan")


def _reset_peak() -> None:
    """Start a new VmHWM window (Linux: writing 5 to clear_refs resets the peak RSS)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def step(name: str, fn: Callable[[], Any]) -> Any:
    """Run one step; print its wall and CPU seconds (CPU: steadier on a shared machine) and
    its peak RSS."""
    _reset_peak()
    held = _status("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = _status("VmHWM")
    print(f"{name:<50}{wall:7.2f} s wall {cpu:6.2f} s CPU  peak RSS {peak:4.2f} GB "
          f"(+{max(peak - held, 0.0):4.2f} over {held:4.2f} held)", flush=True)
    return out


def build(rows: int, release_dir: Path | None) -> tuple[Any, dict, pd.DataFrame, pd.DataFrame]:
    """(spec, configuration, release labels as write_bundle gets them, public proxy labels)."""
    from workbench.transform.clean import clean
    from workbench.trial import bind
    from workbench.validation import load_spec

    spec = load_spec(release_dir / "spec.json" if release_dir else SPEC)
    configuration = (json.loads((release_dir / "configuration.json").read_text())
                     if release_dir else CONFIGURATION)
    table = bind(spec, configuration).table
    proxy_codes = table.encode(clean(pd.read_csv(PROXY), spec))
    if release_dir:
        labels = pd.read_csv(release_dir / "release.csv", dtype=str, keep_default_na=False)
        codes = table.encode_labels(labels)
        del labels
    else:
        codes = np.tile(proxy_codes, (-(-rows // len(proxy_codes)), 1))[:rows]
    return spec, configuration, table.decode(codes), table.decode(proxy_codes).astype(str)


def old_tables(release: pd.DataFrame, orders: dict) -> list[Any]:
    """The figures' tables as render_report computed them before (per-row pandas)."""
    n, out = len(release), []
    for col in release.columns:
        order = list(orders[col])
        out.append(release[col].value_counts().reindex(order, fill_value=0) / max(n, 1))
        out.append(release[col].astype(str).value_counts().reindex(order, fill_value=0)
                   / max(n, 1))
    for a, b in list(itertools.combinations(release.columns, 2))[:MAX_PAIRS]:
        t = pd.crosstab(release[a], release[b], normalize=True)
        out.append(t.reindex(index=list(orders[a]), columns=list(orders[b]), fill_value=0))
    return out


def new_tables(release: pd.DataFrame, orders: dict) -> list[Any]:
    """The same tables from each column factorized once (workbench.report.tables)."""
    from workbench.report.tables import CodedRelease, pair_shares, text_shares, value_shares

    coded, out = CodedRelease(release), []
    for col in release.columns:
        out.append(value_shares(coded[col], orders[col], coded.n))
        out.append(text_shares(coded[col], orders[col], coded.n))
    for a, b in list(itertools.combinations(release.columns, 2))[:MAX_PAIRS]:
        out.append(pair_shares(coded[a], coded[b], orders[a], orders[b]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--release", type=Path, default=None, help="a bundle folder to read")
    ap.add_argument("--no-proxy", action="store_true", help="skip the overlay render")
    ap.add_argument("--html", type=Path, default=None, help="write the last page here")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import seaborn  # noqa: F401  (imported before the timed steps: import cost is not n's)

    from workbench.report.html import render_report
    from workbench.trial import bind

    spec, conf, release, proxy = step("build the release (decode codes)",
                                      lambda: build(args.rows, args.release))
    print(f"{len(release):,} rows, held RSS {_status('VmRSS'):.2f} GB")
    orders = bind(spec, conf).label_order()
    before = step("tables, per-row pandas (before)", lambda: old_tables(release, orders))
    try:
        import workbench.report.tables  # noqa: F401
    except ImportError:
        print("tables, codes (after): skipped, no workbench.report.tables in this code")
    else:
        after = step("tables, codes + bincount (after)", lambda: new_tables(release, orders))
        for old, new in zip(before, after, strict=True):
            if isinstance(old, pd.DataFrame):
                pd.testing.assert_frame_equal(old, new)
            else:
                pd.testing.assert_series_equal(old, new)
        print(f"  the {len(before)} tables are equal (assert_frame/series_equal)")
    del before
    results = [{"id": "marginals", "kind": "max_marginal_error", "threshold": 0.01,
                "value": 0.0006, "passed": True, "epsilon": 0.011, "sigma": 3.2e-05}]
    budget = {"epsilon_total": 4.0939, "neighbour": "replace_one"}

    def render(frame: pd.DataFrame, with_proxy: bool) -> str:
        return render_report(spec, conf, results, budget, frame, orders, None,
                             proxy if with_proxy else None)

    small = release.head(1_000).copy()
    step("render_report at 1,000 rows (drawing only)", lambda: render(small, False))
    page = step(f"render_report at {len(release):,} rows", lambda: render(release, False))
    if not args.no_proxy:
        page = step(f"render_report at {len(release):,} rows + proxy overlays",
                    lambda: render(release, True))
    if args.html:
        args.html.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
