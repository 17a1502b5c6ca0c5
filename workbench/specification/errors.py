"""One error type for every problem a spec can have, each problem tied to a JSON path."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """A single validation problem: where (JSON path such as ``criteria[3].threshold``) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '(root)'}: {self.message}"


class SpecError(ValueError):
    """A malformed spec; carries every problem found, not just the first."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems: tuple[Problem, ...] = tuple(problems)
        n = len(self.problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"the spec has {n} problem{'s' if n != 1 else ''}:\n{lines}")

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(p.path for p in self.problems)


def join_path(base: str, key: str | int) -> str:
    """Extend a JSON path the way messages show it: ``a.b[2].c``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else str(key)
