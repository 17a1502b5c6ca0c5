"""The workload's ``structure: junction`` option: a width-2 junction tree of unnamed cliques.

``structure: tree`` joins components with pairs, so two columns it attaches to the same
component stay conditionally independent given the path between them. ``junction`` attaches
each remaining component to one column *or one edge* already placed (PrivBayes, Zhang et al.
2017, with degree ≤ 2; AIM's score, McKenna et al. 2022), so a column can depend on a pair
jointly, inside the criteria's components too, and the graph stays chordal (a new clique
P ∪ {k} meets the placed part in P, itself inside a clique), with no refit:

* Placed starts as the largest connected component of the criteria's measured cliques (most
  columns, then first in column order: public). K = min(components − 1, ``structure_edges`` or
  ∞) steps each add one clique Q = P ∪ {k}: P one placed column or two placed columns that
  share a clique of the model (P an *edge*), k an unplaced column (its whole component becomes
  placed). Each step chooses Q with the exponential mechanism (``privacy.exponential``,
  OpenDP's noisy max) at ``structure_select_share`` · ε_structure / K among the candidates that
  keep the model within ``generator.model_limit``, then measures Q with discrete Laplace
  (``measure``) at (measuring ε left) / (steps left) and joins it at once (below), so the next
  step's scores see it. ε a step could not use (no candidate fits, or the exact junction tree
  of a pick exceeds the cap) measures the last clique again (inverse-variance average of its
  two releases; the joins are rebuilt), so Σ ε = ε_structure exactly, every charge on the ledger
  with its purpose ("workload structure junction step k of K: select a clique", "workload
  marginal: a x b x c").

**Score and its sensitivity.** Q = P ∪ {k} scores ‖M_Q(D) − M_Q(p̂)‖₁ − cells(Q)·σ/√2 (AIM's
score, weight 1; σ the discrete-Laplace std at the step's measuring ε, so a triple's noise
weighs against its gain). The current model p̂ (a DP output) keeps k independent of every
placed column, so M_Q(p̂) = n·p̂_P ⊗ p̂_k, both read from p̂ by variable elimination
(post-processing). Only M_Q(D) reads the data; a record sits in one of its cells, so
replacing it moves the L1 term by ≤ 2 and adding or removing it by ≤ 1: every score moves by at
most Δ = ``privacy.histogram_sensitivity()``, the noisy max's sensitivity. The K selections
compose sequentially: K · ε_select / K.

**The join, in closed form** (:func:`join_clique`): the model is P_placed · P_K with K the
child's component. Q's released table, made a distribution (Norm-Sub, then :func:`rake` to the
model's p̂_P and, unless K is the single column k whose only release is its noisy 1-way, to
p̂_k), enters as the factor p̃_Q / (p̂_P · p̂_k): P_placed · P_K · p̃_Q/(p̂_P p̂_k) sums to 1,
has p̃_Q as Q's table and keeps every marginal of the placed part and of K (sum K out:
Σ_k p̂_k · p̃_Q/(p̂_P p̂_k) = 1). For a single-column K it is P_placed · p̃(k | P).

**The model budget.** The junction tree after a step is the old one plus Q (chordal, Q meets the
rest in a clique), so a candidate is eligible when the exact cells now
(:func:`~workbench.generators.model_limit.junction_tables`, mbi's rule) plus cells(Q) fit
``cap_cells(limit)``; the pick's exact junction tree is then checked too (mbi's greedy order
could add fill the sum misses) and a pick that exceeds is not measured. The size guard's
spec-time estimate is the budget itself, as for the other structure options.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal, estimate
from workbench.generators.model_limit import Clique, ModelLimit, cap_cells, junction_tables
from workbench.generators.structure_tree import LOG, Forest, rake
from workbench.privacy.records import discrete_laplace_sigma

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.transform import Domain


def start_component(forest: Forest, names: Sequence[str]) -> frozenset[str]:
    """The component placed first: most columns, then first in column order (public)."""
    return max((forest.members(n) for n in names), key=len)


class Junction:
    """The fitted model plus the cliques joined so far, as numpy log factors."""

    def __init__(self, model: object) -> None:
        from workbench.generators.mbi_numpy import log_factors

        self.model = model
        self.base, self.sizes = log_factors(model)
        self.added: list[tuple[Clique, np.ndarray]] = []
        self.cliques = [tuple(q) for q in model.potentials.cliques]  # type: ignore[attr-defined]
        self._cache: dict[Clique, np.ndarray] = {}

    def share(self, clique: Clique) -> np.ndarray:
        """The model's distribution over ``clique`` (axes in its order); a placed part's and an
        unplaced component's marginals never change after they are computed (module doc)."""
        if clique not in self._cache:
            from workbench.generators.mbi_numpy import marginal

            self._cache[clique] = marginal([*self.base, *self.added], self.sizes, clique, 1.0)
        return self._cache[clique]

    def forget(self, columns: frozenset[str]) -> None:
        """Drop cached shares that hold a column whose component was just placed."""
        self._cache = {q: v for q, v in self._cache.items() if not columns & set(q)}


