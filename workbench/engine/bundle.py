"""Write the release bundle into a staging directory; ``RunDirectory.publish`` renames it.

Files: release.csv, criteria.json, criteria.md, configuration.json, guarantee.json (the chosen
configuration's :class:`~workbench.generators.Guarantee`: kind, label, parameters), spec.json,
ledger.jsonl, report.html, README.md and MANIFEST.json (SHA-256 of every other file, so
tampering shows).

The bundle's ledger is the *release ledger*: the accountant's budget and selection plan, the
"once" measurements (marked ``reused`` when an earlier run released them), the measurements of
the accepted iteration, and a summary with ε_total. The measurements of rejected iterations —
and so the number of iterations — stay in the enclave ledger: Liu & Talwar's theorem covers
the selected output, not how long it took.

Nothing in the bundle tells time: ledger lines lose their ``timestamp`` (the gap between the
plan and the accepted measurements would count the rejected iterations), the run-start line
is left out, the spec loses its ``frozen_at`` (freeze time to publication time would bound the
run's duration), and ``RunDirectory.publish`` gives every file one constant mtime.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.engine import release_parquet
from workbench.engine.release_csv import write_release_csv
from workbench.engine.rundir import write_json_atomic
from workbench.privacy import Ledger
from workbench.report.datasheet import criteria_markdown, datasheet_markdown
from workbench.report.html import render_report
from workbench.specification import Spec
from workbench.specification.document import FROZEN_KEY, file_sha256, thaw

BUNDLE_FILES = (
    "release.csv",
    "criteria.json",
    "criteria.md",
    "configuration.json",
    "guarantee.json",
    "spec.json",
    "ledger.jsonl",
    "report.html",
    "README.md",
)
MANIFEST = "MANIFEST.json"
#: Written only by a spec with a survey section.
SURVEY_FILE = "survey.json"
#: Written only by a spec with ``cleaning_counts`` (``engine.cleaning_counts``).
CLEANING_FILE = "cleaning.json"
#: Written only when the chosen family has public diagnostics of the release (an MCMC
#: posterior draw: R̂ and ESS of its sampler re-run on the released records).
DIAGNOSTICS_FILE = "diagnostics.json"
#: The optional files, each listed in the manifest when written.
OPTIONAL_FILES = (SURVEY_FILE, CLEANING_FILE, DIAGNOSTICS_FILE,
                  release_parquet.RELEASE_PARQUET)
#: Events of the accepted iteration published with its measurements: why a parallel group
#: is charged its max, the plausible-deniability test's parameters, and where a network's
#: structure came from when it is a public proxy's (no ε, no records of R).
ITERATION_EVENTS = frozenset({"parallel_composition", "plausible_deniability_test",
                              "public_structure"})
#: Ledger fields that never leave the enclave: times, and the data's fingerprint.
ENCLAVE_ONLY_FIELDS = frozenset({"timestamp", "data_fingerprint"})


def _public(entry: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """A ledger line without its enclave-only fields."""
    return {k: v for k, v in {**entry, **changes}.items() if k not in ENCLAVE_ONLY_FIELDS}


def release_ledger(enclave_ledger: Path, run_id: str, accepted_iteration: int,
                   summary: Mapping[str, Any],
                   reused_once: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The publishable, timeless subset of this run's ledger lines, plus a summary line.

    ``reused_once`` are the measurement records of once-statistics an earlier run released;
    they stand where this run's once-measurements would be, marked ``reused``.
    """
    keep = []
    for entry in Ledger.read(enclave_ledger):
        if entry.get("run_id") != run_id:
            continue
        event = entry.get("event")
        if event == "accountant":
            keep.append(_public(entry))
            keep += [_public(r, event="measurement", reused=True) for r in reused_once]
        elif event == "selection_plan" or (event == "measurement"
                                           and entry.get("stage") == "once"):
            keep.append(_public(entry))
        elif (event == "measurement" or event in ITERATION_EVENTS) \
                and entry.get("iteration") == accepted_iteration:
            keep.append(_public(entry, iteration="accepted"))
    for i, line in enumerate(keep, start=1):
        line["run_id"], line["seq"] = run_id, i
    keep.append({"event": "summary", "run_id": run_id, "seq": len(keep) + 1, **summary})
    return keep


def public_spec(spec: Spec) -> dict[str, Any]:
    """The frozen spec as published: without ``frozen.frozen_at`` (its hash does not cover it)."""
    doc = thaw(spec.document)
    frozen = doc.get(FROZEN_KEY)
    if isinstance(frozen, dict):
        frozen.pop("frozen_at", None)
    return doc


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
    guarantee: Mapping[str, Any],
    survey: Mapping[str, Any] | None = None,
    proxy_labels: pd.DataFrame | None = None,
    cleaning: Mapping[str, Any] | None = None,
    diagnostics: Mapping[str, Any] | None = None,
    rehearsal: int | None = None,
) -> None:
    """Write every bundle file into ``staging`` (not yet visible as a release); ``guarantee``
    is the chosen configuration's guarantee in its JSON form (``Guarantee.as_dict``); a survey
    release adds ``survey.json`` (the DP raking outputs), a spec with ``cleaning_counts``
    ``cleaning.json`` (DP or declared-public counts), an MCMC release ``diagnostics.json``
    (public: computed on the released records), each listed in the manifest too."""
    write_release_csv(release, staging / "release.csv")  # pandas' bytes, distinct lines once
    write_json_atomic(staging / "criteria.json", {"criteria": list(results),
                                                  "all_passed": all(r["passed"] for r in results)})
    (staging / "criteria.md").write_text(criteria_markdown(results) + "\n", encoding="utf-8")
    write_json_atomic(staging / "configuration.json", dict(configuration))
    write_json_atomic(staging / "guarantee.json", dict(guarantee))
    write_json_atomic(staging / "spec.json", public_spec(spec))
    with open(staging / "ledger.jsonl", "w", encoding="utf-8") as fh:
        for line in ledger_lines:
            fh.write(json.dumps(line, allow_nan=False) + "\n")
    (staging / "report.html").write_text(
        render_report(spec, configuration, results, budget, release, label_order, guarantee,
                      proxy_labels, diagnostics),
        encoding="utf-8",
    )
    readme = datasheet_markdown(spec, configuration, results, budget, len(release), guarantee,
                                cleaning=cleaning, diagnostics=diagnostics)
    if rehearsal is not None:
        readme = (f"> **Rehearsal, not a release**: made from public data with seeded noise "
                  f"(`workbench run --rehearse {rehearsal}`); a dry-run task of the same seed "
                  "makes the same first iteration.\n\n" + readme)
    (staging / "README.md").write_text(readme, encoding="utf-8")
    names = list(BUNDLE_FILES)
    if release_parquet.wanted():  # `workbench run --format parquet`
        release_parquet.write_release_parquet(release, label_order,
                                              staging / release_parquet.RELEASE_PARQUET)
        names.append(release_parquet.RELEASE_PARQUET)
    for name, content in ((SURVEY_FILE, survey), (CLEANING_FILE, cleaning),
                          (DIAGNOSTICS_FILE, diagnostics)):
        if content is not None:
            write_json_atomic(staging / name, dict(content))
            names.append(name)
    write_json_atomic(staging / MANIFEST, {name: file_sha256(staging / name) for name in names})
