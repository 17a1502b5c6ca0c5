"""Private-PGM post-processing: fit one consistent graphical model to already-noisy marginals.

The noisy marginals come from ``workbench.privacy`` (discrete Laplace, pure ε, in the ledger);
this module only post-processes them with the ``mbi`` package (McKenna et al., "Graphical-model
based estimation and inference for differential privacy", ICML 2019) and samples records with
the run's numpy Generator. ``mbi`` (and JAX) are imported lazily: they are the ``mbi`` extra.

Sampling runs along the junction tree's elimination order, either i.i.d. (the equivalent of
``MarkovRandomField.synthetic_data(method="sample")``) or with every conditional's counts
rounded per parent group (``method="round"``, mbi's default). ``mbi``'s own sampler draws from
numpy's global random state, so it is not used; ours takes the run's Generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.generators.conditional import ConditionalTable, sample_plan
from workbench.transform import Domain

Clique = tuple[str, ...]


@dataclass(frozen=True)
class NoisyMarginal:
    """A released count table over ``clique`` (axes in clique order) and its noise std."""

    clique: Clique
    counts: np.ndarray
    sigma: float


def _require_mbi():
    """Import mbi, naming the extra to install when it is missing."""
    try:
        import mbi
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the 'workload' generator needs the mbi extra: pip install 'release-workbench[mbi]'"
        ) from exc
    return mbi


def lipschitz(
    domain: Domain, measured: Sequence[NoisyMarginal], cliques: Sequence[Clique]
) -> float:
    """Exact Lipschitz constant of ∇ of mbi's L2 loss, instead of its 50-step power iteration.

    mbi projects each measurement c from the first loss clique K ⊇ c, so the Hessian is block
    diagonal with blocks Σ_{c→K} P_cᵀP_c/σ_c², where P_c sums |K|/|c| cells into each cell of c.
    The all-ones vector is a top eigenvector of every P_cᵀP_c (eigenvalue |K|/|c|), hence of
    their sum: L = max_K Σ_{c→K} (|K|/|c|)/σ_c².
    """
    blocks: dict[Clique, float] = {}
    for m in measured:
        parent = next(k for k in cliques if set(m.clique) <= set(k))
        ratio = domain.size(parent) / domain.size(m.clique)
        blocks[parent] = blocks.get(parent, 0.0) + ratio / max(m.sigma, 1e-12) ** 2
    return max(blocks.values())


@dataclass
class GraphicalModel:
    """A fitted model and its ancestral-sampling plan (all post-processing of noisy counts)."""

    domain: Domain
    plan: list[tuple[int, tuple[int, ...], tuple[int, ...], ConditionalTable]]

    def sample(self, n: int, rng: np.random.Generator, sampling: str = "iid",
               dtype: np.dtype | type = np.int64) -> np.ndarray:
        """n rows of codes along the plan: i.i.d. draws, or counts rounded per parent group
        (``dtype``: the codes', e.g. the narrow one of the data the model was fitted on)."""
        return sample_plan(self.plan, n, len(self.domain), rng, sampling, dtype)


def _conditional(marginal: np.ndarray) -> ConditionalTable:
    """P(last axis | other axes) from a non-negative table; empty parent rows become uniform."""
    table = np.clip(np.asarray(marginal, dtype=np.float64), 0.0, None)
    return ConditionalTable.from_noisy_counts(table.reshape(-1, table.shape[-1]))


def estimate(
    domain: Domain,
    measured: Sequence[NoisyMarginal],
    total: float,
    iters: int,
    warm: object | None = None,
) -> object:
    """Mirror descent on the L2 loss Σ‖μ_c − y_c‖²/(2σ_c²) until it converges, at most
    ``iters`` steps (:mod:`workbench.generators.mbi_descent`); ``warm`` is a previous estimate
    whose potentials start the descent (AIM refits after every new measurement)."""
    _require_mbi()
    from mbi.marginal_loss import maximal_subset

    from workbench.generators.mbi_descent import mirror_descent

    cliques = maximal_subset([m.clique for m in measured])
    model, _info = mirror_descent(
        domain, [(m.clique, m.counts, m.sigma) for m in measured], cliques,
        lipschitz(domain, measured, cliques), total, iters,
        potentials=warm.potentials if warm is not None else None)
    return model


def model_marginal(model: object, clique: Clique) -> np.ndarray:
    """The estimate's count table over ``clique`` (axes in clique order)."""
    return np.asarray(model.project(clique).datavector(flatten=False))


def sampling_plan(domain: Domain, model: object) -> GraphicalModel:
    """The ancestral-sampling plan of an estimate along its junction tree's elimination order."""
    from mbi import junction_tree

    from workbench.generators.mbi_numpy import log_factors, marginal

    mdomain = model.domain
    factors, sizes = log_factors(model)
    jtree, order = junction_tree.make_junction_tree(mdomain, model.cliques)
    nodes = [set(node) for node in jtree.nodes]
    plan = []
    used: list[str] = []
    for name in reversed(order):
        near = set().union(*(node for node in nodes if name in node))
        parents = tuple(c for c in used if c in near)
        # numpy, not mbi's op-by-op JAX elimination (compiles per shape: mbi_numpy)
        table = marginal(factors, sizes, (*parents, name), float(model.total))
        idx = tuple(domain.index(p) for p in parents)
        plan.append(
            (domain.index(name), idx, tuple(domain.sizes[i] for i in idx), _conditional(table))
        )
        used.append(name)
    return GraphicalModel(domain, plan)


def fit_graphical_model(
    domain: Domain, measured: Sequence[NoisyMarginal], total: float, iters: int
) -> GraphicalModel:
    """Estimate from the noisy marginals, then the sampling plan (all post-processing)."""
    return sampling_plan(domain, estimate(domain, measured, total, iters))
