"""The privacy layer: noise scales, empirical DP audits on neighbours, the ledger under SIGKILL,
the accountant, private selection, the two modes, and a scan for noise made outside OpenDP.

Noise comes from OpenDP and cannot be seeded, so the statistical tests here use wide margins:
each tolerance is several standard errors, and every audit runs at 99.9% confidence, so a
correct layer fails a test with probability far below 1e-3 while the injected bugs (half the
sensitivity) are flagged with a margin of several standard deviations.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import os
import random
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from workbench.audits import Capture, ScaledNoise
from workbench.generators.measurement import noisy_marginal
from workbench.privacy import (
    Accountant,
    BudgetExceeded,
    Ledger,
    PrivacyContext,
    PrivacyMode,
    check_selection_parameters,
    expected_iterations,
    minimum_iterations,
    plan_epsilon_total,
    private_selection,
    probability_bottom,
    probability_success,
    selection_epsilon,
    sensitivity,
)
from workbench.privacy.audit import (
    AllOf,
    Threshold,
    audit_counts,
    audit_events,
    clopper_pearson,
    threshold_events,
)
from workbench.privacy.noise import NoiseSource, OpenDPNoise, SeededNoise
from workbench.specification import SpecError
from workbench.transform import Domain
from workbench.transform.cells import CellCounts
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
WORKBENCH = REPO / "workbench"
# Of every audit below: a correct mechanism is flagged with prob. ≤ 1e-3 (Bonferroni bound).
# The audits run on OpenDP's own noise, so that bound matters: computed exactly per event
# (independent binomial counts on D and D', Clopper-Pearson bounds, union over events), the
# flag probability of a correct mechanism is ≤ 1.3e-7 for each count and marginal audit and
# ≤ 4.6e-7 for the noisy-max audit, and a half-sensitivity bug is missed with prob. < 1e-12.
CONFIDENCE = 0.999
SECRET = 123456.789  # a distinctive "data value" that no error message may echo


# --- helpers ---------------------------------------------------------------------------------
def measurement_lines(path: Path) -> list[dict]:
    """The measurement entries of a ledger file."""
    return [e for e in Ledger.read(path) if e["event"] == "measurement"]


def noisy_count(
    ctx: PrivacyContext, records: np.ndarray, predicate: Callable, epsilon: float
) -> int:
    """The count wrapper under audit: #records satisfying ``predicate``, discrete Laplace."""
    true = int(np.count_nonzero(predicate(records)))
    delta = sensitivity.count(ctx.neighbour)
    return int(
        ctx.discrete_laplace([true], sensitivity=delta, epsilon=epsilon, purpose="n").value[0]
    )


# --- noise scales against their formulas ------------------------------------------------------
@pytest.mark.parametrize(("delta", "eps"), [(1.0, 1.0), (2.0, 0.5), (3.2, 0.01)])
def test_laplace_record_scale_and_sigma_follow_the_formula(delta: float, eps: float) -> None:
    ctx = PrivacyContext.simulation(seed=0)
    rec = ctx.laplace([0.0, 1.0], sensitivity=delta, epsilon=eps, purpose="p").record
    assert rec.mechanism == "laplace"
    assert rec.scale == pytest.approx(delta / eps, rel=1e-12)
    assert rec.sigma == pytest.approx(math.sqrt(2.0) * delta / eps, rel=1e-12)
    assert (rec.epsilon, rec.sensitivity) == (eps, delta)


@pytest.mark.parametrize(("delta", "eps"), [(1, 1.0), (2, 1.0), (2, 0.1), (1, 3.0)])
def test_discrete_laplace_record_sigma_follows_the_formula(delta: int, eps: float) -> None:
    ctx = PrivacyContext.simulation(seed=0)
    rec = ctx.discrete_laplace([3, 4], sensitivity=delta, epsilon=eps, purpose="p").record
    t = math.exp(-eps / delta)
    assert rec.mechanism == "discrete_laplace"
    assert rec.scale == pytest.approx(delta / eps, rel=1e-12)
    assert rec.sigma == pytest.approx(math.sqrt(2.0 * t) / (1.0 - t), rel=1e-12)
    if delta / eps >= 10:  # large scale: tends to the continuous √2·Δ/ε
        assert rec.sigma == pytest.approx(math.sqrt(2.0) * delta / eps, rel=1e-2)


def test_exponential_record_scale_and_sigma_follow_the_formula() -> None:
    """OpenDP's ε-DP noisy max adds Exponential(β) noise, β = 2Δ/ε, whose std is β."""
    ctx = PrivacyContext.simulation(seed=0)
    rec = ctx.exponential([0.0, 1.0, 2.0], sensitivity=0.5, epsilon=0.25, purpose="p").record
    beta = 2.0 * 0.5 / 0.25
    assert rec.mechanism == "exponential"
    assert rec.scale == pytest.approx(beta, rel=1e-12)
    assert rec.sigma == pytest.approx(beta, rel=1e-12)


def test_laplace_sample_std_matches_record_sigma() -> None:
    """40k draws: the std's relative SE is ≈ 0.56% (kurtosis 6), so 3% is > 5 SE.

    OpenDP's own (unseedable) noise, on purpose. P(fail) per run: 5.7e-7 for the mean (|Z| > 5)
    plus ≈ 1e-7 for the std (5.4 SE, skew-corrected): ≈ 7e-7.
    """
    ctx = PrivacyContext.simulation()
    true = np.linspace(-50.0, 50.0, 40_000)
    noisy = ctx.laplace(true, sensitivity=2.0, epsilon=0.5, purpose="std")
    noise = noisy.value - true
    assert noisy.value.shape == true.shape
    assert abs(noise.mean()) < 5 * noisy.record.sigma / math.sqrt(noise.size)
    assert noise.std() == pytest.approx(noisy.record.sigma, rel=0.03)  # σ = √2·4 ≈ 5.66


def test_discrete_laplace_sample_std_and_pmf_match_the_formula() -> None:
    """Δ = 1, ε = 1: σ = 1.357, 4% below the continuous √2, so 3% tolerance tells them apart.

    OpenDP's own (unseedable) noise, on purpose. 80k draws: the std's relative SE is ≈ 0.4%,
    so 3% is 7.5 SE; |std − √2| > 0.01 is 8.8 SE away. The χ² test (10 df) at p > 1e-8 fails a
    correct sampler with probability 1e-8 (it was 1e-6 at 40k draws and p > 1e-6; twice the
    draws more than make up for the stricter cut: it still detects any smaller deviation).
    """
    ctx = PrivacyContext.simulation()
    true = np.full(80_000, 7, dtype=np.int64)
    noisy = ctx.discrete_laplace(true, sensitivity=1, epsilon=1.0, purpose="std")
    assert noisy.value.dtype == np.int64
    noise = noisy.value - true
    assert noise.std() == pytest.approx(noisy.record.sigma, rel=0.03)
    assert abs(noise.std() - math.sqrt(2.0)) > 0.01
    # P(k) = (1 − t)/(1 + t)·t^|k| with t = e^{−ε/Δ}; bins −4..4 and the two tails
    t = math.exp(-1.0)
    ks = np.arange(-4, 5)
    probs = (1 - t) / (1 + t) * t ** np.abs(ks)
    tail = (1.0 - probs.sum()) / 2.0
    expected = np.concatenate([[tail], probs, [tail]]) * noise.size
    observed = np.array([(noise < -4).sum(), *[(noise == k).sum() for k in ks], (noise > 4).sum()])
    assert stats.chisquare(observed, expected).pvalue > 1e-8


