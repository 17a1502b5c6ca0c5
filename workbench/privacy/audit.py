"""Empirical privacy-loss audit: a statistical lower bound on ε from outputs on neighbours.

A mechanism M is ε-DP if for neighbouring datasets D, D' and every event E of its output
``P[M(D) ∈ E] ≤ e^ε · P[M(D') ∈ E]`` and vice versa. An audit cannot prove this, but it can
*refute* it: run M many times on a fixed pair D, D' (public or synthetic, never the confidential
data), count how often each chosen event E occurs, and bound the privacy loss from below.

Method (the standard black-box audit, e.g. Ding et al., CCS 2018; Jagielski et al., 2020):

1. For each of the m events E_j, count k_j of the n trials on D and k'_j of the n' trials on D'
   in which E_j occurred.
2. Put an exact Clopper–Pearson interval around P_D(E_j) and around P_D'(E_j) (quantiles of
   ``scipy.stats.beta``), each at miscoverage α/(2m), where α = 1 − ``confidence``.
3. In both directions, the smallest log-ratio consistent with the intervals is a lower
   confidence bound on the privacy loss of E_j::

       L_j  = ln(lower P_D(E_j))  − ln(upper P_D'(E_j))
       L'_j = ln(lower P_D'(E_j)) − ln(upper P_D(E_j))

4. ``epsilon_lower_bound`` = max(0, max_j max(L_j, L'_j)); the audit *flags a violation* when it
   exceeds the claimed ε.

For an (ε, δ) mechanism (``delta`` > 0) the definition is P[M(D) ∈ E] ≤ e^ε P[M(D') ∈ E] + δ,
so step 3 takes ln(lower P_D(E_j) − δ) − ln(upper P_D'(E_j)) (no evidence when lower − δ ≤ 0):
under the same simultaneous coverage each such bound is ≤ ε for a correct mechanism.

Bonferroni over the 2m intervals makes all of them hold simultaneously with probability
≥ ``confidence``, and then every L_j, L'_j is ≤ the true log-ratio ≤ ε. So a correct ε-DP
mechanism is flagged with probability ≤ 1 − ``confidence`` whatever the events, while a
mechanism that is not ε-DP is flagged only if some chosen event exposes it and there are
enough trials: choose events where the two output distributions differ most (tails beyond
the point where the neighbours' true values differ, joint tails over the cells that differ).
Events must be fixed before the trials are looked at (chosen on separate exploration samples,
if at all), else they overfit the trials' noise and void the guarantee.

The point estimate (the plug-in max |ln p̂_D / p̂_D'| over events where both counts are > 0)
is reported for information only: it is biased upwards and carries no guarantee.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from workbench.privacy import _checks

Event = Callable[[np.ndarray], np.ndarray]
Op = Literal[">=", "<=", "=="]
_OPS: tuple[str, ...] = (">=", "<=", "==")


def _label(event: Event) -> str:
    """A readable name for an event: its ``label`` if it has one, else its repr."""
    return str(getattr(event, "label", None) or getattr(event, "__name__", None) or event)


def _column_text(column: int | tuple[int, ...] | None) -> str:
    """'x', 'x[3]' or 'x[0, 1]' for labels."""
    if column is None:
        return "x"
    if isinstance(column, tuple):
        return f"x[{', '.join(str(c) for c in column)}]"
    return f"x[{column}]"


@dataclass(frozen=True)
class Threshold:
    """The event {output (or one entry of it) op threshold}, op one of >=, <=, ==.

    ``column`` selects one entry of each trial's output: None for scalar outputs (1-D
    samples), an int for vector outputs, a tuple for table outputs such as a marginal.

    >>> Threshold(1.0, ">=")(np.array([0.5, 1.0, 2.0])).tolist()
    [False, True, True]
    """

    threshold: float
    op: Op = ">="
    column: int | tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        """Reject an unknown comparison or a non-finite threshold when the event is built."""
        if self.op not in _OPS:
            raise ValueError(f"op must be one of {_OPS}")
        if not math.isfinite(float(self.threshold)):
            raise ValueError("threshold must be finite")

    @property
    def label(self) -> str:
        """E.g. 'x[3] >= 5'; thresholds are chosen by the auditor, not read from data."""
        return f"{_column_text(self.column)} {self.op} {self.threshold:g}"

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        """One boolean per trial (the first axis of ``samples``)."""
        arr = np.asarray(samples)
        if self.column is None:
            if arr.ndim != 1:
                raise ValueError("a Threshold without column needs 1-D samples (one per trial)")
            x = arr
        else:
            index = self.column if isinstance(self.column, tuple) else (self.column,)
            if arr.ndim != 1 + len(index):
                raise ValueError("column must index exactly one entry of each trial's output")
            x = arr[(slice(None), *index)]
        if self.op == ">=":
            return x >= self.threshold
        if self.op == "<=":
            return x <= self.threshold
        return x == self.threshold


@dataclass(frozen=True)
class AllOf:
    """The intersection of events, e.g. a joint tail over the two cells a replacement moves."""

    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        """An empty intersection (the sure event) cannot tell neighbours apart."""
        if not self.events or not all(callable(e) for e in self.events):
            raise ValueError("events must be a non-empty tuple of callables")

    @property
    def label(self) -> str:
        """E.g. 'x[0] >= 3 & x[1] <= 2'."""
        return " & ".join(_label(e) for e in self.events)

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        """True in the trials where every event holds."""
        masks = [_mask(e, samples, len(samples)) for e in self.events]
        return np.logical_and.reduce(masks)


def threshold_events(
    thresholds: Iterable[float],
    *,
    column: int | tuple[int, ...] | None = None,
    ops: Sequence[Op] = (">=", "<="),
) -> list[Threshold]:
    """Tail events {x ≥ t} and {x ≤ t} for each t: where Laplace-type mechanisms leak most.

    For integer outputs pass the integers, e.g. ``range(c - 3, c + 5)``; add ``"=="`` for
    point events.

    >>> [e.label for e in threshold_events([0, 1], ops=(">=",))]
    ['x >= 0', 'x >= 1']
    """
    return [Threshold(float(t), op, column) for t in thresholds for op in ops]


def clopper_pearson(
    successes: np.ndarray, trials: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided (1 − α) binomial interval; conservative, so Bonferroni stays valid.

    >>> lo, hi = clopper_pearson(np.array([0, 5]), 10, 0.05)
    >>> float(lo[0]), round(float(hi[0]), 4), round(float(lo[1]), 4), round(float(hi[1]), 4)
    (0.0, 0.3085, 0.1871, 0.8129)
    """
    k = np.asarray(successes, dtype=np.float64)
    n = float(trials)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = stats.beta.ppf(alpha / 2.0, k, n - k + 1.0)
        hi = stats.beta.ppf(1.0 - alpha / 2.0, k + 1.0, n - k)
    lo = np.where(k <= 0, 0.0, lo)
    hi = np.where(k >= n, 1.0, hi)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def _log(x: np.ndarray) -> np.ndarray:
    """ln x with ln 0 = −∞ and no warning (a zero lower bound means 'no evidence')."""
    with np.errstate(divide="ignore"):
        return np.log(x)


