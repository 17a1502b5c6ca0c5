"""The ``plausible_deniability`` family (Bindschaedler, Shokri & Gunter, VLDB 2017).

``fit`` splits R at random into disjoint D_T (structure), D_P (parameters) and D_S (seeds) with
the public fractions ``split_structure`` and ``split_parameters`` (seeds: the rest). Structure
and parameters each spend the whole ε_gen, on disjoint parts: parallel composition charges
max(ε_T, ε_P) = ε_gen (:mod:`workbench.privacy.parallel`, the reason in the ledger).

**Structure from a public proxy** (``structure: public``, issue 28; default ``dp``, the
paper's): the same CFS search on a pinned public proxy, no ε and no record of R, D_T empty
and its share given to D_P; why, and why Theorem 1's per-record (ε, δ) does not move, in
:mod:`~workbench.generators.plausible_deniability.splits`.

``sample(n)`` is *not* post-processing: it draws seeds from D_S, makes candidates with ω
(uniform in [omega_min, omega_max], a public draw) and releases one only if it passes the
randomized Test 2 (:func:`workbench.privacy.plausible.privacy_test`) with fresh noise per
candidate, until n pass (at most ``max_attempts``·n candidates, else the iteration fails).
Its promise is Thm 1's per-record (ε, δ), stated by :meth:`guarantee` as "per-record plausible
deniability (ε, δ)" — never ε-DP — with ε = ε_PD + Σε_criteria (a seed also enters the
criteria that gate the release; issue 34).

**Nothing published varies with the data except DP outputs** (issue 24). Candidates are made
in batches of a public size, :func:`batch_size` (a function of n and the declared cap
``max_attempts``·n only), never sized from how many passed so far: such sizes, written to the
ledger, inverted to the number of candidates that passed Test 2, a count no bound covers. The
ledger gets one line per sampling plan (k, γ, ε₀, n, the batch size, the cap), not one per
batch; how many batches ran stays in the process.

**A single attempt only (T = 1).** What is ε-DP here: the model (structure on D_T,
parameters on D_P, max(ε_T, ε_P) = ε_gen), and each criterion's noisy value *given the
candidate*. The candidate S itself is not: it holds records resynthesised from seeds of D_S
and carries only the per-record (ε, δ), and whether enough candidates pass Test 2 (else ⊥)
depends on the data. So one iteration is not ε₁-DP, and Liu–Talwar's theorem, which prices a
loop by composing ε₁-DP iterations, does not cover a loop that selects among such candidates
(the choice among tries would leak through which records are released). We restrict the
family to T = 1 (the validator refuses ``selection.max_iterations`` ≠ 1 for it, naming the
field): there is no selection to account for, ε_total = ε₁ (+ once-statistics) pays for the
model and the criteria, and the records carry Thm 1's bound plus the criteria's ε. The
alternative — run the loop and state that selection is not covered — would publish a release
whose budget line is not a bound at all; a curator who wants several tries can rehearse them
on the public proxy.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.arguments import check_epsilon, check_n
from workbench.generators.family import GeneratorFamily, GeneratorShortfall, Guarantee
from workbench.generators.plausible_deniability.model import (
    PrefixIndex,
    noisy_model,
    synthesize,
)
from workbench.generators.plausible_deniability.splits import shares, structure_problems
from workbench.generators.plausible_deniability.structure import (
    bucket_maps,
    noisy_structure,
    public_structure,
)
from workbench.generators.public_structure import (
    PublicStructure,
    log_public_structure,
    structure_codes,
    structure_params,
    structure_words,
)
from workbench.privacy.parallel import parallel_composition
from workbench.privacy.plausible import (
    log_test_plan,
    privacy_test,
    smallest_epsilon,
    theorem1,
)
from workbench.specification.params import (
    Param,
    open_interval,
    optional,
    positive,
    whole_at_least,
)

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Spec
    from workbench.transform import Domain

LABEL = "per-record plausible deniability (ε, δ)"
KIND = "per_record_plausible_deniability"
#: a batch holds at least this many candidates (vectorised Test 2 stays cheap)
MIN_BATCH = 1024
#: … and otherwise BATCH_FACTOR·n of them (Bindschaedler et al. report pass rates near ½)
BATCH_FACTOR = 2


def _above_one(value: Any) -> str | None:
    """A number > 1 (γ)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 1
    return None if ok else "must be a number > 1"


