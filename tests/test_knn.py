"""DP kNN hot-deck imputation (Merrill ch. 6): imputation, the donee-change bound, the kind."""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.audits import Capture
from workbench.criteria import evaluate_criterion, kinds
from workbench.criteria.kinds.knn_imputed_mean import (
    MIN_EPSILON,
    NoFiniteVarianceWarning,
    gamma_for,
)
from workbench.criteria.knn_impute import Features, impute, smooth_bound
from workbench.privacy import PrivacyContext, smooth
from workbench.specification import SpecError
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = json.loads((REPO / "examples" / "israel_births_2014_lean.json").read_text())
# one categorical feature (3 values) and one ordinal (3 bins): 9 domain points
FEATURES = Features.of_codecs([None, np.array([0.0, 1.0, 2.0])], [3, 3])


def donors(codes: np.ndarray, y: np.ndarray) -> np.ndarray:
    return impute(FEATURES, codes, y, np.ones(len(y), bool), fill=0.0).donor


def test_deterministic_hot_deck_order_and_ties() -> None:
    codes = np.array([[0, 0], [0, 0], [0, 0], [0, 0], [1, 2], [2, 2]])
    y = np.array([np.nan, 5.0, np.nan, 7.0, np.nan, 9.0])
    imp = impute(FEATURES, codes, y, np.ones(6, bool), fill=0.0)
    # rows 0 and 2 are in class (0, 0) with complete rows 1 and 3: the next higher row number
    assert imp.donor.tolist() == [1, -1, 3, -1, 5, -1]
    assert imp.values.tolist() == [5.0, 5.0, 7.0, 7.0, 9.0, 9.0]
    # row 4 (1, 2): (2, 2) is at squared distance 2 (another category), (0, 0) at 2 + 4
    assert impute(FEATURES, codes, y, np.ones(6, bool), 0.0).donor.tolist() == imp.donor.tolist()
    # no complete record at all: the public fill value
    none = impute(FEATURES, codes[:1], np.array([np.nan]), np.ones(1, bool), fill=-1.0)
    assert none.values.tolist() == [-1.0] and none.donee_bound == 1


def _changes(codes, y, other_codes, other_y, ids, other_ids) -> int:
    """Donees (by record id) whose donor id changes, plus incomplete records added/removed."""
    a = {ids[i]: (ids[d] if d >= 0 else None) for i, d in enumerate(donors(codes, y))
         if np.isnan(y[i])}
    b = {other_ids[i]: (other_ids[d] if d >= 0 else None)
         for i, d in enumerate(donors(other_codes, other_y)) if np.isnan(other_y[i])}
    return len(set(a) ^ set(b)) + sum(a[k] != b[k] for k in set(a) & set(b))


def _neighbours(codes, y):
    """Every dataset one record away: each row removed; each point × value × position added."""
    n = len(y)
    ids = list(range(n))
    for i in range(n):
        keep = [j for j in range(n) if j != i]
        yield codes[keep], y[keep], [ids[j] for j in keep]
    for point in itertools.product(range(3), range(3)):
        for value in (np.nan, 1.0):
            for pos in range(n + 1):
                c = np.insert(codes, pos, point, axis=0)
                v = np.insert(y, pos, value)
                yield c, v, [*ids[:pos], "new", *ids[pos:]]


@pytest.mark.parametrize("seed", range(6))
def test_donee_bound_covers_every_single_change_and_is_ln2_smooth(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 9
    codes = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 3, n)])
    y = np.where(rng.random(n) < 0.5, np.nan, 1.0)
    everyone = np.ones(n, bool)
    bound = impute(FEATURES, codes, y, everyone, 0.0).donee_bound
    worst = 0
    for c, v, ids in _neighbours(codes, y):
        worst = max(worst, _changes(codes, y, c, v, list(range(n)), ids))
        other = impute(FEATURES, c, v, np.ones(len(v), bool), 0.0).donee_bound
        assert bound <= 2 * other and other <= 2 * bound  # N̂(D) ≤ 2·N̂(D′): ln 2-smooth
    assert worst <= bound  # L₁(D) ≤ N̂(D)


def test_smooth_bound_formula() -> None:
    assert smooth_bound(3, 0.0, 10.0, 20.0) == pytest.approx((10 + 3 * 10) / 20)
    assert smooth_bound(1, -4.0, 2.0, 0.0) == pytest.approx(4 + 6)  # s floored at 1


def _doc(epsilon: float = 8.0) -> dict:
    doc = copy.deepcopy(LEAN)
    crit = kinds.get("knn_imputed_mean").template("knn", doc)
    crit["epsilon"] = epsilon
    crit["params"]["subgroup_column"] = "birth_sex"
    crit["params"]["subgroup_values"] = ["F"]
    doc["criteria"] = [crit]
    doc["budget"]["epsilon_criteria"] = epsilon
    return doc


