"""Worst-case replace-one neighbours for every criterion kind, on a tiny public design.

The design has three columns — g ∈ {a, b}, x ∈ {0, 1, 2}, y ∈ {0, 5, 10} — one identity
transformation each, and one criterion of every kind at ε = 1. For each kind the records R, R′
(one record replaced) and the candidate S are chosen so that the criterion's exact value moves
by its documented Δ (or as close as the kind allows), and the documented Δ is written out here
by hand from the formulas in :mod:`workbench.criteria.sensitivity`, independently of the code.
Everything goes through the public API (``evaluate_criterion``, ``release_once``), so a change
of the criteria's internals is audited as long as the API holds.

Rows are code triples (g, x, y); y's codes 0, 1, 2 stand for the values 0, 5 and 10.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from workbench.audits.harness import Scenario, scenario
from workbench.audits.missing import NEIGHBOURS as MISSING_NEIGHBOURS
from workbench.audits.missing import missing_criterion_scenario
from workbench.criteria import evaluate_criterion, kinds, release_once
from workbench.privacy import PrivacyContext
from workbench.spec import Configuration, Spec
from workbench.validation import build_spec

#: Every registered criterion kind is audited below: a kind without a case in ``_CRITERIA``
#: fails ``tests/test_audits.py`` (a new kind brings its worst-case audit with it).
CRITERION_KINDS: tuple[str, ...] = tuple(kinds.names())
#: Kinds computed on S alone, without noise or ε: nothing private to audit.
NOISELESS_KINDS: frozenset[str] = frozenset(
    k.name for k in kinds.registered() if k.reads is kinds.Reads.S_ONLY
)

_EPS = 1.0
_IDENTITY = {"alternatives": [{"name": "id", "kind": "identity"}]}
_CRITERIA: list[dict[str, Any]] = [
    {"id": "max_marginal_error", "kind": "max_marginal_error", "threshold": 0.5,
     "bounds": [0, 1], "params": {"max_way": None}},
    {"id": "relative_one_way", "kind": "relative_one_way", "threshold": 2.0, "bounds": [1, 2],
     "params": {"lambda": 2.0, "false_pass_probability": 0.05, "smoothing": 1}},
    {"id": "conditional_mean", "kind": "conditional_mean", "threshold": 1.0, "bounds": [0, 10],
     "params": {"target": "y", "group_by": ["g"], "include_overall": True, "resize_slack": 0}},
    {"id": "regression_coefficients", "kind": "regression_coefficients", "threshold": 1.0,
     "params": {"target": "y", "features": ["g"]}, "once": True},
    {"id": "regression_mae", "kind": "regression_mae", "threshold": 1.0, "bounds": [0, 10],
     "params": {"target": "y", "features": ["g"]}},
    {"id": "faithfulness", "kind": "faithfulness", "threshold": 0.5},
    {"id": "max_ecdf", "kind": "max_ecdf", "threshold": 0.5, "params": {"column": "y"}},
    {"id": "avg_ecdf", "kind": "avg_ecdf", "threshold": 0.5, "params": {"column": "y"}},
    {"id": "mean_error", "kind": "mean_error", "threshold": 1.0, "params": {"column": "y"}},
    {"id": "median_error", "kind": "median_error", "threshold": 1.0, "params": {"column": "y"}},
    {"id": "q15_error", "kind": "q15_error", "threshold": 1.0, "params": {"column": "y"}},
    {"id": "q90_error", "kind": "q90_error", "threshold": 1.0, "params": {"column": "y"}},
    {"id": "tv_marginals", "kind": "tv_marginals", "threshold": 0.5,
     "params": {"way": 2, "aggregate": "mean"}},
    {"id": "tstr", "kind": "tstr", "threshold": 0.5, "bounds": [0, 1],
     "params": {"target": "g", "features": ["x"], "classifier": "decision_tree"}},
    {"id": "knn_imputed_mean", "kind": "knn_imputed_mean", "threshold": 1.0, "epsilon": 8.0,
     "params": {"target": "y", "features": ["x"], "subgroup_column": "g",
                "subgroup_values": ["a"]}},
    {"id": "face_privacy_count", "kind": "face_privacy_count", "threshold": 0, "epsilon": 0,
     "params": {"measure": "unique_rows"}},
    {"id": "weighted_marginal_error", "kind": "weighted_marginal_error", "threshold": 0.5,
     "bounds": [0, 1], "params": {"columns": ["g", "x"]}},
    {"id": "weighted_mean", "kind": "weighted_mean", "threshold": 1.0, "bounds": [0, 10],
     "params": {"target": "y"}},
    {"id": "distinguisher", "kind": "distinguisher", "threshold": 0.9,
     "params": {"proxy": "", "classifier": "logistic_regression"}},
]
#: The weighted kinds' survey: weights in [1, 3], population N = 12 (6 per value of g); R's
#: records all carry the largest weight w_U = 3, the worst case for their sensitivity.
_SURVEY = {"weight": {"column": "w", "bounds": [1, 3]}, "design": {"type": "srs"},
           "margins": [{"name": "g", "columns": ["g"], "totals": {"a": 6, "b": 6}}],
           "epsilon": {"binning": 0, "table": 0.5, "counts": 0}}
_W_MAX = 3.0
_WEIGHTED = frozenset({"weighted_marginal_error", "weighted_mean"})


@lru_cache(maxsize=1)
def audit_proxy() -> str:
    """A tiny PUBLIC proxy for the distinguisher (g = b only; x, y as in S), in a temp file."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="workbench-audit-"))
    path = folder / "proxy.csv"
    path.write_text("g,x,y\nb,0,0\nb,1,5\nb,2,10\nb,0,5\n", encoding="utf-8")
    return str(path)


