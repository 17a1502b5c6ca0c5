"""The plausible-deniability model: noisy conditionals from D_P, Dirichlet-posterior parameters,
and seeded synthesis with ω.

Parameters: for every column i with (bucketed) parents Π_i, the count table c(Π_i, X_i) on D_P
is released with discrete Laplace noise through ``privacy``, all m tables in one vector
(replace-one moves one unit between two cells of each table: L1 sensitivity m·Δ_hist, so the
per-cell scale is m·Δ_hist/ε_P; the paper's Lap(1/ε_P) is the per-table form under add/remove).
Then, as post-processing, θ_{i|π} ~ Dir(α + max(0, noisy counts)) — a draw from the posterior,
not its MAP value.

Synthesis from a seed d (columns in the network's topological order): copy the first m − ω
columns of d, resample the last ω from the conditionals given their (already set) parents.
With ω = m this is plain ancestral sampling. Everything here after ``noisy_model`` reads no
confidential data except the seeds it is handed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.conditional import ConditionalTable
from workbench.privacy.noise import posterior_dirichlet

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext


@dataclass
class Node:
    """One column of the network: its parents, their bucket maps and sizes, its table."""

    column: int
    parents: tuple[int, ...]
    parent_maps: tuple[np.ndarray, ...]
    parent_sizes: tuple[int, ...]
    table: ConditionalTable

    def configs(self, rows: np.ndarray) -> np.ndarray:
        """Each row's parent-configuration index (bucketed parents)."""
        if not self.parents:
            return np.zeros(rows.shape[0], dtype=np.int64)
        cols = tuple(mp[rows[:, p]] for p, mp in zip(self.parents, self.parent_maps,
                                                     strict=True))
        return np.ravel_multi_index(cols, self.parent_sizes)


def count_tables(codes: np.ndarray, sizes: Sequence[int], maps: Sequence[np.ndarray],
                 network: Sequence[tuple[int, tuple[int, ...]]]) -> list[np.ndarray]:
    """c(Π_i, X_i) per node as a (parent configs, codes of X_i) matrix (confidential)."""
    out = []
    for col, parents in network:
        psizes = tuple(int(maps[p].max()) + 1 for p in parents)
        config = (np.ravel_multi_index(tuple(maps[p][codes[:, p]] for p in parents), psizes)
                  if parents else np.zeros(codes.shape[0], dtype=np.int64))
        n_configs = int(np.prod(psizes, dtype=np.int64)) if parents else 1
        flat = np.bincount(config * sizes[col] + codes[:, col], minlength=n_configs * sizes[col])
        out.append(flat.reshape(n_configs, sizes[col]))
    return out


def noisy_model(codes: np.ndarray, sizes: Sequence[int], maps: Sequence[np.ndarray],
                network: Sequence[tuple[int, tuple[int, ...]]], epsilon: float, alpha: float,
                privacy: PrivacyContext) -> list[Node]:
    """Release every count table on D_P with ε (one discrete-Laplace vector), then draw each
    conditional from its Dirichlet posterior Dir(α + max(0, noisy))."""
    tables = count_tables(codes, sizes, maps, network)
    flat = np.concatenate([t.ravel() for t in tables])
    delta = len(tables) * privacy.histogram_sensitivity()
    noisy = privacy.discrete_laplace(
        flat, sensitivity=delta, epsilon=epsilon,
        purpose="plausible deniability parameters: noisy counts (D_P)").value
    nodes, start = [], 0
    for (col, parents), table in zip(network, tables, strict=True):
        block = np.maximum(noisy[start:start + table.size], 0).reshape(table.shape)
        start += table.size
        probs = posterior_dirichlet(privacy.rng, block.astype(np.float64) + alpha)
        nodes.append(Node(col, parents, tuple(maps[p] for p in parents),
                          tuple(int(maps[p].max()) + 1 for p in parents),
                          ConditionalTable(probs)))
    return nodes


def synthesize(nodes: Sequence[Node], seeds: np.ndarray, omegas: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """One candidate per seed row: copy the first m − ω columns (topological order), resample
    the last ω from the conditionals. ``omegas`` holds each candidate's ω (1 ≤ ω ≤ m)."""
    out = np.array(seeds, dtype=np.int64, copy=True)
    m = len(nodes)
    for position, node in enumerate(nodes):
        redraw = np.flatnonzero(position >= m - omegas)
        if redraw.size:
            rows = out[redraw]
            out[redraw, node.column] = node.table.sample(node.configs(rows), rng)
    return out


class PrefixIndex:
    """Group-by counts of the seed records D_S on every prefix of the topological order.

    With a fixed ω every plausible seed of a candidate y has the same probability of producing
    y, so the test's k′ is the number of seeds that agree with y on its first m − ω columns.
    Level L keeps the sorted keys of the distinct L-prefixes (dense ids of level L − 1 times the
    column's size plus its code) and their counts; a candidate's count is L binary searches,
    never a scan of D_S.
    """

    def __init__(self, seeds: np.ndarray, order: Sequence[int], sizes: Sequence[int]) -> None:
        self.order = tuple(order)
        self.sizes = tuple(int(sizes[c]) for c in self.order)
        self.n = int(seeds.shape[0])
        self.keys: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        ids = np.zeros(self.n, dtype=np.int64)
        for col, size in zip(self.order, self.sizes, strict=True):
            keys, ids, counts = np.unique(ids * size + seeds[:, col], return_inverse=True,
                                          return_counts=True)
            self.keys.append(keys)
            self.counts.append(counts.astype(np.int64))

    def plausible_counts(self, candidates: np.ndarray, omegas: np.ndarray) -> np.ndarray:
        """k′ per candidate: seeds equal to it on the first m − ω columns (n if ω = m)."""
        prefix = len(self.order) - np.asarray(omegas, dtype=np.int64)
        out = np.where(prefix == 0, self.n, 0).astype(np.int64)
        ids = np.zeros(candidates.shape[0], dtype=np.int64)
        alive = np.ones(candidates.shape[0], dtype=bool)
        for level, (col, size) in enumerate(zip(self.order, self.sizes, strict=True)):
            key = ids * size + candidates[:, col]
            pos = np.minimum(np.searchsorted(self.keys[level], key), self.keys[level].size - 1)
            alive &= self.keys[level][pos] == key
            ids = np.where(alive, pos, 0)
            here = alive & (prefix == level + 1)
            out[here] = self.counts[level][pos[here]]
        return out
