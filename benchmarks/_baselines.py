"""Benchmark-only baselines for ``public_measurements.py``: JAM-PGM and OpenDP's AIM.

Both take ``fit(codes, domain, ε, ctx)`` with ε the REPLACE-ONE ε_gen, and ``sample(n, rng)``,
so the benchmark runs them through the workbench's own post-processing and criteria.

**JAM-PGM** (Fuentes, Mullins, McKenna, Miklau and Sheldon, AISTATS 2024): the joint selection
loop of the authors' ``jam_pgm.py`` on mbi, with pure-ε parts so that it runs at the same
replace-one ε as the workbench. Kept as in the paper's code: candidates are the downward closure
of the workload (here the spec's derived cliques); ``rounds`` (30) rounds, each splitting the
remaining budget evenly over the remaining rounds, a share α = 0.2 to select; the model-size
filter (80 MB, grown with the budget spent); one exponential mechanism over 2·|candidates|
options — private, score ‖x − m‖₁ − E‖noise‖₁ (first round −E‖noise‖₁), and public, score
‖x − m‖₁ − ‖x − p‖₁ (first round −‖x − p‖₁) with p the public marginal scaled to n — with the
code's score sensitivity 4 (replace-one: each L1 term moves by 2); a public choice spends only
the selection; every measurement enters the estimate with weight 1 (public and private alike);
the model is re-estimated after every round (warm-started, at most ``optim_iters`` steps).
Changed for pure ε: the exponential mechanism is OpenDP's noisy max at the round's selection ε
(``ctx.exponential``) and a private measurement is discrete Laplace at (1 − α)·ε_round with
Δ = 2 (``ctx.discrete_laplace``), so E‖noise‖₁ is discrete Laplace's. Left out: the code's
second, unaccounted exponential-mechanism draw that only prints a diagnostic gap.

**AIM** (McKenna et al., VLDB 2022) is OpenDP 0.16's ``dp.mbi.AIM`` on the spec's workload
cliques (``Count`` with their weights), and **MST** (McKenna, Miklau and Sheldon 2021) its
``dp.mbi.MST`` (default settings: 1-way tables, then the maximum spanning tree of pairs); both
pure ε under add/remove with ε = replace-one ε / 2 (:func:`add_remove_epsilon`), sampled with
``method="sample"`` (``"round"`` gave near-independent rows on the births design); rows in
OpenDP's extra null category are dropped and drawn again (post-processing). Their noise is
OpenDP's own and cannot be seeded.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from workbench.generators.mbi_model import NoisyMarginal, estimate, model_marginal, sampling_plan
from workbench.generators.measurement import measure_marginal
from workbench.generators.workload import Workload
from workbench.generators.workload_public import expected_l1
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

Clique = tuple[str, ...]
#: JAM-PGM's score sensitivity under replace-one (``score_sensitivity = 4`` in jam_pgm.py).
JAM_SCORE_SENSITIVITY = 4.0


def downward_closure(cliques: Sequence[Clique]) -> list[Clique]:
    """Every non-empty subset of every clique, smallest first (JAM's candidate set)."""
    out = {sub for c in cliques for r in range(1, len(c) + 1)
           for sub in itertools.combinations(c, r)}
    return sorted(out, key=lambda c: (len(c), c))


class JamPgm:
    """JAM-PGM's joint selection loop with pure-ε parts (module docstring)."""

    def __init__(self, workload: Sequence[Clique], public: CellCounts, *, rounds: int = 30,
                 alpha: float = 0.2, optim_iters: int = 1000, size_limit: float = 80.0,
                 sampling: str = "rounded") -> None:
        self.candidates = downward_closure(workload)
        self.public, self.rounds, self.alpha = public, rounds, alpha
        self.optim_iters, self.size_limit, self.sampling = optim_iters, size_limit, sampling

    def _fits(self, domain: Domain, taken: list[Clique], clique: Clique, limit: float) -> bool:
        """JAM's size filter: the model with ``clique`` added stays under ``limit`` MB."""
        import mbi
        from mbi import junction_tree

        if clique in taken:
            return True
        mdomain = mbi.Domain(domain.names, domain.sizes)
        return junction_tree.hypothetical_model_size(mdomain, [*taken, clique]) <= limit

    def fit(self, codes: np.ndarray, domain: Domain, epsilon: float, ctx) -> JamPgm:
        """The selection loop; spends at most ``epsilon`` (a public last round saves its
        measurement share, as in the paper's code)."""
        data = CellCounts.from_codes(codes, domain)
        n, delta = data.n, ctx.histogram_sensitivity()
        scale = n / self.public.n
        truth = {c: data.marginal(c) for c in self.candidates}  # confidential
        pub = {c: self.public.marginal(c) * scale for c in self.candidates}
        pub_error = {c: float(np.abs(truth[c] - pub[c]).sum()) for c in self.candidates}
        measured: list[NoisyMarginal] = []
        model, used = None, 0.0
        self.chosen_: list[tuple[Clique, str]] = []
        for t in range(self.rounds):
            per_round = (epsilon - used) / (self.rounds - t)
            eps_select, eps_measure = self.alpha * per_round, (1 - self.alpha) * per_round
            taken = [m.clique for m in measured]
            limit = self.size_limit * (1 / self.rounds if t == 0 else used / epsilon)
            cands = [c for c in self.candidates if self._fits(domain, taken, c, limit)]
            noise = {c: expected_l1(delta, eps_measure, domain.size(c)) for c in cands}
            err = {c: 0.0 if model is None else
                   float(np.abs(truth[c] - model_marginal(model, c)).sum()) for c in cands}
            scores = ([err[c] - noise[c] for c in cands] + [err[c] - pub_error[c] for c in cands])
            pick = ctx.exponential(scores, sensitivity=JAM_SCORE_SENSITIVITY, epsilon=eps_select,
                                   purpose=f"jam-pgm round {t + 1}: select").value
            used += eps_select
            clique = cands[pick % len(cands)]
            if pick < len(cands):
                noisy = measure_marginal(data, clique, eps_measure, ctx)
                measured.append(NoisyMarginal(clique, noisy.counts, 1.0))
                used += eps_measure
                self.chosen_.append((clique, "private"))
            else:
                measured.append(NoisyMarginal(clique, pub[clique], 1.0))
                self.chosen_.append((clique, "public"))
            model = estimate(domain, measured, n, self.optim_iters, warm=model)
        self.epsilon_spent_ = used
        self.model_ = sampling_plan(domain, model)
        return self

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n rows along the fitted model (post-processing)."""
        return self.model_.sample(n, rng, self.sampling)


def add_remove_epsilon(replace_one: float) -> float:
    """The add/remove ε at which an OpenDP peer runs so that it is replace-one ``replace_one``-DP.

    Replacing a record is removing it and adding another: an ε′-DP mechanism under add/remove
    is 2ε′-DP under replace-one (two steps of group privacy), so ε′ = ε_gen / 2.
    """
    return replace_one / 2


class OpenDPPeer(ABC):
    """An OpenDP contingency-table algorithm as a generator, pure ε add/remove at ε_gen / 2."""

    #: the name the benchmarks print
    label = ""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload

    @abstractmethod
    def algorithm(self, dp):
        """The ``dp.mbi`` algorithm object this peer releases its table with."""

    def fit(self, codes: np.ndarray, domain: Domain, epsilon: float, ctx) -> OpenDPPeer:
        """Release the contingency table with OpenDP (its own noise and accounting);
        ``epsilon`` is the replace-one ε_gen."""
        import opendp.prelude as dp
        import polars as pl

        dp.enable_features("contrib")
        frame = pl.LazyFrame({name: codes[:, j] for j, name in enumerate(domain.names)})
        keys = {name: list(range(size)) for name, size in zip(domain.names, domain.sizes,
                                                              strict=True)}
        half = add_remove_epsilon(epsilon)
        context = dp.Context.compositor(data=frame, privacy_unit=dp.unit_of(contributions=1),
                                        privacy_loss=dp.loss_of(epsilon=half))
        self.table_ = (context.query(epsilon=half).select(*domain.names)
                       .contingency_table(keys=keys, algorithm=self.algorithm(dp))
                       .release())
        self.epsilon_add_remove_ = half
        self.domain_ = domain
        return self

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n rows by OpenDP's ``synthesize(method="sample")``; null-category rows drawn again."""
        np.random.seed(int(rng.integers(2**31)))  # mbi samples from numpy's global state
        rows: list[np.ndarray] = []
        need = n
        while need > 0:
            frame = self.table_.synthesize(rows=need, method="sample")
            arr = frame.select(list(self.domain_.names)).drop_nulls().to_numpy()
            rows.append(arr.astype(np.int64))
            need -= arr.shape[0]
        return np.concatenate(rows)[:n]


class OpenDPAim(OpenDPPeer):
    """OpenDP's AIM on the workload's cliques (``Count`` with their weights)."""

    label = "AIM"

    def algorithm(self, dp):
        """AIM over the workload's positively weighted cliques."""
        queries = [dp.mbi.Count(item.clique, weight=float(item.weight))
                   for item in self.workload.items if item.weight > 0]
        return dp.mbi.AIM(queries=queries)


class OpenDPMst(OpenDPPeer):
    """OpenDP's MST (it chooses its own pairs; the workload is not read)."""

    label = "MST"

    def algorithm(self, dp):
        """MST with OpenDP's defaults."""
        return dp.mbi.MST()
