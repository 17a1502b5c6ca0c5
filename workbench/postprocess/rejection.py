"""Constraint sampling (Hod & Canetti §3.3, §4.8.2): draw from the fitted model until n rows pass.

Rejection sampling is post-processing of the DP model: it reads no real record, so it costs
no budget. Taking the first n valid rows of an i.i.d. stream is exactly the model's
distribution conditioned on the constraints. Rows are drawn in rounds sized from the measured
acceptance rate, and the number of rounds is bounded by the spec, so a model that almost
never satisfies the constraints fails with a clear message instead of looping forever.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from workbench.constraints import BinSemantics, Predicate
from workbench.constraints.predicate import PARTIAL_POLICIES

if TYPE_CHECKING:
    from workbench.specification.model import Rule, Spec
    from workbench.transform import Codec, TableCodec

#: Headroom on the estimated number of draws still needed, so one round usually suffices.
OVERSAMPLE = 1.1
#: Default cap on the rows drawn in one round, in multiples of n (bounds memory).
BATCH_FACTOR = 10
MIN_BATCH_CAP = 100_000


class _Sampler(Protocol):
    """Only the sampling half of the generator protocol: rejection never refits the model."""

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray: ...


class SamplingError(RuntimeError):
    """Too few valid rows within the allowed rounds; carries the measured acceptance rate."""

    def __init__(
        self, *, wanted: int, accepted: int, drawn: int, rounds: int, rejected_by: dict[str, int]
    ) -> None:
        self.wanted, self.accepted, self.drawn, self.rounds = wanted, accepted, drawn, rounds
        self.rejected_by = dict(rejected_by)
        self.acceptance_rate = accepted / drawn if drawn else 0.0
        top = max(self.rejected_by.items(), key=lambda kv: kv[1], default=None)
        worst = (
            f"; most rejections by rule {top[0]!r} ({top[1] / drawn:.2%} of draws)"
            if top is not None and top[1] > 0 and drawn
            else ""
        )
        super().__init__(
            f"constraint sampling stopped after {rounds} round(s) with {accepted} of {wanted} "
            f"valid rows: acceptance rate {self.acceptance_rate:.4%} over {drawn} draws{worst}. "
            "The generator rarely produces rows that satisfy the synthetic constraints; "
            "raise constraints.max_sampling_rounds or revisit the configuration."
        )


def codec_semantics(codec: Codec) -> BinSemantics:
    """Raw values each code of one codec stands for, as the constraint evaluator needs them."""
    categories = codec.categories()
    if categories is not None:
        return BinSemantics.categorical(categories)
    intervals = codec.intervals()
    if intervals is None:
        raise ValueError("codec has neither intervals nor categories")
    low, high = (np.asarray(a, dtype=np.float64) for a in intervals)
    if hasattr(codec, "integer"):
        integer = bool(codec.integer)
    else:  # numeric identity codec: integer when every declared value is a whole number
        finite = np.concatenate([low[np.isfinite(low)], high[np.isfinite(high)]])
        integer = bool(np.all(finite == np.round(finite)))
    return BinSemantics.numeric(low, high, integer=integer)


def semantics_for(table: TableCodec) -> dict[str, BinSemantics]:
    """BinSemantics of every column, keyed in the code matrix's column order."""
    return {name: codec_semantics(codec) for name, codec in table.codecs}


def _predicates(constraints: Sequence[Rule | Predicate]) -> list[tuple[str, Predicate]]:
    """(name, predicate) pairs from spec rules or bare predicates."""
    out = []
    for c in constraints:
        pred = getattr(c, "predicate", c)
        if not isinstance(pred, Predicate):
            raise ValueError("constraints must be spec rules or parsed predicates")
        out.append((str(getattr(c, "name", pred.text)), pred))
    return out


def reject_counts(
    codes: np.ndarray,
    constraints: Sequence[Rule | Predicate],
    semantics: Mapping[str, BinSemantics],
    partial: str = "keep",
) -> tuple[np.ndarray, dict[str, int]]:
    """Rows some rule rejects (truth 2, or ≥ 1 under partial='reject'), and per-rule tallies."""
    names = list(semantics)
    arr = np.asarray(codes)
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise ValueError(f"codes must be an (n, {len(names)}) matrix with columns {names}")
    by_name = {name: arr[:, j] for j, name in enumerate(names)}
    reject = np.zeros(arr.shape[0], dtype=bool)
    tallies: dict[str, int] = {}
    for name, pred in _predicates(constraints):
        mask = pred.reject_mask_bins(by_name, semantics, partial)
        tallies[name] = tallies.get(name, 0) + int(mask.sum())
        reject |= mask
    return reject, tallies


@dataclass
class _Tally:
    """Running totals of one sampling run."""

    drawn: int = 0
    valid: int = 0
    rounds: int = 0

    def next_draw(self, needed: int, cap: int) -> int:
        """Rows to draw next: the first round asks for exactly what is needed, later ones scale."""
        if self.rounds == 0:
            return min(needed, cap)
        rate = (self.valid + 1) / (self.drawn + 2)  # smoothed: never 0, so draws keep growing
        return min(cap, max(needed, math.ceil(needed / rate * OVERSAMPLE)))


