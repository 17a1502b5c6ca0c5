"""A JSON-lines cache of dry-run records, so editing a spec recomputes only what changed.

A record's key is the SHA-256 of: the canonical JSON of every spec section that affects an
iteration (all but ``metadata``, ``selection`` and the freeze record), a fingerprint of the
cleaned proxy frame, the workbench version, the configuration key, the task seed and the noise
mode. Records of one (spec sections, proxy) pair share one file named by their digest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.dryrun.tasks import Task, TaskRecord
from workbench.specification import canonical_json, content_of

#: Spec sections that change nothing about one iteration's outcome.
NON_ITERATION_SECTIONS = ("metadata", "selection")


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/release-workbench/dryrun`` (``~/.cache/...`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "release-workbench" / "dryrun"


def iteration_digest(document: Mapping[str, Any]) -> str:
    """SHA-256 of the spec sections that affect an iteration (not metadata or selection)."""
    content = {k: v for k, v in content_of(document).items() if k not in NON_ITERATION_SECTIONS}
    return hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's columns, dtypes and values (row order included)."""
    h = hashlib.sha256(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()


def record_key(payload_id: str, task: Task) -> str:
    """The cache key of one task under one payload (spec sections + proxy + version)."""
    text = "\x1f".join([payload_id, task.config_key, str(task.seed), task.noise])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DryRunCache:
    """Records on disk under ``directory``, one JSON line each, appended as tasks finish."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()

    def _path(self, payload_id: str) -> Path:
        return self.directory / f"{payload_id[:32]}.jsonl"

    def load(self, payload_id: str) -> dict[str, TaskRecord]:
        """Every cached record of this payload, by key (a torn last line is skipped)."""
        path = self._path(payload_id)
        if not path.exists():
            return {}
        out: dict[str, TaskRecord] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                out[str(entry["key"])] = TaskRecord.from_dict(entry["record"])
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def append(self, payload_id: str, key: str, record: TaskRecord) -> None:
        """Add one record; one write of one line, so concurrent appenders do not interleave."""
        self.directory.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "record": record.to_dict()}, allow_nan=False)
        with open(self._path(payload_id), "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
