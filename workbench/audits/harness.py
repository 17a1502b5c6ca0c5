"""Audit any mechanism of the workbench through the noise seam: capture what it noises, replay it.

Every DP release of the workbench is a deterministic function f(D) handed to one of the three
noise primitives of :class:`~workbench.privacy.PrivacyContext` with a sensitivity Δ and an ε
(the criteria's Laplace releases, the regression statistics vector, PrivBayes' and AIM's noisy
max over scores). So the output distribution of a release on D is fully fixed by the call the
context makes: (primitive, f(D), Δ, ε). The audit therefore

1. runs the mechanism through its public API on D and on a worst-case neighbour D′ in a
   SIMULATION context whose noise source is a :class:`Capture`, which records that call and
   answers without noise (twice, with different seeds, to check that f is deterministic);
2. checks that Δ and ε are the same on D and D′ (a Δ read from the data would show here) and
   equal to the documented Δ;
3. draws many outputs of the primitive at those arguments from a :class:`SeededNoise`
   (public, reproducible; its agreement with OpenDP is tested separately), once at the
   documented scale and once at half of it (:class:`ScaledNoise`, i.e. Δ/2);
4. hands the two samples to :func:`workbench.privacy.audit.audit_events` with events fixed in
   advance from f(D), f(D′) and Δ/ε (joint tails beyond both values in every coordinate that
   moves, or each index of a noisy max), so the Clopper–Pearson bound keeps its confidence.

A mechanism passes when the bound at Δ stays ≤ ε and the Δ/2 run is flagged (bound > ε): the
neighbours really move f by about Δ and the audit has the power to see a calibration bug.
Post-processing after the primitive (clipping, thresholds, solving the normal equations) cannot
increase the privacy loss, so it is not replayed.

(ε, δ) mechanisms: OpenDP's thresholded partition selection (``PrivacyContext.partition_select``,
the pilot's label discovery) is captured as a ``laplace_threshold`` call on the label → count map
with its δ and threshold τ; its Δ is the recorded scale × ε (the L1 distance it was calibrated
for). Both sides are aligned on the union of their labels (a label absent from a map has count
0 and is never released), each draw is the vector of released noisy counts with τ − 1 standing
for "not released", and the audit tests P[M(D) ∈ E] ≤ e^ε P[M(D′) ∈ E] + δ on the joint tails
and on each moved label's "released" event. The Δ/2 run halves b and keeps τ.

For an adaptive mechanism the capture answers earlier discrete-Laplace calls with a fixed public
table (the total n spread evenly), so the audited step sees the same history on D and D′ — the
conditioning that adaptive composition uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from workbench.privacy import PrivacyContext
from workbench.privacy.audit import AllOf, AuditResult, Event, Threshold, audit_events
from workbench.privacy.lattice import SnapGrid
from workbench.privacy.noise import NoiseSource, SeededNoise

Primitive = Literal["laplace", "discrete_laplace", "noisy_max", "laplace_threshold"]
Distance = tuple[int, int, int]
CONFIDENCE = 0.999  # a correct mechanism is flagged with probability ≤ 1e-3
TRIALS = 20_000  # per dataset and scale: replayed draws are cheap


@dataclass(frozen=True)
class Call:
    """One call of a noise primitive as the context made it (values flattened)."""

    primitive: Primitive
    values: np.ndarray
    sensitivity: float
    epsilon: float
    #: (ε, δ) calls only (``laplace_threshold``): δ, τ, the (L0, L1, L∞) distance, the labels
    delta: float = 0.0
    threshold: int = 0
    distance: Distance | None = None
    labels: tuple[str, ...] = ()

    def same_as(self, other: Call) -> bool:
        """Identical arguments (the check that the mechanism is deterministic before noise)."""
        return self.arguments() == other.arguments() and np.array_equal(self.values,
                                                                          other.values)

    def arguments(self) -> tuple[object, ...]:
        """Everything but the values: must agree on D and D′."""
        return (self.primitive, self.sensitivity, self.epsilon, self.delta, self.threshold,
                self.distance)

    def on_labels(self, labels: tuple[str, ...]) -> Call:
        """A threshold call's counts on ``labels`` (0 for a label its map does not hold)."""
        have = dict(zip(self.labels, self.values.tolist(), strict=True))
        values = np.array([have.get(k, 0.0) for k in labels], dtype=np.float64)
        return Call(self.primitive, values, self.sensitivity, self.epsilon, self.delta,
                    self.threshold, self.distance, labels)