def join_clique(state: Junction, m: NoisyMarginal, free: bool) -> None:
    """Add released clique ``m`` (parents first, child last) as p̃_Q / (p̂_P·p̂_k) (module doc)."""
    *parents, child = m.clique
    sizes = [state.sizes[c] for c in m.clique]
    p_parents = state.share(tuple(parents)).reshape(-1)
    p_child = state.share((child,))
    table = np.asarray(m.counts, dtype=np.float64).reshape(len(p_parents), sizes[-1])
    joint = rake(table, p_parents, None if free else p_child)
    logs = np.log(joint) - np.log(p_parents)[:, None] - np.log(p_child)[None, :]
    state.added.append((tuple(m.clique), logs.reshape(sizes)))
    state.cliques.append(tuple(m.clique))


def to_model(state: Junction) -> object:
    """The joined factors as an mbi MarkovRandomField (the fit's marginals are left out: a
    free child's 1-way moved, and the sampling plan reads the potentials)."""
    import jax.numpy as jnp
    from mbi import CliqueVector, Factor, MarkovRandomField

    old = state.model.potentials  # type: ignore[attr-defined]
    arrays = dict(old.arrays)
    for clique, logs in state.added:
        arrays[clique] = Factor(old.domain.project(clique), jnp.asarray(logs))
    joined = CliqueVector(old.domain, [*old.cliques, *(q for q, _ in state.added)], arrays)
    empty = CliqueVector(old.domain, [], {})
    return MarkovRandomField(potentials=joined, marginals=empty,
                             total=float(state.model.total))  # type: ignore[attr-defined]


def candidates(forest: Forest, placed: frozenset[str], edges: set[frozenset[str]],
               names: Sequence[str]) -> list[Clique]:
    """Every (parent or edge of parents, child) with the parents placed and the child not."""
    order = {n: i for i, n in enumerate(names)}
    singles = sorted(placed, key=order.__getitem__)
    pairs = sorted((tuple(sorted(e, key=order.__getitem__)) for e in edges if e <= placed),
                   key=lambda p: (order[p[0]], order[p[1]]))
    children = [n for n in names if n not in placed]
    return [(*p, k) for k in children for p in [*((a,) for a in singles), *pairs]]


def junction_scores(state: Junction, pool: Sequence[Clique], total: int,
                    truth: Callable[[Clique], np.ndarray], noise: float,
                    seen: dict[Clique, np.ndarray]) -> list[float]:
    """‖M_Q(D) − n·p̂_P⊗p̂_k‖₁ − cells(Q)·``noise`` per candidate (module doc: Δ per score)."""
    out = []
    for q in pool:
        if q not in seen:
            seen[q] = np.asarray(truth(q), dtype=np.float64)
        fitted = np.multiply.outer(state.share(q[:-1]), state.share(q[-1:]))
        out.append(float(np.abs(seen[q] - total * fitted).sum()) - noise * seen[q].size)
    return out


def average(a: NoisyMarginal, b: NoisyMarginal) -> NoisyMarginal:
    """Two releases of one clique as their inverse-variance average (post-processing)."""
    wa, wb = 1.0 / a.sigma**2, 1.0 / b.sigma**2
    counts = (wa * np.asarray(a.counts, dtype=np.float64)
              + wb * np.asarray(b.counts, dtype=np.float64)) / (wa + wb)
    return NoisyMarginal(a.clique, counts, 1.0 / math.sqrt(wa + wb))


