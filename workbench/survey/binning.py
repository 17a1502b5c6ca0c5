"""DP choice of a set of bins among candidates declared up front (Merrill §7.1).

A candidate set of bins 𝒮 collapses the base calibration cells of one margin into bins; its
score is f(D, 𝒮) = |𝒮| / W₀^𝒮(D) (Eq. 7.1): many bins, low maximum weight. Its sensitivity
under add/remove (Thm 7.1.3, Eq. 7.2) is

    Δ = max_𝒮 |𝒮|·bwt(G) / (bwt(G′)·min_{S ∈ 𝒮} N̂(S)),

G (G′) being a record of the highest (lowest) possible base weight — public bounds. Under
replace-one a neighbour is a deletion plus an addition, so the score moves by at most 2Δ.

The thesis' mechanism returns 𝒮 with probability ∝ exp(α·f), α = ε/(2Δ)
(:func:`selection_probabilities`, the worked Figure 7.2). The run draws through
``PrivacyContext.exponential`` — OpenDP's permute-and-flip at the same ε, as private and at
least as accurate, whose probabilities differ from the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.survey.weights import max_potential_weight

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext


@dataclass(frozen=True)
class BinSet:
    """A named candidate: each bin is a tuple of base-cell indices of its margin."""

    name: str
    bins: tuple[tuple[int, ...], ...]

    def bin_of_cell(self, n_cells: int) -> np.ndarray:
        """Index of the bin each base cell falls in (every cell must be covered once)."""
        out = np.full(n_cells, -1, dtype=np.int64)
        for i, cells in enumerate(self.bins):
            out[list(cells)] = i
        if (out < 0).any():
            raise ValueError(f"binning {self.name!r} leaves a calibration cell uncovered")
        return out

    def totals(self, cell_totals: Sequence[float]) -> np.ndarray:
        """N̂ of every bin: the sum of its base cells' public totals (Remark 7.5.1)."""
        t = np.asarray(cell_totals, dtype=np.float64)
        return np.array([t[list(cells)].sum() for cells in self.bins])


def group_base_weights(cell_of: np.ndarray, bwt: np.ndarray, binset: BinSet,
                       n_cells: int) -> list[np.ndarray]:
    """The base weights of the records in each bin of ``binset``."""
    bins = binset.bin_of_cell(n_cells)[np.asarray(cell_of, dtype=np.int64)]
    order = np.argsort(bins, kind="stable")
    split = np.searchsorted(bins[order], np.arange(1, len(binset.bins)))
    return np.split(np.asarray(bwt, dtype=np.float64)[order], split)


def score(binset: BinSet, cell_totals: Sequence[float], cell_of: np.ndarray, bwt: np.ndarray,
          g_max: float) -> float:
    """f(D, 𝒮) = |𝒮| / W₀^𝒮(D) (Eq. 7.1)."""
    groups = group_base_weights(cell_of, bwt, binset, len(cell_totals))
    return len(binset.bins) / max_potential_weight(binset.totals(cell_totals), groups, g_max)


def score_sensitivity(binsets: Sequence[BinSet], cell_totals: Sequence[float], g_min: float,
                      g_max: float, neighbour: str = "add_remove") -> float:
    """Δ of the score (Eq. 7.2), doubled under replace-one.

    >>> sep = BinSet("separate", ((0,), (1,), (2,), (3,), (4,)))
    >>> score_sensitivity([sep], [100000.0] * 5, 1.0, 1.0)
    5e-05
    """
    if not 0 < g_min <= g_max:
        raise ValueError("base weight bounds must satisfy 0 < min <= max")
    delta = max(len(b.bins) * g_max / (g_min * float(b.totals(cell_totals).min()))
                for b in binsets)
    return delta if neighbour == "add_remove" else 2 * delta


def selection_probabilities(scores: Sequence[float], sensitivity: float,
                            epsilon: float) -> np.ndarray:
    """The exponential mechanism's P(𝒮) ∝ exp(α·f), α = ε/(2Δ) (Def. 7.1.2, Thm 7.1.3)."""
    alpha = epsilon / (2 * sensitivity)
    z = alpha * np.asarray(scores, dtype=np.float64)
    p = np.exp(z - z.max())
    return p / p.sum()


def choose_binning(binsets: Sequence[BinSet], scores: Sequence[float], sensitivity: float,
                   epsilon: float, ctx: PrivacyContext, margin: str) -> BinSet:
    """ε-DP choice of one candidate (one candidate: no noise, no ε)."""
    if len(binsets) == 1:
        return binsets[0]
    noisy = ctx.exponential(np.asarray(scores, dtype=np.float64), sensitivity=sensitivity,
                            epsilon=epsilon, purpose=f"survey binning ({margin})")
    return binsets[int(noisy.value)]


def binsets_from_spec(candidates: Mapping[str, Sequence[Sequence[str]]],
                      cells: Sequence[str]) -> list[BinSet]:
    """Candidates given as lists of bins of cell labels → :class:`BinSet` of cell indices."""
    index = {c: i for i, c in enumerate(cells)}
    return [BinSet(name, tuple(tuple(index[c] for c in b) for b in bins))
            for name, bins in candidates.items()]
