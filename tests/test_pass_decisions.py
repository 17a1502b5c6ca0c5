"""One pass rule (issue 25): the engine's decision and every forecast path ask the kind.

For every registered criterion kind, on the tiny public design its audit case declares, at
random thresholds around its exact value:

* the engine's release (``evaluate_criterion``, seeded noise) decides with the kind's own
  ``passes`` against the kind's ``effective_threshold`` — strict or not;
* the design assistant's rule (``trial.BoundCriterion.pass_probability``), the co-design readout
  (``widgets.model.readouts.criterion_readout``) and the kind's ``pass_probability`` give the
  same number (None for every path when the noise is not one Laplace draw on the value);
* that number matches the engine's pass frequency over many seeded releases.

Plus a regression test of each of the three wrong forecasts the issue found.
"""

from __future__ import annotations

import dataclasses
import math
import zlib

import numpy as np
import pytest

from workbench.audits.criteria import audit_case
from workbench.criteria import criterion_sensitivity, evaluate_criterion, exact_errors, kinds
from workbench.criteria import release_once as release_once_statistics
from workbench.criteria.audit_case import audit_document
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification import SpecError
from workbench.transform.cells import PairedCells
from workbench.trial import BoundCriterion
from workbench.validation import build_spec
from workbench.widgets.model.readouts import criterion_readout

RELEASES = 1000  # per threshold; |frequency − p| ≤ 6σ fails with probability < 1e-8


def design_pass_probability(criterion, epsilon, exact, delta, details):
    """The design assistant's P(pass): the criterion bound to its kind, at ``epsilon``."""
    at = dataclasses.replace(criterion, epsilon=float(epsilon))
    return BoundCriterion(at, kinds.get(at.kind), ()).pass_probability(exact, delta, details)


def _setup(kind: str, threshold: float):
    """The case's spec with the criterion at ``threshold`` (None if the kind refuses it)."""
    case = audit_case(kind)
    doc = audit_document(case)
    doc["criteria"][0]["threshold"] = threshold
    try:
        spec = build_spec(doc)
    except SpecError:
        return None
    config = next(iter(spec.configurations()))
    once = None
    if case.stage == "once":
        once = release_once_statistics(spec, config, case.real, PrivacyContext.simulation(0))
    elif case.once_results is not None:
        once = case.once_results(spec, config, case.real)
    return case, spec, config, once


def _release(kind, spec, config, case, once, seed):
    ctx = PrivacyContext.simulation(seed, noise=SeededNoise(seed))
    return evaluate_criterion(spec, config, kind, case.real, case.synth, ctx, once_results=once,
                              table=spec.table_codec(config))


def _thresholds(kind: str) -> list[float]:
    """Thresholds around the exact value: within a few noise scales of it, and at it."""
    case, spec, config, once = _setup(kind, audit_case(kind).criterion["threshold"])
    criterion = spec.criterion(kind)
    table = spec.table_codec(config)
    exact = exact_errors(spec, config, case.real, case.synth, PrivacyContext.simulation(0),
                         once_results=once, table=spec.table_codec(config))[kind]
    pc = PairedCells.from_codes(case.real, case.synth, table.domain)
    delta, _ = criterion_sensitivity(spec, table, criterion, pc)
    scale = delta / criterion.epsilon if delta and criterion.epsilon > 0 else 1.0
    rng = np.random.default_rng(zlib.crc32(kind.encode()))
    offsets = [rng.uniform(-1.2, -0.1), rng.uniform(0.1, 1.2)]
    return [exact, *(exact + scale * u for u in offsets)]


