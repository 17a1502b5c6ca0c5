"""DP post-stratification and raking of a survey sample (Merrill ch. 7), before the loop.

1. ε₁: for each margin with several candidate sets of bins, one is chosen with the
   exponential mechanism, score |𝒮|/W₀ (:mod:`workbench.survey.binning`); ε₁ is split
   equally among those margins (basic composition: they read the same records).
2. ε₂: the joint sample table over the chosen bins is released with Laplace noise, L1
   sensitivity 2 (replace-one) or 1 (add/remove); structural zeros (declared in the spec)
   are not measured and cost nothing.
3. IPF of the noisy table (clipped at ½ outside structural zeros) to the public totals gives
   the calibrated weight per sample record in each joint cell: fitted/noisy — post-processing.
4. ε₃: each weighted count, post-stratified on its margin's chosen bins, gets generalized
   Cauchy noise scaled to SS_β = max_k e^{−βk}·W_k (:mod:`workbench.survey.weights`), at
   the β of the shared calibration (:func:`workbench.privacy.smooth.calibrate`; ε/6 at γ = 4,
   the thesis' ε/(2(γ − 1))), through ``PrivacyContext.smooth_cauchy``. SS_β bounds the local
   sensitivity under add/remove; under replace-one the bound is (1 + e^{β/2})·SS_{β/2}
   (:func:`replace_smooth_bound`).

The budget ε₁ + ε₂ + ε₃ (plus ε_w of :mod:`workbench.survey.weight_check`) is the survey
term of :class:`~workbench.privacy.budget_plan.BudgetPlan`; every measurement goes through
``ctx`` (accountant and ledger) with a ``survey …`` purpose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.privacy import smooth
from workbench.survey.binning import (
    BinSet,
    binsets_from_spec,
    choose_binning,
    group_base_weights,
    score,
    score_sensitivity,
)
from workbench.survey.raking import ipf
from workbench.survey.weights import smooth_sensitivity, weighted_count

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.survey import Survey, SurveyMargin

#: Floor of a noisy joint cell before IPF (outside structural zeros): keeps every cell fittable.
SEED_FLOOR = 0.5


@dataclass(frozen=True)
class SurveyRelease:
    """The DP outputs of the raking pipeline (all public once released)."""

    binnings: dict[str, str]
    shape: tuple[int, ...]
    noisy_table: np.ndarray
    fitted_table: np.ndarray
    structural: np.ndarray
    weighted_counts: dict[str, dict[str, float]]

    def cell_factor(self) -> np.ndarray:
        """Calibrated weight per sample record in each joint cell: fitted / noisy (IPF)."""
        seed = np.where(self.structural, 0.0, np.maximum(self.noisy_table, SEED_FLOOR))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(seed > 0, self.fitted_table / np.where(seed > 0, seed, 1), 0.0)

    def to_dict(self) -> dict[str, Any]:
        """survey.json of the bundle."""
        return {"binnings": dict(self.binnings), "shape": list(self.shape),
                "noisy_table": self.noisy_table.round(6).ravel().tolist(),
                "fitted_table": self.fitted_table.round(6).ravel().tolist(),
                "structural_zeros": self.structural.ravel().astype(int).tolist(),
                "weighted_counts": self.weighted_counts}


def margin_cells(labels: pd.DataFrame, margin: SurveyMargin) -> np.ndarray:
    """Each record's cell index in ``margin`` from its release labels ('a|b' keys)."""
    keys = labels[list(margin.columns)].astype(str).agg("|".join, axis=1)
    idx = pd.Index(margin.cells).get_indexer(keys)
    if (idx < 0).any():
        raise ValueError(f"survey margin {margin.name!r}: records outside its cells")
    return idx


def chosen_binsets(survey: Survey, chosen: dict[str, str]) -> list[BinSet]:
    """The chosen :class:`BinSet` of every margin, in margin order."""
    return [next(b for b in binsets_from_spec(m.binnings, m.cells) if b.name == chosen[m.name])
            for m in survey.margins]


def structural_mask(survey: Survey, binsets: list[BinSet]) -> np.ndarray:
    """Joint cells of the chosen bins whose every base combination is a structural zero."""
    shape = tuple(len(b.bins) for b in binsets)
    zeros = {tuple(z) for z in survey.structural_zeros}
    mask = np.zeros(shape, dtype=bool)
    for joint in np.ndindex(*shape):
        combos = [[survey.margins[i].cells[c] for c in binsets[i].bins[j]]
                  for i, j in enumerate(joint)]
        mask[joint] = bool(zeros) and all(tuple(x) in zeros for x in _product(combos))
    return mask


def _product(lists: list[list[str]]) -> list[tuple[str, ...]]:
    """Cartesian product as a list (small: cells of one joint bin)."""
    out: list[tuple[str, ...]] = [()]
    for items in lists:
        out = [(*o, x) for o in out for x in items]
    return out


