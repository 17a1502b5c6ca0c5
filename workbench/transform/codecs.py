"""Per-column codecs: raw values <-> integer codes <-> bin labels, with the bin-to-number rule.

A codec is built from public parameters only (edges, a declared domain), so the
number of codes, the labels and the numbers are fixed before any data is seen.
Encoding never raises on a bad value: it marks it with a negative code
(``INVALID`` or ``MISSING``) and the caller applies the column's policy, so no
error message ever has to mention a value.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

INVALID = -1
MISSING = -2


class Codec(Protocol):
    """What every column codec offers to the encoder, the generators and the criteria."""

    labels: tuple[str, ...]

    @property
    def size(self) -> int: ...

    def encode(self, values: Any) -> np.ndarray: ...

    def encode_labels(self, labels: Any) -> np.ndarray: ...

    def decode(self, codes: np.ndarray) -> np.ndarray: ...

    def numbers(self) -> np.ndarray: ...

    def intervals(self) -> tuple[np.ndarray, np.ndarray] | None: ...

    def categories(self) -> tuple[frozenset, ...] | None: ...


def _missing_mask(values: pd.Series) -> np.ndarray:
    return values.isna().to_numpy()


def text_codes(labels: Any, values: Any) -> np.ndarray:
    """Index of each text value in ``labels`` (-1: missing or not a label); a Categorical (the
    compact table of ``transform.stream``) is looked up by its categories, not row by row."""
    series = pd.Series(values, copy=False)
    index = pd.Index(list(labels))
    if isinstance(series.dtype, pd.CategoricalDtype):
        known = index.get_indexer(pd.Index(series.cat.categories).astype("string"))
        # code -1 (missing) takes the appended -1: one int64 pass over the rows, no temporaries
        return np.append(known.astype(np.int64), -1)[series.cat.codes.to_numpy()]
    return index.get_indexer(series.astype("string").fillna("\x00")).astype(np.int64)


def _label_index(labels: tuple[str, ...], given: Any) -> np.ndarray:
    """Map label strings to codes; unknown labels become INVALID."""
    return text_codes(labels, given)


class LabelledCodec:
    """Label lookups shared by the codecs whose codes index their ``labels``."""

    labels: tuple[str, ...]

    def encode_labels(self, labels: Any) -> np.ndarray:
        """Codes of label strings (unknown labels become INVALID)."""
        return _label_index(self.labels, labels)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The label of each code."""
        return np.asarray(self.labels, dtype=object)[np.asarray(codes)]


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class BinsCodec(LabelledCodec):
    """Numeric bins cut at ``edges``: (-inf, e0), [e0, e1), ..., [e_last, inf).

    With ``open_below=False`` the first edge is the inclusive lower end of the
    first bin; with ``open_above=False`` the last edge is the exclusive upper end
    of the last bin. Integer labels follow the paper except the open top bin, which reads
    ``25+`` (25 and above; the paper's ``24<`` was read as "less than", issue 36); its
    number stays the paper's, the value below the bin:

    >>> c = BinsCodec((18, 20, 25), integer=True)
    >>> c.labels
    ('<18', '18-19', '20-24', '25+')
    >>> c.numbers().tolist()
    [18.0, 18.5, 22.0, 24.0]
    >>> c.encode([17, 18, 19, 20, 99]).tolist()
    [0, 1, 1, 2, 3]
    """

    edges: tuple[float, ...]
    integer: bool = True
    open_below: bool = True
    open_above: bool = True
    labels: tuple[str, ...] = field(default=())
    clip: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        edges = tuple(float(e) for e in self.edges)
        if not edges:
            raise ValueError("edges: at least one edge is needed")
        if any(not math.isfinite(e) for e in edges):
            raise ValueError("edges: every edge must be a finite number")
        if any(b <= a for a, b in itertools.pairwise(edges)):
            raise ValueError("edges: must be strictly increasing")
        if self.integer and any(not e.is_integer() for e in edges):
            raise ValueError("edges: an integer column needs whole-number edges")
        n_bins = len(edges) - 1 + int(self.open_below) + int(self.open_above)
        if n_bins < 1:
            raise ValueError("edges: a closed binning needs at least two edges")
        if self.clip is not None:
            lo, hi = (float(v) for v in self.clip)
            if not lo < hi:
                raise ValueError("clip: lower bound must be below upper bound")
            object.__setattr__(self, "clip", (lo, hi))
        object.__setattr__(self, "edges", edges)
        auto = self._auto_labels()
        labels = tuple(self.labels) if self.labels else auto
        if len(labels) != n_bins:
            raise ValueError(f"labels: {len(labels)} labels given for {n_bins} bins")
        if len(set(labels)) != len(labels):
            raise ValueError("labels: must be unique")
        object.__setattr__(self, "labels", labels)

    @property
    def size(self) -> int:
        return len(self.edges) - 1 + int(self.open_below) + int(self.open_above)

    def _bounds(self) -> list[tuple[float, float]]:
        """Inclusive (low, high) raw bounds of every bin; infinite at open ends."""
        e = self.edges
        step = 1.0 if self.integer else 0.0
        out: list[tuple[float, float]] = []
        if self.open_below:
            out.append(
                (-math.inf, e[0] - step if self.integer else float(np.nextafter(e[0], -np.inf)))
            )
        for a, b in itertools.pairwise(e):
            out.append((a, b - step if self.integer else float(np.nextafter(b, -np.inf))))
        if self.open_above:
            out.append((e[-1], math.inf))
        return out

    def _auto_labels(self) -> tuple[str, ...]:
        labels = []
        for lo, hi in self._bounds():
            if lo == -math.inf:
                labels.append(f"<{_fmt(hi + 1 if self.integer else self.edges[0])}")
            elif hi == math.inf:
                labels.append(f"{_fmt(lo)}+" if self.integer else f">={_fmt(lo)}")
            elif self.integer:
                labels.append(_fmt(lo) if lo == hi else f"{_fmt(lo)}-{_fmt(hi)}")
            else:
                labels.append(f"[{_fmt(lo)},{_fmt(np.nextafter(hi, np.inf))})")
        return tuple(labels)

    def encode(self, values: Any) -> np.ndarray:
        """Codes for raw values: INVALID outside closed ends, MISSING for NaN."""
        series = pd.Series(values, copy=False)
        missing = _missing_mask(series)
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad_type = np.isnan(x) & ~missing
        if self.clip is not None:
            x = np.clip(x, self.clip[0], self.clip[1])
        codes = np.searchsorted(np.asarray(self.edges), x, side="right").astype(np.int64)
        if not self.open_below:
            below = x < self.edges[0]
            codes -= 1
        else:
            below = np.zeros(len(x), dtype=bool)
        above = (x >= self.edges[-1]) if not self.open_above else np.zeros(len(x), dtype=bool)
        codes[below | above | bad_type] = INVALID
        codes[missing] = MISSING
        return codes

    def numbers(self) -> np.ndarray:
        """Bin-to-number rule: a single value stays; bounded -> midpoint; open -> its edge."""
        out = []
        for lo, hi in self._bounds():
            if lo == -math.inf:
                out.append(self.edges[0])
            elif hi == math.inf:
                out.append(lo - 1 if self.integer else lo)
            elif not self.integer:
                out.append((lo + self.edges[self.edges.index(lo) + 1]) / 2)
            else:
                out.append((lo + hi) / 2)
        return np.asarray(out, dtype=np.float64)

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Inclusive raw bounds per code, for interval logic in constraints."""
        b = self._bounds()
        return np.array([lo for lo, _ in b]), np.array([hi for _, hi in b])

    def categories(self) -> None:
        return None


@dataclass(frozen=True)
class IdentityCodec(LabelledCodec):
    """One code per declared domain value, in the declared order.

    >>> IdentityCodec(("M", "F")).encode(["F", "M", "X"]).tolist()
    [1, 0, -1]
    """

    domain: tuple[Any, ...]
    labels: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        domain = tuple(self.domain)
        if not domain:
            raise ValueError("domain: must not be empty")
        labels = tuple(str(v) for v in domain)
        if len(set(labels)) != len(labels):
            raise ValueError("domain: values must be unique")
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "labels", labels)

    @property
    def size(self) -> int:
        return len(self.domain)

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, int | float) and not isinstance(v, bool) for v in self.domain)

    def encode(self, values: Any) -> np.ndarray:
        series = pd.Series(values, copy=False)
        missing = _missing_mask(series)
        if self.numeric:
            x = pd.to_numeric(series, errors="coerce")
            codes = pd.Index(np.asarray(self.domain, dtype=np.float64)).get_indexer(
                x.to_numpy(dtype=np.float64, na_value=np.nan)
            )
        else:
            codes = text_codes(self.labels, series)
        codes = codes.astype(np.int64)
        codes[missing] = MISSING
        return codes

    def numbers(self) -> np.ndarray:
        if not self.numeric:
            raise ValueError("a categorical column has no numeric value per code")
        return np.asarray(self.domain, dtype=np.float64)

    def intervals(self) -> tuple[np.ndarray, np.ndarray] | None:
        if not self.numeric:
            return None
        x = self.numbers()
        return x.copy(), x.copy()

    def categories(self) -> tuple[frozenset, ...] | None:
        return None if self.numeric else tuple(frozenset([v]) for v in self.domain)


@dataclass(frozen=True)
class GroupsCodec(LabelledCodec):
    """Categorical values merged into named groups (e.g. regions from districts)."""

    groups: tuple[tuple[str, tuple[Any, ...]], ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for _, members in self.groups:
            for m in members:
                if str(m) in seen:
                    raise ValueError("groups: a value belongs to more than one group")
                seen.add(str(m))
        if not self.groups:
            raise ValueError("groups: at least one group is needed")

    @property
    def labels(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(name for name, _ in self.groups)

    @property
    def size(self) -> int:
        return len(self.groups)

    def encode(self, values: Any) -> np.ndarray:
        series = pd.Series(values, copy=False)
        missing = _missing_mask(series)
        members = [str(m) for _, ms in self.groups for m in ms]
        owner = np.array([i for i, (_, ms) in enumerate(self.groups) for _ in ms], dtype=np.int64)
        idx = text_codes(members, series)
        codes = np.where(idx >= 0, owner[np.maximum(idx, 0)], INVALID).astype(np.int64)
        codes[missing] = MISSING
        return codes

    def numbers(self) -> np.ndarray:
        raise ValueError("a grouped categorical column has no numeric value per code")

    def intervals(self) -> None:
        return None

    def categories(self) -> tuple[frozenset, ...]:
        return tuple(frozenset(ms) for _, ms in self.groups)


def coarse_lookup(fine: Codec, coarse: BinsCodec) -> np.ndarray:
    """Coarse code of every fine code, by binning the fine bins' numbers."""
    codes = coarse.encode(fine.numbers())
    if (codes < 0).any():
        raise ValueError("coarse binning does not cover every fine bin's number")
    return codes


def make_bins(
    edges: Sequence[float],
    *,
    integer: bool,
    open_below: bool = True,
    open_above: bool = True,
    labels: Sequence[str] | None = None,
    clip: Sequence[float] | None = None,
) -> BinsCodec:
    """Build a BinsCodec from spec-style arguments."""
    return BinsCodec(
        tuple(edges),
        integer=integer,
        open_below=open_below,
        open_above=open_above,
        labels=tuple(labels or ()),
        clip=tuple(clip) if clip is not None else None,  # type: ignore[arg-type]
    )
