"""The workload's ``structure: tree`` option: a spanning forest of unnamed pairs, no refit.

MST (McKenna, Miklau & Sheldon 2021) rebuilt from pure-ε parts on top of the criteria's
measurements (AIM, McKenna et al. 2022, is the other anchor: same score, same Δ). The
criteria's marginals are measured and fitted once (the spec's own model shape, so a dry run's
repetitions share one JAX compile); the structure's ε (``structure_share`` of ε_gen) is split:

* ``structure_select_share`` of it chooses the edges. Components start as the connected
  components of the already-measured cliques (public: the spec's criteria and column names).
  Kruskal then adds K = min(components − 1, ``structure_edges`` or ∞) edges one at a time, each
  chosen with the exponential mechanism (``privacy.exponential``, OpenDP's noisy max) at
  ε_select / K among the unnamed pairs that join two *different* components and keep the model
  within ``generator.model_limit``;
* the rest measures every selected pair with discrete Laplace (``measure``), each at
  (ε_structure − ε spent selecting) / (edges selected). If the limit leaves fewer than K
  edges, the unspent selection ε goes to their measurements, so Σ ε = ε_gen exactly (every
  charge on the ledger with its purpose: "workload structure tree edge k of K: select a
  pair", "workload marginal: a x b").

The pairs then join the fitted model in closed form (:func:`join_tree`): each edge joins two
components the model keeps independent, so a factor p̃_ab/(p_a p_b) makes p̃_ab the pair's table
and leaves both components as they were — the decomposable model's own estimate, with no
second mirror descent and no new shape to compile.

**Score and its sensitivity** (as in :mod:`~workbench.generators.structure_selection`): a pair
c = (a, b) scores ‖M_c(D) − M_c(p̂)‖₁ − cells(c)·σ/√2, σ the measurement's discrete-Laplace
std. A candidate joins two components, and a model fitted to cliques that never join a and b
makes them independent, so M_c(p̂) = n·q_a ⊗ q_b with q the 1-way shares of the released
tables (clipped at 0; the 1-way release, else the first measured clique holding the column):
post-processing of DP outputs (MST scores the same way). Only M_c(D) reads the data; one record
sits in one cell of M_c(D), so replacing it moves the L1 term by ≤ 2 and adding or removing it
by ≤ 1: every score moves by at most Δ = ``privacy.histogram_sensitivity()``, the noisy max's
sensitivity. The K selections compose sequentially: K · ε_select / K.

**The model stays predictable.** Each added edge joins two separate pieces, so no triangulation
fill joins them: mbi's elimination (:func:`~workbench.generators.model_limit.junction_tables`)
runs on each connected component alone, and the junction tree after the tree is the old one's
tables plus the new pair cliques. Eligibility still checks that rule itself (on the two
components a candidate would join, cached), so the size guard's budget stays an upper bound
whatever the elimination does.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.conditional import norm_sub
from workbench.generators.mbi_model import NoisyMarginal, estimate
from workbench.generators.model_limit import Clique, ModelLimit, cap_cells, junction_tables
from workbench.privacy.records import discrete_laplace_sigma

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.transform import Domain

#: Progress of structure fits: INFO lines say only public facts (counts, ε, steps), so a run's
#: console may show them; the choices themselves (DP outputs of an iteration private selection
#: may never publish) go at DEBUG, for benchmarks on public data.
LOG = logging.getLogger("workbench.structure")


def show_progress() -> None:
    """Print the INFO progress lines to stderr (the CLI's run and dryrun, unless --quiet)."""
    if not LOG.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("  %(message)s"))
        LOG.addHandler(handler)
    LOG.setLevel(min(LOG.level or logging.INFO, logging.INFO))