def _samples(name: str, samples: object) -> np.ndarray:
    """Samples as an array with one trial per row; at least one trial."""
    arr = np.asarray(samples)
    if arr.ndim < 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be an array with one mechanism output per trial")
    return arr


def _mask(event: Event, samples: np.ndarray, n: int) -> np.ndarray:
    """Apply ``event`` and check that it returned one boolean per trial."""
    mask = np.asarray(event(samples))
    if mask.dtype != np.bool_ or mask.shape != (n,):
        raise ValueError(
            f"event {_label(event)!r} must return a boolean array with one entry per trial"
        )
    return mask


def _counts(events: Sequence[Event], samples: np.ndarray) -> np.ndarray:
    """How many trials fall in each event."""
    n = samples.shape[0]
    return np.array([int(_mask(e, samples, n).sum()) for e in events], dtype=np.int64)


def _check_events(events: object) -> tuple[Event, ...]:
    """A non-empty sequence of callables."""
    if callable(events):
        events = (events,)
    try:
        out = tuple(events)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError("events must be a non-empty sequence of callables") from None
    if not out or not all(callable(e) for e in out):
        raise ValueError("events must be a non-empty sequence of callables")
    return out


def _check_confidence(confidence: object) -> float:
    """Confidence in (0, 1)."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ValueError("confidence must be a number in (0, 1)")
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ValueError("confidence must be a number in (0, 1)")
    return c


@dataclass(frozen=True)
class AuditResult:
    """Per-event counts, intervals and bounds of one audit; the verdict is :attr:`violates`.

    Arrays have one row per event; the two columns of ``lower_bounds`` and
    ``point_estimates`` are the directions ln(P_D/P_D') and ln(P_D'/P_D).
    """

    epsilon: float
    confidence: float
    labels: tuple[str, ...]
    trials_d: int
    trials_d_prime: int
    counts_d: np.ndarray
    counts_d_prime: np.ndarray
    interval_d: np.ndarray
    interval_d_prime: np.ndarray
    lower_bounds: np.ndarray
    point_estimates: np.ndarray
    #: the δ of an (ε, δ) claim, subtracted from each lower probability (0: pure ε)
    delta: float = 0.0

    @property
    def epsilon_lower_bound(self) -> float:
        """max over events and directions of the lower bound (≥ 0: |ln ratio| is ≥ 0)."""
        return max(0.0, float(np.max(self.lower_bounds)))

    @property
    def point_estimate(self) -> float:
        """Plug-in max |ln p̂_D/p̂_D'| over events seen on both sides (0 if none); no guarantee."""
        finite = self.point_estimates[np.isfinite(self.point_estimates)]
        return max(0.0, float(finite.max())) if finite.size else 0.0

    @property
    def violates(self) -> bool:
        """True when the data refute ε-DP at the audit's confidence."""
        return self.epsilon_lower_bound > self.epsilon

    @property
    def worst_event(self) -> str:
        """The event (and direction) that attains :attr:`epsilon_lower_bound`."""
        j, direction = np.unravel_index(int(np.argmax(self.lower_bounds)), self.lower_bounds.shape)
        arrow = "D vs D'" if direction == 0 else "D' vs D"
        return f"{self.labels[j]} ({arrow})"

    def summary(self) -> str:
        """One line for test failures and reports (ε values and the event only)."""
        verdict = "VIOLATES" if self.violates else "consistent with"
        claim = f"(ε, δ) = ({self.epsilon:g}, {self.delta:g})" if self.delta else (
            f"ε = {self.epsilon:g}")
        return (
            f"{verdict} {claim}: lower bound {self.epsilon_lower_bound:.4f} at "
            f"{self.confidence:g} confidence (point estimate {self.point_estimate:.4f}; "
            f"worst event {self.worst_event}; {len(self.labels)} events, "
            f"{self.trials_d} + {self.trials_d_prime} trials)"
        )