def run_junction(
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
    """Spend exactly ``epsilon`` on the junction steps (module doc); the model and the cliques.

    ``edges`` 0: every component is attached (components − 1 steps); else at most that many.
    ``warm`` is the criteria's fitted model (fitted here with ``iters`` steps when None).
    """
    names = list(domain.names)
    sizes = dict(zip(names, (int(s) for s in domain.sizes), strict=True))
    forest = Forest(sizes, [m.clique for m in measured])
    planned = forest.components() - 1
    planned = min(planned, edges) if edges else planned
    if planned < 1:
        raise ValueError("generator structure: the criteria's marginals already connect every "
                         "column; nothing was spent on the junction tree")
    if warm is None:
        LOG.info("structure junction: fitting the criteria's marginals (%d steps)", iters)
        warm = estimate(domain, measured, total, iters)
    delta = privacy.histogram_sensitivity()
    eps_each = select_share * epsilon / planned
    state = Junction(warm)
    placed = start_component(forest, names)
    pair_sets = {frozenset(p) for q in forest.cliques for p in _pairs(q)}
    cap, spent, seen = cap_cells(limit), 0.0, {}
    released: list[tuple[NoisyMarginal, bool]] = []
    LOG.info("structure junction: %d steps from a component of %d columns; ε %.4g to select "
             "(%.4g each), %.4g to measure", planned, len(placed), eps_each * planned, eps_each,
             epsilon - eps_each * planned)
    for k in range(planned):
        eps_m = (epsilon - spent - eps_each * (planned - k)) / (planned - k)
        noise = discrete_laplace_sigma(delta, eps_m) / math.sqrt(2.0)
        now = sum(c for _, c in junction_tables(sizes, state.cliques))
        pool = [q for q in candidates(forest, placed, pair_sets, names)
                if now + math.prod(sizes[c] for c in q) <= cap]
        if not pool:
            LOG.info("structure junction: no clique fits generator.model_limit after %d "
                     "steps; the rest of ε measures the last one again", k)
            break
        pick = privacy.exponential(
            junction_scores(state, pool, total, truth, noise, seen), sensitivity=float(delta),
            epsilon=eps_each, purpose=f"workload structure junction step {k + 1} of "
                                      f"{planned}: select a clique")
        spent += eps_each
        clique = pool[int(pick.value)]
        if sum(c for _, c in junction_tables(sizes, [*state.cliques, clique])) > cap:
            LOG.info("structure junction: step %d's pick would exceed generator.model_limit "
                     "(triangulation fill); its measuring ε passes on", k + 1)
            continue
        last = k == planned - 1
        release = measure(clique, epsilon - spent if last else eps_m)
        spent += epsilon - spent if last else eps_m
        child = forest.members(clique[-1])
        free = len(child) == 1
        join_clique(state, release, free)
        released.append((release, free))
        state.forget(child)
        placed |= child
        forest.add(clique[-2:])
        pair_sets |= {frozenset(p) for p in _pairs(clique)}
        LOG.debug("structure junction: step %d of %d: %s (%d candidates; model %s cells)",
                  k + 1, planned, " x ".join(clique), len(pool), f"{now:,}")
    if epsilon - spent > 1e-12 * epsilon:
        state = _remeasure(warm, released, measure, epsilon - spent, domain, measured)
    measured.extend(m for m, _ in released)
    return (to_model(state) if released else state.model), [m.clique for m, _ in released]


def _pairs(clique: Sequence[str]) -> list[tuple[str, str]]:
    """The column pairs inside a clique."""
    return [(a, b) for i, a in enumerate(clique) for b in clique[i + 1:]]


def _remeasure(warm: object, released: list[tuple[NoisyMarginal, bool]],
               measure: Callable[[Clique, float], NoisyMarginal], rest: float,
               domain: Domain, measured: list[NoisyMarginal]) -> Junction:
    """Spend the unused ε on the last clique again (averaged) and rebuild the joins; with no
    clique at all, on every 1-way marginal (the criteria's fit stands)."""
    state = Junction(warm)
    if not released:
        for name in domain.names:
            measured.append(measure((name,), rest / len(domain.names)))
        return state
    last, free = released[-1]
    released[-1] = (average(last, measure(last.clique, rest)), free)
    for m, was_free in released:
        join_clique(state, m, was_free)
        state.forget(frozenset(m.clique[-1:]))
    return state