class Forest:
    """Connected components of the measured cliques and the junction-tree cells of each."""

    def __init__(self, sizes: dict[str, int], cliques: Sequence[Clique]) -> None:
        self.sizes = sizes
        self.cliques = [tuple(q) for q in cliques]
        self.root = {n: n for n in sizes}
        for q in self.cliques:
            for a in q[1:]:
                self._union(q[0], a)
        self._cells: dict[frozenset[str], int] = {}
        self._joins: dict[tuple[frozenset[str], Clique], int] = {}

    def find(self, a: str) -> str:
        """The representative of ``a``'s component."""
        while self.root[a] != a:
            self.root[a] = self.root[self.root[a]]
            a = self.root[a]
        return a

    def _union(self, a: str, b: str) -> None:
        self.root[self.find(a)] = self.find(b)

    def members(self, a: str) -> frozenset[str]:
        """The columns of ``a``'s component."""
        r = self.find(a)
        return frozenset(n for n in self.sizes if self.find(n) == r)

    def components(self) -> int:
        """How many separate pieces the measured cliques make."""
        return len({self.find(n) for n in self.sizes})

    def cells_of(self, part: frozenset[str], extra: Sequence[Clique] = ()) -> int:
        """Junction-tree cells of the cliques inside ``part`` (plus ``extra``), mbi's rule on
        that component alone (elimination never crosses components)."""
        key = part if not extra else None
        if key is not None and key in self._cells:
            return self._cells[key]
        sub = {n: s for n, s in self.sizes.items() if n in part}
        inside = [q for q in self.cliques if set(q) <= part] + list(extra)
        cells = sum(c for _, c in junction_tables(sub, inside)) if inside else 0
        if key is not None:
            self._cells[key] = cells
        return cells

    def total(self) -> int:
        """Cells of the whole junction tree (every column in some clique)."""
        parts = {self.members(n) for n in self.sizes}
        return sum(self.cells_of(p) for p in parts)

    def join_cells(self, pair: Clique, total: int) -> int:
        """Junction-tree cells after adding ``pair`` (its columns in different components)."""
        a, b = self.members(pair[0]), self.members(pair[1])
        key = (a | b, pair)
        if key not in self._joins:
            self._joins[key] = self.cells_of(a | b, [pair]) - self.cells_of(a) - self.cells_of(b)
        return total + self._joins[key]

    def add(self, pair: Clique) -> None:
        """Measure ``pair`` too: its two components become one."""
        self.cliques.append(pair)
        self._union(*pair)


def tree_refusal(sizes: dict[str, int], cliques: Sequence[Clique], limit: ModelLimit) -> str | None:
    """Why a tree cannot add an edge (public: spec cliques and sizes), or None."""
    forest = Forest(sizes, cliques)
    if forest.components() < 2:
        return ("generator structure: the criteria's marginals already connect every column, "
                "so a tree has no edge to add; use structure 'pairs' or 'none'")
    total, cap = forest.total(), cap_cells(limit)
    names = list(sizes)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if forest.find(a) != forest.find(b) and forest.join_cells((a, b), total) <= cap:
                return None
    return (f"generator structure: no unnamed pair fits within generator.model_limit "
            f"({cap:,} cells with the criteria's marginals); use structure 'none', coarser "
            "bins, or raise generator.model_limit")


def tree_edges(domain: Domain, measured: Sequence[NoisyMarginal], edges: int) -> int:
    """The edges a tree plans over these measurements (public: their cliques and ``edges``)."""
    sizes = dict(zip(domain.names, (int(s) for s in domain.sizes), strict=True))
    planned = Forest(sizes, [m.clique for m in measured]).components() - 1
    return min(planned, edges) if edges else planned


def shares(domain: Domain, measured: Sequence[NoisyMarginal]) -> dict[str, np.ndarray]:
    """Each column's 1-way shares from the released tables (post-processing): its 1-way
    release, else the first measured clique holding it summed over the others; clipped at 0,
    uniform where nothing positive is left."""
    out: dict[str, np.ndarray] = {}
    for m in sorted(measured, key=lambda m: len(m.clique)):
        counts = np.asarray(m.counts, dtype=np.float64).reshape(
            [domain.size((c,)) for c in m.clique])
        for axis, c in enumerate(m.clique):
            if c not in out:
                others = tuple(i for i in range(len(m.clique)) if i != axis)
                out[c] = np.clip(counts.sum(axis=others), 0, None)
    for c in domain.names:
        v = out.get(c, np.zeros(domain.size((c,))))
        out[c] = v / v.sum() if v.sum() > 0 else np.full(v.size, 1.0 / v.size)
    return out


