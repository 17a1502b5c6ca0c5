"""PrivBayes (Zhang, Cormode, Procopiuc, Srivastava, Xiao; SIGMOD 2014, TODS 2017): a DP Bayesian
network learnt greedily with the exponential mechanism, noisy conditionals, ancestral sampling.

Budget: ε₁ = epsilon_split·ε for the structure, split evenly over the d − 1 exponential-mechanism
choices; ε₂ = ε − ε₁ for the parameters, split evenly over the d noisy marginals (X_i, Π_i).
With a single column there is no structure to learn and the one marginal gets all of ε.
The number of records n is public in this scheme (Hod & Canetti §4.4.2); it enters the score
sensitivity and the θ-usefulness bound.

**Structure from a public proxy** (``structure: public``, issue 28; default ``dp``). The same
greedy search scores each (X, Π) by its exact I(X; Π) on a pinned public proxy (read through
the same view as R: every row, or the rows complete on the candidate's columns under a missing
strategy) and takes the best one instead of sampling with the exponential mechanism. The
network is then a function of public data and of the public draw of the first node, so it
costs no ε: ε₁ = 0 (``epsilon_split`` does not apply) and all of ε (after the missingness
share) goes to the d noisy marginals, ε/d each with the same Δ — still exactly ε, pure ε-DP
for the whole dataset, and the θ-usefulness bound uses ε₂ = ε. ``examples/adult_missing.json``
uses it (ε_gen 2; its TSTR gain over the majority class on an unseen Adult split:
``benchmarks/unseen_adult.py``). The proxy's file and pin: :mod:`workbench.generators.
public_structure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.arguments import check_epsilon, check_n
from workbench.generators.conditional import SAMPLING_PARAM, ConditionalTable, sample_plan
from workbench.generators.family import GeneratorFamily
from workbench.generators.measurement import noisy_marginal
from workbench.generators.missing import AS_VALUE, MISSING_PARAMS, layout_for, separate_layout
from workbench.generators.mutual_information import (
    mutual_information,
    mutual_information_sensitivity,
)
from workbench.generators.public_structure import (
    PublicStructure,
    log_public_structure,
    source_problems,
    structure_codes,
    structure_params,
    structure_words,
)
from workbench.specification.params import Param, open_interval, positive, whole_at_least
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification import Spec


def candidate_parent_sets(
    chosen: Sequence[int],
    child_size: int,
    sizes: Sequence[int],
    max_parents: int,
    max_cells: float,
    limit: int,
) -> list[tuple[int, ...]]:
    """Maximal parent sets Π ⊆ chosen with |Π| ≤ max_parents and |dom X|·|dom Π| ≤ max_cells.

    Maximal means no further chosen node can join without breaking a bound (PrivBayes's
    maximal parent sets for general domains). With an unbounded cell cap this is every
    min(k, |chosen|)-subset, the paper's fixed-degree candidates. At most ``limit`` sets are
    returned, in a fixed order that depends only on public quantities. If even the child alone
    breaks the cell cap, the empty parent set is the only candidate.

    >>> candidate_parent_sets([0, 1, 2], 2, [3, 4, 5], max_parents=2, max_cells=1e9, limit=10)
    [(0, 1), (0, 2), (1, 2)]
    >>> candidate_parent_sets([0, 1, 2], 2, [3, 4, 5], max_parents=9, max_cells=24, limit=10)
    [(0, 1), (2,)]
    """
    if child_size > max_cells:
        return [()]
    found: list[tuple[int, ...]] = []
    budget = [50 * limit]  # cap on visited subsets, so pathological domains stay cheap

    def extend(start: int, current: tuple[int, ...], cells: int) -> None:
        budget[0] -= 1
        if budget[0] < 0 or len(found) >= limit:
            return
        if len(current) < max_parents:
            for i in range(start, len(chosen)):
                grown = cells * sizes[chosen[i]]
                if grown <= max_cells:
                    extend(i + 1, (*current, chosen[i]), grown)
        full = len(current) >= max_parents
        maximal = full or all(cells * sizes[c] > max_cells for c in chosen if c not in current)
        if maximal and len(found) < limit:
            found.append(current)

    extend(0, (), child_size)
    return found or [()]


def _mi_delta(data: CellCounts, x: int, pi: tuple[int, ...], privacy: PrivacyContext) -> float:
    """Δ of I(X; Π): Lemma 1 at the public n, or at a missing-strategy view's public bound on
    the rows it reads (``ObservedCounts.mi_sensitivity``)."""
    domain = data.domain
    parents = domain.size([domain.names[p] for p in pi])
    if hasattr(data, "mi_sensitivity"):
        names = [domain.names[c] for c in (*pi, x)]
        return data.mi_sensitivity(names, domain.sizes[x], parents, privacy.neighbour)
    return mutual_information_sensitivity(data.n, domain.sizes[x], parents, privacy.neighbour)


class PrivBayes(PublicStructure, GeneratorFamily):
    """PrivBayes generator; hyperparameters as in the release's configuration space (§4.7).

    Give exactly one of ``degree`` (each node has at most k parents) or ``theta``
    (θ-usefulness: parents are allowed only while each noisy marginal keeps a signal-to-noise
    ratio of at least θ). ``max_cells`` caps the joint domain of any (X, Π) table and
    ``max_candidates`` the (X, Π) pairs scored per greedy step; both are data-independent.
    """

    name = "privbayes"
    description = ("a Bayesian network learnt with the exponential mechanism, its conditional "
                   "tables released with discrete Laplace (Zhang et al. 2014)")
    hyperparameters = MappingProxyType({
        "epsilon_split": Param(0.5, open_interval(0, 1), "share of ε for the structure",
                               control="number"),
        "theta": Param(None, positive, "θ-usefulness of every noisy marginal",
                       control="optional_number"),
        "degree": Param(None, whole_at_least(1), "k: at most k parents per node",
                        control="optional_number"),
        "max_cells": Param(1_000_000, whole_at_least(1), "cap on any (X, Π) table's cells",
                           control="whole_number"),
        "max_candidates": Param(5_000, whole_at_least(1), "(X, Π) pairs scored per step",
                                control="whole_number"),
        "sampling": SAMPLING_PARAM,
        **MISSING_PARAMS,
        **structure_params("GreedyBayes with the exponential mechanism, epsilon_split of ε"),
    })
    exactly_one_of = (("theta", "degree"),)

    @classmethod
    def models_jointly(cls, params: Mapping[str, Any], clique: Sequence[str]) -> bool | None:
        """With ``degree`` k no table holds more than k + 1 columns; otherwise the learnt
        network decides (None)."""
        degree = params.get("degree")
        if isinstance(degree, int) and not isinstance(degree, bool) and len(clique) > degree + 1:
            return False
        return None

    @classmethod
    def bound_problems(cls, spec: Spec, params: Mapping[str, Any]) -> list[str]:
        """A public structure names and pins its proxy, and spends no ε₁ (epsilon_split)."""
        out = source_problems(params)
        if params.get("structure") == "public" and params.get("epsilon_split") is not None:
            out.append("epsilon_split does not apply with structure: public (the structure "
                       "spends no ε; every marginal shares all of it)")
        return out

    def check_combination(self) -> None:
        """A public structure names and pins its proxy; a dp one names none."""
        for message in source_problems(self.get_params()):
            raise ValueError(f"{self.name}: {message}")

    def describe(self, label: str, epsilon: float) -> list[str]:
        """Where a public structure comes from (nothing to add for the default dp one)."""
        if not self.public:
            return []
        words = structure_words(self.get_params(), "")
        return [f"PrivBayes {label}: {words}; all of ε {epsilon:g} (after the missingness "
                "share, if any) to the noisy marginals"]

    def _structure_view(self, domain: Domain) -> CellCounts | None:
        """The public proxy in the view R is read through (None for a dp structure)."""
        if not self.public:
            return None
        codes = structure_codes(self)
        layout = layout_for(self.bound_spec_, domain, self.missing_strategy)
        if layout is None or self.missing_strategy == AS_VALUE:
            return CellCounts.from_codes(codes, domain)
        from workbench.generators.missing import ObservedCounts

        return ObservedCounts(codes, layout,
                              complete_rows=self.missing_strategy == "complete_rows")

    def theta_cell_bound(self, n: int, d: int, epsilon: float, sensitivity: float) -> float:
        """Largest |dom(X, Π)| that keeps a noisy marginal θ-useful.

        PrivBayes θ-usefulness (SIGMOD 2014 §4.3; general domains in TODS 2017): the average
        cell mass of a normalised table over |dom(X, Π)| cells is 1/|dom(X, Π)|, and its noise
        scale is d·Δ/(n·ε₂) (d marginals, ε₂/d each, Δ the count sensitivity). The ratio is
        ≥ θ iff |dom(X, Π)| ≤ n·ε₂ / (d·Δ·θ). With Δ = 2 and ε₂ = ε/2 this is the authors'
        reference-code bound ε·n/(4·d·θ).
        """
        eps2 = epsilon * (1 - self.epsilon_split) if d > 1 and not self.public else epsilon
        return n * eps2 / (d * sensitivity * float(self.theta))

    def fit(
        self, codes: np.ndarray, domain: Domain, epsilon: float, privacy: PrivacyContext
    ) -> PrivBayes:
        """Learn the network and its noisy conditionals, spending exactly ``epsilon``."""
        self.check_params()
        eps = check_epsilon(epsilon)
        self.structure_view_ = self._structure_view(domain)  # before any budget is spent
        # under 'as_value' the missing codes are values like any other (issue 36)
        layout = separate_layout(self.bound_spec_, domain, self.missing_strategy, codes)
        if layout is not None:  # 'allow' columns: the missing strategy (privbayes_missing)
            from workbench.generators.privbayes_missing import fit_with_missing

            self.pattern_ = fit_with_missing(self.missing_strategy, self.missingness_share,
                                             self.fit_view, codes, layout, eps, privacy)
            self.domain_, self.missing_layout_ = layout.domain, layout
            return self
        self.pattern_ = None
        self.fit_view(CellCounts.from_codes(codes, domain), eps, privacy)
        self.domain_ = domain
        return self

    def fit_view(self, data: CellCounts, eps: float, privacy: PrivacyContext,
                 impute: object = None) -> None:
        """Structure and conditionals of the value model from ``data`` (full rows, or an
        ``ObservedCounts`` view under a missing strategy), spending exactly ``eps``."""
        n, d = data.n, len(data.domain)
        if d == 0:
            raise ValueError("privbayes: the domain has no columns")
        if n < 2 and d > 1:
            raise ValueError(f"privbayes: structure learning needs n >= 2 records, got n={n}")
        eps1 = eps * self.epsilon_split if d > 1 and not self.public else 0.0
        eps2 = eps - eps1
        sens = privacy.histogram_sensitivity()
        if self.theta is not None:
            # θ-usefulness is a utility rule on public numbers: complete rows use their bound
            rows = (data.rows_bound(data.domain.names)
                    if getattr(data, "complete_rows", False) else n)
            self.cell_bound_ = min(float(self.max_cells),
                                   self.theta_cell_bound(rows, d, eps, sens))
            max_parents = d
        else:
            self.cell_bound_ = float(self.max_cells)
            max_parents = int(self.degree)
        network = self._learn_structure(data, eps1, max_parents, privacy)
        if impute is None:
            self._learn_parameters(data, network, eps2, privacy)
        else:
            self.network_, self.conditionals_, self._plan = impute(network, eps2)  # type: ignore[operator]
        self.structure_epsilon_ = eps1
        self.marginal_epsilon_ = eps2 / d
        self.marginal_noise_scale_ = d * sens / eps2

    def _learn_structure(
        self, data: CellCounts, eps1: float, max_parents: int, privacy: PrivacyContext
    ) -> list[tuple[int, tuple[int, ...]]]:
        """GreedyBayes: one exponential-mechanism choice of (X, Π) per step, ε₁/(d−1) each.

        Score: I(X; Π) in bits; sensitivity from ``mutual_information_sensitivity`` (PrivBayes
        Lemma 1), taking the largest Δ over the step's candidates, which depends only on public
        domain sizes and n. The first node is drawn uniformly at random and costs nothing.
        ``privacy.exponential`` runs OpenDP's noisy max at scale 2Δ/ε, whose map certifies
        ε-DP for scores of L∞ sensitivity Δ: the guarantee the paper's EM step needs.
        """
        domain, n = data.domain, data.n
        d = len(domain)
        sizes = domain.sizes
        public = getattr(self, "structure_view_", None)
        first = int(privacy.rng.integers(d))
        network: list[tuple[int, tuple[int, ...]]] = [(first, ())]
        if d == 1:
            return network
        chosen = [first]
        remaining = [j for j in range(d) if j != first]
        step_eps = eps1 / (d - 1)
        cache: dict[tuple[int, ...], np.ndarray] = {}
        if public is not None:
            log_public_structure(privacy, self.name, self.structure_proxy,
                                 self.structure_proxy_sha256)
        for step in range(1, d):
            candidates: list[tuple[int, tuple[int, ...]]] = []
            for x in remaining:
                left = self.max_candidates - len(candidates)
                if left <= 0:
                    break
                for pi in candidate_parent_sets(
                    chosen, sizes[x], sizes, max_parents, self.cell_bound_, left
                ):
                    candidates.append((x, pi))
            if public is not None:  # exact scores of public data: the best, no ε
                scores = np.array([self._score(public, x, pi, cache) for x, pi in candidates])
                x, pi = candidates[int(np.argmax(scores))]
                network.append((x, pi))
                chosen.append(x)
                remaining.remove(x)
                continue
            scores = np.array([self._score(data, x, pi, cache) for x, pi in candidates])
            delta = max(_mi_delta(data, x, pi, privacy) for x, pi in candidates)
            if delta == 0.0:  # every score is identically 0; any positive Δ is valid
                delta = mutual_information_sensitivity(n, 3, 3, privacy.neighbour)
            pick = privacy.exponential(
                scores,
                sensitivity=delta,
                epsilon=step_eps,
                purpose=f"privbayes structure: choose node and parents, step {step} of {d - 1}",
            )
            x, pi = candidates[int(pick.value)]
            network.append((x, pi))
            chosen.append(x)
            remaining.remove(x)
        return network

    @staticmethod
    def _score(
        data: CellCounts, x: int, pi: tuple[int, ...], cache: dict[tuple[int, ...], np.ndarray]
    ) -> float:
        """Exact I(X; Π) from a cached marginal; only ever passed into the exponential mechanism."""
        if not pi:
            return 0.0
        key = tuple(sorted((*pi, x)))
        if key not in cache:
            cache[key] = data.marginal(tuple(data.domain.names[c] for c in key))
        axes = [key.index(c) for c in (*pi, x)]
        table = np.transpose(cache[key], axes).reshape(-1, data.domain.sizes[x])
        return mutual_information(table)

    def _learn_parameters(
        self,
        data: CellCounts,
        network: list[tuple[int, tuple[int, ...]]],
        eps2: float,
        privacy: PrivacyContext,
    ) -> None:
        """Release each (Π_i, X_i) count table with ε₂/d, then derive P(X_i | Π_i).

        Sensitivity per table: Δ = privacy.histogram_sensitivity() (2 replace-one, 1
        add/remove), so the per-cell discrete-Laplace scale is Δ/(ε₂/d) = d·Δ/ε₂ (PrivBayes
        §4, TODS "NoisyConditionals" with d marginals). Clipping and normalising are
        post-processing.
        """
        names = data.domain.names
        d = len(names)
        self.network_: list[tuple[str, tuple[str, ...]]] = []
        self.conditionals_: dict[str, np.ndarray] = {}
        self._plan: list[tuple[int, tuple[int, ...], tuple[int, ...], ConditionalTable]] = []
        for x, pi in network:
            cols = tuple(names[c] for c in (*pi, x))
            noisy = noisy_marginal(
                data,
                cols,
                privacy,
                eps2 / d,
                purpose=f"privbayes marginal: {names[x]} | {', '.join(cols[:-1]) or '∅'}",
            )
            table = ConditionalTable.from_noisy_counts(noisy.reshape(-1, noisy.shape[-1]))
            parent_sizes = tuple(data.domain.sizes[p] for p in pi)
            self.network_.append((names[x], cols[:-1]))
            self.conditionals_[names[x]] = table.probs.reshape(noisy.shape)
            self._plan.append((x, pi, parent_sizes, table))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Ancestral sampling along the network (i.i.d. or rounded); never touches the data."""
        if not hasattr(self, "_plan"):
            raise RuntimeError("privbayes: call fit before sample")
        values = sample_plan(self._plan, check_n(n), len(self.domain_), rng, self.sampling)
        pattern = getattr(self, "pattern_", None)
        return values if pattern is None else pattern.apply(values, rng)