def audited_kinds() -> set[str]:
    """Kinds this module has a case for: a worst-case neighbour pair, or the S-only check."""
    return (set(_NEIGHBOURS) | set(MISSING_NEIGHBOURS)
            | {c["kind"] for c in _CRITERIA if c["kind"] in NOISELESS_KINDS})


def audit_document() -> dict[str, Any]:
    """The tiny public spec document: one criterion of every kind, ε = 1 each."""
    criteria = [{"epsilon": _EPS, **c} for c in _CRITERIA]
    for c in criteria:
        if c["kind"] == "distinguisher":
            c["params"] = {**c["params"], "proxy": audit_proxy()}
    return {
        "spec_version": "1.0",
        "metadata": {"title": "Privacy audit design", "owner": "workbench audits",
                     "description": "A tiny public design whose neighbouring datasets are "
                                    "worst cases for every criterion's sensitivity."},
        "schema": {"columns": [
            {"name": "g", "type": "categorical", "domain": ["a", "b"], "missing": "forbid",
             "out_of_domain": "error"},
            {"name": "x", "type": "ordinal", "domain": [0, 1, 2], "missing": "forbid",
             "out_of_domain": "error"},
            {"name": "y", "type": "ordinal", "domain": [0, 5, 10], "missing": "forbid",
             "out_of_domain": "error"},
        ]},
        "transformations": {"columns": {c: _IDENTITY for c in ("g", "x", "y")}},
        "constraints": {"raw": [], "synthetic": []},
        "criteria": criteria,
        "faithfulness": {"exact": ["g", "y"], "distance": {"x": 1}, "alpha": 0},
        "face_privacy": {"min_count": [1]},
        "generator": {"family": "independent", "search_space": [{}]},
        "budget": {"epsilon_generator": 1.0,
                   "epsilon_criteria": sum(c["epsilon"] for c in criteria),
                   "neighbour": "replace_one"},
        "selection": {"gamma": 0, "max_iterations": None, "epsilon_0": 0},
        "survey": _SURVEY,
    }


@lru_cache(maxsize=1)
def audit_spec() -> tuple[Spec, Configuration]:
    """The built design and its one configuration."""
    spec = build_spec(audit_document())
    return spec, next(iter(spec.configurations()))


def _rows(*rows: tuple[int, int, int]) -> np.ndarray:
    """A code matrix from (g, x, y) triples."""
    return np.array(rows, dtype=np.int64)


def _replace(rows: np.ndarray, i: int, row: tuple[int, int, int]) -> np.ndarray:
    """The replace-one neighbour: record i becomes ``row``."""
    out = rows.copy()
    out[i] = row
    return out


def _quantile_pair(q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, str]:
    """n = 20 with k = 20q values at y = 0, one at 5, the rest at 10; one y = 0 → 10 moves
    #{r ≤ 0} from qn to qn − 1 (score −1) and #{r ≤ 5} from qn + 1 to qn (score +1)."""
    k = round(20 * q)
    ys = [0] * k + [1] + [2] * (19 - k)
    real = _rows(*[(i % 2, i % 3, y) for i, y in enumerate(ys)])
    return (real, _replace(real, 0, (0, 0, 2)), real, 1.0,
            f"n = 20, {k} of y at 0: one moves to 10; the scores at 0 and 5 move by −1 and +1 "
            "(L∞ Δ = 1 attained)")


