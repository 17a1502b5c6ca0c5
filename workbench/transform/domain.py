"""The public shape of encoded data: column names and the number of codes per column."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Domain:
    """Column names and code counts; always taken from the spec, never from data.

    >>> Domain(("a", "b"), (10, 20)).size()
    200
    >>> Domain(("a", "b"), (10, 20)).project(["b"])
    Domain(names=('b',), sizes=(20,))
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        names, sizes = tuple(self.names), tuple(int(s) for s in self.sizes)
        if len(names) != len(sizes):
            raise ValueError(f"Domain: {len(names)} names but {len(sizes)} sizes")
        if len(set(names)) != len(names):
            raise ValueError("Domain: column names must be unique")
        if any(s < 1 for s in sizes):
            bad = [n for n, s in zip(names, sizes, strict=True) if s < 1]
            raise ValueError(f"Domain: columns {bad} must have at least one code")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "sizes", sizes)

    def __len__(self) -> int:
        return len(self.names)

    def size(self, names: list[str] | tuple[str, ...] | None = None) -> int:
        """Number of cells in the joint domain of ``names`` (all columns by default); exact,
        never wrapped around int64 (a wide schema's joint domain passes 2^63)."""
        sizes = self.sizes if names is None else [self.size_of(n) for n in names]
        return math.prod(int(s) for s in sizes)

    def size_of(self, name: str) -> int:
        """Code count of one column."""
        try:
            return self.sizes[self.names.index(name)]
        except ValueError:
            raise KeyError(f"Domain has no column {name!r}") from None

    def index(self, name: str) -> int:
        """Position of a column in the encoded matrix."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"Domain has no column {name!r}") from None

    def project(self, names: list[str] | tuple[str, ...]) -> Domain:
        """Sub-domain on ``names``, in the order given."""
        return Domain(tuple(names), tuple(self.size_of(n) for n in names))