def permute_and_flip(scores: np.ndarray, epsilon: float, delta: float) -> np.ndarray:
    """Exact P(i) of permute-and-flip: in a uniformly random order, accept candidate r with
    probability exp(ε·(s_r − max s)/(2Δ)); equal in law to noisy max with Exponential(2Δ/ε)."""
    accept = np.exp(epsilon * (scores - scores.max()) / (2.0 * delta))
    probs = np.zeros(scores.size)
    orders = list(itertools.permutations(range(scores.size)))
    for order in orders:
        reach = 1.0 / len(orders)
        for r in order:
            probs[r] += reach * accept[r]
            reach *= 1.0 - accept[r]
    return probs


def test_exponential_selection_frequencies_are_permute_and_flip() -> None:
    """ε = 2, Δ = 1, scores (0, 1, 2): permute-and-flip gives (0.059, 0.176, 0.765).

    The textbook exponential mechanism, ∝ exp(ε·s/(2Δ)), would give (0.090, 0.245, 0.665);
    OpenDP's pure-DP noisy max uses exponential noise, and the layer documents it as such.
    With Δ/2 (or 2ε) it would be (0.009, 0.067, 0.924).

    OpenDP's own (unseedable) noise, on purpose. P(fail) per run: 1e-8 for the χ² fit at
    p > 1e-8, plus P(the textbook-EM χ² has p ≥ 1e-6) = 1.2e-16 at 4,000 draws (noncentral χ²,
    2 df, λ = 180). At 2,000 draws and p > 1e-6 it was 1e-6 + 8.9e-6 ≈ 1e-5.
    """
    ctx = PrivacyContext.simulation()
    scores = np.array([0.0, 1.0, 2.0])
    draws = 4000
    picks = np.array(
        [
            ctx.exponential(scores, sensitivity=1.0, epsilon=2.0, purpose="em").value
            for _ in range(draws)
        ]
    )
    observed = np.bincount(picks, minlength=3)
    expected = permute_and_flip(scores, 2.0, 1.0)
    assert stats.chisquare(observed, expected * draws).pvalue > 1e-8
    gumbel_max = np.exp(scores) / np.exp(scores).sum()
    assert stats.chisquare(observed, gumbel_max * draws).pvalue < 1e-6  # not the textbook EM
    assert len(ctx.records) == draws


# --- argument validation never echoes a value ----------------------------------------------
def _bad_calls(ctx: PrivacyContext) -> list[tuple[str, Callable[[], object]]]:
    """Invalid calls, each hiding SECRET somewhere in its arguments."""
    return [
        ("nan value", lambda: ctx.laplace([SECRET, np.nan], sensitivity=1, epsilon=1, purpose="p")),
        ("inf value", lambda: ctx.laplace([SECRET, np.inf], sensitivity=1, epsilon=1, purpose="p")),
        ("eps < 0", lambda: ctx.laplace([1.0], sensitivity=1, epsilon=-SECRET, purpose="p")),
        ("eps = 0", lambda: ctx.laplace([SECRET], sensitivity=1, epsilon=0, purpose="p")),
        ("eps nan", lambda: ctx.laplace([SECRET], sensitivity=1, epsilon=np.nan, purpose="p")),
        ("sens < 0", lambda: ctx.laplace([1.0], sensitivity=-SECRET, epsilon=1, purpose="p")),
        ("sens inf", lambda: ctx.laplace([SECRET], sensitivity=np.inf, epsilon=1, purpose="p")),
        (
            "bounds",
            lambda: ctx.laplace([1.0], sensitivity=1, epsilon=1, purpose="p", bounds=(SECRET, 1.0)),
        ),
        (
            "dl float sens",
            lambda: ctx.discrete_laplace([1], sensitivity=SECRET, epsilon=1, purpose="p"),
        ),
        (
            "dl nan sens",
            lambda: ctx.discrete_laplace([1], sensitivity=np.nan, epsilon=1, purpose="p"),
        ),
        (
            "dl inf sens",
            lambda: ctx.discrete_laplace([1], sensitivity=np.inf, epsilon=1, purpose="p"),
        ),
        (
            "dl float value",
            lambda: ctx.discrete_laplace([SECRET], sensitivity=1, epsilon=1, purpose="p"),
        ),
        (
            "dl eps < 0",
            lambda: ctx.discrete_laplace([1], sensitivity=1, epsilon=-SECRET, purpose="p"),
        ),
        (
            "em nan score",
            lambda: ctx.exponential([SECRET, np.nan], sensitivity=1, epsilon=1, purpose="p"),
        ),
        (
            "em sens 0",
            lambda: ctx.exponential([SECRET, 1.0], sensitivity=0, epsilon=1, purpose="p"),
        ),
        (
            "em eps nan",
            lambda: ctx.exponential([SECRET, 1.0], sensitivity=1, epsilon=np.nan, purpose="p"),
        ),
        ("empty purpose", lambda: ctx.laplace([SECRET], sensitivity=1, epsilon=1, purpose=" ")),
    ]


def test_invalid_arguments_raise_value_error_without_the_value() -> None:
    ctx = PrivacyContext.simulation(seed=0)
    for name, call in _bad_calls(ctx):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert "123456" not in message and "nan" not in message.lower(), (name, message)
    assert ctx.records == []  # nothing was recorded, charged or drawn


# --- the audit itself ------------------------------------------------------------------------
def test_clopper_pearson_matches_scipy_exact_interval() -> None:
    ks = np.array([0, 1, 17, 500, 999, 1000])
    lo, hi = clopper_pearson(ks, 1000, 0.01)
    for k, a, b in zip(ks, lo, hi, strict=True):
        ci = stats.binomtest(int(k), 1000).proportion_ci(confidence_level=0.99, method="exact")
        assert (a, b) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_audit_counts_bounds_and_bonferroni() -> None:
    same = audit_counts([300], 1000, [300], 1000, 0.1)
    assert same.epsilon_lower_bound == 0.0 and not same.violates
    assert same.point_estimate == pytest.approx(0.0)
    # p̂ = 0.5 vs 0.05: ln 10 ≈ 2.30 observed, lower bound a bit smaller but above 1
    far = audit_counts([500, 300], 1000, [50, 300], 1000, 1.0, labels=["a", "b"])
    assert 1.0 < far.epsilon_lower_bound < math.log(10.0)
    assert far.point_estimate == pytest.approx(math.log(10.0))
    assert far.violates and far.worst_event == "a (D vs D')"
    assert "VIOLATES" in far.summary()
    assert not audit_counts([500], 1000, [50], 1000, 2.5).violates
    swapped = audit_counts([50, 300], 1000, [500, 300], 1000, 1.0)
    assert swapped.epsilon_lower_bound == pytest.approx(far.epsilon_lower_bound)
    assert swapped.worst_event.endswith("(D' vs D)")
    # more events → wider intervals → a smaller bound for the same counts
    many = audit_counts([500] + [300] * 99, 1000, [50] + [300] * 99, 1000, 1.0)
    assert many.epsilon_lower_bound < far.epsilon_lower_bound
    # lower confidence → tighter
    loose = audit_counts([500], 1000, [50], 1000, 1.0, confidence=0.5)
    assert loose.epsilon_lower_bound > far.epsilon_lower_bound
    with pytest.raises(ValueError):
        audit_counts([5], 4, [1], 4, 1.0)
    with pytest.raises(ValueError):
        audit_counts([1], 4, [1], 4, 1.0, confidence=1.0)


