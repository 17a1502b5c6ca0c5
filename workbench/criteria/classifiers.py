"""Classifiers trained on the public release S, and their confusion matrices on coded tables.

Why here: train-on-synthetic/test-on-real criteria (``tstr``) and distinguishers need the same
three things — a scikit-learn classifier chosen by name with a fixed ``random_state``, a
feature encoding that depends only on the spec's public domain (one-hot of every code the
domain declares, so R and S get identical columns whatever values they happen to contain) and
the confusion-matrix arithmetic (accuracy, macro-F1) that turns a noisy matrix into a metric
by post-processing.

Training reads S only (public inside the loop). Applying the fitted model to R is a
deterministic function of R given S, so its confusion matrix is a count table on R: one
replaced record of R leaves one cell and enters one (L1 Δ = 2 under replace-one; 1 under
add/remove). Noise is added by the caller through the privacy layer.

>>> cm = np.array([[8.0, 2.0], [1.0, 9.0]])
>>> round(accuracy(cm), 3), round(macro_f1(cm), 3)
(0.85, 0.85)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: The classifiers offered by name (scikit-learn is imported only when one is built).
CLASSIFIERS: tuple[str, ...] = ("logistic_regression", "decision_tree", "random_forest",
                                "adaboost")
DEFAULT_CLASSIFIER = "decision_tree"


def make_classifier(name: str, seed: int = 0) -> Any:
    """An unfitted classifier called ``name`` with ``random_state=seed`` (fixed: reproducible)."""
    builders: dict[str, Callable[[int], Any]] = {
        "logistic_regression": _logistic_regression,
        "decision_tree": _decision_tree,
        "random_forest": _random_forest,
        "adaboost": _adaboost,
    }
    if name not in builders:
        raise ValueError(f"classifier must be one of {list(CLASSIFIERS)}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError("classifier seed must be an integer >= 0")
    return builders[name](int(seed))


def _logistic_regression(seed: int) -> Any:
    """Multinomial logistic regression on one-hot features (lbfgs, enough iterations)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=500, random_state=seed)


def _decision_tree(seed: int) -> Any:
    """A depth-limited tree (depth 8: small synthetic sets should not be memorised)."""
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(max_depth=8, min_samples_leaf=5, random_state=seed)


def _random_forest(seed: int) -> Any:
    """50 depth-limited trees, single-threaded (the machine is shared)."""
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=50, max_depth=10, min_samples_leaf=5,
                                  n_jobs=1, random_state=seed)


def _adaboost(seed: int) -> Any:
    """AdaBoost over stumps (scikit-learn's default base learner)."""
    from sklearn.ensemble import AdaBoostClassifier

    return AdaBoostClassifier(n_estimators=50, random_state=seed)


def one_hot(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """One indicator column per declared code of every column: the width is Σ sizes.

    The encoding is fixed by the public domain sizes, never by the codes present. A code
    outside [0, size) is refused naming the column position only (no value is printed).
    """
    arr = np.asarray(codes, dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != len(sizes):
        raise ValueError(f"codes must be a matrix with {len(sizes)} columns")
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    for j, size in enumerate(sizes):
        col = arr[:, j]
        if col.size and (col.min() < 0 or col.max() >= size):
            raise ValueError(f"feature column {j}: a code lies outside its declared domain")
    out = np.zeros((arr.shape[0], int(sum(sizes))), dtype=np.float64)
    if arr.size:
        out[np.arange(arr.shape[0])[:, None], arr + offsets] = 1.0
    return out


class PublicClassifier:
    """A classifier fitted on S's codes: ``predict`` maps any coded table to class codes.

    When S holds a single class (or no rows), scikit-learn cannot fit; the model then
    predicts that class (or class 0) everywhere — still a function of S alone.
    """

    def __init__(self, name: str, target: int, features: Sequence[int], sizes: Sequence[int],
                 seed: int = 0) -> None:
        """``target`` and ``features`` are column positions in the coded tables."""
        self.name, self.seed = name, int(seed)
        self.target, self.features = int(target), tuple(int(f) for f in features)
        self.sizes = tuple(int(s) for s in sizes)
        self.classes = self.sizes[self.target]
        self._model: Any = None
        self._constant = 0

    def _x(self, codes: np.ndarray) -> np.ndarray:
        """The public one-hot encoding of the feature columns."""
        arr = np.asarray(codes, dtype=np.int64)
        return one_hot(arr[:, list(self.features)], [self.sizes[f] for f in self.features])

    def fit(self, synth_codes: np.ndarray) -> PublicClassifier:
        """Train on S (public): features one-hot, labels the target's codes."""
        arr = np.asarray(synth_codes, dtype=np.int64)
        y = arr[:, self.target] if arr.size else np.zeros(0, dtype=np.int64)
        present = np.unique(y)
        if present.size < 2:
            self._model, self._constant = None, int(present[0]) if present.size else 0
            return self
        self._model = make_classifier(self.name, self.seed).fit(self._x(arr), y)
        return self

    def predict(self, codes: np.ndarray) -> np.ndarray:
        """Predicted class codes for every row of ``codes``."""
        arr = np.asarray(codes, dtype=np.int64)
        if self._model is None:
            return np.full(arr.shape[0], self._constant, dtype=np.int64)
        return np.asarray(self._model.predict(self._x(arr)), dtype=np.int64)

    def confusion(self, codes: np.ndarray) -> np.ndarray:
        """k×k counts: row = true class of the table, column = predicted class."""
        arr = np.asarray(codes, dtype=np.int64)
        return confusion_matrix(arr[:, self.target], self.predict(arr), self.classes)


def confusion_matrix(truth: np.ndarray, predicted: np.ndarray, classes: int) -> np.ndarray:
    """k×k integer counts, cell (t, p) = rows of class t predicted p (every class declared)."""
    t = np.asarray(truth, dtype=np.int64)
    p = np.asarray(predicted, dtype=np.int64)
    flat = np.bincount(t * classes + p, minlength=classes * classes)
    return flat.reshape(classes, classes)


def accuracy(cm: np.ndarray) -> float:
    """Trace over total of a (possibly noisy) matrix, negatives clipped to 0; 0 if empty."""
    m = np.clip(np.asarray(cm, dtype=np.float64), 0.0, None)
    total = m.sum()
    return float(np.trace(m) / total) if total > 0 else 0.0


def macro_f1(cm: np.ndarray) -> float:
    """Mean over classes of 2·TP/(2·TP + FP + FN), negatives clipped; a class with no true,
    predicted or noisy mass scores 0 (the conservative choice for a quality criterion)."""
    m = np.clip(np.asarray(cm, dtype=np.float64), 0.0, None)
    tp = np.diag(m)
    denom = 2 * tp + (m.sum(axis=0) - tp) + (m.sum(axis=1) - tp)
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    return float(f1.mean()) if f1.size else 0.0


METRICS: dict[str, Callable[[np.ndarray], float]] = {"accuracy": accuracy,
                                                     "macro_f1": macro_f1}
