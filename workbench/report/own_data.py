"""Datasheet and ``describe`` lines for a design made from your own data (issue 27): the DP
pilot it was made from, and what cleaning removed or recoded (``cleaning.json``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.specification import Spec
from workbench.specification.n_policy import pilot_words, removed_words


def _num(x: float) -> str:
    return f"{x:.6g}"


def _delta_words(delta: float) -> str:
    """The pilot's δ when its label discovery spent one ((ε, δ)-DP), else nothing."""
    if delta <= 0:
        return ""
    return (f" and δ = {_num(delta)} (its label discovery: unknown labels released by "
            "thresholded DP selection, and out-of-range counts per side)")


def pilot_markdown(spec: Spec) -> list[str]:
    """The datasheet's line naming the pilot and its ε (nothing when the spec names none)."""
    pilot = spec.pilot
    if pilot is None:
        return []
    return [f"- Before this design, a DP pilot (`workbench pilot`) measured the dataset's 1-way "
            "marginals, missing rates, out-of-domain counts (and any declared 2-way tables) with "
            f"ε = {_num(pilot.epsilon)}{_delta_words(pilot.delta)}; its FACTS file "
            f"(`{pilot.facts}`, SHA-256 `{pilot.sha256}`) holds only DP values and drove the "
            "public proxy. Its ε is part of the dataset's earlier spend, not of ε_total. "
            + pilot_words()]


def pilot_describe_lines(spec: Spec, epsilon_total: float) -> list[str]:
    """``describe``'s lines: the pilot's ε beside the run's ε_total (ASCII 'epsilon')."""
    pilot = spec.pilot
    if pilot is None:
        return []
    delta = f" delta = {_num(pilot.delta)}" if pilot.delta > 0 else ""
    return [f"  pilot (DP, spent before this design) epsilon = {_num(pilot.epsilon)}{delta} "
            f"(FACTS {pilot.facts}, sha256 {pilot.sha256[:12]}...)",
            f"  pilot + this run: {_num(pilot.epsilon)} + {_num(epsilon_total)} = "
            f"{_num(pilot.epsilon + epsilon_total)} on dataset "
            f"{spec.metadata.dataset or '(not set)'} (a run after the pilot needs --spend-again)"]


def cleaning_describe_line(spec: Spec) -> list[str]:
    """``describe``'s line on how the cleaning counts leave the run, if they do."""
    cc = spec.cleaning_counts
    removed = ("  removed rows             "
               + removed_words(spec.n_policy, None if cc is None else cc.release))
    if cc is None:
        return ["  cleaning counts          split not released (never leaves the run)", removed]
    if cc.private:
        return [f"  cleaning counts          DP, epsilon = {_num(cc.epsilon)} "
                "(charged by every run)", removed]
    return ["  cleaning counts          exact, declared public by the spec (no epsilon; not DP)",
            removed]


def cleaning_markdown(doc: Mapping[str, Any] | None, spec: Spec) -> list[str]:
    """The datasheet's section on what cleaning did: what is public about the removed total
    and what the counts protect, from the spec's ``n_policy``
    (:mod:`workbench.specification.n_policy`)."""
    removed = removed_words(spec.n_policy, None if doc is None else doc["release"])
    if doc is None:
        return ["## Data preparation", f"{removed} (The spec declares no `cleaning_counts`.)",
                ""]
    head = ("Counts released with differential privacy" if doc["release"] == "dp" else
            "Exact counts, declared public by the spec (not differentially private)")
    lines = ["## Data preparation", removed, f"{head}: {doc['how']}."]
    if doc["release"] == "dp":
        lines.append(f"ε = {_num(doc['epsilon'])}, Δ₁ = {doc['sensitivity']}, σ ≈ "
                     f"{doc['sigma']:.3g} per count.")
    for c in doc["counts"]:
        who = f"column `{c['column']}` ({c['policy']})" if "column" in c else f"rule `{c['rule']}`"
        lines.append(f"- {who}: {c['count']:,} {c['what']}")
    return [*lines, ""]