def test_audit_counts_subtracts_delta_for_an_epsilon_delta_claim() -> None:
    """(ε, δ): P_D ≤ e^ε P_D′ + δ. A gap that δ explains is not flagged; the same gap with a
    smaller δ (or none) is, and a larger gap beyond δ still is."""
    gap = [4000], 100_000, [0], 100_000  # P_D ≈ 0.04, P_D′ = 0: no pure ε explains it
    assert audit_counts(*gap, 1.0).violates
    covered = audit_counts(*gap, 1.0, delta=0.05)
    assert not covered.violates and covered.epsilon_lower_bound == 0.0
    assert covered.delta == 0.05 and "(ε, δ) = (1, 0.05)" in covered.summary()
    assert audit_counts(*gap, 1.0, delta=0.03).violates  # 0.04 − 0.03 > e·P̄_D′
    ratio = audit_counts([50_000], 100_000, [5_000], 100_000, 1.0, delta=0.01)
    assert ratio.violates and ratio.epsilon_lower_bound == pytest.approx(
        math.log(0.49 / 0.05), abs=0.05)  # ln((0.5 − δ)/0.05), less the intervals' width
    with pytest.raises(ValueError, match="delta"):
        audit_counts(*gap, 1.0, delta=1.5)


def test_threshold_events_and_intersections() -> None:
    x = np.array([[0, 5], [3, 1], [4, 4]])
    ge3 = Threshold(3, ">=", column=0)
    le4 = Threshold(4, "<=", column=1)
    assert ge3(x).tolist() == [False, True, True]
    assert AllOf((ge3, le4))(x).tolist() == [False, True, True]
    assert AllOf((ge3, Threshold(1, "==", column=1)))(x).tolist() == [False, True, False]
    assert AllOf((ge3, le4)).label == "x[0] >= 3 & x[1] <= 4"
    events = threshold_events(range(2), ops=(">=", "<=", "=="))
    assert [e.label for e in events] == ["x >= 0", "x <= 0", "x == 0", "x >= 1", "x <= 1", "x == 1"]
    table = np.zeros((4, 2, 3))
    table[:, 1, 2] = [0, 1, 2, 3]
    assert Threshold(2, column=(1, 2))(table).tolist() == [False, False, True, True]
    with pytest.raises(ValueError):
        Threshold(1, "<")
    with pytest.raises(ValueError):
        ge3(np.zeros(3))  # column given but scalar outputs
    with pytest.raises(ValueError):
        audit_events(np.zeros(3), np.zeros(3), [lambda s: s], 1.0)  # not boolean


# --- empirical DP: count wrapper -------------------------------------------------------------
COUNT_EVENTS_AROUND = range(-3, 5)  # thresholds c − 3 … c + 4 around the count c on D


def predicate(records: np.ndarray) -> np.ndarray:
    """The counted predicate: 12 of the records 0…29 satisfy it."""
    return records >= 18


@pytest.mark.parametrize("kind", ["discrete", "continuous"])
@pytest.mark.parametrize("bug", [False, True], ids=["correct", "half-sensitivity"])
def test_count_audit_vectorised(kind: str, bug: bool) -> None:
    """A count on D (c = 12) and on D' (one record replaced, c = 13), many i.i.d. trials.

    One call on a repeated value gives i.i.d. noise per entry, i.e. independent trials of the
    scalar mechanism (the vector's own sensitivity is irrelevant to the marginals audited).
    The bug calibrates noise to half the sensitivity (for the integer mechanism, whose Δ is an
    integer, the same scale Δ/(2ε) is reached by doubling ε); it must be flagged.
    """
    eps = 1.0
    records = np.arange(30)
    d_prime = records.copy()
    d_prime[0] = 100  # replace_one: the record 0 (not counted) becomes 100 (counted)
    c, c_prime = int(predicate(records).sum()), int(predicate(d_prime).sum())
    assert abs(c - c_prime) == sensitivity.count("replace_one") == 1
    ctx = PrivacyContext.simulation()
    trials = 20_000 if kind == "discrete" else 10_000
    delta = sensitivity.count(ctx.neighbour)
    samples = []
    for true in (c, c_prime):
        if kind == "discrete":
            noisy = ctx.discrete_laplace(
                np.full(trials, true),
                sensitivity=delta,
                epsilon=2 * eps if bug else eps,
                purpose="count",
            )
        else:
            noisy = ctx.laplace(
                np.full(trials, float(true)),
                sensitivity=delta / 2 if bug else delta,
                epsilon=eps,
                purpose="count",
            )
        samples.append(noisy.value)
    shift = 0.5 if kind == "continuous" else 0.0
    events = threshold_events([c + k + shift for k in COUNT_EVENTS_AROUND])
    result = audit_events(samples[0], samples[1], events, eps, confidence=CONFIDENCE)
    assert result.violates is bug, result.summary()
    if not bug:
        assert result.point_estimate > 0.5 * eps  # the events do see the tails


@pytest.mark.parametrize("bug", [False, True], ids=["correct", "half-sensitivity"])
def test_count_audit_one_call_per_trial(bug: bool) -> None:
    """The count wrapper called once per trial on each dataset, as a release would call it."""
    eps = 1.0
    records = np.arange(30)
    d_prime = records.copy()
    d_prime[0] = 100
    ctx = PrivacyContext.simulation()
    effective = 2 * eps if bug else eps  # the bug: scale Δ/(2ε), i.e. half the sensitivity
    trials = 1000
    out = np.array(
        [
            [noisy_count(ctx, data, predicate, effective) for _ in range(trials)]
            for data in (records, d_prime)
        ]
    )
    assert len(ctx.records) == 2 * trials
    assert all(r.sensitivity == 1 and r.stage == "once" for r in ctx.records)
    events = threshold_events([12 + k for k in COUNT_EVENTS_AROUND])
    result = audit_events(out[0], out[1], events, eps, confidence=CONFIDENCE)
    assert result.violates is bug, result.summary()


