"""The one noise seam: a :class:`PrivacyContext` draws every noise sample from its noise source.

Two sources exist, and the context enforces who may use which:

* :class:`OpenDPNoise` — the three primitives of :mod:`workbench.privacy.mechanisms`, drawn by
  OpenDP from the OS CSPRNG. The only source a CONFIDENTIAL context accepts.
* :class:`SeededNoise` — the same three distributions at the same scales, drawn from a numpy
  ``Generator`` seeded explicitly, so public rehearsals (dry runs, tests, audits) can be
  reproduced draw for draw. Not differentially private against anyone who knows the seed;
  a SIMULATION context may take it, a confidential one refuses it.

What "the same distributions" means, checked against OpenDP 0.16 (and by a two-sample test
in ``tests/test_privacy.py``):

* Laplace(b), b = Δ/ε: OpenDP's float ``make_laplace`` samples discrete Laplace on a 2^k
  lattice with k ≈ −1074, which is continuous Laplace to float precision; here
  ``Generator.laplace(0, b)``.
* discrete Laplace(b): P(k) ∝ exp(−|k|/b); here G₁ − G₂ for i.i.d. geometric G with success
  probability 1 − exp(−1/b) (the difference of two such variables has exactly this law).
* noisy max at scale β = 2Δ/ε under ``max_divergence``: OpenDP runs permute-and-flip
  (``noisy_top_k/exponential``: visit the candidates in a uniformly random order and accept
  candidate i with probability exp(−(max − sᵢ)/β)), which equals the argmax of sᵢ + Exp(β)
  in law; here the same permute-and-flip, vectorised over draws.

A fourth primitive serves smooth-sensitivity releases (:mod:`workbench.privacy.smooth`):
``generalized_cauchy_vector`` releases value + scale·Z per entry, Z with density
∝ 1/(1 + |z|^γ), snapped to a public grid (:mod:`workbench.privacy.lattice`: clamped to a
public range, a uniform cell with probability 2^{-12}, else the inverse CDF of a 52-bit
uniform and a sign bit, rounded to the nearest grid point). OpenDP 0.16 has no such sampler,
so both sources run the same transform: :class:`OpenDPNoise` takes its bits from the OS
CSPRNG (``secrets``), :class:`SeededNoise` from its Generator. The raw float f + s·z is never
released: its lattice depends on the data (the lattice module derives the exact ε).

A fifth, outside the :class:`NoiseSource` protocol (only the pilot's label discovery asks for
it, through ``PrivacyContext.partition_select``): ``laplace_threshold``, OpenDP's thresholded
partition selection; :class:`SeededNoise` draws the same discrete Laplace per label and keeps
the labels whose noisy count reaches the threshold, as OpenDP does.
"""

from __future__ import annotations

import math
import secrets
from typing import Protocol, runtime_checkable

import numpy as np

from workbench.privacy import lattice, mechanisms
from workbench.privacy.lattice import SnapGrid