# A base table with four distinct rows, every code of g and x seen at least once.
_BASE = _rows((0, 0, 0), (0, 1, 1), (1, 2, 2), (1, 0, 1))

#: kind → (R, R′, S, documented Δ, how the neighbours differ). n = 4 everywhere.
_NEIGHBOURS: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, float, str]] = {
    "max_marginal_error": (
        _BASE, _replace(_BASE, 0, (1, 2, 0)), _BASE, 1 / 4,
        "S = R; R′ moves one record to another cell: E goes 0 → 1/n (Δ = 1/n)"),
    "relative_one_way": (
        _replace(_rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 1)), 3, (0, 0, 1)),
        _rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 1)),
        _rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 1)), 1.0,
        "s_min = 1 (g = b in S); R has no g = b (ratio λ = 2), R′ = S (ratio 1): "
        "Δ = max{1/ŝ, λ − 1/(1/λ + 1/ŝ)} = 1 with ŝ = 2"),
    "conditional_mean": (
        _rows((0, 0, 0), (0, 1, 0), (1, 2, 1), (1, 0, 1)),
        _rows((0, 0, 0), (0, 1, 2), (1, 2, 1), (1, 0, 1)),
        _rows((0, 0, 2), (0, 1, 2), (1, 2, 1), (1, 0, 1)), 10 / 2,
        "group g = a has m̂ = 2 (slack 0); one of its y = 0 becomes 10: its mean 0 → 5 "
        "(Δ = (U − L)/min m̂ = 10/2)"),
    "regression_coefficients": (
        _BASE, _replace(_BASE, 0, (0, 0, 2)), _BASE, 1 * 1 + 2 * 1 + 4 * 0.5,
        "y ~ g: weighted statistics (Σz, Σt, Σzt), weights (1, 2, 4), ranges (1, 1, ½): "
        "Δ = 5; (a, 0) → (a, 10) moves Σt by 1 and Σzt by ½: 4 of 5, the most one record can"),
    "regression_mae": (
        _rows((0, 0, 0), (1, 1, 2), (0, 2, 2), (1, 0, 2)),
        _rows((0, 0, 2), (1, 1, 2), (0, 2, 2), (1, 0, 2)),
        _rows((0, 0, 2), (1, 1, 2), (0, 2, 2), (1, 0, 2)), 2 * 10 / 4,
        "fixed DP coefficients predict L = 0, S's OLS predicts U = 10; one y = 0 → 10 moves "
        "both MAEs by (U − L)/n in opposite directions (Δ = 2(U − L)/n)"),
    "faithfulness": (
        _BASE, _replace(_BASE, 0, (1, 1, 0)), _BASE, 1 / 4,
        "S = R, all rows distinct; R′'s new row matches no row of S: β_max 1 → 3/4 (Δ = 1/n)"),
    "max_ecdf": (
        _BASE, _replace(_BASE, 0, (0, 0, 2)), _BASE, 1 / 4,
        "S = R; R′ moves one y from 0 to 10: the ECDF of y moves by 1/n (Δ = 1/n)"),
    "avg_ecdf": (
        _rows((0, 0, 0), (0, 1, 0), (1, 2, 0), (1, 0, 0)),
        _rows((0, 0, 2), (0, 1, 0), (1, 2, 0), (1, 0, 0)),
        _rows((0, 0, 2), (0, 1, 2), (1, 2, 2), (1, 0, 2)), 2.5 / 4,
        "R all at 0, S all at 10 (U_a = ½); one y = 0 → 10: U_a = (n−1)³/(2n³), a move of "
        "0.289 of the derived bound Δ = 2.5/n (not attainable: the bound is conservative)"),
    "mean_error": (
        _BASE, _replace(_BASE, 0, (0, 0, 2)), _BASE, 10 / 4,
        "S = R; R′ moves one y from 0 to 10: the mean moves by (U − L)/n (Δ = 10/4)"),
    "median_error": _quantile_pair(0.5),
    "q15_error": _quantile_pair(0.15),
    "q90_error": _quantile_pair(0.9),
    "tv_marginals": (
        _BASE, _replace(_BASE, 0, (1, 1, 1)), _BASE, 1 / 4,
        "S = R; R′ changes all three columns of one record: every 2-way TV is 1/n (Δ = 1/n)"),
    "weighted_marginal_error": (
        _BASE, _replace(_BASE, 0, (1, 2, 0)), _BASE, _W_MAX / 12,
        "S = R, S raked to N = 12 (weights 3), R's weights w_U = 3; R′ moves one record from "
        "cell (a, 0) to (b, 2): the max gap goes 0 → w_U/N (Δ = w_U/N)"),
    "weighted_mean": (
        _BASE, _replace(_BASE, 0, (0, 0, 2)), _BASE, (_W_MAX * 10 - 1 * 0) / 12,
        "S = R, weights 3; R′ moves one y from 0 to 10 at weight w_U: Σ w·y/N moves by "
        "w_U·U/N = (max − min corner of w·y)/N"),
    "knn_imputed_mean": (
        _BASE, _replace(_BASE, 0, (1, 0, 0)), _BASE, 1.0,
        "the subgroup g = a loses one record: its Laplace count moves by 1 (Δ = 1); the "
        "mean's smooth release is audited in audits.smooth"),
    "tstr": (
        _BASE, _replace(_BASE, 0, (1, 0, 0)), _BASE, 2.0,
        "the classifier is fitted on S; one record's class a → b with its features kept leaves "
        "the cell (a, ŷ) for (b, ŷ): the confusion matrix moves by 2 in L1 (Δ = 2)"),
    "distinguisher": (
        _rows((1, 0, 0), (1, 1, 1), (1, 2, 2), (1, 0, 1)),
        _rows((0, 0, 0), (1, 1, 1), (1, 2, 2), (1, 0, 1)),
        _rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 0, 1)), 1 / 8,
        "trained on S (all g = a) against the proxy (all g = b): g = a is called synthetic; "
        "R is all g = b (called real), R′ moves one record to g = a: the accuracy on R ∪ S "
        "goes 8/8 → 7/8 (Δ = 1/(n_R + n_S))"),
}


