"""The budget store: one append-only ledger per dataset, whatever folder a run writes to.

The privacy loss adds up over every run on the same people, so it is kept per *dataset*
(the spec's ``metadata.dataset``), not per run directory. Layout of a store root::

    ROOT/<dataset>/ledger.jsonl      every ledger line of every run on the dataset (fsynced;
                                     the same lines as each run's enclave ledger)
    ROOT/<dataset>/fingerprint.key   secret HMAC key of the content fingerprint (mode 0600)
    ROOT/<dataset>/once/<sha256>.json  once-statistics an earlier run of that spec released
    ROOT/<dataset>/lock              held (flock) by the run in progress

ROOT is ``--budget-store DIR``, else ``$WORKBENCH_BUDGET_STORE``, else the user's state
directory (``$XDG_STATE_HOME/release-workbench/budgets``, ``~/.local/state/…`` by default).
Everything in it is enclave material: it must never be published.

The content fingerprint (HMAC of the cleaned table in canonical form: columns by name, rows
sorted, numbers as float64, so it survives re-encoding and row order) is recorded to warn
when the data changed between runs. It never grants a fresh budget: the dataset's name does.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.privacy.budget_plan import price_ledger
from workbench.privacy.fingerprint import table_fingerprint
from workbench.privacy.ledger import Ledger
from workbench.privacy.records import charged_delta

ENV_VAR = "WORKBENCH_BUDGET_STORE"
DATASET_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,99}$"
_KEY_BYTES = 32


class BudgetStoreError(RuntimeError):
    """The store cannot be used as asked (bad dataset name, busy, damaged); nothing was spent."""


def default_root() -> Path:
    """The user's state directory for budgets (XDG Base Directory specification)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(state) / "release-workbench" / "budgets"


def resolve_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``--budget-store`` if given, else ``$WORKBENCH_BUDGET_STORE``, else :func:`default_root`."""
    if explicit is not None:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else default_root()


def check_dataset(dataset: str) -> str:
    """A dataset identifier that is also a safe directory name, e.g. ``il-births-2014``."""
    if not isinstance(dataset, str) or not re.match(DATASET_PATTERN, dataset):
        raise BudgetStoreError(
            "metadata.dataset must be a stable identifier of lowercase letters, digits, '.', "
            "'_' and '-' (e.g. 'il-births-2014')"
        )
    return dataset


class DatasetBudget:
    """One dataset's corner of the store: its ledger, fingerprint key, once-statistics, lock."""

    def __init__(self, root: str | os.PathLike[str], dataset: str) -> None:
        """Point at ``root/dataset``; nothing is created until :meth:`open`."""
        self.dataset = check_dataset(dataset)
        self.root = Path(root)
        self.dir = self.root / self.dataset
        self.ledger_path = self.dir / "ledger.jsonl"
        self.key_path = self.dir / "fingerprint.key"
        self.once_dir = self.dir / "once"

    def open(self) -> DatasetBudget:
        """Create the dataset's directory (mode 0700: enclave material)."""
        if self.root.exists() and not self.root.is_dir():
            raise BudgetStoreError(f"budget store {str(self.root)!r} is not a directory")
        self.once_dir.mkdir(parents=True, exist_ok=True)
        for d in (self.dir, self.once_dir):
            os.chmod(d, 0o700)
        return self

    @contextlib.contextmanager
    def locked(self) -> Iterator[DatasetBudget]:
        """Hold the dataset's lock for a whole run, so two runs cannot both pass the guard."""
        self.open()
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BudgetStoreError(
                    f"another run on dataset {self.dataset!r} is in progress (budget store "
                    f"{str(self.root)!r}); wait for it to end"
                ) from None
            yield self
        finally:
            os.close(fd)  # closing releases the lock

    # --- spend -----------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """Every line of the dataset's ledger (empty before the first run)."""
        return Ledger.read(self.ledger_path) if self.ledger_path.exists() else []

    def spent(self) -> float:
        """ε spent on the dataset by every run so far."""
        try:
            return price_ledger(self.entries())
        except ValueError as exc:
            raise BudgetStoreError(f"dataset {self.dataset!r}: {exc}") from None

    def delta_spent(self) -> float:
        """δ spent on the dataset by every (ε, δ) measurement so far (0 when all were pure ε)."""
        return charged_delta(e for e in self.entries() if e.get("event") == "measurement")

    def runs_with_spend(self) -> int:
        """How many earlier runs made at least one measurement on the dataset."""
        return len({e.get("run_id") for e in self.entries() if e.get("event") == "measurement"})

    def last_fingerprint(self, spec_sha256: str) -> str | None:
        """The content fingerprint the last run of this spec recorded, if any."""
        started = {e.get("run_id") for e in self.entries()
                   if e.get("event") == "run_start" and e.get("spec_sha256") == spec_sha256}
        prints = [e["data_fingerprint"] for e in self.entries()
                  if e.get("event") == "data_loaded" and e.get("run_id") in started]
        return prints[-1] if prints else None

    # --- fingerprint -----------------------------------------------------------------------
    def key(self) -> bytes:
        """The secret HMAC key of the dataset's fingerprints, created on first use (0600)."""
        if self.key_path.exists():
            return self.key_path.read_bytes()
        key = secrets.token_bytes(_KEY_BYTES)
        fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
            fh.flush()
            os.fsync(fh.fileno())
        return key

    def fingerprint(self, frame: pd.DataFrame) -> str:
        """The content fingerprint of a cleaned table under this dataset's key."""
        return table_fingerprint(frame, self.key())

    # --- once-statistics -------------------------------------------------------------------
    def once_path(self, spec_sha256: str) -> Path:
        """Where the once-statistics of the spec with this hash are kept."""
        if not re.fullmatch(r"[0-9a-f]{64}", spec_sha256):
            raise BudgetStoreError("spec_sha256 must be 64 hex digits")
        return self.once_dir / f"{spec_sha256}.json"