def release_survey(survey: Survey, labels: pd.DataFrame, base_weights: np.ndarray,
                   ctx: PrivacyContext) -> SurveyRelease:
    """Run steps 1–4 on the sample (release labels of the margin columns, base weights)."""
    g_min, g_max = survey.weight_bounds
    bwt = np.clip(np.asarray(base_weights, dtype=np.float64), g_min, g_max)
    cells = [margin_cells(labels, m) for m in survey.margins]
    choosing = [m for m in survey.margins if len(m.binnings) > 1]
    chosen: dict[str, str] = {}
    for m, cell_of in zip(survey.margins, cells, strict=True):
        sets = binsets_from_spec(m.binnings, m.cells)
        scores = [score(b, m.totals, cell_of, bwt, g_max) for b in sets]
        delta = score_sensitivity(sets, m.totals, g_min, g_max, survey.neighbour)
        eps = survey.epsilon_binning / len(choosing) if choosing else 0.0
        chosen[m.name] = choose_binning(sets, scores, delta, eps, ctx, m.name).name
    binsets = chosen_binsets(survey, chosen)
    shape = tuple(len(b.bins) for b in binsets)
    bins = [b.bin_of_cell(len(m.cells))[c] for b, m, c in zip(binsets, survey.margins, cells,
                                                               strict=True)]
    flat = np.ravel_multi_index(tuple(bins), shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(float)
    structural = structural_mask(survey, binsets)
    noisy = np.zeros(shape)
    measured = ctx.laplace(counts[~structural], sensitivity=ctx.histogram_sensitivity(),
                           epsilon=survey.epsilon_table, purpose="survey joint sample table")
    noisy[~structural] = np.asarray(measured.value, dtype=np.float64)
    seed = np.where(structural, 0.0, np.maximum(noisy, SEED_FLOOR))
    targets = [((i,), b.totals(m.totals)) for i, (b, m) in enumerate(zip(binsets, survey.margins,
                                                                         strict=True))]
    fitted = ipf(seed, targets)
    answers = {q.id: _weighted_count(survey, q, labels, bwt, binsets, cells, ctx)
               for q in survey.weighted_counts}
    return SurveyRelease(chosen, shape, noisy, fitted, structural, answers)


def replace_smooth_bound(totals: np.ndarray, groups: list[np.ndarray], beta: float,
                         g_max: float, neighbour: str) -> float:
    """A β-smooth upper bound on a weighted count's local sensitivity under ``neighbour``.

    add/remove: SS_β (Lemma 7.4.2). replace-one: a replacement is a deletion then an addition,
    so LS_r(D) ≤ W₀(D) + W₁(D) ≤ (1 + e^{β/2})·SS_{β/2}(D), and a replace-neighbour is two
    add/remove steps away, so SS_{β/2}(D) ≤ e^{β}·SS_{β/2}(D″): S = (1 + e^{β/2})·SS_{β/2} is
    β-smooth for replace-one neighbours.
    """
    if neighbour == "add_remove":
        return smooth_sensitivity(totals, groups, beta, g_max)
    return (1 + math.exp(beta / 2)) * smooth_sensitivity(totals, groups, beta / 2, g_max)


def _weighted_count(survey: Survey, query: Any, labels: pd.DataFrame, bwt: np.ndarray,
                    binsets: list[BinSet], cells: list[np.ndarray],
                    ctx: PrivacyContext) -> dict[str, float]:
    """One weighted count with smooth-sensitivity generalized Cauchy noise (step 4)."""
    i = [m.name for m in survey.margins].index(query.margin)
    margin, binset = survey.margins[i], binsets[i]
    totals = binset.totals(margin.totals)
    bin_of = binset.bin_of_cell(len(margin.cells))[cells[i]]
    hit = labels[query.column].astype(str).to_numpy() == str(query.value)
    exact = weighted_count(hit, bwt, bin_of, totals)
    eps = survey.epsilon_counts / len(survey.weighted_counts)
    beta = smooth.calibrate(eps, survey.gamma).beta
    groups = group_base_weights(cells[i], bwt, binset, len(margin.cells))
    ss = replace_smooth_bound(totals, groups, beta, survey.weight_bounds[1], survey.neighbour)
    # public range: a post-stratified count lies in [0, the margin's public total]
    noisy = ctx.smooth_cauchy(exact, smooth_sensitivity=ss, beta=beta, epsilon=eps,
                              bounds=(0.0, float(np.sum(totals))), gamma=survey.gamma,
                              purpose=f"survey weighted count {query.id}")
    # SS_β depends on the data: the scale is never returned or published; the value is a
    # point of the public grid on that range (float-safe: workbench.privacy.lattice)
    return {"value": float(np.asarray(noisy.value).ravel()[0]), "epsilon": eps}
