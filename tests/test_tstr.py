"""Classifiers on public encodings and the train-on-synthetic, test-on-real criterion."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.audits import Capture
from workbench.criteria import evaluate_criterion, kinds
from workbench.criteria.classifiers import (
    CLASSIFIERS,
    PublicClassifier,
    accuracy,
    confusion_matrix,
    macro_f1,
    make_classifier,
    one_hot,
)
from workbench.privacy import PrivacyContext
from workbench.specification import SpecError
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = json.loads((REPO / "examples" / "israel_births_2014_lean.json").read_text())


def test_metrics_from_a_confusion_matrix() -> None:
    cm = np.array([[50.0, 10.0], [5.0, 35.0]])
    assert accuracy(cm) == pytest.approx(0.85)
    f1_a, f1_b = 2 * 50 / (100 + 10 + 5), 2 * 35 / (70 + 5 + 10)
    assert macro_f1(cm) == pytest.approx((f1_a + f1_b) / 2)
    # noisy cells below 0 are clipped before the metric (post-processing)
    assert accuracy(np.array([[3.0, -2.0], [-1.0, 1.0]])) == pytest.approx(1.0)
    assert macro_f1(np.zeros((3, 3))) == 0.0 and accuracy(np.zeros((2, 2))) == 0.0
    assert confusion_matrix(np.array([0, 1, 1, 2]), np.array([0, 1, 2, 2]), 3).tolist() == [
        [1, 0, 0], [0, 1, 1], [0, 0, 1]]


def test_one_hot_width_comes_from_the_domain_not_the_data() -> None:
    x = one_hot(np.array([[0, 1], [0, 1]]), [3, 4])
    assert x.shape == (2, 7) and x[0].tolist() == [1, 0, 0, 0, 1, 0, 0]
    with pytest.raises(ValueError, match="feature column 1") as err:
        one_hot(np.array([[0, 9]]), [3, 4])
    assert "9" not in str(err.value)


def test_classifiers_by_name_are_seeded() -> None:
    for name in CLASSIFIERS:
        assert make_classifier(name, 7).get_params()["random_state"] == 7
    with pytest.raises(ValueError, match="classifier must be one of"):
        make_classifier("svm")
    rng = np.random.default_rng(0)
    synth = np.column_stack([rng.integers(0, 3, 400), rng.integers(0, 2, 400)])
    synth[:, 1] = (synth[:, 0] > 0).astype(int)  # class = [x > 0]
    for name in CLASSIFIERS:
        model = PublicClassifier(name, target=1, features=[0], sizes=[3, 2], seed=1).fit(synth)
        assert model.confusion(synth).trace() == 400, name  # learnt exactly
    single = PublicClassifier("decision_tree", 1, [0], [3, 2]).fit(synth[synth[:, 1] == 1])
    assert single.predict(synth).tolist() == [1] * 400


def _spec(criterion: dict) -> object:
    doc = copy.deepcopy(LEAN)
    doc["criteria"] = [criterion]
    doc["budget"]["epsilon_criteria"] = criterion["epsilon"]
    return build_spec(doc)


def test_template_validates_and_release_is_post_processing_of_the_noisy_matrix() -> None:
    crit = kinds.get("tstr").template("tstr", LEAN)
    assert crit["params"]["target"] == "birth_sex" and crit["params"]["classifier"]
    spec = _spec(crit)
    config = next(spec.configurations())
    sizes = spec.table_codec(config).domain.sizes
    rng = np.random.default_rng(3)
    real = np.column_stack([rng.integers(0, k, 300) for k in sizes])
    synth = real.copy()
    cap = Capture()
    res = evaluate_criterion(spec, config, "tstr", real, synth,
                             PrivacyContext.simulation(0, noise=cap),
                             table=spec.table_codec(config))
    (call,) = cap.calls
    k = sizes[spec.column_names.index("birth_sex")]
    assert call.values.size == k * k and call.values.sum() == 300 and call.sensitivity == 2.0
    cm = call.values.reshape(k, k)
    majority = cm.sum(axis=1).max() / cm.sum()
    assert res.value == pytest.approx(min(1.0, (1 - accuracy(cm)) / (1 - majority)))
    assert res.sensitivity == 2.0 and res.details["classifier"] == "decision_tree"
    assert res.details["baseline"] == "majority"
    # with noise the value is computed from the noisy matrix and stays in [0, 1]
    noisy = evaluate_criterion(spec, config, "tstr", real, synth, PrivacyContext.simulation(1),
                               table=spec.table_codec(config))
    assert 0.0 <= noisy.value <= 1.0 and noisy.mechanism == "laplace"


def test_bad_parameters_fail_naming_the_field() -> None:
    crit = kinds.get("tstr").template("tstr", LEAN)
    for params, where in [({"target": "mother_age"}, "params.target"),
                          ({"classifier": "svm"}, "params.classifier"),
                          ({"metric": "auc"}, "params.metric"),
                          ({"baseline": "majority", "metric": "macro_f1"}, "params.baseline"),
                          ({"baseline": "best"}, "params.baseline"),
                          ({"features": ["nope"]}, "params.features[0]")]:
        bad = copy.deepcopy(crit)
        bad["params"].update(params)
        with pytest.raises(SpecError) as err:
            _spec(bad)
        assert where in str(err.value), (params, str(err.value))


def test_a_release_that_taught_nothing_fails_the_majority_baseline() -> None:
    """Issue 28: 1 − accuracy passed a release whose classifier only predicts the majority
    class; against the majority baseline that release scores 1 and fails any T < 1, while a
    release that carries the class's dependence on a feature passes."""
    crit = kinds.get("tstr").template("tstr", LEAN)
    crit["params"] |= {"target": "birth_sex", "features": ["parity"]}
    crit["threshold"] = 0.85
    spec = _spec(crit)
    config = next(spec.configurations())
    table = spec.table_codec(config)
    names, sizes = spec.column_names, table.domain.sizes
    rng = np.random.default_rng(4)
    n, sex, parity = 3000, names.index("birth_sex"), names.index("parity")
    real = np.column_stack([rng.integers(0, k, n) for k in sizes])
    real[:, sex] = (real[:, parity] == 0).astype(int)  # the class follows parity exactly
    real[: n // 10, sex] = 1 - real[: n // 10, sex]  # 10% noise: accuracy 0.9 at best
    useless = real.copy()
    useless[:, sex] = np.bincount(real[:, sex]).argmax()  # learned nothing: one class only
    cap = Capture()
    exact = {}
    for name, synth in (("useful", real), ("useless", useless)):
        exact[name] = evaluate_criterion(spec, config, "tstr", real, synth,
                                         PrivacyContext.simulation(0, noise=cap),
                                         table=spec.table_codec(config)).value
    assert exact["useless"] == pytest.approx(1.0)  # the majority classifier: no gain
    assert exact["useful"] < 0.5
    old = dict(crit, threshold=0.3)
    old["params"] = {**crit["params"], "baseline": "none"}
    plain = evaluate_criterion(_spec(old), config, "tstr", real, useless,
                               PrivacyContext.simulation(0, noise=Capture()),
                               table=_spec(old).table_codec(config)).value
    # without a baseline the useless release scores the minority share, however useless
    assert plain == pytest.approx(1 - np.bincount(real[:, sex]).max() / n)
