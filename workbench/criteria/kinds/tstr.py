"""Train on synthetic, test on real: a classifier fitted on the release, scored on R.

E(R, S) = 1 − metric(confusion matrix on R of a classifier trained on S), metric = accuracy or
macro-F1. S is public inside the loop, so training costs nothing; the k×k confusion matrix on R
is released with Laplace noise and the metric is computed from the noisy matrix (negative cells
clipped to 0): post-processing, no further ε.

**Relative to a baseline** (``baseline: majority``, issue 28). 1 − accuracy accepts a release
that taught the classifier nothing: always predicting the majority class already scores the
majority share (75.9% on Adult). With ``majority`` the error is the classifier's error rate
relative to the majority classifier's, E = (1 − accuracy)/(1 − majority share): 1 (or more,
clipped to 1) means no better than always predicting the commonest class, 0 means perfect; a
threshold T < 1 asks for an accuracy gain of (1 − T)·(1 − majority share) over it (on Adult,
T = 0.83 ⇔ a gain ≥ 4.1 points). The majority share is R's largest class share, read from the
row sums of the same noisy confusion matrix (R's class counts): post-processing of the one DP
release, so no further ε and Δ stays 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.audit_case import BASE, AuditCase, replaced
from workbench.criteria.classifiers import (
    CLASSIFIERS,
    DEFAULT_CLASSIFIER,
    METRICS,
    PublicClassifier,
)
from workbench.criteria.kinds._regression import FEATURES, features
from workbench.criteria.kinds.base import CheckContext, Clique, CriterionKind, Param, join_path
from workbench.criteria.kinds.tags import KindTags
from workbench.specification.params import one_of, whole_at_least

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.criteria.result import CriterionResult
    from workbench.specification.model import Criterion, Spec
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells

CLASS_TYPES = ("categorical", "ordinal")
BASELINES = ("none", "majority")
MAX_CLASSES = 50  # the noisy matrix has k² cells: beyond this the metric is mostly noise


def _columns(spec: Spec, criterion: Criterion) -> tuple[str, list[str]]:
    """The class column and the feature columns ('all_other' resolved, schema order)."""
    target = str(criterion.params["target"])
    feats = criterion.params.get("features", "all_other")
    if feats == "all_other":
        return target, [c for c in spec.column_names if c != target]
    return target, [str(f) for f in feats]


def _model(ev: Evaluation, criterion: Criterion) -> PublicClassifier:
    """The classifier of this criterion fitted on S (cached per evaluation)."""
    key = ("tstr", criterion.id)
    if key not in ev.cache:
        target, feats = _columns(ev.spec, criterion)
        names = list(ev.table.domain.names)
        model = PublicClassifier(
            str(criterion.params.get("classifier", DEFAULT_CLASSIFIER)),
            names.index(target), [names.index(f) for f in feats], ev.table.domain.sizes,
            int(criterion.params.get("seed", 0)))
        ev.cache[key] = model.fit(ev.synth)
    return ev.cache[key]


def error_of(cm: np.ndarray, criterion: Criterion) -> float:
    """1 − metric, or with the majority baseline (1 − accuracy)/(1 − majority share), both of
    the same (possibly noisy) matrix, negative cells clipped; within [0, 1]."""
    metric = str(criterion.params.get("metric", "accuracy"))
    if criterion.params.get("baseline", "none") != "majority":
        return 1.0 - METRICS[metric](cm)
    m = np.clip(np.asarray(cm, dtype=np.float64), 0.0, None)
    total = m.sum()
    if total <= 0:
        return 1.0
    majority_error = 1.0 - m.sum(axis=1).max() / total
    error = 1.0 - float(np.trace(m)) / total
    if majority_error <= 0:  # one class only: nothing to gain over always predicting it
        return 0.0 if error <= 0 else 1.0
    return float(min(1.0, error / majority_error))


class Tstr(CriterionKind):
    """1 − accuracy (or macro-F1) on R of a classifier trained on S; Laplace on the matrix."""

    name = "tstr"
    description = ("how much worse than perfect a classifier trained on the release predicts "
                   "the class column of the real data: 1 − accuracy, or 1 − macro-F1")
    params = MappingProxyType({
        "target": Param(None, doc="the class column (categorical or ordinal)", control="column",
                        label="class column"),
        "features": FEATURES,
        "classifier": Param(DEFAULT_CLASSIFIER, one_of(*CLASSIFIERS),
                            "the scikit-learn classifier trained on the release",
                            control="choice", label="classifier", choices=CLASSIFIERS),
        "metric": Param("accuracy", one_of(*METRICS), "accuracy or macro_f1",
                        control="choice", label="metric", choices=tuple(METRICS)),
        "seed": Param(0, whole_at_least(0), "the classifier's random_state",
                      control="whole_number", label="seed"),
        "baseline": Param("none", one_of(*BASELINES),
                          "none: 1 − metric; majority: the error rate relative to always "
                          "predicting R's commonest class (1 = learned nothing)",
                          control="choice", label="baseline", choices=BASELINES),
    })
    #: the value is a ratio of noisy counts: Δ = 2 is the matrix's, not the value's (whose σ
    #: is about Δ/(ε·n)), so the design assistant measures σ·ε by simulation (issue 28)
    tags = KindTags(clip=(0.0, 1.0), sigma_by_simulation=True,
                    noise_note=("Laplace on the k×k confusion matrix; the metric is computed "
                                "from it"))
    position = 90

    def check(self, ctx: CheckContext, params: Mapping[str, Any], bounds: Any,
              threshold: float, path: str) -> tuple[float, float] | None:
        """The class column is categorical or ordinal with 2..50 values; features known."""
        ppath = join_path(path, "params")
        target = params.get("target")
        if target not in ctx.columns:
            ctx.unknown_column(join_path(ppath, "target"), target)
        else:
            col = ctx.columns[target]
            if col.type not in CLASS_TYPES:
                ctx.problem(join_path(ppath, "target"), f"column {target!r} must be "
                            "categorical or ordinal to be a class column")
            elif col.domain is not None and not 2 <= len(col.domain) <= MAX_CLASSES:
                ctx.problem(join_path(ppath, "target"), f"a class column needs 2 to "
                            f"{MAX_CLASSES} values")
        if not features(ctx, params, ppath):
            ctx.problem(join_path(ppath, "features"), "needs at least one feature column")
        if bounds is not None and bounds != (0.0, 1.0):
            ctx.problem(join_path(path, "bounds"), "a TSTR error lies in [0, 1]")
        if params.get("baseline", "none") == "majority":
            if params.get("metric", "accuracy") != "accuracy":
                ctx.problem(join_path(ppath, "baseline"), "the majority baseline compares "
                            "accuracies: use metric 'accuracy'")
            if threshold >= 1:
                ctx.problem(join_path(path, "threshold"), "with the majority baseline a "
                            "threshold ≥ 1 accepts a classifier that learned nothing; use "
                            "T < 1 (T = 1 − gain/(1 − majority share))")
        return (0.0, 1.0)

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """The error of the exact confusion matrix of the S-trained classifier on R."""
        return error_of(_model(ev, criterion).confusion(ev.real), criterion)

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 2 (replace-one) or 1 (add/remove): L1 sensitivity of the confusion matrix on R.

        The classifier is a function of S alone, so each record of R falls in exactly one cell
        (true class, predicted class) determined by that record only. Replacing one record
        removes 1 from one cell and adds 1 to one cell (‖Δcm‖₁ ≤ 2; = 2 when the cells
        differ); adding or removing one record changes one cell by 1. n does not enter.
        """
        from workbench.privacy import sensitivity

        classes = table.domain.size_of(str(criterion.params["target"]))
        return float(sensitivity.histogram(spec.budget.neighbour)), {"classes": classes}

    def release(self, ev: Evaluation, criterion: Criterion) -> CriterionResult:
        """Laplace(Δ/ε) on every cell of the matrix; 1 − metric of the noisy matrix."""
        from workbench.criteria.evaluation_state import purpose

        cm = _model(ev, criterion).confusion(ev.real).astype(np.float64)
        delta, details = self.sensitivity(ev.spec, ev.table, criterion, ev.pc)
        noisy = ev.ctx.laplace(cm.ravel(), sensitivity=float(delta or 0.0),
                               epsilon=criterion.epsilon, purpose=purpose(criterion))
        metric = str(criterion.params.get("metric", "accuracy"))
        value = error_of(noisy.value.reshape(cm.shape), criterion)
        details = {**details, "classifier": _model(ev, criterion).name, "metric": metric,
                   "baseline": str(criterion.params.get("baseline", "none"))}
        return self.result(criterion, value, record=noisy.record, details=details)

    def marginals(self, spec: Spec, criterion: Criterion) -> list[Clique]:
        """The class column with each feature: what a classifier learns first."""
        target, feats = _columns(spec, criterion)
        return [(target, f) for f in feats]

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """The draft's last categorical column as the class, every other as a feature,
        against the majority baseline (T = 0.85: 15% of the majority's errors removed)."""
        cols = [c for c in document.get("schema", {}).get("columns", [])
                if isinstance(c, Mapping)]
        classes = [c.get("name") for c in cols if c.get("type") in CLASS_TYPES]
        target = classes[-1] if classes else (cols[-1].get("name") if cols else None)
        return {"id": criterion_id, "kind": self.name, "epsilon": 0.05, "threshold": 0.85,
                "bounds": [0, 1],
                "params": {"target": target, "features": "all_other",
                           "classifier": DEFAULT_CLASSIFIER, "metric": "accuracy", "seed": 0,
                           "baseline": "majority"}}

    def audit_case(self) -> AuditCase:
        """A worst-case replace-one pair on the tiny audit design (Δ written out by hand)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.5, "bounds": [0, 1],
             "params": {"target": "g", "features": ["x"], "classifier": "decision_tree"}},
            BASE, replaced(BASE, 0, (1, 0, 0)), BASE, 2.0,
            "the classifier is fitted on S; one record's class a → b with its features kept "
            "leaves the cell (a, ŷ) for (b, ŷ): the confusion matrix moves by 2 in L1 (Δ = 2)",
            mechanism="Laplace on the confusion matrix (vector)")


KIND = Tstr()