class Capture:
    """A noise source that records every call and answers without noise (audits only)."""

    name = "capture"

    def __init__(self) -> None:
        """Start with no calls."""
        self.calls: list[Call] = []
        #: (values, scale, γ, grid) of each generalized Cauchy call
        self.cauchy_calls: list[tuple[np.ndarray, float, float, SnapGrid]] = []

    def _keep(self, primitive: Primitive, values: np.ndarray, delta: float, eps: float) -> None:
        """Record one call with a copy of its values."""
        flat = np.array(values, dtype=np.float64).ravel()
        self.calls.append(Call(primitive, flat, float(delta), float(eps)))

    def laplace_vector(self, values: np.ndarray, sensitivity: float, epsilon: float
                       ) -> np.ndarray:
        """Record; answer with the values themselves."""
        self._keep("laplace", values, sensitivity, epsilon)
        return np.asarray(values, dtype=np.float64).copy()

    def discrete_laplace_vector(self, values: np.ndarray, sensitivity: int, epsilon: float
                                ) -> np.ndarray:
        """Record; answer with the table's total spread evenly (a fixed public history)."""
        self._keep("discrete_laplace", values, sensitivity, epsilon)
        arr = np.asarray(values, dtype=np.int64)
        q, r = divmod(int(arr.sum()), max(arr.size, 1))
        out = np.full(arr.size, q, dtype=np.int64)
        out[:r] += 1
        return out.reshape(arr.shape)

    def noisy_max_index(self, scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
        """Record; answer with the plain argmax."""
        self._keep("noisy_max", scores, sensitivity, epsilon)
        return int(np.argmax(np.asarray(scores, dtype=np.float64)))

    def laplace_threshold(self, counts: dict[str, int], scale: float, threshold: int,
                          distance: Distance, epsilon: float, delta: float) -> dict[str, int]:
        """Record the map (sorted labels) with Δ = scale·ε, the Δ its noise really has; answer
        with the labels at or above τ, without noise."""
        labels = tuple(sorted(counts))
        values = np.array([counts[k] for k in labels], dtype=np.float64)
        self.calls.append(Call("laplace_threshold", values, float(scale) * float(epsilon),
                               float(epsilon), float(delta), int(threshold),
                               tuple(int(d) for d in distance), labels))  # type: ignore[arg-type]
        return {k: int(v) for k, v in counts.items() if v >= threshold}

    def generalized_cauchy_vector(self, values: np.ndarray, scale: float, gamma: float,
                                  grid: SnapGrid) -> np.ndarray:
        """Record (values, the data-dependent scale S/α, γ, the public grid); answer with the
        values."""
        flat = np.array(values, dtype=np.float64).ravel()
        self.cauchy_calls.append((flat, float(scale), float(gamma), grid))
        return np.asarray(values, dtype=np.float64).copy()


class ScaledNoise:
    """Another source at ``factor`` times its noise scale (0.5: the Δ/2 calibration bug)."""

    def __init__(self, inner: NoiseSource, factor: float) -> None:
        """``factor`` > 0 multiplies every scale (Δ/ε, 2Δ/ε) by running at ε/factor."""
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError("factor must be a finite number > 0")
        self.inner, self.factor = inner, float(factor)
        self.name = f"{inner.name}×{factor:g}"

    def laplace_vector(self, values: np.ndarray, sensitivity: float, epsilon: float
                       ) -> np.ndarray:
        """Laplace at scale factor·Δ/ε."""
        return self.inner.laplace_vector(values, sensitivity, epsilon / self.factor)

    def discrete_laplace_vector(self, values: np.ndarray, sensitivity: int, epsilon: float
                                ) -> np.ndarray:
        """Discrete Laplace at scale factor·Δ/ε."""
        return self.inner.discrete_laplace_vector(values, sensitivity, epsilon / self.factor)

    def noisy_max_index(self, scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
        """Noisy max at scale factor·2Δ/ε."""
        return self.inner.noisy_max_index(scores, sensitivity, epsilon / self.factor)

    def laplace_threshold(self, counts: dict[str, int], scale: float, threshold: int,
                          distance: Distance, epsilon: float, delta: float) -> dict[str, int]:
        """Thresholded selection at scale factor·b, the same τ."""
        return self.inner.laplace_threshold(  # type: ignore[attr-defined]
            counts, scale * self.factor, threshold, distance, epsilon / self.factor, delta)

    def noisy_max_indices(self, scores: np.ndarray, sensitivity: float, epsilon: float,
                          size: int) -> np.ndarray:
        """Many noisy-max draws at scale factor·2Δ/ε (needs a batch-capable inner source)."""
        return draw_noisy_max(self.inner, scores, sensitivity, epsilon / self.factor, size)

    def generalized_cauchy_vector(self, values: np.ndarray, scale: float, gamma: float,
                                  grid: SnapGrid) -> np.ndarray:
        """Generalized Cauchy at factor·scale (same grid)."""
        return self.inner.generalized_cauchy_vector(values, scale * self.factor, gamma, grid)


def draw_noisy_max(source: NoiseSource, scores: np.ndarray, sensitivity: float,
                   epsilon: float, size: int) -> np.ndarray:
    """``size`` noisy-max draws: batched when the source can, else one call per draw."""
    batch = getattr(source, "noisy_max_indices", None)
    if batch is not None:
        return np.asarray(batch(scores, sensitivity, epsilon, size), dtype=np.int64)
    return np.array([source.noisy_max_index(scores, sensitivity, epsilon) for _ in range(size)])


def capture(run: Callable[[PrivacyContext], object], *, seed: int = 0) -> list[Call]:
    """Run ``run(ctx)`` in a SIMULATION context whose noise source is a :class:`Capture`."""
    source = Capture()
    run(PrivacyContext.simulation(seed, noise=source))
    return source.calls


def draw(call: Call, source: NoiseSource, trials: int) -> np.ndarray:
    """``trials`` outputs of the primitive at the call's arguments: (trials, k) or (trials,)."""
    if call.primitive == "noisy_max":
        return draw_noisy_max(source, call.values, call.sensitivity, call.epsilon, trials)
    if call.primitive == "laplace_threshold":
        return draw_threshold(call, source, trials)
    tiled = np.tile(call.values, (trials, 1))
    if call.primitive == "laplace":
        return source.laplace_vector(tiled, call.sensitivity, call.epsilon)
    return source.discrete_laplace_vector(
        tiled.astype(np.int64), int(call.sensitivity), call.epsilon
    )


def draw_threshold(call: Call, source: NoiseSource, trials: int) -> np.ndarray:
    """(trials, labels): each label's released noisy count, τ − 1 where it was not released."""
    select = source.laplace_threshold  # type: ignore[attr-defined]
    counts = {k: int(v) for k, v in zip(call.labels, call.values, strict=True) if v > 0}
    scale = call.sensitivity / call.epsilon
    out = np.full((trials, len(call.labels)), call.threshold - 1, dtype=np.float64)
    column = {k: j for j, k in enumerate(call.labels)}
    for i in range(trials):
        got = select(counts, scale, call.threshold, call.distance, call.epsilon, call.delta)
        for k, v in got.items():
            out[i, column[k]] = v
    return out


def neighbour_events(d: Call, d_prime: Call, steps: int = 4) -> list[Event]:
    """Events fixed before any draw: every index of a noisy max; for Laplace-type outputs the
    joint tails beyond both values, at 0, ½, 1, 1½ noise scales, toward D′ and toward D (and, for
    a thresholded selection, each moved label's "released" event)."""
    if d.primitive == "noisy_max":
        return [Threshold(float(i), "==") for i in range(d.values.size)]
    moved = np.flatnonzero(d_prime.values != d.values)
    if moved.size == 0:
        raise ValueError("the neighbours release the same value: nothing to audit")
    b = d.sensitivity / d.epsilon
    lo = np.minimum(d.values, d_prime.values)
    hi = np.maximum(d.values, d_prime.values)
    up = d_prime.values > d.values
    integer = d.primitive in ("discrete_laplace", "laplace_threshold")
    events: list[Event] = []
    if d.primitive == "laplace_threshold":
        events += [Threshold(float(d.threshold), ">=", int(j)) for j in moved]
    for s in range(steps):
        off = s * b / 2.0
        toward_dp, toward_d = [], []
        for j in moved:
            above = math.ceil(hi[j] + off) if integer else hi[j] + off
            below = math.floor(lo[j] - off) if integer else lo[j] - off
            ge, le = Threshold(above, ">=", int(j)), Threshold(below, "<=", int(j))
            toward_dp.append(ge if up[j] else le)
            toward_d.append(le if up[j] else ge)
        events += [AllOf(tuple(toward_dp)), AllOf(tuple(toward_d))]
    return events


@dataclass(frozen=True)
class Scenario:
    """A mechanism's calls on D and on its worst-case neighbour D′, and its documented Δ."""

    name: str
    mechanism: str
    neighbours: str
    documented_sensitivity: float
    d: Call
    d_prime: Call

    def __post_init__(self) -> None:
        """Δ and ε may not depend on the data, and Δ must be the documented one."""
        a, b = self.d, self.d_prime
        if (a.arguments(), a.values.shape, a.labels) != (b.arguments(), b.values.shape, b.labels):
            raise ValueError(f"{self.name}: D and D′ were noised with different Δ, ε, δ, τ or "
                             "shape")
        if not math.isclose(a.sensitivity, self.documented_sensitivity, rel_tol=1e-9):
            raise ValueError(
                f"{self.name}: the mechanism used Δ = {a.sensitivity:g}, the documented Δ is "
                f"{self.documented_sensitivity:g}"
            )

    @property
    def shift(self) -> float:
        """How far the neighbours move f, in the metric Δ bounds (L1, or L∞ for a noisy max)."""
        move = self.d_prime.values - self.d.values
        if self.d.primitive == "noisy_max":
            return float(move.max() - move.min()) / 2.0  # range distance / 2 ≤ L∞ distance
        return float(np.abs(move).sum())

    @property
    def tightness(self) -> float:
        """shift / Δ: 1 when the neighbours attain the sensitivity."""
        return self.shift / self.d.sensitivity


def scenario(name: str, mechanism: str, neighbours: str, documented: float,
             run: Callable[[PrivacyContext, int], object], *,
             primitive: Primitive | None = None, repeat: tuple[int, ...] = (0, 1)) -> Scenario:
    """Capture ``run(ctx, which)`` for which = 0 (D) and 1 (D′) and build the scenario from the
    first call of ``primitive`` (default: the last call made). The datasets in ``repeat`` are
    run a second time with another context seed: the call must not change (f deterministic)."""

    def audited(which: int, seed: int) -> Call:
        calls = capture(lambda ctx: run(ctx, which), seed=seed)
        if primitive is None:
            return calls[-1]
        return next(c for c in calls if c.primitive == primitive)

    calls = []
    for which in (0, 1):
        calls.append(audited(which, 0))
        if which in repeat and not calls[-1].same_as(audited(which, 1)):
            raise ValueError(f"{name}: the release is not deterministic before noise; "
                             "audit it call by call instead")
    if calls[0].primitive == calls[1].primitive == "laplace_threshold":
        union = tuple(sorted(set(calls[0].labels) | set(calls[1].labels)))
        calls = [c.on_labels(union) for c in calls]
    return Scenario(name, mechanism, neighbours, documented, calls[0], calls[1])


@dataclass(frozen=True)
class AuditRow:
    """One line of the audit table: a scenario audited at Δ and at Δ/2."""

    scenario: Scenario
    at_delta: AuditResult
    at_half: AuditResult

    @property
    def ok(self) -> bool:
        """Consistent with ε at the documented Δ, and the Δ/2 bug is caught."""
        return not self.at_delta.violates and self.at_half.violates


def seeded_source(seed: int) -> NoiseSource:
    """The audits' default noise: :class:`SeededNoise` from an explicit seed."""
    return SeededNoise(np.random.default_rng([seed, 0x617564]))  # "aud": its own stream


def audit_scenario(scn: Scenario, *, trials: int = TRIALS, seed: int = 0,
                   confidence: float = CONFIDENCE,
                   noise: Callable[[int], NoiseSource] = seeded_source) -> AuditRow:
    """Replay ``scn`` at the documented scale and at half of it; ``noise(seed)`` makes the
    source (seeded by default; ``lambda _: OpenDPNoise()`` audits with OpenDP's samplers)."""
    events = neighbour_events(scn.d, scn.d_prime)
    results = []
    for k, factor in enumerate((1.0, 0.5)):
        source = ScaledNoise(noise(2 * seed + k), factor)
        samples = [draw(call, source, trials) for call in (scn.d, scn.d_prime)]
        results.append(audit_events(samples[0], samples[1], events, scn.d.epsilon,
                                    confidence=confidence, delta=scn.d.delta))
    return AuditRow(scn, results[0], results[1])


def primitive_scenarios() -> list[Scenario]:
    """The three primitives on their textbook worst cases (count 12 vs 13; scores (0, 0) vs
    (1, −1), a tie split by Δ each way), Δ = 1, ε = 1."""
    def pair(primitive: Primitive, d: list[float], d_prime: list[float]) -> tuple[Call, Call]:
        return tuple(Call(primitive, np.array(v), 1.0, 1.0) for v in (d, d_prime))  # type: ignore[return-value]

    cases = [
        ("laplace", "Laplace(Δ/ε)", "a count, one record added to the predicate", [12.0], [13.0]),
        ("discrete_laplace", "discrete Laplace(Δ/ε)", "a count, one record added to the "
         "predicate", [12.0], [13.0]),
        ("noisy_max", "noisy max (permute-and-flip, 2Δ/ε)", "scores (0, 0) → (1, −1)",
         [0.0, 0.0], [1.0, -1.0]),
    ]
    return [Scenario(f"{p} (primitive)", m, how, 1.0, *pair(p, d, dp))  # type: ignore[arg-type]
            for p, m, how, d, dp in cases]


def joint_scenario(name: str, mechanism: str, neighbours: str, documented_each: float,
                   calls: tuple[list[Call], list[Call]]) -> Scenario:
    """Several non-adaptive calls of one Laplace-type primitive at the same scale Δ/ε (a
    mechanism's tables in sequence), audited as the one release they compose to.

    Why: k calls of discrete Laplace at scale b = Δᵢ/εᵢ on vectors vᵢ are, in law, one call on
    the concatenation (v₁, …, v_k) with L1 sensitivity ΣΔᵢ and ε = Σεᵢ (the same b per cell):
    auditing that call audits the sequential composition the mechanism's ε promises. Each
    call's Δ must be ``documented_each`` and every call the same scale (else ValueError).
    """
    pair = []
    for side in calls:
        if not side or any(c.primitive != side[0].primitive
                           or c.primitive in ("noisy_max", "laplace_threshold") for c in side):
            raise ValueError(f"{name}: a joint audit needs Laplace-type calls of one primitive")
        for c in side:
            if not math.isclose(c.sensitivity, documented_each, rel_tol=1e-9):
                raise ValueError(f"{name}: a call used Δ = {c.sensitivity:g}, the documented "
                                 f"Δ is {documented_each:g}")
        scales = [c.sensitivity / c.epsilon for c in side]
        if not all(math.isclose(s, scales[0], rel_tol=1e-9) for s in scales):
            raise ValueError(f"{name}: the calls differ in scale Δ/ε; audit them one by one")
        pair.append(Call(side[0].primitive, np.concatenate([c.values for c in side]),
                         sum(c.sensitivity for c in side), sum(c.epsilon for c in side)))
    return Scenario(name, mechanism, neighbours, pair[0].sensitivity, pair[0], pair[1])
