"""The distinguisher criterion: a classifier trained on S against a public proxy (never on R),
its accuracy on R ∪ S released with Laplace noise at Δ = 1/(n_R + n_S)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.audits.criteria import case_spec
from workbench.criteria import evaluate_criterion, kinds
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise

S = np.array([(0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 0, 1)])  # all g = a; the proxy is g = b


def _value(real: np.ndarray, noise=None) -> tuple[object, PrivacyContext]:
    spec, config = case_spec("distinguisher")
    ctx = PrivacyContext.simulation(0, noise=noise)
    result = evaluate_criterion(spec, config, "distinguisher", real, S, ctx,
                                table=spec.table_codec(config))
    return result, ctx


class _Exact(SeededNoise):
    """No noise: the released value is the exact accuracy (public test data only)."""

    def laplace_vector(self, values, sensitivity, epsilon):
        return np.asarray(values, dtype=np.float64)


def test_accuracy_on_r_and_s_with_the_documented_sensitivity() -> None:
    """R all g = b (called real): 8/8; two records moved to g = a: 6/8; one Laplace release
    with Δ = 1/8, clipped to [0, 1]."""
    real = np.array([(1, 0, 0), (1, 1, 1), (1, 2, 2), (1, 0, 1)])
    result, ctx = _value(real, _Exact(0))
    assert result.value == pytest.approx(1.0) and result.sensitivity == pytest.approx(1 / 8)
    assert [r.mechanism for r in ctx.records] == ["laplace"]
    moved = real.copy()
    moved[:2, 0] = 0
    assert _value(moved, _Exact(0))[0].value == pytest.approx(6 / 8)
    assert kinds.get("distinguisher").tags.clip == (0.0, 1.0)


def test_indistinguishable_release_scores_about_one_half() -> None:
    """When R looks like S (g = a too) the classifier calls R synthetic: R contributes 0,
    S contributes 4: accuracy 4/8 = the ideal 50%."""
    result, _ = _value(S.copy(), _Exact(0))
    assert result.value == pytest.approx(0.5)


def test_a_missing_proxy_fails_clearly_before_noise() -> None:
    from workbench.criteria.kinds.distinguisher import proxy_codes

    spec, config = case_spec("distinguisher")
    with pytest.raises(ValueError, match=r"public proxy file 'nowhere\.csv' does not exist"):
        proxy_codes(spec, config, "nowhere.csv")
