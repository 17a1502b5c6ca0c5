"""The append-only JSONL ledger: the durable record of every privacy-loss event of a run.

One JSON object per line, each with an ``event`` key ("open", "measurement", "selection_plan",
"status", …), the ledger's ``run_id`` and a per-run sequence number ``seq``. A line is written,
flushed and ``os.fsync``-ed before the call that made it returns, and a measurement's line is
written *before* its noisy value is computed, so a crash at any point cannot lose the record of
budget already spent.

The ledger never holds data values: measurement lines are :class:`MeasurementRecord` fields and
event fields are restricted to JSON scalars (and flat lists of them) chosen by the caller.
Note that loop lines carry the private-selection iteration number and every line a time,
which Theorem 3 does not cover: keep the ledger inside the enclave, and publish only its
"once" lines, the plan and totals, without their timestamps (``workbench.engine.bundle``).

A ledger may be written to several files at once (``mirrors``): a run writes the same lines to
its run directory's enclave and to its dataset's budget store, each fsynced before the call
returns, so either file alone prices every ε the run spent.
"""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from workbench.privacy.records import MeasurementRecord, utc_now

_SCALARS = (str, int, float, bool, type(None))


def _check_field(name: str, value: object) -> object:
    """Allow only JSON scalars or flat lists of them, so no array of data slips into the ledger."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    raise TypeError(f"ledger field {name!r} must be a JSON scalar or a flat list of scalars")


class Ledger:
    """Appends durable JSONL lines for one run; many runs may append to the same file."""

    def __init__(self, path: str | os.PathLike[str], *, run_id: str | None = None,
                 mirrors: Sequence[str | os.PathLike[str]] = ()) -> None:
        """Open ``path`` (and every mirror) for appending, creating them, and log an "open" line."""
        self.path = Path(path)
        self.run_id = run_id or uuid.uuid4().hex
        self._seq = 0
        self._files = [_open_append(Path(p)) for p in (self.path, *mirrors)]
        self._fh = self._files[0]
        self.event("open")

    def append(self, record: MeasurementRecord) -> None:
        """Durably log one measurement; called before its noise is drawn and its value returned."""
        if not isinstance(record, MeasurementRecord):
            raise TypeError("record must be a MeasurementRecord")
        self._write({"event": "measurement", **record.as_dict()})

    def event(self, event: str, **fields: Any) -> None:
        """Durably log a non-measurement event, e.g. ``event("status", status="incomplete")``."""
        if not isinstance(event, str) or not event or event == "measurement":
            raise ValueError("event must be a non-empty string other than 'measurement'")
        clean = {k: _check_field(k, v) for k, v in fields.items()}
        reserved = {"event", "run_id", "seq"} & clean.keys()
        if reserved:
            raise ValueError(f"ledger fields {sorted(reserved)} are reserved")
        self._write({"event": event, "timestamp": utc_now(), **clean})

    def _write(self, entry: dict[str, Any]) -> None:
        """Write one line, flush Python's buffer and fsync the OS's, so SIGKILL loses nothing."""
        if self._fh.closed:
            raise ValueError("ledger is closed")
        self._seq += 1
        line = json.dumps({**entry, "run_id": self.run_id, "seq": self._seq}, allow_nan=False)
        for fh in self._files:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def close(self) -> None:
        """Close the files; further writes raise."""
        for fh in self._files:
            fh.close()

    def __enter__(self) -> Ledger:
        """Use as a context manager so the file is closed at the end of a run."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close on exit."""
        self.close()

    @staticmethod
    def read(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
        """Return every entry in file order.

        A final line without its newline is a write cut short by a crash; its measurement was
        never released (values are returned only after the fsync), so it is skipped. Any other
        unreadable line means the ledger was tampered with or damaged, and raises.
        """
        text = Path(path).read_text(encoding="utf-8")
        lines = text.split("\n")
        entries: list[dict[str, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                if number == len(lines):  # no trailing newline: torn final write
                    break
                raise ValueError(f"ledger line {number} is not valid JSON") from None
        return entries


def _open_append(path: Path) -> TextIO:
    """Open ``path`` for appending, creating it and its directory (the new entry fsynced)."""
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - held for the run
    if created:
        _fsync_directory(path.parent)
    return fh


def _fsync_directory(directory: Path) -> None:
    """Persist a newly created file's directory entry (POSIX); a no-op where unsupported."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