def split_indices(n: int, structure: float, parameters: float, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint row indices (D_T, D_P, D_S) of sizes ⌊f_T·n⌋, ⌊f_P·n⌋ and the rest, drawn by a
    uniform permutation (independent of the values, as parallel composition needs).

    >>> t, p, s = split_indices(10, 0.2, 0.3, np.random.default_rng(0))
    >>> len(t), len(p), len(s), len(set(t) | set(p) | set(s))
    (2, 3, 5, 10)
    """
    perm = rng.permutation(n)
    n_t, n_p = int(structure * n), int(parameters * n)
    return perm[:n_t], perm[n_t:n_t + n_p], perm[n_t + n_p:]


def batch_size(n: int, cap: int) -> int:
    """The public batch size: max(MIN_BATCH, BATCH_FACTOR·n), never above the cap
    ``max_attempts``·n. A function of n and the declared cap only, never of the data.

    >>> batch_size(3000, 20 * 3000), batch_size(100, 20 * 100)
    (6000, 1024)
    """
    return max(1, min(int(cap), max(MIN_BATCH, BATCH_FACTOR * int(n))))


class PlausibleDeniability(PublicStructure, GeneratorFamily):
    """Seeded partial resynthesis from a DP Bayesian network, released through Test 2."""

    name = "plausible_deniability"
    description = ("seeded synthesis: each record starts from a real seed, its last ω columns "
                   "resampled from a DP Bayesian network, released only if at least k seeds "
                   "could have produced it (Bindschaedler et al. 2017); per-record (ε, δ)")
    hyperparameters = MappingProxyType({
        "omega_min": Param(5, whole_at_least(1), "smallest ω (columns resampled per record)",
                           control="whole_number"),
        "omega_max": Param(None, optional(whole_at_least(1)), "largest ω (unset: all m)",
                           control="optional_number"),
        "k": Param(50, whole_at_least(2), "plausible seeds a record needs (Test 2)",
                   control="whole_number"),
        "gamma": Param(4.0, _above_one, "γ: width of the probability bands (γ > 1)",
                       control="number"),
        "epsilon_0": Param(1.0, positive, "ε₀ of the test's noise, Lap(1/ε₀)", control="number"),
        "t": Param(None, optional(whole_at_least(1)), "Thm 1's t (unset: best t at delta_max)",
                   control="optional_number"),
        "delta_max": Param(2.0 ** -30, open_interval(0, 1), "δ ceiling when t is unset",
                           control="number"),
        **structure_params("noisy-entropy CFS on D_T"),
        "split_structure": Param(None, optional(open_interval(0, 1)), "share of R in D_T "
                                 "(structure; unset: 0.25; must be unset with structure: "
                                 "public)", control="optional_number", placeholder="0.25"),
        "split_parameters": Param(None, optional(open_interval(0, 1)), "share of R in D_P "
                                  "(parameters; unset: 0.25, or 0.5 with structure: public)",
                                  control="optional_number", placeholder="0.25 (public: 0.5)"),
        "maxcost": Param(64, whole_at_least(1), "cap on Π buckets of a column's parents",
                         control="whole_number"),
        "buckets": Param(8, whole_at_least(2), "public buckets per parent column",
                         control="whole_number"),
        "dirichlet_prior": Param(1.0, positive, "α of the Dirichlet posterior", control="number"),
        "max_attempts": Param(20, whole_at_least(1), "candidates per wanted record, at most "
                              "(the declared cap)", control="whole_number"),
    })
    #: one iteration is not ε₁-DP: the validator refuses selection.max_iterations ≠ 1
    single_attempt_only = True

    #: (D_T, D_P) shares of R, the unset ones at their defaults for the structure
    shares = staticmethod(shares)

    @classmethod
    def bound_problems(cls, spec: Spec, params: dict[str, Any]) -> list[str]:
        """The structure's source and the splits, reported by the spec validator."""
        return structure_problems(dict(params))

    def check_combination(self) -> None:
        """The structure's source and the splits agree; t below k; ω's range ordered."""
        for message in structure_problems(self.get_params()):
            raise ValueError(f"{self.name}: {message}")
        if self.t is not None and self.t >= self.k:
            raise ValueError(f"{self.name}: t must be < k")
        if self.omega_max is not None and self.omega_max < self.omega_min:
            raise ValueError(f"{self.name}: omega_max must be >= omega_min")
        self.record_bound()  # a δ ceiling no t meets fails here, before any budget is spent

    def record_bound(self) -> Any:
        """Thm 1's (ε, δ, t): at the spec's t, or the smallest ε with δ ≤ delta_max."""
        if self.t is not None:
            return theorem1(self.k, self.gamma, self.epsilon_0, self.t)
        return smallest_epsilon(self.k, self.gamma, self.epsilon_0, self.delta_max)

    def structure_words(self) -> str:
        """Where the network's structure comes from, naming a public proxy and its digest."""
        return structure_words(self.get_params(), "noisy-entropy CFS on D_T")

    def guarantee(self) -> Guarantee:
        """Per released record (ε_PD + Σε_criteria, δ): Thm 1 composed with the criteria that
        gate the release (bound to a spec; unbound, Thm 1 alone); never dataset-level.

        A seed (D_S) is outside the model's data (D_T, D_P), but it enters every criterion
        evaluated on R, and the release is gated on them: by basic composition a released
        record with those values costs its seed ε_PD + Σε_criteria, with Thm 1's δ
        (:meth:`~workbench.privacy.budget_plan.BudgetPlan.with_records`, ``gated``). Not
        ``proven_for_release``: no bound is proven for the released set as a whole (several
        records may share a seed; whether enough candidates pass, else ⊥, depends on R)."""

        b = self.record_bound()
        source = f"; the network's {self.structure_words()}" if self.public else ""
        spec = self.bound_spec_
        parameters: dict[str, float | int | str] = {
            "epsilon": round(b.epsilon, 12), "delta": b.delta, "epsilon_pd": round(b.epsilon, 12)}
        if spec is not None:
            plan = spec.budget_plan().with_records(LABEL, b.epsilon, b.delta, gated=True)
            parameters.update(epsilon=plan.record_epsilon_total,
                              epsilon_criteria=plan.epsilon_statistics)
        parameters.update({"t": b.t, "k": self.k, "gamma": float(self.gamma),
                           "epsilon_0": float(self.epsilon_0)})
        return Guarantee(
            LABEL, strict=True, dataset_level=False, kind=KIND, proven_for_release=False,
            explanation=("each released record is (ε_PD, δ)-DP by Thm 1 (randomized privacy "
                         "test), and its seed also enters every criterion evaluated on R, on "
                         "which the release is gated, so by basic composition a released "
                         "record costs its seed ε = ε_PD + Σε_criteria, with δ; no "
                         "composition over the released dataset is known, so the release as a "
                         "whole is not ε-DP; the model is ε-DP and each criterion's value is "
                         "ε-DP given the candidate, both in ε_total (which covers the records "
                         "of the model's part); the candidate is not ε-DP, so there is no "
                         "private selection: a single attempt (T = 1), which may end in ⊥ "
                         "when too few candidates pass the test" + source),
            parameters=parameters)

    def describe(self, label: str, epsilon: float) -> list[str]:
        """Splits, what ε_gen pays for, where the structure comes from, the per-record bound."""
        b = self.record_bound()
        f_t, f_p = self.shares(self.get_params())
        seeds = 1 - f_t - f_p
        records = (f"records: ε_PD = {b.epsilon:.4g}, δ = {b.delta:.3g} each by Thm 1 (t = "
                   f"{b.t}), plus the criteria's ε (the guarantee)")
        if self.public:
            return [f"Plausible deniability {label}: D_P {f_p:g} / D_S {seeds:.4g} of R; "
                    f"{self.structure_words()}; parameters ε {epsilon:g} on D_P; {records}"]
        return [f"Plausible deniability {label}: D_T {f_t:g} / D_P {f_p:g} / D_S {seeds:.4g} "
                f"of R; structure and parameters each ε {epsilon:g}, charged max = "
                f"{epsilon:g} (parallel composition); {records}"]

    def _network(self, codes: np.ndarray, sizes: list[int], maps: list[np.ndarray],
                 eps: float, privacy: PrivacyContext) -> list[tuple[int, tuple[int, ...]]]:
        """The structure: the proxy's exact CFS (public), or the noisy CFS on D_T's ``codes``."""
        if not self.public:
            return noisy_structure(codes, sizes, maps, self.maxcost, eps, privacy)
        proxy = structure_codes(self)
        if proxy.shape[1] != len(sizes):
            raise ValueError(f"{self.name}: structure_proxy encodes to other columns than "
                             "the data")
        log_public_structure(privacy, self.name, self.structure_proxy,
                             self.structure_proxy_sha256)
        return public_structure(proxy, maps, self.maxcost)

    # --- the generator protocol ------------------------------------------------------------
    def fit(self, codes: np.ndarray, domain: Domain, epsilon: float,
            privacy: PrivacyContext) -> PlausibleDeniability:
        """Split R, learn the structure on D_T (or from the public proxy) and the parameters on
        D_P (ε each, disjoint: charged ε), keep D_S and the context for the test."""
        self.check_params()
        eps = check_epsilon(epsilon)
        codes = np.asarray(codes, dtype=np.int64)
        n, m = codes.shape
        if m == 0:
            raise ValueError(f"{self.name}: the domain has no columns")
        if self.omega_min > m:
            raise ValueError(f"{self.name}: omega_min must be <= the {m} columns")
        f_t, f_p = self.shares(self.get_params())
        t_rows, p_rows, s_rows = split_indices(n, f_t, f_p, privacy.rng)
        if min(len(p_rows), len(s_rows), 1 if self.public else len(t_rows)) < 1:
            raise ValueError(f"{self.name}: each of D_T, D_P and D_S needs at least one record; "
                             "raise the split fractions or use more records")
        sizes = list(domain.sizes)
        maps = bucket_maps(sizes, self.buckets)
        alpha = float(self.dirichlet_prior)
        if self.public:  # the structure reads public data only: D_P alone spends ε_gen
            network = self._network(codes, sizes, maps, eps, privacy)
            self.nodes_ = noisy_model(codes[p_rows], sizes, maps, network, eps, alpha, privacy)
        else:
            parts = {"D_T (structure)": eps, "D_P (parameters)": eps}
            reason = ("D_T, D_P and D_S are disjoint parts of R drawn by a uniform permutation; "
                      "structure reads only D_T, parameters only D_P (parallel composition: "
                      "max(ε_T, ε_P))")
            with parallel_composition(privacy, "plausible deniability model", parts,
                                      reason) as split:
                with split.part("D_T (structure)"):
                    network = self._network(codes[t_rows], sizes, maps, eps, privacy)
                with split.part("D_P (parameters)"):
                    self.nodes_ = noisy_model(codes[p_rows], sizes, maps, network, eps, alpha,
                                              privacy)
        self.order_ = tuple(node.column for node in self.nodes_)
        self.network_ = [(domain.names[c], tuple(domain.names[p] for p in ps))
                         for c, ps in network]
        self._seeds = codes[s_rows]
        self._index = PrefixIndex(self._seeds, self.order_, sizes)
        self._privacy = privacy
        self._plan_logged = False
        self.attempted_ = self.released_ = self.passed_ = 0
        return self

    def omega_range(self) -> tuple[int, int]:
        """[ω_min, ω_max] for the fitted m columns."""
        m = len(self.order_)
        return self.omega_min, m if self.omega_max is None else min(self.omega_max, m)

    def candidates(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``size`` candidates from uniformly drawn seeds, with their ω (columns by code)."""
        low, high = self.omega_range()
        seeds = self._seeds[rng.integers(0, self._seeds.shape[0], size=size)]
        omegas = rng.integers(low, high + 1, size=size)
        return synthesize(self.nodes_, seeds, omegas, rng), omegas

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n records that passed Test 2 (fresh noise each), in batches; GeneratorShortfall
        after ``max_attempts``·n candidates."""
        if not hasattr(self, "_index"):
            raise RuntimeError(f"{self.name}: call fit before sample")
        n = check_n(n)
        kept: list[np.ndarray] = []
        have, tried, cap = 0, 0, self.max_attempts * max(n, 1)
        size = batch_size(n, cap)  # public: never sized from how many passed
        if not self._plan_logged:  # one line per fit: later calls' sizes follow the data
            log_test_plan(self._privacy, purpose="plausible deniability Test 2", k=self.k,
                          gamma=float(self.gamma), epsilon_0=self.epsilon_0, records=n,
                          batch=size, cap=cap)
            self._plan_logged = True
        while have < n and tried < cap:
            batch = min(size, cap - tried)
            rows, omegas = self.candidates(batch, rng)
            passed = privacy_test(self._privacy, self._index.plausible_counts(rows, omegas),
                                  k=self.k, epsilon_0=self.epsilon_0)
            kept.append(rows[passed])
            have += int(passed.sum())
            tried += batch
            self.passed_ += int(passed.sum())
        self.attempted_ += tried
        self.released_ += min(have, n)
        if have < n:
            raise GeneratorShortfall(
                f"{self.name}: fewer than n records passed the privacy test within "
                f"max_attempts = {self.max_attempts} candidates per record; lower k or raise "
                "max_attempts")
        return np.concatenate(kept)[:n]