@runtime_checkable
class NoiseSource(Protocol):
    """The three primitives every DP measurement of the layer is built from."""

    name: str

    def laplace_vector(self, values: np.ndarray, sensitivity: float, epsilon: float
                       ) -> np.ndarray:
        """values + Laplace(Δ/ε) per entry (the vector has L1 sensitivity Δ)."""
        ...

    def discrete_laplace_vector(self, values: np.ndarray, sensitivity: int, epsilon: float
                                ) -> np.ndarray:
        """Integer values + discrete Laplace(Δ/ε) per entry."""
        ...

    def noisy_max_index(self, scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
        """ε-DP argmax of scores whose L∞ sensitivity is Δ (permute-and-flip, β = 2Δ/ε)."""
        ...

    def generalized_cauchy_vector(self, values: np.ndarray, scale: float, gamma: float,
                                  grid: SnapGrid) -> np.ndarray:
        """values + scale·Z per entry, Z ∝ 1/(1 + |z|^γ) (smooth sensitivity: scale = S/α),
        snapped to the public ``grid`` (:mod:`workbench.privacy.lattice`)."""
        ...


#: (L0, L1, L∞) of a label → count map (:func:`workbench.privacy.sensitivity.partition_distance`)
Distance = tuple[int, int, int]


class SamplerStream:
    """The randomness of one posterior draw (a Monte Carlo sampler whose output is the
    mechanism, see :mod:`workbench.generators.bayesian.sampler`): standard normal proposal
    increments and uniforms for the accept step, from a Generator the noise source seeded.

    A confidential source seeds it from the OS CSPRNG (``secrets``), a seeded public source
    from its own Generator, so simulations replay draw for draw. Only
    ``PrivacyContext.posterior_draw`` hands one out, after the draw is charged.
    """

    def __init__(self, seed: int | np.random.Generator) -> None:
        """``seed``: an int ≥ 0 or a Generator the caller seeded."""
        self._rng = _generator(seed)

    def increments(self, shape: int | tuple[int, ...]) -> np.ndarray:
        """Standard normal proposal increments (drawn here, at the noise seam)."""
        return self._rng.standard_normal(shape)

    def uniform(self, shape: int | tuple[int, ...]) -> np.ndarray:
        """Uniforms in [0, 1) for the Metropolis accept step."""
        return self._rng.random(shape)


class OpenDPNoise:
    """OpenDP's samplers (OS CSPRNG, unseedable): the confidential run's only source."""

    name = "opendp"

    def sampler_stream(self) -> SamplerStream:
        """A posterior sampler's stream, seeded with 128 bits from the OS CSPRNG."""
        return SamplerStream(secrets.randbits(128))

    def laplace_vector(self, values: np.ndarray, sensitivity: float, epsilon: float
                       ) -> np.ndarray:
        """OpenDP continuous Laplace, certified by its privacy map before drawing."""
        return mechanisms.laplace_vector(values, sensitivity, epsilon)

    def discrete_laplace_vector(self, values: np.ndarray, sensitivity: int, epsilon: float
                                ) -> np.ndarray:
        """OpenDP discrete Laplace, certified by its privacy map before drawing."""
        return mechanisms.discrete_laplace_vector(values, sensitivity, epsilon)

    def noisy_max_index(self, scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
        """OpenDP's ``make_noisy_max`` (permute-and-flip), certified before drawing."""
        return mechanisms.noisy_max_index(scores, sensitivity, epsilon)

    def laplace_threshold(self, counts: dict[str, int], scale: float, threshold: int,
                          distance: Distance, epsilon: float, delta: float) -> dict[str, int]:
        """OpenDP's thresholded partition selection, its (ε, δ) map checked before drawing."""
        return mechanisms.laplace_threshold(counts, scale, threshold, distance, epsilon, delta)

    def generalized_cauchy_vector(self, values: np.ndarray, scale: float, gamma: float,
                                  grid: SnapGrid) -> np.ndarray:
        """The snapped release from CSPRNG bits (``secrets``): k, sign, floor coin, cell."""
        arr = np.asarray(values, dtype=np.float64)
        n = int(arr.size)
        k = np.array([secrets.randbits(lattice.UNIFORM_BITS) for _ in range(n)], dtype=np.int64)
        positive = np.array([secrets.randbits(1) for _ in range(n)], dtype=bool)
        floor = np.array([secrets.randbits(lattice.FLOOR_BITS) == 0 for _ in range(n)])
        uniform = np.array([secrets.randbelow(grid.cells + 1) for _ in range(n)], dtype=np.int64)
        return lattice.snapped_release(arr, scale, gamma, grid, k, positive, floor, uniform)


def _generator(seed: int | np.random.Generator) -> np.random.Generator:
    """A Generator from an explicit seed (an int ≥ 0) or an already seeded Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError("seed must be an integer >= 0 or a numpy Generator (never None)")
    return np.random.default_rng(int(seed))


class SeededNoise:
    """OpenDP's three distributions from an explicitly seeded numpy Generator (public only)."""

    name = "seeded"

    def __init__(self, seed: int | np.random.Generator) -> None:
        """``seed``: an int, or a Generator the caller seeded; there is no unseeded default."""
        self._rng = _generator(seed)

    def sampler_stream(self) -> SamplerStream:
        """A posterior sampler's stream seeded from this source (reproducible, public only)."""
        return SamplerStream(int(self._rng.integers(2**63)))

    def laplace_vector(self, values: np.ndarray, sensitivity: float, epsilon: float
                       ) -> np.ndarray:
        """values + Laplace(Δ/ε), any shape."""
        arr = np.asarray(values, dtype=np.float64)
        return arr + self._rng.laplace(0.0, mechanisms.laplace_scale(sensitivity, epsilon),
                                       size=arr.shape)

    def discrete_laplace_vector(self, values: np.ndarray, sensitivity: int, epsilon: float
                                ) -> np.ndarray:
        """values + (G₁ − G₂), G geometric with p = 1 − exp(−ε/Δ): discrete Laplace(Δ/ε)."""
        arr = np.asarray(values, dtype=np.int64)
        p = -math.expm1(-1.0 / mechanisms.laplace_scale(sensitivity, epsilon))
        noise = self._rng.geometric(p, size=arr.shape) - self._rng.geometric(p, size=arr.shape)
        return arr + noise.astype(np.int64)

    def noisy_max_index(self, scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
        """Permute-and-flip at β = 2Δ/ε, as OpenDP's ``make_noisy_max`` under max_divergence."""
        flat = np.asarray(scores, dtype=np.float64).ravel()
        if flat.size == 1:
            return 0
        return int(self.noisy_max_indices(flat, sensitivity, epsilon, 1)[0])

    def noisy_max_indices(
        self, scores: np.ndarray, sensitivity: float, epsilon: float, size: int
    ) -> np.ndarray:
        """``size`` independent permute-and-flip draws on the same scores (for audits)."""
        flat = np.asarray(scores, dtype=np.float64).ravel()
        k = flat.size
        accept = np.exp((flat - flat.max()) / mechanisms.noisy_max_scale(sensitivity, epsilon))
        order = self._rng.permuted(np.tile(np.arange(k), (size, 1)), axis=1)
        hit = self._rng.random((size, k)) < accept[order]  # the max always hits: accept = 1
        return order[np.arange(size), np.argmax(hit, axis=1)]

    def laplace_threshold(self, counts: dict[str, int], scale: float, threshold: int,
                          distance: Distance, epsilon: float, delta: float) -> dict[str, int]:
        """OpenDP's law: count + discrete Laplace(b) per label, kept when it reaches τ."""
        del distance, epsilon, delta  # the caller calibrated (b, τ); nothing to certify here
        labels = sorted(counts)
        p = -math.expm1(-1.0 / scale)
        size = len(labels)
        noise = self._rng.geometric(p, size=size) - self._rng.geometric(p, size=size)
        noisy = np.asarray([counts[k] for k in labels], dtype=np.int64) + noise
        return {k: int(v) for k, v in zip(labels, noisy, strict=True) if v >= threshold}

    def generalized_cauchy_vector(self, values: np.ndarray, scale: float, gamma: float,
                                  grid: SnapGrid) -> np.ndarray:
        """The same snapped release as :class:`OpenDPNoise`, its bits from the Generator."""
        arr = np.asarray(values, dtype=np.float64)
        n = int(arr.size)
        k = self._rng.integers(0, 2 ** lattice.UNIFORM_BITS, size=n, dtype=np.int64)
        positive = self._rng.integers(0, 2, size=n).astype(bool)
        floor = self._rng.integers(0, 2 ** lattice.FLOOR_BITS, size=n) == 0
        uniform = self._rng.integers(0, grid.cells + 1, size=n)
        return lattice.snapped_release(arr, scale, gamma, grid, k, positive, floor, uniform)


#: Keeps a rehearsal's noise stream apart from its context's post-DP Generator ("noise").
_NOISE_STREAM = 0x6E6F697365


def rehearsal_noise(seed: int) -> SeededNoise:
    """The seeded noise of a public rehearsal with ``seed`` (a dry-run task, or ``workbench run
    --rehearse``): its own numpy stream, apart from the context's Generator, so a rehearsal
    and a dry-run task of the same seed draw the same noise in the same order."""
    return SeededNoise(np.random.default_rng([int(seed), _NOISE_STREAM]))


def posterior_dirichlet(rng: np.random.Generator, concentration: np.ndarray) -> np.ndarray:
    """One Dirichlet draw per row of ``concentration`` (rows: α + noisy counts, all > 0).

    Not DP noise: post-processing of counts that are already DP, drawn with the run's post-DP
    Generator (CSPRNG-seeded in a confidential run). It lives in this file because the noise
    scan allows numpy distribution draws here only, so every such draw stays in one place.
    """
    alpha = np.asarray(concentration, dtype=np.float64)
    if alpha.ndim != 2 or not np.all(alpha > 0):
        raise ValueError("concentration must be a 2-d array of positive numbers")
    draws = rng.standard_gamma(alpha)
    totals = draws.sum(axis=1, keepdims=True)
    uniform = np.full_like(draws, 1.0 / alpha.shape[1])
    return np.divide(draws, totals, out=uniform, where=totals > 0)