def test_release_is_a_laplace_count_then_a_smooth_cauchy_mean() -> None:
    spec = build_spec(_doc(8.0))
    config = next(spec.configurations())
    table = spec.table_codec(config)
    rng = np.random.default_rng(1)
    real = np.column_stack([rng.integers(0, k, 400) for k in table.domain.sizes])
    cap = Capture()
    ctx = PrivacyContext.simulation(0, noise=cap)
    res = evaluate_criterion(spec, config, "knn", real, real.copy(), ctx,
                             table=spec.table_codec(config))
    count, mean = ctx.records
    assert (count.mechanism, count.sensitivity) == ("laplace", 1.0)
    assert (mean.mechanism, mean.beta) == ("smooth_cauchy", math.log(2))
    assert (count.epsilon, mean.epsilon) == (pytest.approx(1.6), pytest.approx(6.4))
    gamma = gamma_for(6.4)
    assert mean.gamma == gamma == pytest.approx(min(4.0, 1 + 3.2 / (2 * math.log(2))))
    # S = (B + N̂(b − a))/s, calibrated per add/remove step at ε/2 (replace-one = 2 steps)
    sex = list(table.domain.names).index("birth_sex")
    s = float((table.codec("birth_sex").decode(real[:, sex]) == "F").sum())
    low, high = spec.column("birth_weight").bounds
    ((_, scale, _, grid),) = cap.cauchy_calls
    assert (grid.low, grid.high) == (low, high)  # the target's public bounds
    alpha = smooth.calibrate(3.2, gamma).alpha
    n_hat = round((scale * alpha * s - max(abs(low), abs(high))) / (high - low))
    assert n_hat >= 1 and scale == pytest.approx(smooth_bound(n_hat, low, high, s) / alpha)
    assert res.value == pytest.approx(0.0) and res.epsilon == 8.0  # R = S, no noise


def test_small_epsilon_refused_and_warned() -> None:
    with pytest.raises(SpecError, match=r"criteria\[0\]\.epsilon: a kNN-imputed mean needs"):
        build_spec(_doc(MIN_EPSILON))  # 80% of it is below 4 ln 2
    spec = build_spec(_doc(4.0))  # 3.2 ≥ 4 ln 2 but ≤ 8 ln 2: γ ≤ 3
    config = next(spec.configurations())
    real = np.zeros((50, len(spec.columns)), dtype=np.int64)
    with pytest.warns(NoFiniteVarianceWarning, match="no finite variance"):
        evaluate_criterion(spec, config, "knn", real, real, PrivacyContext.simulation(0),
                           table=spec.table_codec(config))
    bad = _doc(8.0)
    bad["criteria"][0]["params"]["subgroup_column"] = "birth_weight"
    with pytest.raises(SpecError, match="subgroup_column"):
        build_spec(bad)


def test_smooth_cauchy_steps_use_group_privacy() -> None:
    cap = Capture()
    ctx = PrivacyContext.simulation(0, noise=cap)
    out = ctx.smooth_cauchy(1.0, epsilon=8.0, purpose="p", smooth_sensitivity=2.0,
                            beta=math.log(2), gamma=3.5, steps=2, bounds=(0.0, 10.0))
    assert out.record.epsilon == 8.0
    assert cap.cauchy_calls[-1][1] == pytest.approx(2.0 / smooth.calibrate(4.0, 3.5).alpha)
    with pytest.raises(ValueError, match="too rough"):  # 4/6 < ln 2 per step at γ = 4
        ctx.smooth_cauchy(1.0, epsilon=8.0, purpose="p", smooth_sensitivity=2.0,
                          beta=math.log(2), steps=2, bounds=(0.0, 10.0))


def test_imputes_an_allow_target_from_its_missing_code() -> None:
    pytest.importorskip("workbench.transform.missing")  # the missing policies (issue 16)
    doc = copy.deepcopy(LEAN)
    for col in doc["schema"]["columns"]:
        if col["name"] == "birth_weight":
            col["missing"] = "allow"
    crit = kinds.get("knn_imputed_mean").template("knn", doc)
    assert crit["params"]["target"] == "birth_weight"  # the template prefers an allow column
    crit["params"]["features"] = ["birth_sex", "gestation_week"]
    doc["criteria"] = [crit]
    doc["budget"]["epsilon_criteria"] = crit["epsilon"]
    spec = build_spec(doc)
    config = next(spec.configurations())
    table = spec.table_codec(config)
    names = list(table.domain.names)
    w = names.index("birth_weight")
    gone = table.codec("birth_weight").size - 1  # the reserved missing code, last
    assert np.isnan(table.codec("birth_weight").numbers()[gone])
    rng = np.random.default_rng(4)
    real = np.column_stack([rng.integers(0, k, 300) for k in table.domain.sizes])
    real[:, w] = np.minimum(real[:, w], gone - 1)
    real[rng.random(300) < 0.2, w] = gone
    cap = Capture()
    ctx = PrivacyContext.simulation(0, noise=cap)
    res = evaluate_criterion(spec, config, "knn", real, real.copy(), ctx,
                             table=spec.table_codec(config))
    assert res.value == pytest.approx(0.0) and [r.mechanism for r in ctx.records] == [
        "laplace", "smooth_cauchy"]
    # the released mean is the imputed one: every hole filled by a complete record's value
    nums = table.codec("birth_weight").numbers()
    observed = nums[real[real[:, w] != gone, w]]
    (values, _, _, _), = cap.cauchy_calls
    assert observed.min() <= values[0] <= observed.max()