def _mae_once(spec: Spec, config: Configuration, real: np.ndarray) -> dict[str, Any]:
    """A fixed, public coefficient release predicting 0 everywhere (the MAE audit conditions
    on the once-released coefficients, which are audited on their own)."""
    release = release_once(spec, config, real, PrivacyContext.simulation(0))
    coef = release["regression_coefficients"]
    return {coef.criterion_id: dataclasses.replace(coef, intercept=0.0,
                                                   coef=np.zeros_like(coef.coef))}


def _runner(kind: str, datasets: tuple[np.ndarray, np.ndarray], synth: np.ndarray
            ) -> Callable[[PrivacyContext, int], object]:
    """run(ctx, which): the public call that releases ``kind`` on R (0) or R′ (1)."""
    spec, config = audit_spec()
    if kind == "regression_coefficients":
        return lambda ctx, which: release_once(spec, config, datasets[which], ctx)
    once = _mae_once(spec, config, datasets[0]) if kind == "regression_mae" else None
    if kind in _WEIGHTED:
        from workbench.criteria.weighting import SURVEY_KEY, SurveyInputs

        once = {SURVEY_KEY: SurveyInputs(np.full(len(datasets[0]), _W_MAX))}

    def run(ctx: PrivacyContext, which: int) -> object:
        return evaluate_criterion(spec, config, kind, datasets[which], synth, ctx,
                                  once_results=once)

    return run


def criterion_scenario(kind: str) -> Scenario:
    """The captured releases of one criterion kind on its worst-case neighbours."""
    if kind in NOISELESS_KINDS:
        raise ValueError(f"{kind} is computed on S alone without noise; there is nothing to "
                         "audit (see noiseless_check)")
    if kind in MISSING_NEIGHBOURS:  # missing-value kinds: their own design (audits.missing)
        return missing_criterion_scenario(kind)
    real, real_prime, synth, delta, how = _NEIGHBOURS[kind]
    quantile = "exponential mechanism on R's quantile over the public grid"
    mechanism = {"regression_coefficients": "Laplace on the weighted sufficient statistics "
                 "(vector)", "tstr": "Laplace on the confusion matrix (vector)",
                 "knn_imputed_mean": "Laplace on the subgroup count",
                 "median_error": quantile, "q15_error": quantile, "q90_error": quantile}.get(
                     kind, "Laplace on the criterion value")
    return scenario(kind, mechanism, how, delta, _runner(kind, (real, real_prime), synth))


def noiseless_check(kind: str) -> tuple[float, float, int]:
    """For an S-only kind: its value on R and on a neighbour R′ with S fixed, and how many
    measurements were made (must be equal values and zero measurements)."""
    spec, config = audit_spec()
    values, measured = [], 0
    for real in (_BASE, _replace(_BASE, 0, (1, 1, 0))):
        ctx = PrivacyContext.simulation(0)
        values.append(evaluate_criterion(spec, config, kind, real, _BASE, ctx).value)
        measured += len(ctx.records)
    return float(values[0]), float(values[1]), measured
