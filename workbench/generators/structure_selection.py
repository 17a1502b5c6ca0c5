"""The workload's ``structure`` option: keep dependence that no criterion names (issue 36).

After the criteria's marginals are measured (algorithm "fixed" or "aim"), ``structure_share``
of ε_gen is spent on ``structure_rounds`` AIM-style rounds over the cliques nobody asked for:
every column pair not inside an already measured clique (``pairs``), plus, with
``pairs_triples``, every triple that extends a pair these rounds already selected. Each round
spends :data:`SELECT_SHARE` of its ε on choosing one candidate with the exponential mechanism
(``privacy.exponential``, OpenDP's noisy max) and the rest on measuring it with discrete
Laplace (``measure_marginal``), then refits the model warm (AIM, McKenna et al. 2022).

**Score and its sensitivity.** A candidate c scores ‖M_c(D) − M_c(p̂)‖₁ − E‖noise_c‖₁ (AIM's
score, every candidate weighted 1: none is named by a criterion), with
E‖noise_c‖₁ = cells(c)·σ/√2 for discrete Laplace of std σ at the round's measuring ε. p̂ is the
current model (a DP output); its pair tables are read from a public sample of it (mbi's
``project`` on a pair outside the model's cliques costs ~0.2 s, too slow for 435 pairs per
round), so only M_c(D) reads the data. A record sits in one cell of M_c(D): replacing one moves
‖M_c(D) − x‖₁ by ≤ 2, adding or removing one by ≤ 1, so every score moves by at most
Δ = ``privacy.histogram_sensitivity()``, the noisy max's sensitivity.

**The model budget.** A candidate is eligible only if the junction tree of every clique
measured so far plus it stays within ``generator.model_limit`` (cells, and cells × 8 B ×
``COPIES`` within bytes), with :func:`~workbench.generators.model_limit.junction_tables` (mbi's
own triangulation) on the model's domain sizes: AIM's own size filter. The size guard's
spec-time estimate is therefore the budget itself (``model_size``), never the realised
selection. If no candidate fits before anything is spent, :func:`refusal` says so (the fit
raises, exit 2); if candidates run out during the rounds, the remaining ε re-measures the
1-way marginals, so Σ ε = ε_gen exactly and nothing is left unspent.

With ``allow`` columns the rounds read and measure through the missing strategy's own view
(observed rows, or the imputed ones), so a score compares a table of fewer than n rows with the
model's n-row table: biased towards cliques with fewer missing values, its Δ unchanged.
Cost: every round adds a clique, so the mirror descent compiles once more for the new model
shape (JAX's persistent cache makes a repeated selection cheap); keep ``structure_rounds`` small.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal, estimate, sampling_plan
from workbench.generators.model_limit import Clique, ModelLimit, cap_cells, junction_tables
from workbench.generators.structure_tree import LOG, tree_refusal
from workbench.privacy.records import discrete_laplace_sigma
from workbench.specification.params import Param, one_of, open_interval, whole_at_least

if TYPE_CHECKING:
    from workbench.generators.workload import Workload
    from workbench.privacy import PrivacyContext
    from workbench.transform import Domain

STRUCTURE_CHOICES = ("none", "pairs", "pairs_triples", "tree", "tree_pairs", "junction")
#: Share of each structure round's ε spent on selecting the clique (AIM uses 10%).
SELECT_SHARE = 0.1
#: Rows of the public model sample the rounds read p̂'s pair tables from (at least n).
MODEL_SAMPLE = 50_000

STRUCTURE_PARAMS = MappingProxyType({
    "structure": Param("none", one_of(*STRUCTURE_CHOICES),
                       "unnamed structure: 'none', adaptive 'pairs', 'pairs_triples' (triples "
                       "that extend a selected pair), 'tree' (a spanning forest of pairs, one "
                       "refit), 'tree_pairs' (the tree, then the rounds) or 'junction' (a "
                       "width-2 junction tree: each component joins a placed column or edge, "
                       "no refit), within generator.model_limit",
                       control="choice", choices=STRUCTURE_CHOICES),
    "structure_share": Param(0.2, open_interval(0, 1),
                             "share of ε_gen spent on selecting and measuring unnamed cliques",
                             control="number"),
    "structure_rounds": Param(3, whole_at_least(1),
                              "rounds of unnamed-structure selection (one refit each)",
                              control="whole_number"),
    "structure_picks": Param(1, whole_at_least(1),
                             "cliques selected per structure round (against one model)",
                             control="whole_number"),
    "structure_select_share": Param(SELECT_SHARE, open_interval(0, 1),
                                    "tree, junction: share of the structure's ε spent selecting "
                                    "edges or cliques (the rest measures them)",
                                    control="number"),
    "structure_edges": Param(0, whole_at_least(0),
                             "tree, junction: most edges or cliques to add (0: join "
                             "every component)",
                             control="whole_number"),
})


def tree_cells(sizes: dict[str, int], cliques: Sequence[Clique]) -> int:
    """Cells of the junction tree over ``cliques`` (mbi's triangulation)."""
    return sum(c for _, c in junction_tables(sizes, list(cliques)))


def candidates(names: Sequence[str], measured: Sequence[Clique], chosen: Sequence[Clique],
               triples: bool) -> list[Clique]:
    """Pairs (and triples extending a chosen pair) not inside any measured clique."""
    inside = [set(q) for q in measured]
    order = {n: i for i, n in enumerate(names)}
    out: list[Clique] = []
    for pair in itertools.combinations(names, 2):
        if not any(set(pair) <= q for q in inside):
            out.append(pair)
    if triples:
        for pair in (q for q in chosen if len(q) == 2):
            for extra in names:
                tri = tuple(sorted({*pair, extra}, key=order.__getitem__))
                if len(tri) == 3 and tri not in out and not any(set(tri) <= q for q in inside):
                    out.append(tri)
    return out


def eligible(sizes: dict[str, int], measured: Sequence[Clique], pool: Sequence[Clique],
             limit: ModelLimit) -> list[Clique]:
    """The candidates whose addition keeps the junction tree within the model budget."""
    cap = cap_cells(limit)
    return [c for c in pool if tree_cells(sizes, [*measured, c]) <= cap]


def refusal(domain: Domain, cliques: Sequence[Clique], limit: ModelLimit,
            triples: bool) -> str | None:
    """Why the structure rounds cannot add anything (public: spec cliques and sizes), or None."""
    sizes = dict(zip(domain.names, (int(s) for s in domain.sizes), strict=True))
    pool = candidates(domain.names, cliques, (), triples)
    if not pool:
        return ("generator structure: every column pair is already inside a criterion's "
                "marginal, so there is no unnamed structure to select; use structure 'none'")
    if not eligible(sizes, cliques, pool, limit):
        return (f"generator structure: no unnamed pair fits within generator.model_limit "
                f"({cap_cells(limit):,} cells with the criteria's marginals); use structure "
                "'none', coarser bins, or raise generator.model_limit")
    return None


def structure_epsilon(structure: str, share: float, domain: Domain, workload: Workload,
                      eps: float, limit: ModelLimit) -> float:
    """ε of the structure rounds (0 without them); refuses, before any charge, when no
    unnamed pair fits the model budget beside every clique the workload may measure."""
    if structure == "none":
        return 0.0
    cliques = [(c,) for c in domain.names] + [i.clique for i in workload.items if i.weight > 0]
    if structure.startswith("tree") or structure == "junction":
        sizes = dict(zip(domain.names, (int(s) for s in domain.sizes), strict=True))
        problem = tree_refusal(sizes, cliques, limit)
        if problem and structure == "junction":
            problem = problem.replace("a tree has no edge to add", "a junction has nothing to join")
    else:
        problem = refusal(domain, cliques, limit, structure == "pairs_triples")
    if problem:
        raise ValueError(problem + "; nothing was spent")
    return eps * float(share)


def _tables(codes: np.ndarray, counts: np.ndarray | None, sizes: Sequence[int],
            cols: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """Count tables over each column tuple, by integer flat indices and one bincount each."""
    out = []
    for idx in cols:
        shape = tuple(int(sizes[i]) for i in idx)
        flat = np.zeros(codes.shape[0], dtype=np.int64)
        for i, s in zip(idx, shape, strict=True):
            flat = flat * s + codes[:, i]
        table = np.bincount(flat, weights=counts, minlength=math.prod(shape))
        out.append(table.reshape(shape))
    return out


def run_structure(
    domain: Domain,
    measured: list[NoisyMarginal],
    total: int,
    truth: Callable[[Clique], np.ndarray],
    measure: Callable[[Clique, float], NoisyMarginal],
    *,
    epsilon: float,
    rounds: int,
    triples: bool,
    limit: ModelLimit,
    privacy: PrivacyContext,
    iters: int,
    warm: object | None = None,
    picks: int = 1,
) -> tuple[object, list[Clique]]:
    """Spend exactly ``epsilon`` on the rounds (module doc); the final estimate and the choice.

    Each round makes ``picks`` selections against the same model (one refit per round, so
    ``picks`` > 1 trades fresher scores for fewer compiles); each pick's select and measure
    ε is the round's divided by ``picks``. ``truth`` gives a clique's confidential counts
    (read only inside the scores, whose Δ the module doc derives); ``measure`` releases one
    through the privacy layer at an ε.
    """
    sizes = dict(zip(domain.names, (int(s) for s in domain.sizes), strict=True))
    delta = privacy.histogram_sensitivity()
    eps_step = epsilon / (rounds * picks)
    eps_select, eps_measure = SELECT_SHARE * eps_step, (1 - SELECT_SHARE) * eps_step
    noise = discrete_laplace_sigma(delta, eps_measure) / math.sqrt(2.0)
    refit = max(1, iters // 4)
    model = warm if warm is not None else estimate(domain, measured, total, refit)
    chosen: list[Clique] = []
    cache: dict[Clique, np.ndarray] = {}
    spent = 0.0
    for r in range(rounds):
        sample = sampling_plan(domain, model).sample(max(total, MODEL_SAMPLE), privacy.rng)
        scale = total / sample.shape[0]
        for k in range(picks):
            cliques = [m.clique for m in measured]
            pool = eligible(sizes, cliques, candidates(domain.names, cliques, chosen, triples),
                            limit)
            if not pool:  # nothing left that fits: the rest re-measures the 1-way marginals
                rest = epsilon - spent
                for name in domain.names:
                    measured.append(measure((name,), rest / len(domain.names)))
                return estimate(domain, measured, total, iters, warm=model), chosen
            fitted = _tables(sample, None, domain.sizes,
                             [tuple(domain.index(c) for c in q) for q in pool])
            for q in pool:
                if q not in cache:
                    cache[q] = np.asarray(truth(q), dtype=np.float64)
            scores = [float(np.abs(cache[q] - scale * f).sum()) - noise * domain.size(q)
                      for q, f in zip(pool, fitted, strict=True)]
            pick = privacy.exponential(
                scores, sensitivity=float(delta), epsilon=eps_select,
                purpose=f"workload structure round {r + 1}.{k + 1}: select a clique")
            clique = pool[int(pick.value)]
            chosen.append(clique)
            LOG.debug("structure round %d.%d of %d: %s (%d candidates were left)", r + 1,
                     k + 1, rounds, " x ".join(clique), len(pool))
            last = r == rounds - 1 and k == picks - 1
            eps_m = epsilon - spent - eps_select if last else eps_measure
            measured.append(measure(clique, eps_m))
            spent += eps_select + eps_m
        steps = iters if r == rounds - 1 else refit
        LOG.info("structure round %d of %d: refitting (%d steps; a new model shape compiles); "
                 "ε %.4g of %.4g left", r + 1, rounds, steps, epsilon - spent, epsilon)
        model = estimate(domain, measured, total, steps, warm=model)
    return model, chosen