# --- empirical DP: one PrivBayes noisy marginal ----------------------------------------------
@pytest.mark.parametrize("bug", [False, True], ids=["correct", "half-sensitivity"])
def test_noisy_marginal_audit(bug: bool) -> None:
    """Replace one record (a, b) = (0, 0) by (1, 2): cells u = (0, 0) and v = (1, 2) move by 1.

    Each cell alone leaks only ε/2 at Δ = 2, so the events are joint tails over both cells:
    {X_u ≥ x_u + s} ∧ {X_v ≤ x_v − s'}, whose log-ratio is exactly ε for s, s' ≥ 0 (2ε with
    the bug, where the noise is drawn at half the scale Δ/ε, i.e. calibrated to Δ/2).
    """
    domain = Domain(("a", "b"), (2, 3))
    rows = [(0, 0)] * 5 + [(0, 1)] * 3 + [(1, 2)] * 4 + [(1, 0)] * 2 + [(0, 2)]
    codes = np.array(rows)
    codes_prime = codes.copy()
    codes_prime[0] = (1, 2)
    d = CellCounts.from_codes(codes, domain)
    d_prime = CellCounts.from_codes(codes_prime, domain)
    diff = d.marginal(("a", "b")) - d_prime.marginal(("a", "b"))
    assert np.abs(diff).sum() == sensitivity.histogram("replace_one") == 2
    noise = ScaledNoise(OpenDPNoise(), 0.5) if bug else OpenDPNoise()
    ctx = PrivacyContext.simulation(neighbour="replace_one", noise=noise)
    eps, trials = 1.0, 1500
    samples = [
        np.stack([noisy_marginal(data, ("a", "b"), ctx, eps, "marginal") for _ in range(trials)])
        for data in (d, d_prime)
    ]
    assert samples[0].shape == (trials, 2, 3)
    assert {r.sensitivity for r in ctx.records} == {2.0}
    u, v = (0, 0), (1, 2)
    xu, xv = int(d.marginal(("a", "b"))[u]), int(d.marginal(("a", "b"))[v])  # 5 and 4
    events: list = [
        AllOf((Threshold(xu + s, ">=", u), Threshold(xv - s2, "<=", v)))
        for s in range(3)
        for s2 in range(3)
    ]
    events += threshold_events([xu - 1, xu, xu + 1], column=u)
    result = audit_events(samples[0], samples[1], events, eps, confidence=CONFIDENCE)
    assert result.violates is bug, result.summary()


# --- empirical DP: the exponential (noisy max) selection ------------------------------------
@pytest.mark.parametrize("bug", [False, True], ids=["correct", "half-sensitivity"])
def test_exponential_selection_audit(bug: bool) -> None:
    """Scores (0, 0) on D and (1, −1) on D' (each moves by Δ = 1): P(pick 1) is 1/2 vs e^{−ε}/2,
    a log-ratio of exactly ε; with half the sensitivity it is 2ε and must be flagged."""
    eps, trials = 1.0, 1500
    delta = 0.5 if bug else 1.0
    ctx = PrivacyContext.simulation()
    picks = [
        np.array(
            [
                ctx.exponential(scores, sensitivity=delta, epsilon=eps, purpose="pick").value
                for _ in range(trials)
            ]
        )
        for scores in (np.array([0.0, 0.0]), np.array([1.0, -1.0]))
    ]
    events = threshold_events([0, 1], ops=("==",))
    result = audit_events(picks[0], picks[1], events, eps, confidence=CONFIDENCE)
    assert result.violates is bug, result.summary()


# --- the ledger --------------------------------------------------------------------------------
_CHILD = """
import sys
import numpy as np
from workbench.privacy import Accountant, Ledger, PrivacyContext

ctx = PrivacyContext.confidential(accountant=Accountant(1e9), ledger=Ledger(sys.argv[1]))
for i in range(1_000_000):
    ctx.discrete_laplace(np.array([5, 7]), sensitivity=2, epsilon=0.001, purpose=f"m{i}")
    print(i, flush=True)
"""


@pytest.mark.slow
def test_ledger_survives_sigkill(tmp_path: Path) -> None:
    """Every measurement whose value was returned is on disk after SIGKILL, lines intact."""
    path = tmp_path / "ledger.jsonl"
    k = 25
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        for i in range(k):
            line = proc.stdout.readline()
            assert line.strip() == str(i), line or proc.stderr.read()  # EOF: show the crash
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    lines = path.read_text(encoding="utf-8").split("\n")
    # every newline-terminated line parses; a final unterminated one would be a cut-short
    # write of a measurement whose value was never returned
    entries = [json.loads(line) for line in lines[:-1]]
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    assert len({e["run_id"] for e in entries}) == 1
    measured = [e for e in entries if e["event"] == "measurement"]
    assert len(measured) >= k
    assert [e["purpose"] for e in measured] == [f"m{i}" for i in range(len(measured))]
    assert Ledger.read(path)[: len(entries)] == entries


class SpyNoise(OpenDPNoise):
    """OpenDP noise that calls ``before`` first: when was the noise drawn? (simulation only)."""

    name = "spy"

    def __init__(self, before: Callable[[], None]) -> None:
        self.before = before

    def discrete_laplace_vector(self, values: np.ndarray, sensitivity: int, epsilon: float
                                ) -> np.ndarray:
        self.before()
        return super().discrete_laplace_vector(values, sensitivity, epsilon)


def test_ledger_line_is_written_before_the_noise_is_drawn(tmp_path: Path) -> None:
    """A spy source sees the ledger already holding its measurement's line. The order (charge,
    log, then draw) is the context's, the same in both modes; a confidential context refuses
    the spy, so the spy runs in a simulation context with a ledger and an accountant."""
    path = tmp_path / "ledger.jsonl"
    seen: list[int] = []
    spy = SpyNoise(lambda: seen.append(len(measurement_lines(path))))
    ctx = PrivacyContext.simulation(accountant=Accountant(1.0), ledger=Ledger(path), noise=spy)
    ctx.discrete_laplace([1, 2], sensitivity=2, epsilon=0.3, purpose="a")
    ctx.discrete_laplace([1, 2], sensitivity=2, epsilon=0.3, purpose="b")
    assert seen == [1, 2]
    with pytest.raises(ValueError, match="OpenDP only"):
        PrivacyContext(PrivacyMode.CONFIDENTIAL, neighbour="replace_one",
                       rng=np.random.default_rng(), coin_source=random.SystemRandom(),
                       accountant=Accountant(1.0), ledger=Ledger(tmp_path / "c.jsonl"),
                       noise=spy)


