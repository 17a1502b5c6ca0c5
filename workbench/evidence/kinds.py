"""Kinds of evidence: each re-weights the proxy's rows to one kind of published aggregate.

The anchor (:attr:`workbench.evidence.core.Evidence.anchor`) is the proxy re-weighted by every
registered kind whose facts the published file holds, in the order registered. Everything that
draws a population from the evidence draws it from the anchor, so a new kind reaches them all by
registering (docs/architecture.md, "…a kind of evidence"). Public data only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from workbench.evidence.population import raked_weights

if TYPE_CHECKING:
    from workbench.evidence.core import Evidence
    from workbench.evidence.published import PublishedTables


class EvidenceKind(ABC):
    """One kind of published aggregate and how it re-weights the proxy's rows."""

    name: ClassVar[str]

    @abstractmethod
    def applies(self, published: PublishedTables) -> bool:
        """Whether the published file holds facts of this kind."""

    @abstractmethod
    def reweight(self, evidence: Evidence, weights: np.ndarray | None) -> np.ndarray:
        """Row weights of ``evidence.frame`` (starting from ``weights``, None: equal) that
        meet this kind's facts."""


_KINDS: dict[str, EvidenceKind] = {}


def register(kind: EvidenceKind) -> EvidenceKind:
    """Add a kind (its name unique); returns it."""
    if kind.name in _KINDS:
        raise ValueError(f"a kind of evidence named {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (a test's own)."""
    _KINDS.pop(name, None)


def registered() -> tuple[EvidenceKind, ...]:
    """The kinds, in the order they apply (registered)."""
    return tuple(_KINDS.values())


class PublishedShares(EvidenceKind):
    """Published 1-way tables and cross-tables in the design's cells: the proxy raked (IPF)
    to every column's 1-way shares (published where given, else the proxy's own) and to the
    cross-tables, which carry how two columns co-occur."""

    name = "shares"

    def applies(self, published: PublishedTables) -> bool:
        return bool(published.shares or published.pairs)

    def reweight(self, evidence: Evidence, weights: np.ndarray | None) -> np.ndarray:
        return raked_weights(evidence.codes, {**evidence.one_way_targets(),
                                              **evidence.pair_targets()}, weights)


register(PublishedShares())