def _compact(batch: np.ndarray, reject: np.ndarray) -> tuple[np.ndarray, int]:
    """(matrix, m): the rows no rule rejects are its first m rows, in order. They are moved up
    in ``batch`` one column at a time (a generator's sample is a fresh array the caller owns),
    not copied into a second n × d matrix (192 MB at 4,000,000 rows × 6 int64, issue 38)."""
    if not reject.any():
        return batch, len(batch)
    keep = np.flatnonzero(~reject)
    if not (batch.flags.owndata and batch.flags.writeable):
        return batch[keep], keep.size
    for j in range(batch.shape[1]):  # keep[i] >= i: each column's gather is read before written
        batch[: keep.size, j] = batch[keep, j]
    return batch, keep.size


@dataclass
class _Rows:
    """The kept rows of every round in one buffer of n rows: the first round's own matrix when
    it has room (rows are never concatenated), else a new one."""

    rows: np.ndarray
    filled: int

    @classmethod
    def first(cls, rows: np.ndarray, kept: int, n: int) -> _Rows:
        """Start from the first round: its first ``kept`` rows."""
        if rows.shape[0] >= n and rows.flags.owndata and rows.flags.writeable:
            return cls(rows, kept)
        buffer = np.empty((max(n, kept), rows.shape[1]), dtype=rows.dtype)
        buffer[:kept] = rows[:kept]
        return cls(buffer, kept)

    def add(self, good: np.ndarray) -> None:
        """Append a later round's kept rows (those beyond the buffer are not needed)."""
        if good.dtype != self.rows.dtype:  # as np.concatenate would: the common type
            self.rows = self.rows.astype(np.result_type(self.rows, good))
        take = min(len(good), self.rows.shape[0] - self.filled)
        self.rows[self.filled: self.filled + take] = good[:take]
        self.filled += take


def sample_valid(
    generator: _Sampler,
    n: int,
    rng: np.random.Generator,
    constraints: Sequence[Rule | Predicate],
    semantics: Mapping[str, BinSemantics],
    max_rounds: int,
    *,
    partial: str = "keep",
    max_batch: int | None = None,
) -> np.ndarray:
    """Exactly ``n`` generated rows that no constraint rejects, or SamplingError.

    ``semantics`` must list every column of the generator's code matrix, in its order (as
    :func:`semantics_for` builds it). Each round draws the estimated number of rows still
    needed, divided by the acceptance rate measured so far, times a small headroom, capped at
    ``max_batch`` (default max(10·n, 100 000)); ``max_rounds`` bounds the rounds.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError("n must be a non-negative integer")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int | np.integer):
        raise ValueError("max_rounds must be a positive integer")
    if max_rounds < 1:
        raise ValueError("max_rounds must be a positive integer")
    if partial not in PARTIAL_POLICIES:
        raise ValueError(f"partial must be one of {PARTIAL_POLICIES}")
    cap = int(max_batch) if max_batch is not None else max(BATCH_FACTOR * int(n), MIN_BATCH_CAP)
    if cap < 1:
        raise ValueError("max_batch must be positive")
    d = len(semantics)
    out: _Rows | None = None
    tally = _Tally()
    rejected_by: dict[str, int] = {}
    while tally.valid < n and tally.rounds < max_rounds:
        draw = tally.next_draw(int(n) - tally.valid, cap)
        batch = np.asarray(generator.sample(draw, rng))
        if batch.shape != (draw, d):
            raise ValueError(f"generator returned a matrix of shape {batch.shape}, not {(draw, d)}")
        reject, tallies = reject_counts(batch, constraints, semantics, partial)
        for name, count in tallies.items():
            rejected_by[name] = rejected_by.get(name, 0) + count
        rows, kept = _compact(batch, reject)
        del batch, reject  # memory: one batch-sized matrix at a time (issue 38, registry scale)
        if out is None:
            out = _Rows.first(rows, kept, int(n))
        else:
            out.add(rows[:kept])
        tally.drawn += draw
        tally.valid += kept
        tally.rounds += 1
        del rows
    if tally.valid < n:
        raise SamplingError(
            wanted=int(n),
            accepted=tally.valid,
            drawn=tally.drawn,
            rounds=tally.rounds,
            rejected_by=rejected_by,
        )
    if out is None:
        return np.zeros((0, d), dtype=np.int64)
    return out.rows[:n]


def sample_valid_for(
    spec: Spec,
    table: TableCodec,
    generator: _Sampler,
    n: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``sample_valid`` with the spec's synthetic rules, partial-bin policy and round bound
    over the bins of ``table`` (the configuration's codec, which the caller's Trial holds)."""
    return sample_valid(
        generator,
        n,
        rng,
        spec.constraints.synthetic,
        semantics_for(table),
        spec.constraints.max_sampling_rounds,
        partial=spec.constraints.partial_bins,
    )
