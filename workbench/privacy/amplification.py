"""MCAR amplification: a secondary, never-charged ε̄ against the ground truth (Mohapatra et al. §5).

Why: when the spec declares a column's missingness MCAR with a public rate φ, a mechanism that
reads only the rows complete on an attribute set A sees each ground-truth row independently
with probability p = Π_{a∈A}(1 − φ_a). That is Poisson-style subsampling, so an ε-DP mechanism
on the incomplete data is ε′-DP on the ground truth with (Thm 5.3, Prop 5.4)

    ε′ = ln(1 + p·(e^ε − 1))          — exactly; the paper's "≈ p·ε" is a small-ε approximation
                                         that UNDER-states ε′ (ln(1 + p(e^x − 1)) ≥ p·x), so it
                                         is never used here.

Composition (Thm 5.6, Def. 5.9): mechanisms are put in groups, each group G with an
amplification attribute set A_G ⊆ every attribute set of its members, the A_G pairwise
disjoint. A group's members read rows complete on A_G — one shared subsample — so the group is
composed first and amplified once: ε̄_G = ln(1 + p_{A_G}(e^{Σ_{j∈G} ε_j} − 1)); disjoint sets
mean independent MCAR draws, so the groups add up: ε̄ = Σ_G ε̄_G (a group with A_G = ∅ costs its
plain Σ ε_j). Every valid grouping gives a valid bound; we report the smallest we find:

* ``grouped`` — Alg. 4: every set partition of the attributes with φ > 0 (Bell number many,
  so only up to ``MAX_SEARCH_ATTRIBUTES``); each mechanism joins the block ⊆ its attributes with
  the smallest p, the least loaded among equals (or none); blocks are the groups;
* ``cheap`` — the always-valid fallback: each mechanism is amplified by its single attribute
  with the smallest 1 − φ_a (ties by name), mechanisms grouped by that attribute;
* ``naive`` (Ex. 5.8): amplify a set of mechanisms with pairwise disjoint attribute sets
  (greedy, strongest first), the others not at all;
* ``complete_rows`` (Ex. 5.5): everything reads the rows complete on every column;
* ``column_wise`` (Thm 5.12): column-wise imputation can amplify one model only.

The worked examples (φ = (¼, 0, ¼, ¼)) give 0.421ε, 0.77ε, 0.83ε / 0.81ε and 0.9375ε in the
small-ε limit ε̄/ε → Σ p·ε_j/ε, which is what the paper prints; at finite ε the exact ε̄ is
larger (``tests/test_amplification.py`` checks both). Nothing is ever charged at ε̄: the
guaranteed ε_total comes from :class:`~workbench.privacy.budget_plan.BudgetPlan` alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

MAX_SEARCH_ATTRIBUTES = 10  # Bell(10) = 115 975 partitions; beyond that, the cheap bound


def amplified(epsilon: float, p: float) -> float:
    """ε′ = ln(1 + p(e^ε − 1)), computed as log1p(p·expm1(ε)) (exact, stable for small ε)."""
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError("epsilon must be a finite number >= 0")
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be a probability in [0, 1]")
    return math.log1p(p * math.expm1(epsilon))


def keep_probability(attributes: Sequence[str], phi: Mapping[str, float]) -> float:
    """p_A = Π_{a∈A} (1 − φ_a); a column without a declared rate has φ = 0."""
    return math.prod(1.0 - float(phi.get(a, 0.0)) for a in attributes)


@dataclass(frozen=True)
class Measure:
    """One ε-DP mechanism of the run and the attributes whose complete rows it reads."""

    attributes: tuple[str, ...]
    epsilon: float


@dataclass(frozen=True)
class Group:
    """Mechanisms amplified together by one attribute set (empty: not amplified)."""

    attributes: tuple[str, ...]
    members: tuple[int, ...]
    epsilon: float  # Σ ε of the members (what the group costs on the incomplete data)
    amplified: float  # ε̄_G against the ground truth


@dataclass(frozen=True)
class Amplification:
    """A valid grouping, its ε̄ and how it was found."""

    method: str
    epsilon: float  # Σ ε of every measure (basic composition on the incomplete data)
    epsilon_bar: float
    groups: tuple[Group, ...]

    @property
    def ratio(self) -> float:
        """ε̄/ε (1 when nothing is amplified)."""
        return self.epsilon_bar / self.epsilon if self.epsilon > 0 else 1.0


def _check(measures: Sequence[Measure], phi: Mapping[str, float]) -> None:
    """Rates in [0, 1) (a column missing surely is refused upstream), ε ≥ 0."""
    for name, rate in phi.items():
        if not (isinstance(rate, int | float) and 0.0 <= rate < 1.0):
            raise ValueError(f"mcar_rate of column {name!r} must be a number in [0, 1)")
    for m in measures:
        if not (math.isfinite(m.epsilon) and m.epsilon >= 0):
            raise ValueError("every measure's epsilon must be a finite number >= 0")


def evaluate(method: str, measures: Sequence[Measure], phi: Mapping[str, float],
             assignment: Mapping[int, tuple[str, ...]]) -> Amplification:
    """ε̄ of ``assignment`` (measure index → its amplification set; absent: not amplified).

    The sets must be pairwise equal or disjoint and each ⊆ its measure's attributes (valid).
    """
    blocks: dict[tuple[str, ...], list[int]] = {}
    for i, m in enumerate(measures):
        block = tuple(sorted(assignment.get(i, ())))
        if not set(block) <= set(m.attributes):
            raise ValueError("an amplification set must lie within its measure's attributes")
        blocks.setdefault(block, []).append(i)
    keys = [set(k) for k in blocks if k]
    if any(a & b for j, a in enumerate(keys) for b in keys[j + 1:]):
        raise ValueError("amplification sets of different groups must be disjoint")
    groups = []
    for block, members in blocks.items():
        eps = math.fsum(measures[i].epsilon for i in members)
        amp = amplified(eps, keep_probability(block, phi)) if block else eps
        groups.append(Group(block, tuple(members), eps, amp))
    total = math.fsum(m.epsilon for m in measures)
    return Amplification(method, total, math.fsum(g.amplified for g in groups), tuple(groups))


def complete_rows(measures: Sequence[Measure], phi: Mapping[str, float],
                  columns: Sequence[str]) -> Amplification:
    """Ex. 5.5: every measure reads the rows complete on all ``columns``: one group."""
    _check(measures, phi)
    total = math.fsum(m.epsilon for m in measures)
    block = tuple(sorted(columns))
    amp = amplified(total, keep_probability(block, phi))
    return Amplification("complete_rows", total, amp,
                         (Group(block, tuple(range(len(measures))), total, amp),))


def naive(measures: Sequence[Measure], phi: Mapping[str, float]) -> Amplification:
    """Ex. 5.8: amplify measures with pairwise disjoint attributes, strongest first; the
    others are not amplified."""
    _check(measures, phi)
    order = sorted(range(len(measures)),
                   key=lambda i: (keep_probability(measures[i].attributes, phi), i))
    used: set[str] = set()
    assignment: dict[int, tuple[str, ...]] = {}
    for i in order:
        attrs = set(measures[i].attributes)
        if not attrs & used:
            assignment[i] = tuple(sorted(attrs))
            used |= attrs
    return evaluate("naive", measures, phi, assignment)


def cheap(measures: Sequence[Measure], phi: Mapping[str, float]) -> Amplification:
    """Always valid: each measure by its one attribute with the smallest 1 − φ (ties by name)."""
    _check(measures, phi)
    assignment = {}
    for i, m in enumerate(measures):
        rated = sorted((1.0 - float(phi.get(a, 0.0)), a) for a in m.attributes)
        if rated and rated[0][0] < 1.0:
            assignment[i] = (rated[0][1],)
    return evaluate("cheap", measures, phi, assignment)


def set_partitions(items: Sequence[str]) -> Iterator[list[tuple[str, ...]]]:
    """Every partition of ``items`` into non-empty blocks (Bell(len) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [(first,), *partition]
        for j, block in enumerate(partition):
            yield [*partition[:j], (first, *block), *partition[j + 1:]]


def grouped(measures: Sequence[Measure], phi: Mapping[str, float]) -> Amplification:
    """Alg. 4 over the attributes with φ > 0; the cheap bound when there are too many."""
    _check(measures, phi)
    attrs = sorted({a for m in measures for a in m.attributes if phi.get(a, 0.0) > 0})
    best = cheap(measures, phi)
    if len(attrs) > MAX_SEARCH_ATTRIBUTES:
        return best
    for partition in set_partitions(attrs):
        assignment: dict[int, tuple[str, ...]] = {}
        load: dict[tuple[str, ...], float] = {}
        for i, m in enumerate(measures):
            inside = [b for b in partition if set(b) <= set(m.attributes)]
            if inside:  # the strongest block; among equals the least loaded (ε̄ is convex)
                pick = min(inside, key=lambda b: (keep_probability(b, phi), load.get(b, 0.0), b))
                assignment[i] = pick
                load[pick] = load.get(pick, 0.0) + m.epsilon
        found = evaluate("grouped", measures, phi, assignment)
        if found.epsilon_bar < best.epsilon_bar - 1e-15:
            best = found
    return best if best.method == "grouped" else evaluate("grouped", measures, phi, {
        i: g.attributes for g in best.groups for i in g.members})


def column_wise(epsilons: Mapping[str, float], phi: Mapping[str, float]) -> Amplification:
    """Thm 5.12: a column-wise imputer amplifies one model only; the best one is chosen."""
    measures = [Measure((c,), float(e)) for c, e in epsilons.items()]
    _check(measures, phi)
    options = [evaluate("column_wise", measures, phi, {i: m.attributes})
               for i, m in enumerate(measures)]
    return min(options, key=lambda a: a.epsilon_bar, default=evaluate(
        "column_wise", measures, phi, {}))