def tree_scores(domain: Domain, measured: Sequence[NoisyMarginal], total: int,
                truth: Callable[[Clique], np.ndarray], pairs: Sequence[Clique],
                noise: float) -> dict[Clique, float]:
    """Each pair's ‖M_ab(D) − n·q_a⊗q_b‖₁ − cells·``noise`` (module doc: Δ per score)."""
    q = shares(domain, measured)
    return {(a, b): float(np.abs(np.asarray(truth((a, b)), dtype=np.float64)
                                 - total * np.outer(q[a], q[b])).sum())
            - noise * domain.size((a, b)) for a, b in pairs}


def run_tree(
    domain: Domain,
    measured: list[NoisyMarginal],
    total: int,
    truth: Callable[[Clique], np.ndarray],
    measure: Callable[[Clique, float], NoisyMarginal],
    *,
    epsilon: float,
    select_share: float,
    edges: int,
    limit: ModelLimit,
    privacy: PrivacyContext,
    iters: int,
    warm: object | None = None,
) -> tuple[object, list[Clique]]:
    """Spend exactly ``epsilon`` on the tree (module doc); the refitted estimate and the edges.

    ``edges`` 0: a spanning forest (components − 1 edges); else at most that many. ``warm``
    (a fitted model, if any) only starts the one refit.
    """
    sizes = dict(zip(domain.names, (int(s) for s in domain.sizes), strict=True))
    forest = Forest(sizes, [m.clique for m in measured])
    planned = tree_edges(domain, measured, edges)
    if planned < 1:
        raise ValueError("generator structure: the criteria's marginals already connect every "
                         "column; nothing was spent on the tree")
    delta = privacy.histogram_sensitivity()
    eps_select = select_share * epsilon
    eps_each = eps_select / planned
    noise = discrete_laplace_sigma(delta, (epsilon - eps_select) / planned) / math.sqrt(2.0)
    names = domain.names
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
             if forest.find(a) != forest.find(b)]
    scores = tree_scores(domain, measured, total, truth, pairs, noise)
    LOG.info("structure tree: %d unnamed pairs scored against independence; up to %d "
             "edges, ε %.4g to select (%.4g each), %.4g to measure", len(pairs), planned,
             eps_select, eps_each, epsilon - eps_select)
    cap, chosen = cap_cells(limit), []
    cells = forest.total()
    for k in range(planned):
        pool = [p for p in pairs if forest.find(p[0]) != forest.find(p[1])]
        pool = [p for p in pool if forest.join_cells(p, cells) <= cap]
        if not pool:
            LOG.debug("structure tree: no pair left within generator.model_limit after %d "
                     "edges; their measurements get the unspent selection ε", k)
            break
        pick = privacy.exponential(
            [scores[p] for p in pool], sensitivity=float(delta), epsilon=eps_each,
            purpose=f"workload structure tree edge {k + 1} of {planned}: select a pair")
        pair = pool[int(pick.value)]
        cells = forest.join_cells(pair, cells)
        forest.add(pair)
        chosen.append(pair)
        LOG.debug("structure tree: edge %d of %d: %s (%d candidates were left; model %s cells)",
                 k + 1, planned, " x ".join(pair), len(pool), f"{cells:,}")
    if not chosen:  # nothing fitted (never at the spec's own cliques: tree_refusal)
        for name in domain.names:
            measured.append(measure((name,), epsilon / len(domain.names)))
        return estimate(domain, measured, total, iters, warm=warm), chosen
    spent = eps_each * len(chosen)
    eps_measure = (epsilon - spent) / len(chosen)
    released = []
    for i, pair in enumerate(chosen):  # the last one takes the float remainder: Σ = ε exactly
        eps_m = epsilon - spent if i == len(chosen) - 1 else eps_measure
        released.append(measure(pair, eps_m))
        spent += eps_m
    if warm is None:
        LOG.info("structure tree: fitting the criteria's marginals (%d steps)", iters)
        warm = estimate(domain, measured, total, iters)
    measured.extend(released)
    LOG.debug("structure tree: %d pairs measured at ε %.4g each", len(chosen), eps_measure)
    LOG.info("structure tree: the selected pairs are measured; joining them to the fitted "
             "model in closed form")
    return join_tree(warm, released), chosen


