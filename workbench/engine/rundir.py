"""The run directory: what is private to the enclave and what is the publishable release.

Layout of ``DIR``::

    DIR/status.json          incomplete | complete | no_release (⊥) — written atomically
    DIR/enclave/             never publish: the full ledger (every iteration, with times)
                             and the staging area
    DIR/release/             the publishable bundle; it appears by one atomic rename, so a
                             crash can never leave a half-written release behind

A release exists if and only if ``DIR/release/`` exists and ``status.json`` says complete.
The staged files and their folder get one constant modification time before the rename
(:data:`PUBLISHED_MTIME`), so the bundle's file times say nothing about how long the run took.
The budget (what every run on the dataset spent) is not kept here but in the dataset's
budget store (:mod:`workbench.privacy.budget_store`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

STATUSES = ("incomplete", "complete", "no_release", "failed", "refused")
#: 1980-01-01T00:00:00Z: every published file's mtime (the earliest time a ZIP archive holds).
PUBLISHED_MTIME = 315_532_800


class RunRefused(RuntimeError):
    """The run was not started: a guard (run-once, layout) said no; nothing was spent."""


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON through a temp file, fsync and rename, so readers see old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2, ensure_ascii=False, allow_nan=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; bundle files are meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class RunDirectory:
    """Paths and state of one run directory (see the module docstring for the layout)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        """Point at ``root``; nothing is created until :meth:`prepare`."""
        self.root = Path(root)
        self.enclave = self.root / "enclave"
        self.release = self.root / "release"
        self.status_path = self.root / "status.json"
        self.ledger_path = self.enclave / "ledger.jsonl"

    def prepare(self) -> None:
        """Create the directories; refuse a path that is a file or holds unrelated files."""
        if self.root.exists() and not self.root.is_dir():
            raise RunRefused(f"--out {str(self.root)!r} exists and is not a directory")
        if self.root.is_dir():
            known = {"status.json", "enclave", "release"}
            stray = [p.name for p in self.root.iterdir() if p.name not in known
                     and not p.name.startswith("release.previous-")]
            if stray:
                raise RunRefused(
                    f"--out {str(self.root)!r} holds files that are not from a workbench run; "
                    "choose a new or empty directory"
                )
        self.enclave.mkdir(parents=True, exist_ok=True)
        os.chmod(self.enclave, 0o700)

    def set_status(self, status: str, **fields: Any) -> None:
        """Record the run's state for operators and for ``workbench verify``."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        write_json_atomic(self.status_path, {"status": status, **fields})

    def status(self) -> dict[str, Any]:
        """The recorded state, or {"status": "none"} before any run."""
        if not self.status_path.exists():
            return {"status": "none"}
        return json.loads(self.status_path.read_text(encoding="utf-8"))

    def staging(self, run_id: str) -> Path:
        """A fresh staging directory inside the enclave for the bundle of ``run_id``."""
        path = self.enclave / f"staging-{run_id}"
        if path.exists():
            shutil.rmtree(path)
        path.mkdir()
        return path

    def publish(self, staged: Path, run_id: str) -> Path:
        """Stamp the constant mtime, then move the bundle to ``release/`` in one rename.

        An earlier release in the same folder is kept aside as ``release.previous-<run id>``.
        """
        if self.release.exists():
            self.release.rename(self.root / f"release.previous-{run_id}")
        for p in [*staged.iterdir(), staged]:
            os.utime(p, (PUBLISHED_MTIME, PUBLISHED_MTIME), follow_symlinks=False)
        _fsync_tree(staged)
        os.rename(staged, self.release)
        _fsync_dir(self.root)
        return self.release


def _fsync_tree(directory: Path) -> None:
    """Flush every staged file and the directory itself before the publishing rename."""
    for p in directory.iterdir():
        if p.is_file():
            with open(p, "rb") as fh:
                os.fsync(fh.fileno())
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    """Persist directory entries (POSIX)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