def audit_counts(
    counts_d: np.ndarray,
    trials_d: int,
    counts_d_prime: np.ndarray,
    trials_d_prime: int,
    epsilon: float,
    *,
    confidence: float = 0.99,
    labels: Sequence[str] | None = None,
    delta: float = 0.0,
) -> AuditResult:
    """The audit from event counts alone, for callers that tally events as trials stream in;
    ``delta`` > 0 audits an (ε, δ) claim (module doc)."""
    eps = _checks.positive_finite("epsilon", epsilon)
    dlt = _checks.probability("delta", delta)
    conf = _check_confidence(confidence)
    k = np.asarray(counts_d, dtype=np.int64).ravel()
    k2 = np.asarray(counts_d_prime, dtype=np.int64).ravel()
    n, n2 = int(trials_d), int(trials_d_prime)
    if k.size == 0 or k.shape != k2.shape:
        raise ValueError("counts_d and counts_d_prime must be non-empty and of equal length")
    if n < 1 or n2 < 1 or k.min() < 0 or k2.min() < 0 or k.max() > n or k2.max() > n2:
        raise ValueError("counts must lie in [0, trials] and trials must be ≥ 1")
    names = tuple(labels) if labels is not None else tuple(f"E{j}" for j in range(k.size))
    if len(names) != k.size:
        raise ValueError("labels must name every event")
    alpha = (1.0 - conf) / (2.0 * k.size)  # Bonferroni over 2m two-sided intervals
    lo, hi = clopper_pearson(k, n, alpha)
    lo2, hi2 = clopper_pearson(k2, n2, alpha)
    lower = np.stack([_log(np.maximum(lo - dlt, 0.0)) - _log(hi2),
                      _log(np.maximum(lo2 - dlt, 0.0)) - _log(hi)], axis=1)
    p, p2 = k / n, k2 / n2
    seen = (k > 0) & (k2 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        plug = np.log(p) - np.log(p2)
    plug = np.where(seen, plug, np.nan)
    return AuditResult(
        eps,
        conf,
        names,
        n,
        n2,
        k,
        k2,
        np.stack([lo, hi], axis=1),
        np.stack([lo2, hi2], axis=1),
        lower,
        np.stack([plug, -plug], axis=1),
        dlt,
    )


def audit_events(
    samples_d: np.ndarray,
    samples_d_prime: np.ndarray,
    events: Sequence[Event],
    epsilon: float,
    *,
    confidence: float = 0.99,
    delta: float = 0.0,
) -> AuditResult:
    """Audit ε-DP, or (ε, δ)-DP when ``delta`` > 0, from mechanism outputs on D and D' (first
    axis = independent trials)."""
    s, s2 = _samples("samples_d", samples_d), _samples("samples_d_prime", samples_d_prime)
    if s.shape[1:] != s2.shape[1:]:
        raise ValueError("samples_d and samples_d_prime must hold outputs of the same shape")
    evs = _check_events(events)
    return audit_counts(
        _counts(evs, s),
        s.shape[0],
        _counts(evs, s2),
        s2.shape[0],
        epsilon,
        confidence=confidence,
        labels=[_label(e) for e in evs],
        delta=delta,
    )
