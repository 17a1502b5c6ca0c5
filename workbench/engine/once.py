"""Once-statistics kept for reuse, so a retry never charges them again.

A once-criterion (§4.14.1) is a statistic of R alone, released with its own ε before the
selection loop. Its DP release may be reused by any later run of the same spec on the same
dataset at no cost (post-processing), while recomputing it would charge ε_once again. The
release is kept in the dataset's budget store (enclave material) as JSON: floats are written
with ``repr`` and so read back exactly.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.criteria import RegressionRelease
from workbench.engine.rundir import RunRefused, write_json_atomic
from workbench.privacy import MeasurementRecord

FORMAT = "workbench-once-statistics/1"


@dataclass(frozen=True)
class OnceStatistics:
    """Released once-statistics, the run that released them, and the data they describe."""

    releases: Mapping[str, RegressionRelease]
    run_id: str
    fingerprint: str

    @property
    def records(self) -> list[MeasurementRecord]:
        """The measurement records of the original releases (for the release ledger)."""
        return [r.record for r in self.releases.values() if r.record is not None]


def _record(fields: Mapping[str, Any]) -> MeasurementRecord:
    """A measurement record read back from JSON (bounds as a tuple again)."""
    bounds = fields.get("bounds")
    return MeasurementRecord(**{**fields, "bounds": None if bounds is None else tuple(bounds)})


def save_once(path: Path, once: OnceStatistics) -> None:
    """Write the once-statistics atomically (fsynced) next to the dataset's ledger."""
    payload = {
        "format": FORMAT,
        "run_id": once.run_id,
        "data_fingerprint": once.fingerprint,
        "releases": {
            cid: {
                "target": r.target,
                "sources": list(r.sources),
                "names": list(r.names),
                "intercept": r.intercept,
                "coef": [float(v) for v in np.asarray(r.coef, dtype=np.float64)],
                "record": None if r.record is None else r.record.as_dict(),
            }
            for cid, r in once.releases.items()
        },
    }
    write_json_atomic(path, payload)


def load_once(path: Path, criterion_ids: set[str]) -> OnceStatistics | None:
    """The kept once-statistics, or None if none were kept; refuse a damaged or partial file."""
    if not path.exists():
        return None
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        if payload.get("format") != FORMAT or set(payload["releases"]) != criterion_ids:
            raise ValueError("format")
        releases = {
            cid: RegressionRelease(
                cid, r["target"], tuple(r["sources"]), tuple(r["names"]),
                float(r["intercept"]), np.asarray(r["coef"], dtype=np.float64),
                None if r["record"] is None else _record(r["record"]),
            )
            for cid, r in payload["releases"].items()
        }
        return OnceStatistics(releases, str(payload["run_id"]), str(payload["data_fingerprint"]))
    except (OSError, ValueError, KeyError, TypeError):
        raise RunRefused(
            f"the kept once-statistics {str(path)!r} are damaged; nothing was spent. Restore "
            "the file from a backup (deleting it would make the next run charge them again)"
        ) from None
