"""``Evidence``: the public evidence a rehearsal stands on, in one value (issue 35).

An anchor population (the cleaned proxy re-weighted by every kind of published aggregate given,
:class:`EvidenceKind`, registered below) plus the scenarios of how the registry may differ from it,
each a set of row weights realised at n by the one sampler (:mod:`workbench.evidence.population`).
Scenarios: ``proxy``, ``flatter`` / ``sharper`` (every column's 1-way distribution moved by a
declared total variation towards or away from uniform, rows raked to it), ``rare thinned`` / ``rare
thickened`` (rows in a 1-way cell under ``rare_share`` weighted 0.5 or 1.5); with published tables,
``published`` (the anchor) and flatter / sharper within their rounding.
Public data only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import pandas as pd

from workbench.evidence.population import population, raked_weights, rare_rows
from workbench.evidence.published import PublishedTables
from workbench.specification import Spec
from workbench.trial.cells import design_codec

SCENARIOS = ("proxy", "flatter", "sharper", "rare thinned", "rare thickened")
#: The scenarios when the registry's published 1-way tables are given.
PUBLISHED_SCENARIOS = ("published", "flatter", "sharper")
#: The declared shift of every column's 1-way distribution (total variation).
DEFAULT_TOLERANCE = 0.03
#: A 1-way cell under this share of the proxy is rare.
RARE_SHARE = 0.01
#: The weight of a rare row in the rare thinned / thickened scenarios.
RARE_WEIGHTS = {"rare thinned": 0.5, "rare thickened": 1.5}
#: ``weights=ANCHOR``: the anchor population's weights.
ANCHOR = "anchor"


@dataclass(frozen=True, eq=False)
class Evidence:
    """The cleaned public proxy, the published aggregates (None: none), and the spec whose
    design cells the scenarios move."""

    spec: Spec
    frame: pd.DataFrame
    published: PublishedTables | None = None
    #: the proxy's public name (a file's base name), for recorded forecasts
    source: str | None = None

    def for_spec(self, spec: Spec) -> Evidence:
        """The same evidence for another spec of the schema (a draft, a narrowed spec)."""
        return (self if spec is self.spec
                else Evidence(spec, self.frame, self.published, self.source))

    @cached_property
    def codes(self) -> np.ndarray:
        """The proxy in the design's cells, those of the published tables (a scenario's 1-way
        cells): ``trial.cells.design_codec``, one codec whichever configuration runs."""
        return design_codec(self.spec).encode(self.frame)

    @cached_property
    def anchor(self) -> np.ndarray | None:
        """Row weights of the anchor population: the proxy re-weighted by every registered
        kind of evidence the published aggregates hold (None: the proxy as it is)."""
        weights = None
        if self.published is not None:
            for kind in registered():
                if kind.applies(self.published):
                    weights = kind.reweight(self, weights)
        return weights

    def population(self, n: int | None, rng: np.random.Generator,
                   weights: np.ndarray | str | None = ANCHOR) -> pd.DataFrame:
        """A population of ``n`` rows (None: the proxy's size) drawn from the anchor (or
        ``weights``; None: the proxy as it is, itself at its own size)."""
        w = self.anchor if isinstance(weights, str) else weights
        if n is None and w is None:
            return self.frame
        return population(self.frame, len(self.frame) if n is None else int(n), rng, w)

    def one_way_targets(self) -> dict[int, np.ndarray]:
        """Each column's 1-way distribution: published where given, else the proxy's own."""
        out = {}
        for j, name in enumerate(self.spec.column_names):
            if self.published is not None and name in self.published.shares:
                out[j] = self.published.target(name)
            else:
                counts = np.bincount(self.codes[:, j])
                out[j] = counts / counts.sum()
        return out

    def pair_targets(self) -> dict[tuple[int, int], np.ndarray]:
        """The published cross-tables as raking targets, by column index."""
        if self.published is None:
            return {}
        index = {name: j for j, name in enumerate(self.spec.column_names)}
        return {(index[a], index[b]): t for (a, b), t in self.published.pairs.items()}

    def default_scenarios(self) -> tuple[str, ...]:
        """The proxy's five scenarios, the published tables' three, or the anchor alone when
        the tables are exact (counts: no rounding to shift within)."""
        if self.published is None:
            return SCENARIOS
        return PUBLISHED_SCENARIOS if self.published.step > 0 else PUBLISHED_SCENARIOS[:1]

    def scenario_weights(self, names: Sequence[str] | None = None, *,
                         tolerance: float | None = None, rare_share: float = RARE_SHARE
                         ) -> dict[str, np.ndarray | None]:
        """Each scenario as row weights of the proxy (None: the proxy as it is).

        ``tolerance``: the declared TV shift of flatter/sharper (default 0.03; with published
        tables, each column's rounding tolerance, and the columns they do not give stay)."""
        published = self.published
        known = PUBLISHED_SCENARIOS if published is not None else SCENARIOS
        names = list(self.default_scenarios() if names is None else names)
        if (tolerance is not None and not 0 <= tolerance < 1) or not 0 < rare_share < 1:
            raise ValueError("tolerance must lie in [0, 1) and rare_share in (0, 1)")
        unknown = [s for s in names if s not in known]
        if unknown:
            why = (" (the published tables fix the 1-way shares, rare cells included)"
                   if published is not None else "")
            raise ValueError(f"unknown proxy scenario(s) {unknown}{why}; known: {list(known)}")
        base = self.one_way_targets()
        out: dict[str, np.ndarray | None] = {}
        for name in names:
            if name in ("proxy", "published"):
                out[name] = self.anchor
            elif name in ("flatter", "sharper"):
                out[name] = raked_weights(self.codes, {
                    j: _tilted(p, self._tolerance(j, tolerance), name == "sharper")
                    for j, p in base.items()
                    if published is None or self.spec.column_names[j] in published.shares})
            else:
                out[name] = np.where(rare_rows(self.codes, rare_share), RARE_WEIGHTS[name], 1.0)
        return out

    def _tolerance(self, j: int, tolerance: float | None) -> float:
        """The declared shift of column j: given, else its published rounding, else the
        default."""
        if tolerance is not None:
            return tolerance
        if self.published is not None:
            return self.published.tolerance(self.spec.column_names[j])
        return DEFAULT_TOLERANCE


def _tilted(p: np.ndarray, tolerance: float, sharper: bool) -> np.ndarray:
    """A 1-way distribution moved by total variation ``tolerance`` towards (or away from)
    uniform."""
    if sharper:
        lo, hi = 0.0, 8.0
        for _ in range(40):  # bisect the exponent a of p^(1+a) to the tolerance
            a = (lo + hi) / 2
            q = np.where(p > 0, p, 0.0) ** (1 + a)
            q = q / q.sum()
            lo, hi = (a, hi) if 0.5 * np.abs(q - p).sum() < tolerance else (lo, a)
        return q
    support = p > 0
    uniform = support / support.sum()
    tv = 0.5 * np.abs(uniform - p).sum()
    lam = 1.0 if tv <= tolerance else tolerance / tv
    return (1 - lam) * p + lam * uniform


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
