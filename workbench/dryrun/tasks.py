"""Dry-run tasks and their records: one (configuration, repetition) pair, seeded reproducibly."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

NoiseMode = Literal["opendp", "seeded"]
NOISE_MODES: tuple[str, ...] = ("opendp", "seeded")


def task_seed(seed: int, config_key: str, rep: int) -> int:
    """A 63-bit seed from (seed, configuration key, repetition), stable across processes.

    >>> task_seed(0, "k", 1) == task_seed(0, "k", 1) != task_seed(0, "k", 2)
    True
    """
    text = f"{int(seed)}\x1f{config_key}\x1f{int(rep)}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class Task:
    """One iteration to rehearse: which payload, which configuration, which repetition and seed."""

    payload_id: str
    config: Mapping[str, Any]
    config_key: str
    rep: int
    seed: int
    noise: NoiseMode


@dataclass(frozen=True)
class CriterionOutcome:
    """One criterion in one task: the DP decision and value, and the exact (proxy) value."""

    passed: bool
    value: float | None
    threshold: float | None
    exact: float | None


@dataclass(frozen=True)
class TaskRecord:
    """What one rehearsed iteration produced; everything here is about public proxy data."""

    config_key: str
    rep: int
    seed: int
    noise: NoiseMode
    passed: bool
    failure: str | None
    criteria: Mapping[str, CriterionOutcome] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form (NaN becomes null) for the cache and the CLI's records file."""
        return {
            "config": self.config_key,
            "rep": self.rep,
            "seed": self.seed,
            "noise": self.noise,
            "passed": self.passed,
            "failure": self.failure,
            "criteria": {
                cid: {"passed": o.passed, "value": _finite(o.value),
                      "threshold": _finite(o.threshold), "exact": _finite(o.exact)}
                for cid, o in self.criteria.items()
            },
            "seconds": round(self.seconds, 4),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskRecord:
        """Inverse of :meth:`to_dict`."""
        return cls(
            config_key=str(data["config"]),
            rep=int(data["rep"]),
            seed=int(data["seed"]),
            noise=data["noise"],
            passed=bool(data["passed"]),
            failure=data.get("failure"),
            criteria={cid: CriterionOutcome(bool(o["passed"]), o.get("value"),
                                            o.get("threshold"), o.get("exact"))
                      for cid, o in dict(data.get("criteria", {})).items()},
            seconds=float(data.get("seconds", 0.0)),
        )

    def outcome(self) -> dict[str, Any]:
        """The record without its timing: what must be identical for identical seeds."""
        out = self.to_dict()
        out.pop("seconds")
        return out


def _finite(value: float | None) -> float | None:
    """None for missing or non-finite values, so the JSON stays strict."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def plan_tasks(payload_id: str, configs: Sequence[Mapping[str, Any]], keys: Sequence[str],
               repetitions: int, seed: int, noise: NoiseMode) -> list[Task]:
    """Every configuration × repetition, repetition-major so early results cover every config."""
    return [
        Task(payload_id, config, key, rep, task_seed(seed, key, rep), noise)
        for rep in range(repetitions)
        for config, key in zip(configs, keys, strict=True)
    ]
