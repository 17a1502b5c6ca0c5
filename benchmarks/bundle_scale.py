"""Issue 38: the work after reading, at 4,000,000 rows — the content fingerprint, writing
release.csv and verify's read of it — each step's seconds and peak RSS, before and after.

"before" is the first implementation of each step (pandas ``sort_values`` over every column
for the fingerprint; ``release.to_csv``; ``read_csv(dtype=str)`` then the label encoding); "after"
is the workbench's. Each pair is checked equal (hex value, file bytes, code matrix). Peak RSS is
the step's own: VmHWM is reset (``/proc/self/clear_refs``) before each step, so a step's peak
is what it adds on top of what the process already holds (the 4M table, the release).

Input, on a fresh clone: the 166k proxy tiled to ``--rows`` (as benchmarks/data_sources.py
does), read and cleaned as a run reads it; the release is that table binned and decoded by the
lean design's first configuration. ``--data CSV`` reads a registry file instead, and
``--release DIR`` takes a run's release bundle (its release.csv, and ``verify`` of the whole
bundle is timed too).

    python benchmarks/bundle_scale.py [--rows 4000000] [--data CSV] [--release DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from _fingerprint_reference import reference_fingerprint  # noqa: E402

LEAN = REPO / "examples" / "israel_births_2014_lean.frozen.json"


def _status_gb(field: str) -> float:
    """A /proc/self/status memory line (VmHWM, VmRSS) in GB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def step(name: str, fn: Callable[[], Any], rows: list[dict[str, Any]]) -> Any:
    """Run ``fn`` once: its seconds and its own peak RSS (VmHWM reset first)."""
    with contextlib.suppress(OSError):  # not resettable: the peak is the process's so far
        Path("/proc/self/clear_refs").write_text("5")
    held = _status_gb("VmRSS")
    t0 = time.perf_counter()
    out = fn()
    rows.append({"name": name, "s": time.perf_counter() - t0, "held_gb": held,
                 "peak_gb": _status_gb("VmHWM")})
    r = rows[-1]
    print(f"{name:<34} {r['s']:>7.2f} s   peak {r['peak_gb']:.2f} GB "
          f"(+{r['peak_gb'] - held:.2f} over {held:.2f} held)", flush=True)
    return out


def load_table(spec: Any, data: str | None, rows: int, tmp: Path) -> pd.DataFrame:
    """The cleaned table as a run reads it: ``--data``, else the proxy tiled to ``rows``."""
    from workbench.engine.run import load_confidential

    if data is None:
        from data_sources import tiled

        data = str(tmp / "births.csv")
        tiled(rows).to_csv(data, index=False)
    return load_confidential(spec, data)


def release_of(spec: Any, frame: pd.DataFrame, bundle: Path | None) -> tuple[Any, pd.DataFrame]:
    """The table codec and the release as ``write_bundle`` receives it (decoded labels)."""
    from workbench.engine.release_csv import read_release_labels
    from workbench.specification import Configuration
    from workbench.trial import bind
    from workbench.validation import build_spec

    if bundle is None:
        table = spec.table_codec(next(iter(spec.configurations())))
        return table, table.decode(table.encode(frame))
    frozen = build_spec(json.loads((bundle / "spec.json").read_text()), require_frozen=True)
    config = Configuration.from_dict(json.loads((bundle / "configuration.json").read_text()))
    table = bind(frozen, config).table
    return table, table.decode(table.encode_labels(read_release_labels(
        bundle / "release.csv", table)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--data", default=None, help="a registry CSV instead of the proxy")
    parser.add_argument("--release", type=Path, default=None, help="a run's release bundle")
    parser.add_argument("--skip-before", action="store_true", help="only the new steps")
    args = parser.parse_args()

    from workbench.engine import verify_bundle
    from workbench.engine.release_csv import read_release_labels, write_release_csv
    from workbench.privacy.budget_store import table_fingerprint
    from workbench.validation import load_spec

    spec = load_spec(LEAN)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="workbench-bench-bundle-") as name:
        tmp = Path(name)
        t = time.perf_counter()
        frame = load_table(spec, args.data, args.rows, tmp)
        table, release = release_of(spec, frame, args.release)
        distinct = len(release.drop_duplicates())
        print(f"prepared {len(frame):,} rows, a release of {len(release):,} records "
              f"({distinct:,} distinct) in {time.perf_counter() - t:.0f} s (not part of the "
              f"figures)", flush=True)
        key = b"bench-key" * 4
        after = step("fingerprint (after)", lambda: table_fingerprint(frame, key), rows)
        if not args.skip_before:
            before = step("fingerprint (before)", lambda: reference_fingerprint(frame, key), rows)
            print(f"  identical hex value: {after == before} ({after[:16]}…)")
        csv_after, csv_before = tmp / "after.csv", tmp / "before.csv"
        step("write release.csv (after)", lambda: write_release_csv(release, csv_after), rows)
        if not args.skip_before:
            step("write release.csv (before)", lambda: release.to_csv(
                csv_before, index=False, lineterminator="\n"), rows)
            same = csv_after.read_bytes() == csv_before.read_bytes()
            print(f"  identical bytes: {same} ({csv_after.stat().st_size:,} bytes)")
        release = release.iloc[:0]  # the release's memory back before verify's read
        got = step("verify read+encode (after)", lambda: table.encode_labels(
            read_release_labels(csv_after, table)), rows)
        if not args.skip_before:
            old = step("verify read+encode (before)", lambda: table.encode_labels(
                pd.read_csv(csv_after, dtype=str, keep_default_na=False)), rows)
            print(f"  identical codes: {np.array_equal(got, old)}")
            del old
        del got
        if args.release is not None:
            copy = tmp / "bundle"
            shutil.copytree(args.release, copy)
            verdict = step("verify_bundle (after)", lambda: verify_bundle(copy), rows)
            print("  " + verdict.summary().replace("\n", "\n  "))
    print(json.dumps({"rows": len(frame), "steps": rows}))


if __name__ == "__main__":
    main()
