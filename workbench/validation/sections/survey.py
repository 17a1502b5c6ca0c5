"""``survey`` (optional): a weighted survey sample and its DP raking to public margins.

Declares the weight column and its public bounds (the base weights' [bwt(G′), bwt(G)]), the
design (``srs`` or ``stratified`` with strata columns and public stratum sizes), the public
population margins (cells keyed by release labels joined with '|'), candidate sets of bins
per margin, structural zeros of the joint table, weighted counts, ε₁ (binning) + ε₂ (table)
+ ε₃ (weighted counts), γ of the generalized Cauchy noise (within
:data:`~workbench.privacy.lattice.GAMMA_RANGE`, where the sampler's accuracy is verified) and
the weight check before the loop (ε_w, tolerance; :mod:`workbench.survey.weight_check`).
The neighbour relation is the budget's (stating another one here is an error): it decides
what a partition costs (:func:`workbench.privacy.sampling.domain_partition_epsilon`).

Margin columns must have a single transformation alternative, so every candidate release
has the same cells; a margin's totals must name every cell of its columns' labels.
"""

from __future__ import annotations

import itertools
from typing import Any

from workbench.privacy import smooth
from workbench.privacy.lattice import GAMMA_RANGE
from workbench.specification.document import freeze_value
from workbench.specification.survey import (
    DEFAULT_WEIGHT_CHECK_EPSILON,
    DEFAULT_WEIGHT_CHECK_TOLERANCE,
    Survey,
    SurveyMargin,
    WeightedCount,
)
from workbench.survey.weight_check import false_refusal, needed_epsilon
from workbench.validation.sections.context import BuildContext

FIELD = "survey"
#: the most often the weight check may refuse weights that describe N exactly
MAX_FALSE_REFUSAL = 0.01
SEPARATE = "separate"


def _labels(ctx: BuildContext, column: str) -> tuple[str, ...] | None:
    """The labels of a column's only transformation alternative, or None (problem recorded)."""
    for t in ctx.built["transformations"]:
        if t.column == column:
            if len(t.alternatives) != 1:
                return None
            return tuple(str(v) for v in t.alternatives[0].codec.labels)
    return None


def _margin(ctx: BuildContext, raw: dict[str, Any], path: str) -> SurveyMargin | None:
    """One margin: known single-alternative columns, totals on exactly the label product."""
    labels = []
    for j, col in enumerate(raw["columns"]):
        if col not in ctx.columns:
            ctx.unknown_column(f"{path}.columns[{j}]", col)
            return None
        got = _labels(ctx, col)
        if got is None:
            ctx.problem(f"{path}.columns[{j}]", f"margin column {col!r} needs exactly one "
                        "transformation alternative (every release must share its cells)")
            return None
        labels.append(got)
    cells = tuple("|".join(c) for c in itertools.product(*labels))
    totals = raw["totals"]
    missing = [c for c in cells if c not in totals]
    extra = sorted(set(totals) - set(cells))
    if missing:
        ctx.problem(f"{path}.totals", f"no total for cell(s) {', '.join(map(repr, missing))}")
    if extra:
        ctx.problem(f"{path}.totals", f"unknown cell(s) {', '.join(map(repr, extra))} (cells "
                    "are the columns' release labels joined with '|')")
    binnings = raw.get("binnings", {SEPARATE: [[c] for c in cells]})
    for name, bins in binnings.items():
        flat = [c for b in bins for c in b]
        if sorted(flat) != sorted(cells):
            ctx.problem(f"{path}.binnings.{name}", "the bins must cover every cell exactly once")
    if missing or extra:
        return None
    return SurveyMargin(raw["name"], tuple(raw["columns"]), cells,
                        tuple(float(totals[c]) for c in cells),
                        freeze_value({k: tuple(tuple(b) for b in v) for k, v in binnings.items()}))


