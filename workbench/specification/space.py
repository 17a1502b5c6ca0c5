"""The configuration space: transformation alternatives × generator hyperparameters × min_count."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


class FrozenObject(dict):
    """A JSON object as one hyperparameter value (e.g. Censor_w's public weight function): a
    read-only dict, hashable, so configurations holding it stay hashable and serialise as-is.

    >>> v = FrozenObject({"knots": [0, 1], "alpha": [1, 0]})
    >>> hash(v) == hash(FrozenObject({"alpha": [1, 0], "knots": [0, 1]})), json.dumps(v)
    (True, '{"knots": [0, 1], "alpha": [1, 0]}')
    """

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(json.dumps(self, sort_keys=True))

    def _read_only(self, *_args: Any, **_kwargs: Any) -> None:
        raise TypeError("a hyperparameter value is read-only")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenObject, (dict(self),))


def frozen_value(value: Any) -> Any:
    """A grid value as configurations hold it: a list (of column names) as a tuple, an object
    as a :class:`FrozenObject`; anything else as it is."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, Mapping) and not isinstance(value, FrozenObject):
        return FrozenObject(value)
    return value


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
        """The inverse of :meth:`to_dict` (list values, such as column lists, become tuples;
        objects :class:`FrozenObject`)."""
        gen = dict(data["generator"])
        family = gen.pop("family")
        return cls(
            tuple((str(k), str(v)) for k, v in dict(data["transforms"]).items()),
            str(family),
            tuple(sorted((k, frozen_value(v)) for k, v in gen.items())),
            int(data["min_count"]),
        )

    @property
    def key(self) -> str:
        """Canonical text identity, stable across runs (for caches and ledgers)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
