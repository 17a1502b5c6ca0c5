"""Conditional tables P(child | parents) built from noisy counts and sampled by inverse CDF."""

from __future__ import annotations

import numpy as np


class ConditionalTable:
    """One categorical distribution per parent configuration, sampled for all rows at once.

    Built only from already-noisy counts, so everything here is post-processing.

    >>> table = ConditionalTable.from_noisy_counts(np.array([[3, -2, 1], [0, 0, 0]]))
    >>> table.probs.tolist()
    [[0.75, 0.0, 0.25], [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]]
    >>> table.n_codes
    3
    """

    def __init__(self, probs: np.ndarray) -> None:
        probs = np.asarray(probs, dtype=np.float64)
        if probs.ndim != 2 or probs.shape[1] == 0:
            raise ValueError(f"probs must be a (configs, codes) matrix, got shape {probs.shape}")
        self.probs = probs
        configs, k = probs.shape
        cdf = np.cumsum(probs, axis=1)
        cdf /= cdf[:, -1:]
        cdf[:, -1] = 1.0
        # Row r's CDF shifted by r makes one increasing array: one searchsorted serves every row.
        self._shifted = (cdf + np.arange(configs, dtype=np.float64)[:, None]).ravel()
        # Rounding can push a draw past the last code with mass; clamp it back there.
        self._last = (k - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)).astype(np.int64)

    @classmethod
    def from_noisy_counts(cls, counts: np.ndarray) -> ConditionalTable:
        """Clip negative noisy counts to 0, normalise rows; a row with no mass becomes uniform."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim == 1:
            counts = counts[None, :]
        clipped = np.clip(counts, 0.0, None)
        totals = clipped.sum(axis=1, keepdims=True)
        k = clipped.shape[1]
        probs = np.divide(clipped, totals, out=np.full_like(clipped, 1.0 / k), where=totals > 0)
        return cls(probs)

    @property
    def n_codes(self) -> int:
        """Number of child codes: the domain size, whatever codes the data happened to use."""
        return int(self.probs.shape[1])

    def sample(self, config: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw one child code per row given each row's parent-configuration index."""
        config = np.asarray(config, dtype=np.int64)
        k = self.n_codes
        u = rng.random(config.shape[0])
        pos = np.searchsorted(self._shifted, config + u, side="right")
        codes = pos - config * k
        return np.minimum(codes, self._last[config])