def rake(table: np.ndarray, rows: np.ndarray | None, cols: np.ndarray | None,
         sweeps: int = 200) -> np.ndarray:
    """A released pair table made a distribution with these margins (None: that side free):
    Norm-Sub (max(x − τ, 0) with the same total: clipping alone would pile the noise of empty
    cells into mass), a floor of 1e-9 of its mass per cell (no zero a margin needs),
    normalised, then iterative proportional fitting to the given margins."""
    t = norm_sub(np.asarray(table, dtype=np.float64))
    t = t + 1e-9 * max(float(t.sum()), 1.0)
    t = t / t.sum()
    for _ in range(sweeps if rows is not None and cols is not None else 1):
        if rows is not None:
            t = t * (rows / t.sum(axis=1))[:, None]
        if cols is not None:
            t = t * (cols / t.sum(axis=0))[None, :]
    return t


def join_tree(model: object, pairs: Sequence[NoisyMarginal]) -> object:
    """The fitted model with one factor p̃_ab / (p_a·p_b) per tree pair, in the order chosen
    (post-processing).

    Each pair joins two components that the model and every earlier pair keep independent, with
    distributions P_A and P_B whose 1-way shares of a and b are p_a and p_b. The joined
    P_A·P_B·p̃_ab/(p_a p_b) sums to 1, has p̃_ab as its (a, b) table and keeps P_A and P_B when
    p̃_ab's margins are p_a and p_b (sum the other side out: Σ_b P_B(b)·p̃_ab/(p_a p_b) = 1):
    :func:`rake` makes them so. A side that is a single column no pair has joined yet ("free":
    its only release so far is its noisy 1-way table, less precise than the pair's) takes the
    pair's own margin instead (P_B = p_b there, so P_A·p̃_ab/p_a = P_A·p̃(b | a) sums to 1
    too). This is the decomposable model's closed form (MST's junction tree), not another
    descent: no new model shape to compile; the junction tree is the model's plus the pairs.
    """
    import jax.numpy as jnp
    from mbi import CliqueVector, Factor, MarkovRandomField

    from workbench.generators.mbi_numpy import log_factors, marginal

    factors, sizes = log_factors(model)
    total = float(model.total)  # type: ignore[attr-defined]
    potentials = model.potentials  # type: ignore[attr-defined]
    arrays = dict(potentials.arrays)
    joined_before = {c for q in potentials.cliques if len(q) > 1 for c in q}
    shares_now: dict[str, np.ndarray] = {}
    for m in pairs:
        a, b = m.clique
        pa = shares_now.get(a, marginal(factors, sizes, (a,), 1.0))
        pb = shares_now.get(b, marginal(factors, sizes, (b,), 1.0))
        joint = rake(np.asarray(m.counts).reshape(sizes[a], sizes[b]),
                     None if a not in joined_before else pa,
                     None if b not in joined_before else pb)
        logs = np.log(joint) - np.log(pa)[:, None] - np.log(pb)[None, :]
        arrays[m.clique] = Factor(potentials.domain.project(m.clique), jnp.asarray(logs))
        shares_now[a], shares_now[b] = joint.sum(axis=1), joint.sum(axis=0)
        joined_before |= {a, b}
    joined = CliqueVector(potentials.domain, [*potentials.cliques, *(m.clique for m in pairs)],
                          arrays)
    # the fitted marginals that still hold: every clique of a column whose shares stayed
    old = model.marginals  # type: ignore[attr-defined]
    moved = {c for c in shares_now if c not in {x for q in potentials.cliques if len(q) > 1
                                                for x in q}}
    kept = [q for q in old.cliques if not moved & set(q)]
    held = CliqueVector(old.domain, kept, {q: old.arrays[q] for q in kept})
    return MarkovRandomField(potentials=joined, marginals=held, total=total)
