"""Write the release bundle into a staging directory; ``RunDirectory.publish`` renames it.

Files: release.csv, criteria.json, criteria.md, configuration.json, spec.json, ledger.jsonl,
report.html, README.md and MANIFEST.json (SHA-256 of every other file, so tampering shows).

The bundle's ledger is the *release ledger*: the accountant's budget and selection plan, the
"once" measurements, the measurements of the accepted iteration, and a summary with ε_total.
The measurements of rejected iterations — and so the number of iterations — stay in the
enclave ledger: Liu & Talwar's theorem covers the selected output, not how long it took.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.engine.rundir import write_json_atomic
from workbench.privacy import Ledger
from workbench.report.datasheet import criteria_markdown, datasheet_markdown
from workbench.report.html import render_report
from workbench.spec import Spec
from workbench.spec.document import thaw

BUNDLE_FILES = (
    "release.csv",
    "criteria.json",
    "criteria.md",
    "configuration.json",
    "spec.json",
    "ledger.jsonl",
    "report.html",
    "README.md",
)
MANIFEST = "MANIFEST.json"


def release_ledger(enclave_ledger: Path, run_id: str, accepted_iteration: int,
                   summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The publishable subset of this run's ledger lines, plus a summary line."""
    keep = []
    for entry in Ledger.read(enclave_ledger):
        if entry.get("run_id") != run_id:
            continue
        event = entry.get("event")
        if event in {"accountant", "selection_plan", "run_start"}:
            keep.append({k: v for k, v in entry.items() if k != "data_fingerprint"})
        elif event == "measurement" and (
            entry.get("stage") == "once" or entry.get("iteration") == accepted_iteration
        ):
            line = dict(entry)
            if line.get("stage") == "loop":
                line["iteration"] = "accepted"
            keep.append(line)
    for i, line in enumerate(keep, start=1):
        line["seq"] = i
    keep.append({"event": "summary", "run_id": run_id, "seq": len(keep) + 1, **summary})
    return keep


def write_bundle(
    staging: Path,
    *,
    spec: Spec,
    release: pd.DataFrame,
    label_order: Mapping[str, Sequence[str]],
    configuration: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    budget: Mapping[str, Any],
    ledger_lines: Sequence[Mapping[str, Any]],
) -> None:
    """Write every bundle file into ``staging`` (not yet visible as a release)."""
    release.to_csv(staging / "release.csv", index=False, lineterminator="\n")
    write_json_atomic(staging / "criteria.json", {"criteria": list(results),
                                                  "all_passed": all(r["passed"] for r in results)})
    (staging / "criteria.md").write_text(criteria_markdown(results) + "\n", encoding="utf-8")
    write_json_atomic(staging / "configuration.json", dict(configuration))
    write_json_atomic(staging / "spec.json", thaw(spec.document))
    with open(staging / "ledger.jsonl", "w", encoding="utf-8") as fh:
        for line in ledger_lines:
            fh.write(json.dumps(line, allow_nan=False) + "\n")
    (staging / "report.html").write_text(
        render_report(spec, configuration, results, budget, release, label_order),
        encoding="utf-8",
    )
    (staging / "README.md").write_text(
        datasheet_markdown(spec, configuration, results, budget, len(release)), encoding="utf-8"
    )
    write_json_atomic(staging / MANIFEST, {name: file_sha256(staging / name)
                                           for name in BUNDLE_FILES})


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