def test_accountant_refuses_overspend_before_noise_and_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    calls: list[int] = []
    acc = Accountant(1.0)
    ctx = PrivacyContext.simulation(accountant=acc, ledger=Ledger(path),
                                    noise=SpyNoise(lambda: calls.append(1)))
    ctx.discrete_laplace([4], sensitivity=1, epsilon=0.6, purpose="first")
    with pytest.raises(BudgetExceeded):
        ctx.discrete_laplace([4], sensitivity=1, epsilon=0.5, purpose="second")
    assert len(calls) == 1
    assert [e["purpose"] for e in measurement_lines(path)] == ["first"]
    assert [r.purpose for r in ctx.records] == ["first"]
    assert acc.epsilon_spent() == pytest.approx(0.6)
    ctx.discrete_laplace([4], sensitivity=1, epsilon=0.4, purpose="exactly the rest")
    assert acc.remaining() == pytest.approx(0.0)
    # a loop measurement needs a plan, and may not exceed ε₁ within an iteration
    acc2 = Accountant(10.0)
    ctx2 = PrivacyContext.simulation(accountant=acc2)
    ctx2.begin_iteration(1)
    with pytest.raises(BudgetExceeded):
        ctx2.laplace([1.0], sensitivity=1, epsilon=0.1, purpose="loop")
    acc2.plan_selection(1.0, 0.0, None, 0.0)
    ctx2.laplace([1.0], sensitivity=1, epsilon=0.7, purpose="loop")
    with pytest.raises(BudgetExceeded):
        ctx2.laplace([1.0], sensitivity=1, epsilon=0.4, purpose="loop")
    ctx2.begin_iteration(2)
    ctx2.laplace([1.0], sensitivity=1, epsilon=1.0, purpose="loop")
    assert acc2.epsilon_total() == pytest.approx(2.0)
    with pytest.raises(BudgetExceeded):
        Accountant(1.0).plan_selection(0.6, 0.0, None, 0.0)  # the loop costs 2·0.6 > 1