def build(ctx: BuildContext) -> Survey | None:
    """The survey section, or None when the spec has none."""
    raw = ctx.doc.get("survey")
    if raw is None:
        return None
    weight = raw["weight"]
    lo, hi = (float(b) for b in weight["bounds"])
    if not lo <= hi:
        ctx.problem("survey.weight.bounds", "lower bound must not exceed the upper bound")
    if weight["column"] in ctx.columns:
        ctx.problem("survey.weight.column", "the weight is not a schema column: the release's "
                    "weights are calibrated, never synthesized")
    neighbour = ctx.doc["budget"]["neighbour"]
    if raw.get("neighbour", neighbour) != neighbour:
        ctx.problem("survey.neighbour", f"must match budget.neighbour ({neighbour!r})")
    design = raw["design"]
    strata = tuple(design.get("strata", ()))
    if design["type"] == "stratified" and not strata:
        ctx.problem("survey.design.strata", "a stratified design names its strata columns")
    for j, col in enumerate(strata):
        if col not in ctx.columns:
            ctx.unknown_column(f"survey.design.strata[{j}]", col)
    margins = [_margin(ctx, m, f"survey.margins[{i}]") for i, m in enumerate(raw["margins"])]
    names = [m["name"] for m in raw["margins"]]
    if len(set(names)) != len(names):
        ctx.problem("survey.margins", "margin names must be unique")
    used = {c for m in raw["margins"] for c in m["columns"]}
    if sum(len(m["columns"]) for m in raw["margins"]) != len(used):
        ctx.problem("survey.margins", "margins must use disjoint sets of columns (IPF)")
    counts = []
    for i, q in enumerate(raw.get("weighted_counts", [])):
        path = f"survey.weighted_counts[{i}]"
        if q["margin"] not in names:
            ctx.problem(f"{path}.margin", f"unknown margin {q['margin']!r}")
        if q["column"] not in ctx.columns:
            ctx.unknown_column(f"{path}.column", q["column"])
        counts.append(WeightedCount(q["id"], q["margin"], q["column"], q["value"]))
    eps = raw["epsilon"]
    choosing = any(len(m.get("binnings", {})) > 1 for m in raw["margins"])
    if choosing != (eps["binning"] > 0):
        ctx.problem("survey.epsilon.binning", "must be > 0 exactly when a margin has more "
                    "than one candidate binning")
    if bool(counts) != (eps["counts"] > 0):
        ctx.problem("survey.epsilon.counts", "must be > 0 exactly when there are weighted "
                    "counts")
    gamma = float(raw.get("gamma", smooth.DEFAULT_GAMMA))
    if not GAMMA_RANGE[0] <= gamma <= GAMMA_RANGE[1]:
        ctx.problem("survey.gamma", f"must lie in [{GAMMA_RANGE[0]:g}, {GAMMA_RANGE[1]:g}], "
                    "the range over which the float-safe generalized Cauchy sampler's accuracy "
                    "is verified (workbench.privacy.lattice.GAMMA_RANGE)")
    if any(m is None for m in margins):
        return None
    for i, zero in enumerate(raw.get("structural_zeros", ())):
        if len(zero) != len(margins) or any(c not in m.cells  # type: ignore[union-attr]
                                            for c, m in zip(zero, margins, strict=False)):
            ctx.problem(f"survey.structural_zeros[{i}]", "must name one cell of every margin, "
                        "in margin order")
    survey = Survey(
        weight_column=weight["column"], weight_bounds=(lo, hi), design=design["type"],
        strata=strata, stratum_sizes=freeze_value(dict(design.get("stratum_sizes", {}))),
        margins=tuple(m for m in margins if m is not None),
        structural_zeros=tuple(tuple(z) for z in raw.get("structural_zeros", ())),
        weighted_counts=tuple(counts), epsilon_binning=float(eps["binning"]),
        epsilon_table=float(eps["table"]), epsilon_counts=float(eps["counts"]),
        gamma=gamma, neighbour=neighbour,
        sampling_fraction=design.get("sampling_fraction"),
        margin_tolerance=float(raw.get("margin_tolerance", 0.01)),
        weight_check_epsilon=float(raw.get("weight_check_epsilon",
                                           DEFAULT_WEIGHT_CHECK_EPSILON)),
        weight_check_tolerance=float(raw.get("weight_check_tolerance",
                                             DEFAULT_WEIGHT_CHECK_TOLERANCE)),
    )
    _check_weight_check(ctx, survey)
    return survey


def _check_weight_check(ctx: BuildContext, survey: Survey) -> None:
    """Refuse a weight check whose noise would refuse correctly scaled weights more than 1% of
    the time (public numbers: ε_w, Δ from the weight bounds, N, the tolerance)."""
    if not survey.margins or survey.weight_bounds[1] <= 0:
        return
    p = false_refusal(survey)
    if p > MAX_FALSE_REFUSAL:
        need = needed_epsilon(survey, 1e-3)
        ctx.problem("survey.weight_check_epsilon", f"at {survey.weight_check_epsilon:g} the "
                    f"weight check's noise refuses weights that sum exactly to N with "
                    f"probability {p:.2g} (the weight bound is large against N); write "
                    f"survey.weight_check_epsilon >= {need:.3g} (refusing 0.1% of the time) or "
                    "widen survey.weight_check_tolerance")
