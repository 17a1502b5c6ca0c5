"""Values inside a numeric column's bins: uniform, or tilted to meet a published mean.

Given each bin's share, the distribution of largest entropy inside the bins is uniform; with a
published mean as well it is p(x) ∝ exp(λx) inside every bin, one λ for the whole column
(Lagrange: the mean is one more linear constraint). λ is found by root finding; a mean outside
what the bins allow (every bin's mass at its low or high end) cannot be met and is reported
as such. Draws are stratified per bin (one uniform per 1/m of the bin's m rows), so the
proxy's mean is the fitted mean up to a small rounding, not a sampling error.

Randomness is a seeded numpy Generator: public facts and a public proxy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Sub-ranges a wide bin is cut into (each drawn uniformly inside; the tilt is per sub-range).
SUBRANGES = 256


@dataclass(frozen=True)
class BinGrid:
    """Every bin of a column cut into sub-ranges [lo, hi] (integers: inclusive)."""

    integer: bool
    lo: np.ndarray
    hi: np.ndarray
    atom: np.ndarray  # the bin each sub-range belongs to
    n_atoms: int

    @classmethod
    def of(cls, bins: Sequence[tuple[float, float]], integer: bool) -> BinGrid:
        """Cut each bin: single integers for narrow integer bins, else ``SUBRANGES`` pieces."""
        los, his, atoms = [], [], []
        for a, (lo, hi) in enumerate(bins):
            if integer:
                edges = np.unique(np.linspace(lo, hi + 1, min(SUBRANGES, int(hi - lo) + 1) + 1)
                                  .round())
                piece_lo, piece_hi = edges[:-1], edges[1:] - 1
            else:
                edges = np.linspace(lo, hi, SUBRANGES + 1) if hi > lo else np.asarray([lo, hi])
                piece_lo, piece_hi = edges[:-1], edges[1:]
            los.append(piece_lo)
            his.append(piece_hi)
            atoms.append(np.full(len(piece_lo), a))
        return cls(integer, np.concatenate(los), np.concatenate(his), np.concatenate(atoms),
                   len(bins))

    @property
    def mid(self) -> np.ndarray:
        return 0.5 * (self.lo + self.hi)

    @property
    def size(self) -> np.ndarray:
        return (self.hi - self.lo + 1) if self.integer else np.maximum(self.hi - self.lo, 1e-300)

    def weights(self, lam: float) -> np.ndarray:
        """Each sub-range's probability within its bin under the tilt exp(λx) (stable)."""
        logw = np.log(self.size) + lam * self.mid
        top = np.full(self.n_atoms, -np.inf)
        np.maximum.at(top, self.atom, logw)
        w = np.exp(logw - top[self.atom])
        return w / np.bincount(self.atom, weights=w, minlength=self.n_atoms)[self.atom]

    def bin_means(self, lam: float) -> np.ndarray:
        """E[x | bin] under the tilt."""
        return np.bincount(self.atom, weights=self.weights(lam) * self.mid,
                           minlength=self.n_atoms)

    def mean(self, masses: np.ndarray, lam: float) -> float:
        """The column's mean over observed values, given each bin's mass."""
        p = np.asarray(masses, dtype=np.float64)
        return float(p @ self.bin_means(lam) / p.sum())

    def solve(self, masses: np.ndarray, target: float) -> tuple[float, float]:
        """(λ, achieved mean): the tilt meeting ``target``, or the nearest end when it cannot."""
        from scipy.optimize import brentq

        widths = (self.hi - self.lo)[self.hi > self.lo]
        scale = 1e3 / float(widths.min()) if len(widths) else 1.0
        f_lo, f_hi = self.mean(masses, -scale) - target, self.mean(masses, scale) - target
        if f_lo >= 0 or f_hi <= 0:
            lam = -scale if f_lo >= 0 else scale
            return lam, self.mean(masses, lam)
        lam = brentq(lambda x: self.mean(masses, x) - target, -scale, scale, xtol=1e-12 * scale,
                     rtol=1e-12)
        return float(lam), self.mean(masses, lam)

    def draw(self, atoms: np.ndarray, lam: float, rng: np.random.Generator) -> np.ndarray:
        """One value per row inside its bin (``atoms``: bin index; others are left NaN)."""
        out = np.full(len(atoms), np.nan)
        w = self.weights(lam)
        for a in np.unique(atoms[(atoms >= 0) & (atoms < self.n_atoms)]):
            rows = np.flatnonzero(atoms == a)
            sub = np.flatnonzero(self.atom == a)
            cum = np.cumsum(w[sub])
            u = (np.arange(len(rows)) + rng.random(len(rows))) / len(rows) * cum[-1]
            pick = sub[np.minimum(np.searchsorted(cum, u, side="right"), len(sub) - 1)]
            inner = rng.random(len(rows))
            lo, hi = self.lo[pick], self.hi[pick]
            values = (lo + np.floor(inner * (hi - lo + 1)) if self.integer
                      else lo + inner * (hi - lo))
            out[rng.permutation(rows)] = values
        return out
