"""Write every example's `workbench describe` and seeded `workbench dryrun --records` to a folder.

A refactor must keep what the product says: run this before and after, then `diff -r` the two
folders. Each example is read against its public proxy (the births sample in data_public/, the
Adult halves scripts/adult_data.py makes, the US sample in ../shared/data); the dry run is
seeded, with seeded noise, two configurations and two repetitions at n = 4,000 (the survey
example at its proxy's own size). Timings and figures under 1e-10 (summation-order noise)
are masked, since they differ between any two runs.

Usage: ``python scripts/behaviour_snapshot.py OUT_DIR [--only NAME ...]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
#: Record keys that hold wall-clock figures.
TIMING_KEYS = ("seconds", "elapsed", "duration", "time_s", "wall")


def head(source: Path, target: Path, rows: int) -> Path:
    """The first ``rows`` records of a (gzipped) CSV, header kept (tests/test_rehearsal.py
    uses it too)."""
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf-8") as fh, open(target, "w", encoding="utf-8") as out:
        for i, line in enumerate(fh):
            if i > rows:
                break
            out.write(line)
    return target


def _proxy(example: str, work: Path) -> Path:
    """The public proxy each example is designed against."""
    if example.startswith(("israel_births", "births_")):
        return REPO / "data_public" / "proxy_sample_166k.csv.gz"
    if example.startswith("us_birth"):
        return head(SHARED / "us_births_2019_singleton_sample160k.csv.gz", work / "us.csv", 6_000)
    if example == "adult_empty_draft":  # the raw extract's own names and format
        return head(SHARED / "adult" / "adult_train.csv.gz", work / "adult_head.csv", 6_000)
    if example == "adult_survey":
        return _adult_weighted(work)
    out = work / "out" / "adult"
    if not (out / "adult_raw_public_proxy.csv").exists():
        subprocess.run([sys.executable, str(REPO / "scripts" / "adult_data.py"), "--source",
                        str(SHARED / "adult" / "adult_train.csv.gz"), "--out", str(out)],
                       check=True, capture_output=True)
    if example == "adult_plausible_deniability":
        return out / "adult_public_proxy.csv"
    return out / "adult_raw_public_proxy.csv"


def _adult_weighted(work: Path, rows: int = 10_000) -> Path:
    """The first Adult rows with fnlwgt rescaled to the survey example's population N (its
    margins are the whole file's weighted totals), so that its weight check passes."""
    import pandas as pd

    frame = pd.read_csv(SHARED / "adult" / "adult_train.csv.gz", skipinitialspace=True,
                        nrows=rows)
    doc = json.loads((REPO / "examples" / "adult_survey.json").read_text())
    n_pop = sum(doc["survey"]["margins"][0]["totals"].values())
    frame["fnlwgt"] = frame["fnlwgt"] * (n_pop / frame["fnlwgt"].sum())
    frame.to_csv(work / "adult_weighted.csv", index=False)
    return work / "adult_weighted.csv"


def _strip_timings(line: str) -> str:
    """One record without its wall-clock fields."""
    record = json.loads(line)
    return json.dumps({k: v for k, v in record.items()
                       if not any(t in k for t in TIMING_KEYS)}, sort_keys=True)


def _run(args: list[str], cwd: Path) -> str:
    """One command's exit code, stdout and stderr, as text."""
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=1_800)
    text = f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    text = re.sub(r"\b\d+(\.\d+)? s\b", "<t> s", text)
    # a floor's SD of 1e-13 is summation-order noise (threads), not behaviour
    return re.sub(r"\b\d(\.\d+)?e-(1[0-9]|[2-9][0-9])\b", "<1e-10", text)


def snapshot(example: Path, out: Path, work: Path) -> None:
    """Describe and dry-run one example into ``out``."""
    name = example.name.removesuffix(".json")
    proxy = _proxy(name.removesuffix(".frozen"), work)
    # A survey's weights describe the proxy's own size: resampling it would break their total.
    size = [] if name.startswith("adult_survey") else ["--n", "4000"]
    (out / f"{name}.describe.txt").write_text(
        _run(["describe", str(example), "--proxy", str(proxy), *size, "--floor-draws", "2"], work))
    records = work / f"{name}.records.jsonl"
    records.unlink(missing_ok=True)
    text = _run(["dryrun", str(example), str(proxy), "--limit", "2", "--repetitions", "2",
                 "--seed", "7", "--noise", "seeded", "--no-cache", "--workers", "0",
                 *size, "--floor-draws", "0", "--quiet", "--records", str(records)],
                work)
    lines = records.read_text().splitlines() if records.exists() else []
    (out / f"{name}.dryrun.txt").write_text(
        text + "--- records\n" + "".join(_strip_timings(x) + "\n" for x in lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*", default=None, help="example names (no .json)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "_work"
    work.mkdir(exist_ok=True)
    for example in sorted((REPO / "examples").glob("*.json")):
        if args.only and example.name.removesuffix(".json") not in args.only:
            continue
        print(example.name, flush=True)
        snapshot(example, args.out, work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
