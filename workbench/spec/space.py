"""The configuration space: transformation alternatives × generator hyperparameters × min_count."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.spec.model import Spec


@dataclass(frozen=True)
class GeneratorSpace:
    """A generator family and its hyperparameter grids; the space is the union of the grids."""

    family: str
    grids: tuple[tuple[tuple[str, tuple[Any, ...]], ...], ...]

    def hyperparameter_sets(self) -> Iterator[dict[str, Any]]:
        """Every hyperparameter combination, grid by grid, in declaration order."""
        for grid in self.grids:
            names = [k for k, _ in grid]
            for values in itertools.product(*(v for _, v in grid)):
                yield dict(zip(names, values, strict=True))

    def count(self) -> int:
        total = 0
        for grid in self.grids:
            n = 1
            for _, values in grid:
                n *= len(values)
            total += n
        return total


@dataclass(frozen=True)
class Configuration:
    """One point of the search space: a transformation per column, hyperparameters, min_count."""

    transforms: tuple[tuple[str, str], ...]
    family: str
    hyperparameters: tuple[tuple[str, Any], ...]
    min_count: int

    def transform_of(self, column: str) -> str:
        for c, alt in self.transforms:
            if c == column:
                return alt
        raise KeyError(f"configuration has no transformation for column {column!r}")

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.hyperparameters)

    @property
    def generator_params(self) -> dict[str, Any]:
        """The family's own hyperparameters; 'epsilon' (common to all) is the budget's business."""
        return {k: v for k, v in self.hyperparameters if k != "epsilon"}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in specs, bundles and caches."""
        return {
            "transforms": dict(self.transforms),
            "generator": {"family": self.family, **dict(self.hyperparameters)},
            "min_count": self.min_count,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Configuration:
        """The inverse of :meth:`to_dict` (list values, such as column lists, become tuples)."""
        gen = dict(data["generator"])
        family = gen.pop("family")
        return cls(
            tuple((str(k), str(v)) for k, v in dict(data["transforms"]).items()),
            str(family),
            tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in gen.items())),
            int(data["min_count"]),
        )

    @property
    def key(self) -> str:
        """Canonical text identity, stable across runs (for caches and ledgers)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


def iter_configurations(spec: Spec) -> Iterator[Configuration]:
    """The full Cartesian space in a fixed, documented order."""
    cols = [t.column for t in spec.transformations]
    alt_lists = [[a.name for a in t.alternatives] for t in spec.transformations]
    hyper = list(spec.generator.hyperparameter_sets())
    for alts in itertools.product(*alt_lists):
        transforms = tuple(zip(cols, alts, strict=True))
        for h in hyper:
            for m in spec.min_counts:
                yield Configuration(transforms, spec.generator.family, tuple(sorted(h.items())), m)


def count_configurations(spec: Spec) -> int:
    """Product of the alternatives' counts, the hyperparameter sets and the min_count values."""
    n = 1
    for t in spec.transformations:
        n *= len(t.alternatives)
    return n * spec.generator.count() * len(spec.min_counts)