def test_accountant_from_ledger_sums_all_runs(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    # run 1: once 0.5, then a selection with ε₁ = 1 (costs 2) that made one loop measurement
    acc1 = Accountant(10.0)
    with Ledger(path) as ledger:
        ctx = PrivacyContext.confidential(accountant=acc1, ledger=ledger)
        ctx.laplace([1.0], sensitivity=1, epsilon=0.5, purpose="once")
        acc1.plan_selection(1.0, 0.0, None, 0.0)
        ctx.begin_iteration(1)
        ctx.laplace([1.0], sensitivity=1, epsilon=0.25, purpose="loop")
        ctx.end_iteration()
    # run 2: a plan that never ran (no loop line, nothing spent) and a once 0.3
    acc2 = Accountant(10.0)
    with Ledger(path) as ledger:
        ctx = PrivacyContext.confidential(accountant=acc2, ledger=ledger)
        acc2.plan_selection(2.0, 0.0, None, 0.0)
        ctx.discrete_laplace([1], sensitivity=1, epsilon=0.3, purpose="once")
    assert acc1.epsilon_spent() == pytest.approx(2.5)
    assert Accountant.spent_in_ledger(path) == pytest.approx(2.8)
    later = Accountant(3.0, prior_spent=Accountant.spent_in_ledger(path))
    assert later.prior_spent == pytest.approx(2.8)
    assert later.remaining() == pytest.approx(0.2)
    with pytest.raises(BudgetExceeded):
        PrivacyContext.simulation(accountant=later).laplace(
            [1.0], sensitivity=1, epsilon=0.3, purpose="too much"
        )


# --- private selection -----------------------------------------------------------------------
def _run_selection(p: float, gamma: float, cap: int | None, runs: int, seed: int):
    """Run the loop ``runs`` times with a step passing with probability p (ctx.rng, seeded)."""
    ctx = PrivacyContext.simulation(seed=seed)
    return [
        private_selection(
            lambda i: (bool(ctx.rng.random() < p), i), gamma=gamma, max_iterations=cap, ctx=ctx
        )
        for _ in range(runs)
    ]


def test_uncapped_selection_iterations_are_geometric() -> None:
    p, runs = 0.2, 4000
    results = _run_selection(p, 0.0, None, runs, seed=11)
    assert all(r.succeeded and r.stopped_by == "success" for r in results)
    assert all(r.output == r.iterations for r in results)
    its = np.array([r.iterations for r in results])
    se = math.sqrt((1 - p) / p**2 / runs)
    assert abs(its.mean() - 1 / p) < 4 * se
    assert expected_iterations(p, 0.0, None) == pytest.approx(1 / p)
    ks = np.arange(1, 16)
    pmf = stats.geom.pmf(ks, p)
    observed = np.append(np.bincount(its, minlength=16)[1:16], (its > 15).sum())
    expected = np.append(pmf, 1 - pmf.sum()) * runs
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_capped_selection_outcomes_match_the_formulas() -> None:
    p, gamma, cap, runs = 0.1, 0.2, 10, 20_000
    results = _run_selection(p, gamma, cap, runs, seed=5)
    its = np.array([r.iterations for r in results])
    reasons = np.array([r.stopped_by for r in results])
    r = (1 - p) * (1 - gamma)
    # independent of the library: P(success) = Σ_{i ≤ T} p·r^(i−1); P(cap) = r^(T−1)·(1 − p)
    p_success = sum(p * r ** (i - 1) for i in range(1, cap + 1))
    p_cap = r ** (cap - 1) * (1 - p)
    mean_its = sum(r ** (i - 1) for i in range(1, cap + 1))
    assert probability_bottom(p, gamma, cap) == pytest.approx(1 - p_success, rel=1e-12)
    assert probability_success(p, gamma, cap) == pytest.approx(p_success, rel=1e-12)
    assert expected_iterations(p, gamma, cap) == pytest.approx(mean_its, rel=1e-12)
    assert its.max() <= cap
    for share, prob in [
        ((reasons != "success").mean(), probability_bottom(p, gamma, cap)),
        ((reasons == "cap").mean(), p_cap),
        ((reasons == "gamma").mean(), 1 - p_success - p_cap),
    ]:
        assert abs(share - prob) < 4.5 * math.sqrt(prob * (1 - prob) / runs), (share, prob)
    assert abs(its.mean() - mean_its) < 4.5 * its.std() / math.sqrt(runs)
    assert all(r.output is None for r in results if not r.succeeded)


def test_selection_pricing_of_the_paper() -> None:
    assert plan_epsilon_total([4.0, 0.99]) == pytest.approx(9.98, abs=1e-12)
    acc = Accountant(10.0)
    plan = acc.plan_selection(4.99, 0, None, 0)
    assert plan.cost == pytest.approx(9.98)
    assert "9.98" in acc.describe()
    assert acc.epsilon_total() == pytest.approx(9.98)
    assert acc.epsilon_spent() == 0.0  # reserved, not yet spent
    with pytest.raises(BudgetExceeded):
        Accountant(9.9).plan_selection(4.99, 0, None, 0)


def test_capped_selection_needs_the_theorems_cap(example_doc: dict) -> None:
    gamma, e0 = 0.1, 0.5
    t_min = minimum_iterations(gamma, e0)
    assert t_min == math.ceil(max(math.log(2 / e0) / gamma, 1 + 1 / (math.e * gamma)))
    check_selection_parameters(gamma, t_min, e0)
    with pytest.raises(ValueError, match="max_iterations"):
        check_selection_parameters(gamma, t_min - 1, e0)
    with pytest.raises(ValueError, match="max_iterations"):
        check_selection_parameters(0.0, 100, 0.0)  # γ = 0 needs T = ∞
    with pytest.raises(ValueError, match="epsilon_0"):
        check_selection_parameters(0.0, None, 0.5)
    example_doc["selection"] = {"gamma": gamma, "max_iterations": t_min - 1, "epsilon_0": e0}
    with pytest.raises(SpecError) as info:
        build_spec(example_doc)
    assert info.value.paths and all(p.startswith("selection") for p in info.value.paths)
    example_doc["selection"]["max_iterations"] = t_min
    assert build_spec(example_doc).selection.max_iterations == t_min
    ctx = PrivacyContext.simulation(seed=0)
    with pytest.raises(ValueError):
        private_selection(
            lambda i: (False, None), gamma=gamma, max_iterations=t_min - 1, ctx=ctx, epsilon_0=e0
        )


def test_confidential_selection_refuses_to_run_without_a_plan(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ctx = PrivacyContext.confidential(accountant=Accountant(10.0), ledger=Ledger(path))
    steps: list[int] = []
    with pytest.raises(ValueError, match="plan"):
        private_selection(
            lambda i: (steps.append(i) or True, i), gamma=0.0, max_iterations=None, ctx=ctx
        )
    assert steps == []
    assert "selection_start" not in {e["event"] for e in Ledger.read(path)}
    # with the plan it runs, and its measurements are loop measurements of iteration 1
    ctx.accountant.plan_selection(1.0, 0.0, None, 0.0)  # type: ignore[union-attr]
    result = private_selection(
        lambda i: (True, ctx.laplace([1.0], sensitivity=1, epsilon=1.0, purpose="fit").value),
        gamma=0.0,
        max_iterations=None,
        ctx=ctx,
    )
    assert result.succeeded and result.iterations == 1
    assert [(e["stage"], e["iteration"]) for e in measurement_lines(path)] == [("loop", 1)]


# --- the noise seam ----------------------------------------------------------------------------
def test_confidential_context_takes_opendp_noise_only(tmp_path: Path) -> None:
    def build(noise: NoiseSource) -> PrivacyContext:
        return PrivacyContext(
            PrivacyMode.CONFIDENTIAL, neighbour="replace_one", rng=np.random.default_rng(),
            coin_source=random.SystemRandom(), accountant=Accountant(1.0),
            ledger=Ledger(tmp_path / "l.jsonl"), noise=noise)

    class Lookalike(OpenDPNoise):  # a subclass could override a sampler
        pass

    for source in (SeededNoise(1), Lookalike(), Capture(), ScaledNoise(OpenDPNoise(), 0.5)):
        with pytest.raises(ValueError, match="OpenDP only"):
            build(source)
    assert type(build(OpenDPNoise()).noise) is OpenDPNoise
    ctx = PrivacyContext.confidential(accountant=Accountant(1.0), ledger=Ledger(tmp_path / "m"))
    assert type(ctx.noise) is OpenDPNoise
    with pytest.raises(AttributeError):
        ctx.noise = SeededNoise(1)  # type: ignore[misc]


def test_simulation_context_draws_from_its_noise_source() -> None:
    def draws(seed: int) -> list:
        ctx = PrivacyContext.simulation(0, noise=SeededNoise(seed))
        return [
            ctx.laplace([0.0, 0.0], sensitivity=1, epsilon=1, purpose="a").value.tolist(),
            ctx.discrete_laplace([0, 0], sensitivity=1, epsilon=1, purpose="b").value.tolist(),
            [ctx.exponential([0.0, 0.0, 0.0], sensitivity=1, epsilon=1, purpose="c").value
             for _ in range(12)],
        ]

    assert draws(3) == draws(3) != draws(4)
    assert type(PrivacyContext.simulation(0).noise) is OpenDPNoise
    with pytest.raises(ValueError, match="noise must provide"):
        PrivacyContext.simulation(0, noise=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed"):
        SeededNoise(None)  # type: ignore[arg-type]


def test_seeded_laplace_has_opendps_distribution() -> None:
    """Two-sample KS, 40k draws each, Δ = 2, ε = 0.5 (b = 4). The same test rejects a seeded
    source 20% off in scale, so it would catch a silent divergence.

    OpenDP's draws are unseedable: P(fail) per run is 1e-8 for the p > 1e-8 cut plus
    P(p ≥ 1e-6 against the 20% error) ≈ 4e-16 (D = 0.036 ± 0.0021, critical 0.019). At 20k
    draws and p > 1e-4 it was 1e-4 + 1.2e-4 (D = 0.038 ± 0.0029, critical 0.027): measured
    D over 300 simulated runs."""
    opendp = OpenDPNoise().laplace_vector(np.zeros(40_000), 2.0, 0.5)
    seeded = SeededNoise(11).laplace_vector(np.zeros(40_000), 2.0, 0.5)
    assert stats.ks_2samp(opendp, seeded).pvalue > 1e-8
    off = SeededNoise(12).laplace_vector(np.zeros(40_000), 2.0, 0.5 * 1.2)
    assert stats.ks_2samp(opendp, off).pvalue < 1e-6


def _binned(values: np.ndarray, edges: range) -> np.ndarray:
    """Counts of values ≤ first edge, = each inner edge, ≥ last edge."""
    inner = [(values == k).sum() for k in edges[1:-1]]
    return np.array([(values <= edges[0]).sum(), *inner, (values >= edges[-1]).sum()])


def test_seeded_discrete_laplace_has_opendps_distribution() -> None:
    """χ² homogeneity on the values −5…5 (tails pooled), Δ = 1, ε = 0.7; a 20% scale error
    is rejected.

    OpenDP's draws are unseedable: P(fail) per run is 1e-8 for the p > 1e-8 cut (it was 1e-4
    at p > 1e-4; 40k draws instead of 20k keep the sensitivity) plus P(p ≥ 1e-6 against the
    20% error) < 1e-80 (noncentral χ², 10 df, λ ≈ 690)."""
    zeros = np.zeros(40_000, dtype=np.int64)
    edges = range(-5, 6)
    opendp = _binned(OpenDPNoise().discrete_laplace_vector(zeros, 1, 0.7), edges)
    seeded = _binned(SeededNoise(21).discrete_laplace_vector(zeros, 1, 0.7), edges)
    assert stats.chi2_contingency([opendp, seeded]).pvalue > 1e-8
    off = _binned(SeededNoise(22).discrete_laplace_vector(zeros, 1, 0.7 * 1.2), edges)
    assert stats.chi2_contingency([opendp, off]).pvalue < 1e-6


def test_seeded_noisy_max_is_opendps_permute_and_flip() -> None:
    """Scores (0, 1, 2, 2.5), Δ = 1, ε = 2: seeded picks against OpenDP's (χ² homogeneity) and
    against permute-and-flip's exact law; the textbook exponential mechanism is rejected.

    OpenDP's picks are unseedable: the homogeneity cut p > 1e-8 fails with probability 1e-8
    (it was 1e-4 at p > 1e-4 and 3,000 draws); the seeded checks are deterministic."""
    scores, draws = np.array([0.0, 1.0, 2.0, 2.5]), 4000
    opendp = np.bincount([OpenDPNoise().noisy_max_index(scores, 1.0, 2.0) for _ in range(draws)],
                         minlength=4)
    source = SeededNoise(31)
    seeded = np.bincount([source.noisy_max_index(scores, 1.0, 2.0) for _ in range(draws)],
                         minlength=4)
    assert stats.chi2_contingency([opendp, seeded]).pvalue > 1e-8
    many = np.bincount(source.noisy_max_indices(scores, 1.0, 2.0, 40_000), minlength=4)
    assert stats.chisquare(many, permute_and_flip(scores, 2.0, 1.0) * 40_000).pvalue > 1e-4
    textbook = np.exp(scores) / np.exp(scores).sum()  # ∝ exp(ε·s/(2Δ))
    assert stats.chisquare(many, textbook * 40_000).pvalue < 1e-6
    assert SeededNoise(1).noisy_max_index(np.array([3.0]), 1.0, 1.0) == 0


# --- modes -----------------------------------------------------------------------------------
def test_simulation_is_reproducible_by_seed() -> None:
    a, b, c = (PrivacyContext.simulation(seed=s) for s in (42, 42, 43))
    assert a.mode is PrivacyMode.SIMULATION
    assert a.rng.integers(0, 2**62, 8).tolist() == b.rng.integers(0, 2**62, 8).tolist()
    assert [a.coin(0.5) for _ in range(64)] == [b.coin(0.5) for _ in range(64)]
    assert a.rng.integers(0, 2**62, 8).tolist() != c.rng.integers(0, 2**62, 8).tolist()
    assert not any(a.coin(0.0) for _ in range(100)) and all(a.coin(1.0) for _ in range(100))


def test_confidential_takes_no_seed_and_needs_accountant_and_ledger(tmp_path: Path) -> None:
    make = lambda name: PrivacyContext.confidential(  # noqa: E731
        accountant=Accountant(1.0), ledger=Ledger(tmp_path / name)
    )
    a, b = make("a.jsonl"), make("b.jsonl")
    assert a.mode is PrivacyMode.CONFIDENTIAL
    assert a.rng.integers(0, 2**62, 4).tolist() != b.rng.integers(0, 2**62, 4).tolist()
    with pytest.raises(TypeError):
        PrivacyContext.confidential(  # type: ignore[call-arg]
            seed=1, accountant=Accountant(1.0), ledger=Ledger(tmp_path / "c.jsonl")
        )
    with pytest.raises(ValueError, match="accountant"):
        PrivacyContext.confidential(accountant=None, ledger=Ledger(tmp_path / "d.jsonl"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ledger"):
        PrivacyContext.confidential(accountant=Accountant(1.0), ledger=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="neighbour"):
        PrivacyContext.simulation(neighbour="swap")


def test_stage_is_loop_inside_an_iteration_and_once_outside() -> None:
    ctx = PrivacyContext.simulation(seed=0)
    ctx.laplace([1.0], sensitivity=1, epsilon=0.1, purpose="before")
    ctx.begin_iteration(3)
    assert ctx.iteration == 3
    ctx.discrete_laplace([1], sensitivity=1, epsilon=0.1, purpose="inside")
    ctx.exponential([1.0, 2.0], sensitivity=1, epsilon=0.1, purpose="inside")
    ctx.end_iteration()
    ctx.laplace([1.0], sensitivity=1, epsilon=0.1, purpose="after")
    assert [(r.stage, r.iteration) for r in ctx.records] == [
        ("once", None),
        ("loop", 3),
        ("loop", 3),
        ("once", None),
    ]
    with pytest.raises(ValueError):
        ctx.begin_iteration(0)


def test_histogram_sensitivity_follows_the_neighbour_relation() -> None:
    assert PrivacyContext.simulation(neighbour="replace_one").histogram_sensitivity() == 2
    assert PrivacyContext.simulation(neighbour="add_remove").histogram_sensitivity() == 1




# --- item 6: no noise outside OpenDP -----------------------------------------------------------
_NP_RANDOM_ALLOWED = {"default_rng", "Generator"}  # post-DP sampling and type hints only
_STDLIB_RANDOM_ALLOWED = {"Random", "SystemRandom"}  # the selection coin's sources
#: numpy Generator (and scipy ``rvs``) methods that draw noise; sampling methods (choice,
#: integers, permutation, multinomial, …) serve post-DP sampling and stay allowed.
_NOISE_METHODS = frozenset({
    "laplace", "normal", "standard_normal", "exponential", "standard_exponential", "gumbel",
    "geometric", "logistic", "standard_cauchy", "standard_t", "standard_gamma", "gamma",
    "lognormal", "poisson", "wald", "weibull", "rayleigh", "pareto", "power", "vonmises",
    "chisquare", "noncentral_chisquare", "noncentral_f", "triangular", "negative_binomial",
    "logseries", "zipf", "multivariate_normal", "dirichlet", "rvs",
})
#: PrivacyContext objects are named ``ctx`` or ``privacy``: ``ctx.laplace(...)`` and
#: ``privacy.exponential(...)`` are the layer's own DP mechanisms, not numpy draws.
_CONTEXT_NAMES = {"ctx", "privacy"}
_CONTEXT_METHODS = {"laplace", "exponential"}
#: The one file allowed to draw numpy noise: the seeded source of public simulations.
SEEDED_SOURCE = "workbench/privacy/noise.py"


def _dotted(node: ast.AST) -> str | None:
    """'a.b.c' for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _noise_method_call(node: ast.AST, filename: str) -> str | None:
    """'rng.laplace()' for a call of a noise-drawing method outside the seeded source."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    method = node.func.attr
    if method not in _NOISE_METHODS or Path(filename).as_posix() == SEEDED_SOURCE:
        return None
    receiver = _dotted(node.func.value) or "<expression>"
    if receiver.split(".")[-1] in _CONTEXT_NAMES and method in _CONTEXT_METHODS:
        return None
    return f"{receiver}.{method}()"


def randomness_violations(source: str, filename: str) -> list[str]:
    """'file:line: what' for each use of numpy.random, stdlib random or a Generator's noise
    method beyond the allowed ones."""
    tree = ast.parse(source, filename=filename)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    found: list[str] = []
    for node in ast.walk(tree):
        what: str | None = _noise_method_call(node, filename)
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [a.name for a in node.names]
            if node.module == "numpy.random" or node.module.startswith("numpy.random."):
                what = f"from {node.module} import {', '.join(names)}"
            elif node.module == "numpy" and "random" in names:
                what = "from numpy import random"
            elif node.module == "random" and set(names) - _STDLIB_RANDOM_ALLOWED:
                what = f"from random import {', '.join(names)}"
        elif isinstance(node, ast.Import):
            bad = [a.name for a in node.names if a.name.startswith("numpy.random")]
            what = f"import {', '.join(bad)}" if bad else None
        elif isinstance(node, ast.Attribute) and id(node) not in inner:  # whole chains only
            parts = (_dotted(node) or "").split(".")
            if parts[0] in {"np", "numpy"} and parts[1:2] == ["random"]:
                if len(parts) == 2 or parts[2] not in _NP_RANDOM_ALLOWED:
                    what = ".".join(parts)
            elif parts[0] == "random" and parts[1] not in _STDLIB_RANDOM_ALLOWED:
                what = ".".join(parts)
        if what is not None:
            found.append(f"{filename}:{node.lineno}: {what}")  # type: ignore[attr-defined]
    return sorted(found)


def test_randomness_scanner_catches_each_pattern() -> None:
    bad = "\n".join(
        [
            "import numpy as np",
            "from numpy.random import default_rng",
            "import numpy.random",
            "from numpy import random",
            "x = np.random.laplace(0, 1)",
            "np.random.seed(0)",
            "import random",
            "y = random.random()",
            "random.seed(1)",
            "from random import gauss",
            "g = np.random",
            "z = rng.laplace(0.0, 2.0, size=3)",
            "z = self.rng.normal(size=3)",
            "z = ctx.rng.exponential(2.0)",
            "z = np.random.default_rng(1).gumbel()",
            "z = gen.geometric(0.5) - gen.geometric(0.5)",
            "z = stats.laplace(scale=2).rvs(3)",
            "z = self._noise.standard_normal(4)",
        ]
    )
    lines = {int(v.split(":")[1]) for v in randomness_violations(bad, "bad.py")}
    assert lines == {2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
    good = "\n".join(
        [
            "import random, secrets",
            "import numpy as np",
            "def f(rng: np.random.Generator) -> None: ...",
            "rng = np.random.default_rng(secrets.randbits(128))",
            "coin = random.SystemRandom().random()",
            "sim = random.Random(3)",
            '"""np.random.laplace in a docstring is text, not a call."""',
            "v = ctx.laplace(x, sensitivity=1, epsilon=1, purpose='p')",
            "v = self.ctx.laplace(x, sensitivity=1, epsilon=1, purpose='p')",
            "i = privacy.exponential(s, sensitivity=1, epsilon=1, purpose='p')",
            "rows = rng.choice(4, size=9); order = rng.permutation(4); k = rng.integers(3)",
            "picked = rng.multivariate_hypergeometric([2, 3], 2)",
            "lo = stats.beta.ppf(0.05, 1, 2)",
        ]
    )
    assert randomness_violations(good, "good.py") == []
    # the seeded source may draw from its Generator; the same line anywhere else may not
    draw = "noise = self._rng.laplace(0.0, b, size=3)"
    assert randomness_violations(draw, SEEDED_SOURCE) == []
    assert randomness_violations(draw, "workbench/dryrun/noise.py") != []


def test_no_noise_outside_opendp_in_the_package() -> None:
    """numpy.random (bar default_rng/Generator), stdlib random draws and Generator noise
    methods are banned everywhere in workbench/, widgets included, except the seeded source."""
    violations: list[str] = []
    for path in sorted(WORKBENCH.rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        violations += randomness_violations(path.read_text(encoding="utf-8"), rel)
    assert not violations, "noise must come from OpenDP:\n" + "\n".join(violations)
    assert (WORKBENCH / "widgets").is_dir() and (REPO / SEEDED_SOURCE).is_file()


def privacy_patches(source: str, filename: str) -> list[str]:
    """'file:line: what' for each run-time patch of a workbench.privacy module or object:
    ``setattr(x, …)``, ``x.attr = …`` or ``del x.attr`` where x names something imported
    from workbench.privacy, and any use of pytest's monkeypatch."""
    tree = ast.parse(source, filename=filename)
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "workbench.privacy"
        ):
            aliases |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            aliases |= {(a.asname or a.name).split(".")[0] for a in node.names
                        if a.name.startswith("workbench.privacy")}
    found: list[str] = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            root = (_dotted(node.args[0]) or "").split(".")[0]
            if node.func.id in {"setattr", "delattr"} and root in aliases:
                what = f"{node.func.id}({_dotted(node.args[0])}, …)"
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                name = _dotted(t) if isinstance(t, ast.Attribute) else None
                if name and name.split(".")[0] in aliases:
                    what = f"{name} = …"
        elif (isinstance(node, ast.Name) and node.id == "monkeypatch") or (
            isinstance(node, ast.arg) and node.arg == "monkeypatch"
        ):
            what = "monkeypatch"
        if what is not None:
            found.append(f"{filename}:{node.lineno}: {what}")  # type: ignore[attr-defined]
    return sorted(set(found))


def test_privacy_patch_scanner_catches_each_pattern() -> None:
    bad = "\n".join([
        "from workbench.privacy import mechanisms as _mech",
        "import workbench.privacy.context",
        "from workbench.privacy import PrivacyContext",
        "setattr(_mech, 'laplace_vector', f)",
        "_mech.noisy_max_index = g",
        "workbench.privacy.context.PrivacyContext.laplace = h",
        "PrivacyContext.histogram_sensitivity = lambda self: 1",
        "def t(monkeypatch): pass",
    ])
    assert {int(v.split(":")[1]) for v in privacy_patches(bad, "bad.py")} == {4, 5, 6, 7, 8}
    good = "\n".join([
        "from workbench.privacy import PrivacyContext",
        "from workbench.privacy.noise import SeededNoise",
        "ctx = PrivacyContext.simulation(0, noise=SeededNoise(1))",
        "setattr(other, 'x', 1)",
        "self.count_ = 3",
    ])
    assert privacy_patches(good, "good.py") == []


def test_nothing_outside_tests_patches_the_privacy_layer() -> None:
    """Must-show 6: noise is swapped only by passing a noise source to a context."""
    found: list[str] = []
    for folder in ("workbench", "benchmarks", "scripts"):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            found += privacy_patches(path.read_text(encoding="utf-8"), rel)
    assert not found, "\n".join(found)


def test_single_attempt_costs_one_epsilon_1(example_doc: dict, tmp_path: Path) -> None:
    """T = 1: one iteration, then the candidate or ⊥ — post-processing of one ε₁-DP step."""
    for gamma in (0.0, 0.5, 1.0):
        check_selection_parameters(gamma, 1, 0.0)
    with pytest.raises(ValueError, match="epsilon_0 must be 0 when max_iterations is 1"):
        check_selection_parameters(0.0, 1, 0.5)
    assert selection_epsilon(4.99, 0.0, max_iterations=1) == 4.99
    assert selection_epsilon(4.99, 0.0, max_iterations=2) == pytest.approx(9.98)
    example_doc["selection"] = {"gamma": 0, "max_iterations": 1, "epsilon_0": 0}
    spec = build_spec(example_doc)
    assert spec.epsilon_total == pytest.approx(4.99)  # was 9.98 with the uncapped loop
    accountant = Accountant(5.0)
    assert accountant.plan_selection(4.99, 0.0, 1, 0.0).cost == pytest.approx(4.99)
    ctx = PrivacyContext.confidential(accountant=accountant, ledger=Ledger(tmp_path / "l.jsonl"))
    steps: list[int] = []
    result = private_selection(
        lambda i: (steps.append(i) or False, i), gamma=0.0, max_iterations=1, ctx=ctx
    )
    assert steps == [1] and not result.succeeded and result.stopped_by == "cap"
    with pytest.raises(BudgetExceeded):
        Accountant(4.9).plan_selection(4.99, 0.0, 1, 0.0)
