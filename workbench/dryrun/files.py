"""Dry-run files, written and read only here: per-repetition records and the pass summary.

Two formats, both written by ``workbench dryrun`` and both read by :func:`read_pass_rates`
(the spec review dashboard's ``--dryrun`` input):

* records (``--records OUT.jsonl``): one :meth:`TaskRecord.to_dict` per line, one line per
  (configuration, repetition); a configuration's pass probability is its share of passing
  repetitions;
* the result summary (``--write-result OUT.json``)::

    {"format": "workbench.dryrun/1",
     "spec_sha256": "<SHA-256 of the spec the dry run used>",
     "data": "<the PUBLIC data it ran on>",
     "configurations": [
        {"configuration": {"transforms": {...}, "generator": {...}, "min_count": 2},
         "pass_probability": 0.35, "trials": 20}, ...]}

``configuration`` is ``Configuration.to_dict()``; ``pass_probability`` is the share of the
configuration's repetitions in which every criterion passed. The engine draws a configuration
uniformly in each iteration, so the per-iteration success probability is the mean over the
space; the listed configurations stand for the space (all of it, or a uniform sample of it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.dryrun.result import ALL, DryRunResult
from workbench.dryrun.tasks import TaskRecord
from workbench.specification import Configuration, Spec

RESULT_FORMAT = "workbench.dryrun/1"
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class PassRates:
    """Per-configuration pass probabilities (with their number of trials) from a dry run."""

    spec_sha256: str | None
    data: str
    pass_probabilities: tuple[tuple[Configuration, float, int], ...]


def result_document(result: DryRunResult, spec: Spec, data: str = "") -> dict[str, Any]:
    """The summary file's content: every configuration's P(all criteria pass) and trials."""
    table = result.table.set_index("key")
    return {
        "format": RESULT_FORMAT,
        "spec_sha256": spec.sha256,
        "data": str(data),
        "configurations": [
            {"configuration": c.to_dict(), "pass_probability": float(table.at[c.key, ALL]),
             "trials": int(table.at[c.key, "runs"])}
            for c in result.configurations if int(table.at[c.key, "runs"]) > 0],
    }


def write_result(result: DryRunResult, spec: Spec, path: PathLike, data: str = "") -> Path:
    """Write the summary file (``workbench dryrun --write-result``); returns its path."""
    return _write(path, json.dumps(result_document(result, spec, data), indent=1,
                                   allow_nan=False) + "\n")


def write_records(records: Iterable[TaskRecord], path: PathLike) -> Path:
    """Write one JSON line per record (``workbench dryrun --records``); returns its path."""
    lines = [json.dumps(r.to_dict(), allow_nan=False) for r in records]
    return _write(path, "".join(line + "\n" for line in lines))


def read_records(path: PathLike) -> list[TaskRecord]:
    """The records of a ``--records`` file; ValueError naming the line if one is malformed."""
    out = []
    for i, line in enumerate(_read(path).splitlines(), 1):
        if line.strip():
            try:
                out.append(TaskRecord.from_dict(json.loads(line)))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}: line {i} is not a dry-run record ({exc})") from None
    if not out:
        raise ValueError(f"{path}: no dry-run records")
    return out


def read_pass_rates(path: PathLike) -> PassRates:
    """Pass probabilities from either file ``workbench dryrun`` writes; ValueError if malformed."""
    text = _read(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return _rates_from_records(path, read_records(path))
    if isinstance(doc, dict) and "config" in doc:  # a records file with a single line
        return _rates_from_records(path, read_records(path))
    if not isinstance(doc, dict) or doc.get("format") != RESULT_FORMAT:
        raise ValueError(f"{path}: not a dry-run result file (format must be {RESULT_FORMAT!r})")
    entries = doc.get("configurations")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: 'configurations' must be a non-empty list")
    out = []
    for i, entry in enumerate(entries):
        try:
            config = Configuration.from_dict(entry["configuration"])
            p, trials = float(entry["pass_probability"]), int(entry["trials"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: configurations[{i}] is malformed ({exc!r})") from None
        if not 0.0 <= p <= 1.0 or trials < 1:
            raise ValueError(f"{path}: configurations[{i}] needs pass_probability in [0, 1] "
                             "and trials >= 1")
        out.append((config, p, trials))
    return PassRates(doc.get("spec_sha256"), str(doc.get("data", "")), tuple(out))


def _rates_from_records(path: PathLike, records: list[TaskRecord]) -> PassRates:
    """Each configuration's share of passing repetitions, in order of first appearance."""
    tally: dict[str, list[int]] = {}
    for r in records:
        counts = tally.setdefault(r.config_key, [0, 0])
        counts[0] += bool(r.passed)
        counts[1] += 1
    try:
        rates = tuple((Configuration.from_dict(json.loads(key)), passes / trials, trials)
                      for key, (passes, trials) in tally.items())
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: a record's configuration is malformed ({exc!r})") from None
    return PassRates(None, "", rates)


def _read(path: PathLike) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None


def _write(path: PathLike, text: str) -> Path:
    """Write through a temporary file and a rename, so a reader never sees half a file."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
