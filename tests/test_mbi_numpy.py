"""The sampling plan's marginals in numpy agree with mbi's own variable elimination."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.generators.mbi_model import NoisyMarginal, estimate, model_marginal
from workbench.generators.mbi_numpy import log_factors, marginal
from workbench.transform import Domain

pytest.importorskip("mbi")


def _model():
    """A chain a–b–c–d–e fitted to noisy tables of 500 public seeded rows (b depends on a)."""
    rng = np.random.default_rng(0)
    dom = Domain(("a", "b", "c", "d", "e"), (3, 4, 2, 5, 3))
    codes = rng.integers(0, dom.sizes, size=(500, 5))
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, 500)) % 4
    measured = []
    for clique in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("a",), ("e",)]:
        idx = [dom.names.index(c) for c in clique]
        table = np.zeros([dom.sizes[i] for i in idx])
        np.add.at(table, tuple(codes[:, i] for i in idx), 1)
        measured.append(NoisyMarginal(clique, table + rng.normal(0, 2, table.shape), 2.0))
    return estimate(dom, measured, 500.0, 200)


@pytest.mark.parametrize("clique", [("a", "e"), ("b", "d", "a"), ("e", "c"), ("d",), ("a", "b")])
def test_numpy_marginals_match_mbi_across_and_inside_cliques(clique) -> None:
    model = _model()
    factors, sizes = log_factors(model)
    ours = marginal(factors, sizes, clique, float(model.total))
    theirs = model_marginal(model, clique)
    assert ours.shape == theirs.shape
    assert np.allclose(ours, theirs, rtol=1e-9, atol=1e-9)
    assert ours.sum() == pytest.approx(500.0)
