"""``public_measurements: joint``: a public proxy's marginals as free measurements where the proxy
agrees with the data, chosen privately per marginal (in the spirit of JAM-PGM: Fuentes, Mullins,
McKenna, Miklau and Sheldon, "Joint Selection: Adaptively Incorporating Public Information for
Private Synthetic Data", AISTATS 2024).

The workload's measurements (the 1-way marginal of every column, then the weighted multi-way
cliques, :meth:`Workload.allocate`) are the candidates. ε_gen is split in two declared parts:
``public_selection_share``·ε_gen buys one private choice per multi-way clique (evenly), the
rest, ε_meas, buys the private measurements. The reference ε_c of a candidate is its share of
ε_meas under the plain allocation (every candidate measured privately).

1. **1-way marginals are always measured privately** (at their reference ε). They hold the
   rare cells the criteria that read 1-way counts need (``relative_one_way``,
   ``max_marginal_error``), and the proxy is least trustworthy there: thinning a 0.3% cell to a
   third moves a 1-way table's L1 distance by 0.4% of n but its ratio threefold, so an L1 test
   cannot see it, and a ratio-sensitive test needs Δ = 2/√(smallest public cell), far more ε
   than one choice gets. A private 1-way table costs few cells, and at registry sizes its noise
   is below the proxy's sampling error anyway (95,000 records, 12 cells, ε 0.08: E‖Z‖₁ ≈ 300
   against ≈ 1,100 between two samples of one population). So where the proxy's 1-way shares
   disagree with the data (shifted shares, thinned or thickened rare cells) the data's own are
   used, and the proxy only ever contributes dependence structure.
2. **Multi-way cliques.** The proxy's table of each clique is scaled to n and raked (IPF) to
   the noisy 1-way tables (clipped at 0, scaled to n): the proxy then contributes its
   dependence structure with this data's margins. The L1 distance d_c = ‖x_c − r_c‖₁ of the
   data's table to the raked one r_c is released with Laplace noise (``ctx.laplace``); the
   clique takes r_c for free when the noisy d_c is below E‖Z‖₁, the expected L1 error of its
   private measurement (discrete Laplace at ε_c over its cells; public), and is measured
   privately otherwise.
3. **The rest of ε_meas** goes to the cliques chosen private, in proportion to their reference
   ε (public choices free their share). With none chosen, it buys a second 1-way measurement of
   every column, fused with the first by inverse variance. Σ ε = ε_gen exactly (without
   multi-way cliques there is nothing to choose and all of ε_gen measures the 1-ways).

A public table enters Private-PGM as a measurement whose per-cell noise std is read from the
released distance, σ = d̃/cells·√(π/2) (the std whose Gaussian errors have that mean absolute
value), clipped to [¼, 1]·E‖Z‖₁/cells·√(π/2) so that no public table weighs more than four
times the private measurement it replaced — post-processing of the noisy d̃.

**Sensitivity of the distance** (both neighbour relations; n public). q_c is fixed given the
public proxy, the public n and the outputs released before (the noisy 1-way tables the raking
reads), so the releases compose adaptively. Replace-one: one record leaves one cell of x_c and
enters another, so x_c moves by 1 in two cells and ‖x_c − q_c‖₁ by at most 2. Add/remove: x_c
moves by 1 in one cell, and a q_c scaled to the changed n moves by n_pub⁻¹·Σ q_pub = 1 in L1,
so again at most 2. Δ = 2, and each release is ε_each-DP (Laplace(2/ε_each));
``audits.generators.public_choice_scenario`` reaches Δ with worst-case neighbours. A noisy test
of one distance, rather than JAM-PGM's exponential mechanism over public and private options,
spends the choice's ε on the only data-dependent term: with a constant private score the noisy
max would be ε/2-DP but charged ε, and JAM-PGM's adaptive public score (model error minus
public error) has Δ = 4 under replace-one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.family import Guarantee
from workbench.generators.mbi_model import NoisyMarginal, fit_graphical_model
from workbench.generators.measurement import measure_marginal
from workbench.generators.public_proxy import proxy_name_problem, sha256_problem
from workbench.specification.params import Param, one_of, open_interval
from workbench.survey.raking import ipf

if TYPE_CHECKING:
    from workbench.generators.mbi_model import GraphicalModel
    from workbench.generators.workload import Workload
    from workbench.privacy import PrivacyContext
    from workbench.transform.cells import CellCounts

Clique = tuple[str, ...]

#: Sensitivity of a clique's L1 distance to the proxy (module docstring), both relations.
DISTANCE_SENSITIVITY = 2.0
#: IPF sweeps when raking a public table to its 1-way margins (small tables: cheap).
RAKE_SWEEPS = 50
MODES = ("none", "joint")

#: The option's hyperparameters, declared once for the workload family.
PUBLIC_PARAMS = {
    "public_measurements": Param("none", one_of(*MODES), "'joint': a PUBLIC proxy's marginals "
                                 "as free measurements, chosen privately per marginal",
                                 control="choice", choices=MODES),
    "public_proxy": Param(None, proxy_name_problem, "the PUBLIC proxy file ('joint')",
                          control="text"),
    "public_proxy_sha256": Param(None, sha256_problem, "the proxy's SHA-256, pinned by the spec",
                                 control="text"),
    "public_selection_share": Param(0.05, open_interval(0, 1),
                                    "share of ε_gen for the public-or-private choices ('joint')",
                                    control="number"),
}


def joint_problems(values: Mapping[str, Any], *, needs_file: bool = True
                   ) -> list[tuple[str, str]]:
    """(hyperparameter, message) for a combination 'joint' cannot run with (none otherwise);
    ``needs_file``: a spec must name and pin the proxy (a generator may get public counts by
    ``bind_public`` instead)."""
    if values.get("public_measurements") != "joint":
        return []
    out = []
    if needs_file and values.get("public_proxy") is None:
        out.append(("public_proxy", "must name the public proxy file when "
                    "public_measurements is 'joint'"))
    if needs_file and values.get("public_proxy_sha256") is None:
        out.append(("public_proxy_sha256", "must pin the proxy file's SHA-256 when "
                    "public_measurements is 'joint' (sha256sum FILE)"))
    if values.get("algorithm", "fixed") != "fixed":
        out.append(("public_measurements", "'joint' needs algorithm 'fixed'"))
    if values.get("one_way_share") == 0:
        out.append(("one_way_share", "must be > 0 with public_measurements 'joint': the 1-way "
                    "marginals are its first candidates (kept private where the proxy "
                    "disagrees)"))
    return out


def joint_guarantee(proxy: str | None, sha256: str | None) -> Guarantee:
    """Pure ε-DP, naming the public proxy whose marginals the model may contain."""
    named = {"public_proxy": proxy, "public_proxy_sha256": sha256}
    return Guarantee(
        "ε-DP", explanation=(
            "pure ε-differential privacy for the whole dataset, charged to the budget; public "
            f"marginals of the proxy {proxy!r} entered the model where a DP choice preferred "
            "them to a private measurement"),
        parameters={k: v for k, v in named.items() if v is not None})


@dataclass(frozen=True)
class Choice:
    """What the joint fit did with one candidate: public or private, and the ε it spent."""

    clique: Clique
    public: bool
    epsilon_reference: float
    epsilon_measured: float


def expected_l1(sensitivity: float, epsilon: float, cells: int) -> float:
    """E‖Z‖₁ of discrete-Laplace noise at ε over ``cells`` cells: cells·2t/(1 − t²), t = e^{−ε/Δ}
    (P(k) = (1 − t)/(1 + t)·t^|k|, so E|Z| = 2(1 − t)/(1 + t)·Σ_k k·t^k = 2t/(1 − t²)).

    >>> round(expected_l1(2, 0.1, 10), 1)  # ≈ cells·Δ/ε for small ε
    199.9
    """
    t = math.exp(-epsilon / sensitivity)
    return cells * 2.0 * t / -math.expm1(-2.0 * epsilon / sensitivity)


def public_sigma(noisy: float, private: float, cells: int) -> float:
    """σ of a public table from its released L1 distance d̃ (module docstring): d̃/cells·√(π/2),
    with d̃ clipped to [private/4, private] (``private`` = E‖Z‖₁ of the measurement it replaces).

    >>> round(public_sigma(100.0, 200.0, 10), 3), round(public_sigma(-5.0, 200.0, 10), 3)
    (12.533, 6.267)
    """
    return min(max(noisy, private / 4), private) / cells * math.sqrt(math.pi / 2)


def rake(table: np.ndarray, targets: list[np.ndarray], sweeps: int = RAKE_SWEEPS) -> np.ndarray:
    """IPF: scale ``table`` (non-negative) so that its 1-way margins approach ``targets`` (one
    per axis, same total); cells and margins the table lacks stay 0.

    >>> rake(np.array([[1.0, 1.0], [1.0, 1.0]]), [np.array([3.0, 1.0]), np.array([2.0, 2.0])])
    array([[1.5, 1.5],
           [0.5, 0.5]])
    """
    return ipf(table, [((axis,), target) for axis, target in enumerate(targets)], tol=1e-6,
               max_iter=sweeps, absolute=True)


def _merged(allocation: list[tuple[Clique, float]]) -> list[tuple[Clique, float]]:
    """One measurement per clique: a 1-way that both the 1-way share and a criterion ask for
    is measured once at the sum of its ε (less noise than two fused measurements)."""
    out: dict[Clique, float] = {}
    for clique, eps in allocation:
        out[clique] = out.get(clique, 0.0) + eps
    return list(out.items())


def _even(total: float, k: int) -> list[float]:
    """``k`` equal parts of ``total`` that add up to it exactly (residue on the last)."""
    parts = [total / k] * k
    parts[-1] += total - sum(parts)
    return parts


def fit_joint(data: CellCounts, public: CellCounts, workload: Workload, epsilon: float,
              selection_share: float, privacy: PrivacyContext, iters: int
              ) -> tuple[GraphicalModel, list[Choice]]:
    """Choose, measure and fit (module docstring); the model and what was chosen.

    ``public`` holds the proxy's counts in the same (public) domain; its n and marginals are
    public. Spends exactly ``epsilon`` through ``privacy``.
    """
    n, delta = data.n, privacy.histogram_sensitivity()
    has_multi = any(len(c) > 1 for c, _ in workload.allocate(epsilon))
    eps_select = epsilon * selection_share if has_multi else 0.0
    reference = _merged(workload.allocate(epsilon - eps_select))
    one_way = [(c, e) for c, e in reference if len(c) == 1]
    multi = [(c, e) for c, e in reference if len(c) > 1]
    each = iter(_even(eps_select, max(len(multi), 1)))
    scale = n / public.n
    sizes = {c: data.domain.size(c) for c, _ in reference}

    def choose(clique: Clique, eps_ref: float, q: np.ndarray) -> tuple[bool, float]:
        """The private choice for one clique (module docstring): public?, and σ if so."""
        true = data.marginal(clique)  # confidential: read only for the noisy distance
        distance = float(np.abs(true - q).sum())
        noisy = float(privacy.laplace(
            [distance], sensitivity=DISTANCE_SENSITIVITY, epsilon=next(each),
            purpose=f"workload public choice: {' x '.join(clique)} (L1 to the proxy)",
        ).value[0])
        private = expected_l1(delta, eps_ref, sizes[clique])
        return noisy < private, public_sigma(noisy, private, sizes[clique])

    values: dict[Clique, tuple[np.ndarray, float]] = {}
    choices: dict[Clique, Choice] = {}
    targets: dict[str, np.ndarray] = {}
    for clique, eps_ref in one_way:  # always private: the rare cells depend on them
        noisy = measure_marginal(data, clique, eps_ref, privacy)
        values[clique] = (noisy.counts.astype(np.float64), noisy.sigma)
        choices[clique] = Choice(clique, False, eps_ref, eps_ref)
        t = np.clip(values[clique][0], 0.0, None)
        targets[clique[0]] = t * (n / t.sum()) if t.sum() > 0 else np.full(t.shape, n / t.size)
    for clique, eps_ref in multi:
        raked = rake(public.marginal(clique).astype(np.float64) * scale,
                     [targets[c] for c in clique])
        public_choice, sigma = choose(clique, eps_ref, raked)
        choices[clique] = Choice(clique, public_choice, eps_ref, 0.0)
        if public_choice:
            values[clique] = (raked, sigma)
    left = epsilon - eps_select - sum(c.epsilon_measured for c in choices.values())
    private = [(c, e) for c, e in multi if not choices[c].public]
    if private:
        weights = sum(e for _, e in private)
        parts = [left * e / weights for _, e in private]
        parts[-1] += left - sum(parts)
        for (clique, eps_ref), eps in zip(private, parts, strict=True):
            noisy = measure_marginal(data, clique, eps, privacy)
            values[clique] = (noisy.counts.astype(np.float64), noisy.sigma)
            choices[clique] = Choice(clique, False, eps_ref, eps)
    elif left > epsilon * 1e-12:  # nothing private is left to measure: the 1-ways again
        for (clique, eps_ref), eps in zip(one_way, _even(left, len(one_way)), strict=True):
            values[clique] = _fuse(values[clique], measure_marginal(data, clique, eps, privacy))
            old = choices[clique]
            choices[clique] = Choice(clique, old.public, eps_ref, old.epsilon_measured + eps)
    measured = [NoisyMarginal(c, values[c][0], values[c][1]) for c, _ in reference]
    model = fit_graphical_model(data.domain, measured, n, iters)
    return model, [choices[c] for c, _ in reference]


def _fuse(first: tuple[np.ndarray, float], second: NoisyMarginal) -> tuple[np.ndarray, float]:
    """Two independent estimates of one table combined by inverse variance (post-processing)."""
    (a, sa), (b, sb) = first, (second.counts.astype(np.float64), second.sigma)
    wa, wb = 1.0 / sa**2, 1.0 / sb**2
    return (wa * a + wb * b) / (wa + wb), 1.0 / math.sqrt(wa + wb)
