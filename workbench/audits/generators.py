"""Worst-case neighbours for the generators' selection scores: PrivBayes' mutual information
and AIM's marginal-error score, both released by OpenDP's ε-DP noisy max (permute-and-flip),
and the public-measurement option's distance to the proxy (Laplace).

Both run the public generator (``workbench.generators``) on three binary columns a, b, c and
audit its first noisy-max call, captured at the noise seam.

* **PrivBayes MI.** n = 2, D = {(0,0,0), (1,0,1)}, D′ = {(0,0,0), (1,1,0)}. With a as the
  first node the candidates are (b | a) and (c | a), scored I(b; a) = 0, I(c; a) = 1 bit on D
  and 1, 0 on D′: each score moves by the full Lemma-1 sensitivity h(1/n) = 1 bit (binary
  case), in opposite directions. The first node is drawn from the context's seeded rng; the
  capture tries seeds until it is a (the scores tell).
* **AIM score.** n = 8, workload (a, b) and (a, c) with equal weight. The 1-way measurements
  before the first round are answered by the capture with the even split (4, 4) for D and D′
  alike (a fixed history; see :mod:`workbench.audits.harness`), so the model is uniform, 2 per
  2-way cell. D has a-slice counts (a=0): b = (1, 3), c = (3, 1); D′ replaces (0, 0, 0) by
  (0, 1, 1). Then ‖M_ab − m_ab‖₁ goes 2 → 4 and ‖M_ac − m_ac‖₁ goes 2 → 0: the scores move by
  the full Δ = 2 (replace-one histogram) in opposite directions from a tie, the case where
  permute-and-flip's loss is exactly ε.
* **Structure tree** (the workload's ``structure: tree``). The same n = 8, D and D′, workload
  {(a, b)}: the components are {a, b} and {c}, so the one edge's noisy max is over (a, c) and
  (b, c), each scored against the independence of the released 1-way shares (the capture's
  even history: 2 per cell). ‖M_ac − 2‖₁ goes 2 → 0 and ‖M_bc − 2‖₁ goes 2 → 4: from a tie,
  opposite moves of the full Δ = 2.
* **Structure junction** (``structure: junction``). The same n = 8, D, D′ and workload: {a, b}
  is placed, and the one step's noisy max is over (a, c), (b, c) and (a, b, c), each scored
  against the fitted model (uniform: the capture's even history) with c independent. The
  L1 terms go 2 → 0, 2 → 4 and 2 → 4: (a, c) and (b, c) tie on D and move apart by the full
  Δ = 2 each way.
* **Public-measurement choice** (the workload family's ``public_measurements: joint``). n = 8,
  workload {(a, b)}, the public proxy uniform over (a, b) (2 records per cell), and D the same
  records. The 1-way measurements before the choice are answered by the capture with the even
  split (4, 4) for D and D′ alike (a fixed history), so the raked public table is 2 per cell.
  The release is the L1 distance ‖x_ab − r_ab‖₁, Laplace with Δ = 2: D gives 0; D′ replaces
  (0, 0, 0) by (1, 1, 0), taking one from a cell at its public count and adding one to another,
  so the distance goes to 2, the full Δ.
"""

from __future__ import annotations

import numpy as np

from workbench.audits.harness import Scenario, capture, scenario
from workbench.generators import Workload, WorkloadGenerator, make_generator
from workbench.generators.workload import WorkloadItem
from workbench.privacy import PrivacyContext
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

_DOMAIN = Domain(("a", "b", "c"), (2, 2, 2))
#: PrivBayes ε with split ½ over d − 1 = 2 structure steps: ε = 1 per noisy max.
PRIVBAYES_EPSILON = 4.0
#: AIM ε_gen with one round and 1-way share ¼: the selection gets 10% of ¾·ε_gen = 1.
AIM_EPSILON = 40.0 / 3.0
#: Tree ε_gen with structure share ½ and selection share ½, one edge: ε = 1 for its noisy max.
TREE_EPSILON = 4.0
#: 'joint' ε_gen with selection share ½ and one clique to choose for, (a, b): ε = 1 for it.
PUBLIC_CHOICE_EPSILON = 2.0

_MI_DATA = (
    np.array([(0, 0, 0), (1, 0, 1)], dtype=np.int64),
    np.array([(0, 0, 0), (1, 1, 0)], dtype=np.int64),
)
_AIM_BASE = np.array(
    [(0, 0, 0), (0, 1, 0), (0, 1, 0), (0, 1, 1), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)],
    dtype=np.int64,
)
_AIM_DATA = (_AIM_BASE, np.vstack([[(0, 1, 1)], _AIM_BASE[1:]]))
_UNIFORM = np.array(list(np.ndindex(2, 2, 2)), dtype=np.int64)
_PUBLIC_DATA = (_UNIFORM, np.vstack([[(1, 1, 0)], _UNIFORM[1:]]))


def _privbayes_seed() -> int:
    """A context seed whose first PrivBayes node is a: then D scores (0, 1), D′ scores (1, 0)."""
    for seed in range(64):
        calls = capture(lambda ctx: _fit_privbayes(ctx, 0), seed=seed)
        first = calls[0]
        if first.primitive == "noisy_max" and first.values.tolist() == [0.0, 1.0]:
            return seed
    raise RuntimeError("no seed puts column a first")  # pragma: no cover - 1/3 chance each


def _fit_privbayes(ctx: PrivacyContext, which: int) -> object:
    """PrivBayes (degree 1) on D or D′."""
    generator = make_generator("privbayes", degree=1, epsilon_split=0.5)
    return generator.fit(_MI_DATA[which], _DOMAIN, PRIVBAYES_EPSILON, ctx)


