"""The survey weight check (issue 34): its sensitivity on neighbours, its ε, the γ range."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from workbench.privacy import PrivacyContext, lattice, smooth
from workbench.privacy.noise import SeededNoise
from workbench.survey.weight_check import (
    PURPOSE,
    UNITS,
    WeightCheckFailed,
    check_weights,
    false_refusal,
    release_weight_check,
    unit_sensitivity,
    weight_units,
)
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult_survey.json"
BOUNDS = (10_000.0, 1_500_000.0)


@pytest.fixture(scope="module")
def survey():
    return build_spec(json.loads(EXAMPLE.read_text())).survey


@pytest.mark.parametrize("neighbour", ["replace_one", "add_remove"])
def test_the_unit_total_moves_by_at_most_delta_on_neighbours_and_delta_is_attained(neighbour):
    delta = unit_sensitivity(BOUNDS, neighbour)
    u_lo, u_hi = weight_units(np.array(BOUNDS), BOUNDS)
    assert u_hi == UNITS and delta == (u_hi - u_lo if neighbour == "replace_one" else u_hi)
    rng = np.random.default_rng(34)
    worst = 0
    for _ in range(2000):  # weights inside, below and far above the public bounds
        d = rng.choice([1.0, 5e3, 2e4, 3e5, 1.4e6, 1.5e6, 9e6], size=12) * rng.uniform(0.5, 1.5,
                                                                                     12)
        other = d.copy()
        if neighbour == "replace_one":
            other[rng.integers(12)] = rng.choice([0.1, 1e4, 7e5, 1.5e6, 1e9])
        else:
            other = np.delete(other, rng.integers(12))
        move = abs(int(weight_units(d, BOUNDS).sum()) - int(weight_units(other, BOUNDS).sum()))
        assert move <= delta
        worst = max(worst, move)
    assert worst >= 0.99 * delta  # the random search gets close ...
    # ... and the worst pair reaches Δ exactly: a record at w_L replaced by one at w_U (or w_U
    # added), with weights outside the bounds clipped first
    d = np.array([3e5, 1.0])
    other = np.array([3e5, 5e9]) if neighbour == "replace_one" else np.array([3e5, 1.0, 5e9])
    assert abs(int(weight_units(other, BOUNDS).sum()) - int(weight_units(d, BOUNDS).sum())) \
        == delta


def test_the_release_is_epsilon_dp_on_the_worst_neighbours_and_half_delta_is_flagged(survey):
    """Empirical privacy loss of the released total on D and its worst neighbour D′ (one
    record at w_L replaced by one at w_U): ≤ ε at Δ, about 2ε when Δ/2 is used."""
    eps = 1.0
    s = dataclasses.replace(survey, weight_check_epsilon=eps)
    d = np.full(50, 2e5)
    other = d.copy()
    d[0], other[0] = BOUNDS

    def totals(weights: np.ndarray, seed: int, halve: bool = False) -> np.ndarray:
        units = int(weight_units(weights, BOUNDS).sum())
        delta = unit_sensitivity(BOUNDS, "replace_one") // (2 if halve else 1)
        return SeededNoise(seed).discrete_laplace_vector(np.full(400_000, units), delta, eps)

    delta = unit_sensitivity(BOUNDS, "replace_one")
    edges = np.arange(-4, 5) * delta / 2 + int(weight_units(d, BOUNDS).sum()) + delta / 2

    def loss(halve: bool) -> float:
        a = np.histogram(totals(d, 1, halve), edges)[0]
        b = np.histogram(totals(other, 2, halve), edges)[0]
        keep = (a > 5000) & (b > 5000)
        return float(np.max(np.abs(np.log(a[keep] / b[keep]))))

    assert loss(False) <= eps * 1.1  # ε exactly in the tail bins, plus sampling error
    assert loss(True) > 1.6 * eps  # Δ/2 gives ≈ 2ε: the audit has power
    # the context's release charges ε_w with Δ in units and the purpose the ledger prices
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(0))
    check = release_weight_check(s, d, ctx)
    (record,) = ctx.records
    assert record.purpose == PURPOSE and record.epsilon == eps
    assert record.sensitivity == delta and record.mechanism == "discrete_laplace"
    assert check.total % (BOUNDS[1] / UNITS) == pytest.approx(0.0, abs=1e-6)  # on the grid g


def test_the_check_refuses_outside_the_band_and_names_the_margins(survey):
    n_pop = math.fsum(survey.margins[0].totals)
    ok = np.full(10_000, n_pop / 10_000)  # 618k each: inside the bounds, Σ = N
    ctx = PrivacyContext.simulation(3, noise=SeededNoise(3))
    assert check_weights(survey, ok, ctx).failing() == {}
    with pytest.raises(WeightCheckFailed) as err:
        check_weights(survey, ok / 2, PrivacyContext.simulation(3, noise=SeededNoise(3)))
    text = str(err.value)
    ratios = dict(re.findall(r"margin '(\w+)': ratio ([0-9]*\.?[0-9]+)", text))
    assert set(ratios) == {"sex_race", "age_band"}  # true 0.5; this seed's noise: 0.493
    assert all(abs(float(r) - 0.5) < 0.1 for r in ratios.values())
    assert "multiply it by about 2" in text and "ε = 0.01" in text
    # the public planning figure: exp(−tolerance·ε_w·N/(g·Δ))
    g = BOUNDS[1] / UNITS
    expected = math.exp(-0.01 * (0.2 * n_pop / g - 1) / unit_sensitivity(BOUNDS, "replace_one"))
    assert false_refusal(survey) == pytest.approx(expected) and false_refusal(survey) < 1e-3


def test_gamma_outside_the_proven_range_is_refused_by_the_sampler_and_calibration():
    low, high = lattice.GAMMA_RANGE
    assert (low, high) == (1.05, 16.0)
    for bad in (1.0 + 1e-6, 1.04, 16.5):
        with pytest.raises(ValueError, match="gamma must lie in"):
            smooth.calibrate(1.0, bad)
        with pytest.raises(ValueError, match="gamma must lie in"):
            lattice.snapped_cells(np.zeros(1), 1.0, bad, 8, np.zeros(1), np.ones(1),
                                  np.zeros(1), np.zeros(1))
    assert smooth.calibrate(1.0, low).gamma == low and smooth.calibrate(1.0, high).gamma == high


@pytest.mark.parametrize("gamma,ok", [(1.0 + 1e-6, False), (1.04, False), (1.05, True),
                                      (16, True), (16.5, False)])
def test_validate_refuses_survey_gamma_outside_the_range_naming_the_field(tmp_path, capsys,
                                                                          gamma, ok):
    """Issue 34 must-show 3, through the CLI (exit 2)."""
    from workbench.cli.main import main

    doc = json.loads(EXAMPLE.read_text())
    doc["survey"]["gamma"] = gamma
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    if ok:
        assert code == 0
    else:
        assert code == 2 and "survey.gamma" in err and "[1.05, 16]" in err


def test_a_dry_run_task_whose_check_refuses_is_a_bottom_as_the_run_would_be():
    """A task rehearses the run: when its (noisy) weight check refuses, the task is ⊥ with the
    failure named, no criterion evaluated (the run would stop before its loop)."""
    import pandas as pd
    from conftest import shared_data

    from workbench.dryrun.tasks import Task
    from workbench.dryrun.worker import Payload, install, run_task, uninstall
    from workbench.evidence.prepare import prepare_proxy

    spec = build_spec(json.loads(EXAMPLE.read_text()))
    frame = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                        nrows=2000)  # raw fnlwgt: about 6% of N
    payload = Payload("weight-check-task", spec.to_document(), prepare_proxy(spec, frame))
    config = next(iter(spec.configurations()))
    install(payload)
    try:
        record = run_task(Task(payload.payload_id, config.to_dict(), config.key, 0, 5, "seeded"))
    finally:
        uninstall(payload.payload_id)
    assert record.passed is False and record.failure == "survey weight check"
    assert set(record.criteria) == {c.id for c in spec.criteria}
    assert all(not o.passed and o.value is None for o in record.criteria.values())


def test_validate_refuses_a_weight_check_too_noisy_for_its_population(tmp_path, capsys):
    """A check whose noise alone would refuse correct weights > 1% of the time is a spec
    problem naming survey.weight_check_epsilon and the ε that fixes it (public numbers)."""
    from workbench.cli.main import main

    doc = json.loads(EXAMPLE.read_text())
    doc["survey"]["weight_check_epsilon"] = 0.001  # noise sd ≈ 34% of N
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "survey.weight_check_epsilon" in err and "probability 0.44" in err
    assert ">= 0.00833" in err  # ln(1000)·Δ/(tolerance·N/g − 1)
    doc["survey"]["weight_check_epsilon"] = 0.00833
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 0