@pytest.mark.parametrize("kind", kinds.names())
def test_engine_decision_and_every_forecast_path_agree(kind: str) -> None:
    k = kinds.get(kind)
    tried = 0
    for threshold in _thresholds(kind):
        setup = _setup(kind, float(threshold))
        if setup is None:  # a threshold the kind's validation refuses (e.g. ≤ 0)
            continue
        tried += 1
        case, spec, config, once = setup
        criterion = spec.criterion(kind)
        table = spec.table_codec(config)
        pc = PairedCells.from_codes(case.real, case.synth, table.domain)
        exact = exact_errors(spec, config, case.real, case.synth,
                             PrivacyContext.simulation(0), once_results=once,
                             table=spec.table_codec(config))[kind]
        delta, details = criterion_sensitivity(spec, table, criterion, pc)
        t_eff = k.effective_threshold(criterion, delta, details)
        forecast = k.pass_probability(criterion, exact, delta, t_eff)
        # every forecast path gives the kind's number
        assert design_pass_probability(criterion, criterion.epsilon, exact, delta,
                                       details) == forecast
        readout = criterion_readout(spec, table, criterion, pc, exact)
        assert readout.probability_pass == forecast
        if delta is not None and criterion.epsilon > 0:
            assert readout.effective_threshold == t_eff
        # the engine decides with the kind's test against the kind's threshold
        releases = RELEASES if k.name != "distinguisher" else 200
        passed = []
        for seed in range(releases):
            r = _release(kind, spec, config, case, once, seed)
            assert r.effective_threshold == pytest.approx(t_eff, rel=1e-12)
            assert r.passed is k.passes(r.value, r.effective_threshold)
            passed.append(r.passed)
        if forecast is None:
            assert not k.tags.closed_form_pass  # only such a kind forecasts None
            continue
        freq = float(np.mean(passed))
        sd = math.sqrt(max(forecast * (1 - forecast), 1 / releases) / releases)
        assert abs(freq - forecast) <= 6 * sd + 1e-12, (threshold, freq, forecast)
    assert tried, f"no threshold of {kind} was accepted"


def test_design_forecast_uses_min_of_t_and_t_prime() -> None:
    """Regression: with λ = 3 and T = 2 the design forecast 0.995 (against T′ alone) where the
    engine's rule, min(T, T′), gives 0.025."""
    base = build_spec(audit_document(audit_case("relative_one_way"))).criterion(
        "relative_one_way")
    criterion = dataclasses.replace(
        base, threshold=2.0, epsilon=0.3, bounds=(1.0, 3.0),
        params={"lambda": 3.0, "false_pass_probability": 0.05, "smoothing": 1})
    b = (3.0 - 2.0) / (-math.log(0.01) - math.log(0.05) - math.log(0.1))  # ≈ 0.101
    delta, details = b * 0.3, {"lambda": 3.0}
    exact = 2.0 - b * math.log(0.05)  # F_Lap(2 − v) = 0.025
    k = kinds.get("relative_one_way")
    t_prime = k.adjusted_threshold(criterion, delta, details)
    old = k.pass_probability(criterion, exact, delta, t_prime)  # what T′ alone gave
    assert old == pytest.approx(0.995, abs=1e-3)
    new = design_pass_probability(criterion, 0.3, exact, delta, details)
    assert new == pytest.approx(0.025, abs=1e-9)
    assert k.effective_threshold(criterion, delta, details) == 2.0


def test_design_forecast_of_a_count_passes_at_the_threshold() -> None:
    """Regression: a face-privacy count of 0 at T = 0 passes (≤); the design forecast 0."""
    spec = build_spec(audit_document(audit_case("face_privacy_count")))
    criterion = spec.criterion("face_privacy_count")
    assert criterion.threshold == 0
    assert design_pass_probability(criterion, 0.0, 0.0, None, {}) == 1.0
    assert design_pass_probability(criterion, 0.0, 1.0, None, {}) == 0.0


def test_lab_all_pass_of_a_count_at_the_threshold(monkeypatch) -> None:
    """Regression: the co-design summary forecast 0 for a face-privacy count of 0 at T = 0 (it
    compared with <); the readout now carries the kind's decision and the summary multiplies
    it."""
    from workbench.widgets.model.lab import ProxyLab

    case, spec, config, _ = _setup("face_privacy_count", 0.0)
    table = spec.table_codec(config)
    synth = np.repeat(case.synth, 2, axis=0)  # every row seen twice: no unique row
    pc = PairedCells.from_codes(np.repeat(case.real, 2, axis=0), synth, table.domain)
    readout = criterion_readout(spec, table, spec.criterion("face_privacy_count"), pc, 0.0)
    assert readout.probability_pass == 1.0
    lab = ProxyLab.__new__(ProxyLab)
    lab._runs = [{"face_privacy_count": readout}]
    monkeypatch.setattr(ProxyLab, "readouts", lambda self, spec: None)
    assert lab.all_pass(spec).probability == 1.0