def privbayes_mi_scenario() -> Scenario:
    """The first structure step's noisy max over I(X; Π), on D and D′."""
    seed = _privbayes_seed()

    def run(ctx: PrivacyContext, which: int) -> object:
        seeded = PrivacyContext.simulation(seed, noise=ctx.noise)
        return _fit_privbayes(seeded, which)

    n = 2
    h = -(1 / n) * np.log2(1 / n) - (1 - 1 / n) * np.log2(1 - 1 / n)  # Lemma 1, binary: h(1/n)
    return scenario(
        "privbayes_mutual_information", "OpenDP noisy max over I(X; Π) (bits)",
        "n = 2, scores (I(b;a), I(c;a)) go (0, 1) → (1, 0): each moves by Lemma 1's "
        "Δ = h(1/n) = 1 bit", float(h), run, primitive="noisy_max")


def _fit_public_choice(ctx: PrivacyContext, which: int) -> object:
    """The 'joint' option on D or D′ with the public proxy D and the workload {(a, b)}."""
    generator = WorkloadGenerator(public_measurements="joint", public_selection_share=0.5,
                                  iters=1)
    generator.bind_workload(Workload(_DOMAIN.names, (WorkloadItem(("a", "b"), 1.0, ("audit",)),),
                                     0.25))
    generator.bind_public(CellCounts.from_codes(_UNIFORM, _DOMAIN))
    return generator.fit(_PUBLIC_DATA[which], _DOMAIN, PUBLIC_CHOICE_EPSILON, ctx)


def public_choice_scenario() -> Scenario:
    """The public-or-private choice for (a, b): the Laplace release of ‖x_ab − r_ab‖₁."""
    return scenario(
        "public_choice_distance", "Laplace on ‖x_c − r_c‖₁ (L1 to the raked proxy table)",
        "n = 8, uniform proxy = D, fixed uniform 1-way history: distance 0 → 2 when one record "
        "moves between (a, b) cells: Δ = 2 (replace-one count table; r_c fixed by the proxy, n "
        "and the earlier releases)", 2.0, _fit_public_choice, primitive="laplace", repeat=(0,))


def _fit_aim(ctx: PrivacyContext, which: int) -> object:
    """AIM (one round) on D or D′ with the workload {(a, b), (a, c)}."""
    generator = WorkloadGenerator(algorithm="aim", rounds=1, iters=1)
    items = tuple(WorkloadItem(q, 1.0, ("audit",)) for q in (("a", "b"), ("a", "c")))
    generator.bind_workload(Workload(_DOMAIN.names, items, 0.25))
    return generator.fit(_AIM_DATA[which], _DOMAIN, AIM_EPSILON, ctx)


def aim_score_scenario() -> Scenario:
    """AIM's first-round noisy max over the weighted marginal-error scores, on D and D′."""
    return scenario(
        "aim_selection_score", "OpenDP noisy max over w·(‖M(D) − M(p̂)‖₁ − E‖noise‖₁)",
        "n = 8, fixed uniform 1-way history; scores go (s, s) → (s + 2, s − 2): "
        "Δ = 2 (replace-one count table) × max w = 1", 2.0, _fit_aim, primitive="noisy_max",
        repeat=(0,))  # each fit costs a JAX compile; D's repeat shows the scores are fixed


def _fit_tree(ctx: PrivacyContext, which: int) -> object:
    """The tree option (one edge) on D or D′ with the workload {(a, b)}."""
    generator = WorkloadGenerator(structure="tree", structure_share=0.5,
                                  structure_select_share=0.5, iters=1)
    generator.bind_workload(Workload(_DOMAIN.names, (WorkloadItem(("a", "b"), 1.0, ("audit",)),),
                                     0.25))
    return generator.fit(_AIM_DATA[which], _DOMAIN, TREE_EPSILON, ctx)


def _fit_junction(ctx: PrivacyContext, which: int) -> object:
    """The junction option (one step) on D or D′ with the workload {(a, b)}."""
    generator = WorkloadGenerator(structure="junction", structure_share=0.5,
                                  structure_select_share=0.5, iters=1)
    generator.bind_workload(Workload(_DOMAIN.names, (WorkloadItem(("a", "b"), 1.0, ("audit",)),),
                                     0.25))
    return generator.fit(_AIM_DATA[which], _DOMAIN, TREE_EPSILON, ctx)


def junction_score_scenario() -> Scenario:
    """The junction step's noisy max over ‖M_Q(D) − n·p̂_P⊗p̂_k‖₁ − E‖noise‖₁, on D and D′."""
    return scenario(
        "structure_junction_score", "OpenDP noisy max over ‖M_Q(D) − n·p̂_P⊗p̂_k‖₁ − E‖noise‖₁",
        "n = 8, fixed uniform history; (a, c), (b, c), (a, b, c) go 2 → 0, 4, 4 in L1: "
        "Δ = 2 (replace-one count table)", 2.0, _fit_junction, primitive="noisy_max",
        repeat=(0,))


def tree_score_scenario() -> Scenario:
    """The tree's edge noisy max over ‖M(D) − n·q ⊗ q‖₁ − E‖noise‖₁, on D and D′."""
    return scenario(
        "structure_tree_score", "OpenDP noisy max over ‖M_c(D) − n·q_a⊗q_b‖₁ − E‖noise‖₁",
        "n = 8, fixed uniform 1-way history; (a, c), (b, c) go (s, s) → (s − 2, s + 2): "
        "Δ = 2 (replace-one count table)", 2.0, _fit_tree, primitive="noisy_max",
        repeat=(0,))
