"""The ``structure`` criterion kind (issue 36): its value on copied and independent releases,
its Δ₁ = 4/n checked on neighbours, its DP release, its scope and its validation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.criteria import evaluate_criterion
from workbench.criteria.audit_case import design_document
from workbench.criteria.kinds.structure import (
    pair_means,
    ratio,
    scope_pairs,
    structure_sensitivity,
)
from workbench.generators.model_size import model_size
from workbench.privacy import PrivacyContext
from workbench.specification import SpecError
from workbench.transform import Domain
from workbench.transform.cells import PairedCells
from workbench.validation import build_spec

DOMAIN = Domain(("a", "b", "c", "d"), (3, 4, 3, 5))


def dependent(n: int, rng: np.random.Generator) -> np.ndarray:
    """c copies a 80% of the time, d follows b loosely."""
    a = rng.integers(0, 3, n)
    b = rng.integers(0, 4, n)
    c = np.where(rng.random(n) < 0.8, a, rng.integers(0, 3, n))
    d = np.where(rng.random(n) < 0.5, b, rng.integers(0, 5, n))
    return np.stack([a, b, c, d], axis=1)


def independent_release(real: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each column drawn from R's own 1-way distribution: the independent release."""
    return np.stack([rng.choice(real[:, j], size=len(real)) for j in range(real.shape[1])],
                    axis=1)


def test_copied_data_scores_zero_and_an_independent_release_about_one() -> None:
    rng = np.random.default_rng(36)
    real = dependent(20_000, rng)
    pairs = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    u, d = pair_means(PairedCells.from_codes(real, real, DOMAIN), pairs)
    assert u == 0.0 and d > 0.05 and ratio(u, d, 20_000) == 0.0
    u, d = pair_means(PairedCells.from_codes(real, independent_release(real, rng), DOMAIN),
                      pairs)
    assert 0.9 < ratio(u, d, 20_000) < 1.15


def test_delta_bounds_every_neighbour_tried() -> None:
    """Replace-one and add/remove-one (public n = |S|): ‖Δ(U, D)‖₁ ≤ 4/n on every neighbour
    tried, small n where one record matters most."""
    rng = np.random.default_rng(5)
    pairs = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(3, 12))
        real = dependent(n, rng)
        synth = dependent(n, rng)
        base = np.array(pair_means(PairedCells.from_codes(real, synth, DOMAIN), pairs))
        row = np.array([rng.integers(0, s) for s in DOMAIN.sizes])
        swapped = real.copy()
        swapped[rng.integers(0, n)] = row
        grown = np.vstack([real, row])
        shrunk = real[1:]
        for other in (swapped, grown, shrunk):
            moved = np.array(pair_means(PairedCells.from_codes(other, synth, DOMAIN, n=n),
                                        pairs))
            step = float(np.abs(moved - base).sum())
            assert step <= structure_sensitivity(n) + 1e-12
            worst = max(worst, step * n / 4)
    assert worst > 0.4  # random pairs come near; the audit case reaches 31/48 of Δ₁


def _spec(**params: object):
    doc = design_document("gxy", [
        {"id": "pairs", "kind": "structure", "epsilon": 1.0, "threshold": 0.5,
         "params": params},
        {"id": "gx", "kind": "odds_ratio", "epsilon": 1.0, "threshold": 0.5,
         "params": {"exposure": "g", "exposed": ["a"], "outcome": "x", "positive": [1]}}])
    return build_spec(doc)


def test_the_release_is_laplace_on_u_and_d_with_delta_4_over_n() -> None:
    spec = _spec(pairs="all")
    config = next(spec.configurations())
    table = spec.table_codec(config)
    rng = np.random.default_rng(3)
    real = np.stack([rng.integers(0, 2, 4000), rng.integers(0, 3, 4000),
                     rng.integers(0, 3, 4000)], axis=1)
    real[:, 2] = np.where(rng.random(4000) < 0.9, real[:, 1], real[:, 2])
    ctx = PrivacyContext.simulation(seed=1)
    copied = evaluate_criterion(spec, config, "pairs", real, real, ctx, table=table)
    record = ctx.records[-1]
    assert record.mechanism == "laplace" and record.sensitivity == pytest.approx(4 / 4000)
    assert record.epsilon == 1.0 and record.purpose == "criterion pairs (structure)"
    assert copied.passed and copied.value < 0.1 and copied.details["pairs"] == 3
    shuffled = independent_release(real, rng)
    apart = evaluate_criterion(spec, config, "pairs", real, shuffled, ctx, table=table)
    assert not apart.passed and apart.value > 0.8


def test_unnamed_leaves_out_the_pairs_other_criteria_name() -> None:
    spec = _spec(pairs="unnamed")
    assert scope_pairs(spec, spec.criterion("pairs")) == [("g", "y"), ("x", "y")]
    assert model_size(spec).largest[1] <= 9  # no clique of all pairs in the model


def test_bad_params_and_bounds_name_the_field(tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    doc = design_document("gxy", [{"id": "pairs", "kind": "structure", "epsilon": 1.0,
                                   "threshold": 0, "bounds": [0, 1],
                                   "params": {"pairs": "some"}}])
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    text = str(err.value)
    assert "criteria[0].params.pairs: must be 'all' or 'unnamed'" in text
    assert "criteria[0].bounds: a 'structure' criterion takes no bounds" in text
    assert "criteria[0].threshold: must be > 0" in text
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 2
    assert "params.pairs" in capsys.readouterr().err


def test_floor_follows_n_and_the_independent_generator_fails_it() -> None:
    """The feasibility floor (a bootstrap of the proxy: an n-row sample's own noise) is above
    T = 0.5 at 20,000 rows of these fine bins and below it at 95,000; the trivial
    independent-marginals release fails at both: the criterion protects utility."""
    from workbench.dryrun.floors import feasibility_floors

    repo = Path(__file__).resolve().parents[1]
    spec = build_spec(json.loads(
        (repo / "benchmarks" / "specs" / "births_few_pairs.json").read_text()))
    proxy = repo / "data_public" / "proxy_sample_166k.csv.gz"
    small, large = (feasibility_floors(spec, proxy, n=n, draws=2).by_id()["unnamed_structure"]
                    for n in (20_000, 95_000))
    assert small.infeasible and small.mean > 0.5
    assert not large.infeasible and large.mean < small.mean
    assert small.trivial > 1 and large.trivial > 1
    assert not small.trivial_passes and not large.trivial_passes
