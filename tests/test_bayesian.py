"""Issue 19: continuous columns released as numbers, the Bayesian posterior-draw family, its
mechanisms and guarantees, the sampler, the risk view and the distribution criteria."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data
from scipy import stats

from workbench.audits.posterior import censor_uw_audit
from workbench.criteria import distribution as dist
from workbench.engine import run_iteration, verify_bundle
from workbench.generators import MCMC_KIND
from workbench.generators.bayesian import ADP, MCMC_LABEL, mcmc_guarantee
from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.fast import SortedCells, clamped_total
from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import draw, log_posterior
from workbench.generators.bayesian.risk import risk_view
from workbench.generators.bayesian.sampler import warm_start
from workbench.privacy import Accountant, Ledger, PrivacyContext
from workbench.privacy.noise import (
    SamplerStream,
    SeededNoise,
)
from workbench.specification import SpecError
from workbench.transform import NumberCodec
from workbench.transform.clean import clean
from workbench.trial import bind
from workbench.validation import build_spec, load_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
#: The Censor_uw design the issue-28 design assistant starts from (its chosen example is
#: examples/us_birth_weight_continuous.json); frozen on the fly where a test needs it frozen.
EXAMPLE = REPO / "examples" / "us_birth_weight_continuous_input.json"


def _doc() -> dict:
    return json.loads(EXAMPLE.read_text(encoding="utf-8"))


@pytest.fixture
def frozen_censor_uw(tmp_path) -> Path:
    """The Censor_uw design with a short chain (:func:`_quick`), frozen (as a run needs it)."""
    path = tmp_path / "censor_uw.frozen.json"
    save_spec(_quick(_doc()), path)
    return path


def _quick(doc: dict, **hyper) -> dict:
    """The example with a short chain (tests only) and other hyperparameters."""
    grid = doc["generator"]["search_space"][0]
    grid.update({"iterations": [300], "burn_in": [300]})
    grid.update({k: [v] for k, v in hyper.items()})
    return doc


def _frame(n: int = 1500) -> pd.DataFrame:
    return pd.read_csv(shared_data("us_births_2019_singleton_sample10k.csv")).iloc[:n]


def _births(n: int) -> ModelData:
    """The first n natality records: birth weight on the working scale, (gestation group,
    sex, parity group) cells, as the example spec and the benchmarks use them."""
    frame = _frame(n)
    g = np.searchsorted([28, 32, 37, 39, 41], frame.gestation_week.to_numpy(), side="right")
    s = frame.is_female.astype(str).eq("True").to_numpy().astype(int)
    p = np.searchsorted([2, 3], frame.parity.to_numpy(), side="right")
    return ModelData((frame.birth_weight.to_numpy(float) - 3600) / (6800 / 6),
                     np.ravel_multi_index((g, s, p), (6, 2, 3)), one_hot_design((6, 2, 3)))


# --- the number transformation ---------------------------------------------------------------
def test_number_codec_is_a_grid_on_the_declared_bounds() -> None:
    codec = NumberCodec(200.0, 7000.0, 1.0)
    assert codec.size == 6801 and codec.labels[:2] == ("200", "201")
    assert codec.encode([200, 3499.6, 7000, 7001, None]).tolist() == [0, 3300, 6800, -1, -2]
    assert codec.numbers()[codec.encode([3456])].tolist() == [3456.0]
    assert codec.encode_labels(["3456", "3456.0", "x"]).tolist() == [3256, 3256, -1]
    lo, hi = codec.intervals()
    assert (lo == hi).all()  # exact values: constraints never 'depend'
    with pytest.raises(ValueError, match="resolution"):
        NumberCodec(0.0, 1.0, 0.3)


def test_the_spec_takes_number_columns_and_reports_bin_fields_on_them() -> None:
    spec = build_spec(_doc())
    codec = spec.transform("birth_weight").alternatives[0].codec
    assert isinstance(codec, NumberCodec) and codec.size == 6801
    doc = _doc()
    doc["transformations"]["columns"]["birth_weight"]["alternatives"][0]["edges"] = [1000]
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    assert "transformations.columns.birth_weight.alternatives[0]" in str(err.value)
    doc = _doc()
    doc["transformations"]["columns"]["parity"]["alternatives"][0] = {
        "name": "n", "kind": "number", "resolution": 0.5}
    with pytest.raises(SpecError, match="whole resolution"):
        build_spec(doc)


# --- mechanisms and the noise seam ------------------------------------------------------------
def test_the_clamp_follows_the_neighbour_relation() -> None:
    """Width ε/2 under replace-one, [−ε/2, ε/2] under add/remove; both Δ = ε/2, ε = 2Δ."""
    for neighbour, interval in (("replace_one", (-1.25, 1.25)), ("add_remove", (-2.5, 2.5))):
        assert mech.clamp_interval(5.0, neighbour) == interval
        assert 2 * mech.loglik_sensitivity(interval, neighbour) == pytest.approx(5.0)
    # twice the replace-one width would double its Δ: the bug the audit below catches
    assert mech.loglik_sensitivity((-2.5, 2.5), "replace_one") == 5.0


def test_posterior_draw_is_charged_before_the_stream_and_refuses_too_small_an_epsilon() -> None:
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(0))
    seen = []

    def sampler(stream: SamplerStream) -> float:
        seen.append(len(ctx.records))
        return float(stream.uniform(1)[0])

    noisy = ctx.posterior_draw(sampler, sensitivity=1.0, epsilon=2.0, purpose="p")
    assert seen == [1] and noisy.record.mechanism == "posterior_draw"
    assert noisy.record.epsilon == 2.0 and noisy.record.sensitivity == 1.0
    again = PrivacyContext.simulation(0, noise=SeededNoise(0))
    assert again.posterior_draw(sampler, sensitivity=1.0, epsilon=2.0, purpose="p").value == \
        noisy.value  # a seeded public source replays the stream
    seen.clear()
    with pytest.raises(ValueError, match="2·sensitivity"):
        ctx.posterior_draw(sampler, sensitivity=1.0, epsilon=1.5, purpose="p")
    assert len(ctx.records) == 1 and seen == []  # refused: nothing charged, nothing drawn
    adp = ctx.posterior_draw(sampler, sensitivity=1.0, epsilon=1.0, purpose="p", strict=False)
    assert adp.record.mechanism == "pseudo_posterior_adp"


def test_censor_uw_single_draw_audit_passes_at_the_width_and_is_flagged_at_twice() -> None:
    """Must-show 2: neighbouring tiny datasets, events on the draw."""
    at_width = censor_uw_audit(1.0)
    assert not at_width.violates, at_width.summary()
    assert at_width.point_estimate > 0.6 * 2.0  # the pair comes close to ε = 2
    doubled = censor_uw_audit(2.0)
    assert doubled.violates, doubled.summary()


def test_fast_clamped_total_equals_the_record_by_record_sum() -> None:
    rng = np.random.default_rng(3)
    cells = rng.integers(0, 6, 3000)
    data = ModelData(rng.normal(0, 0.5, 3000) + 0.1 * cells, cells, one_hot_design((2, 3)))
    theta = rng.normal(0, 0.3, (5, 5))
    theta[:, -1] = rng.normal(-0.7, 0.5, 5)
    sorted_cells = SortedCells.build(data)
    for interval in ((-1.25, 1.25), (-0.5, 0.5), (-3.0, -1.0), (0.5, 2.0)):
        slow = np.clip(MODELS["normal_linear"].loglik(theta, data), *interval).sum(axis=1)
        assert clamped_total(theta, data, interval, sorted_cells) == pytest.approx(slow)
    unclamped = MODELS["normal_linear"].loglik(theta, data).sum(axis=1)  # the guide's total
    assert clamped_total(theta, data, (-np.inf, np.inf), sorted_cells) == pytest.approx(unclamped)


def test_censored_birth_weight_chains_converge_on_a_small_example() -> None:
    """Regression guard for issue 19 must-show 4: a weighted, clamped normal model with sparse
    predictor cells (3000 records, 36 cells) has a rippled, partly flat posterior; the kernel
    cycle (global, curvature, wide jump) mixes it, the old single random walk gave R̂ 4.16,
    ESS 6 here. Deterministic: a seeded stream."""
    data = _births(3000)
    weights = {"knots": [-3.0, -1.5, 0.0, 1.5, 3.0], "alpha": [0.1, 0.6, 1.0, 0.6, 0.1]}
    fit = draw(MODELS["normal_linear"], data, "censor_w", 5.0, "replace_one", SamplerStream(1),
               iterations=3000, burn_in=1500, weight_function=weights, count_censored=False)
    diag = fit.chains.diagnostics()
    assert diag["rhat_max"] < 1.01 and diag["ess_min"] >= 200, diag
    assert 0.1 < diag["acceptance"] < 0.4 and len(fit.theta) == 10


def test_the_warm_start_leaves_the_clamped_plateau_the_public_start_stops_on() -> None:
    """Issue 19 convergence: from the public start, L-BFGS on the clamped posterior of the
    10k natality sample stops with the < 28-week cell's mean near the overall mean (a
    plateau/bump: its records are clamped there), 68 nats below the mode; the guide (the
    unclamped posterior's mode) starts it in the main basin. Deterministic: no stream."""
    data = _births(10_000)
    model = MODELS["normal_linear"]
    clamped = log_posterior(model, data, None, (-1.25, 1.25))
    preterm = data.y[data.cells == 0].mean()  # the reference cell: < 28 weeks, male, parity 1
    stuck, _ = warm_start(clamped, model.initial(data))
    mode, cov = warm_start(clamped, model.initial(data), log_posterior(model, data, None, None))
    assert preterm < -2 and stuck[0] > -1.5  # the old start: far from its own cell's records
    assert abs(mode[0] - preterm) < 0.5
    assert clamped(mode[None])[0] > clamped(stuck[None])[0] + 20
    assert np.all(np.linalg.eigvalsh(cov) > 0)


def test_a_fit_that_did_not_mix_with_the_old_sampler_converges() -> None:
    """Issue 19 convergence: Censor_uw on the 10k natality sample, seed 3, 3000 + 1500
    iterations gave R̂ 5.64, ESS 6 with the random-walk cycle from the plateau start
    (benchmarks/bayesian_convergence.py prints the seed × slice grid at the spec's counts)."""
    fit = draw(MODELS["normal_linear"], _births(10_000), "censor_uw", 5.0, "replace_one",
               SamplerStream(3), iterations=3000, burn_in=1500, count_censored=False)
    diag = fit.chains.diagnostics()
    assert diag["rhat_max"] < 1.01 and diag["ess_min"] >= 500, diag
    assert 0.1 < diag["acceptance"] < 0.5


def test_risk_weights_and_the_local_epsilon_of_a_pseudo_posterior() -> None:
    assert mech.risk_weights(np.array([1.0, 2.0, 3.0, np.inf])).tolist() == [1, 0.5, 0, 0]
    terms = np.array([[1.0, -4.0], [0.5, -2.0]])
    assert mech.local_epsilon(terms, np.array([1.0, 0.5])) == 4.0
    assert mech.epsilon_weights(terms, np.array([1.0, 0.5]), 3.0).tolist() == [1.0, 0.0]


def test_beta_simulation_censors_about_as_many_records_as_the_paper() -> None:
    """One Beta(0.5, 3) dataset of 2000 at ε = 5 (add/remove, as the paper): the paper's
    median is 244 (benchmarks/bayesian_simulation.py prints the 100-dataset figures)."""
    y = stats.beta.rvs(0.5, 3, size=2000, random_state=np.random.default_rng(11))
    data = ModelData(y, np.zeros(2000, np.int64), one_hot_design(()))
    fit = draw(MODELS["beta"], data, "censor_uw", 5.0, "add_remove", SamplerStream(1),
               iterations=800, burn_in=800)
    assert 150 <= fit.censored <= 350
    assert fit.chains.rhat.max() < 1.05 and 0.1 < fit.chains.acceptance < 0.5
    a, b = np.exp(fit.theta)
    assert 0.3 < a < 1.5 and 2 < b < 8  # censoring tempers, never leaves the neighbourhood
    view = risk_view(MODELS["beta"], data, [5.0, 3.0], "add_remove", iterations=500,
                     burn_in=500)
    assert view.counts()[3.0] > view.counts()[5.0] > 0 and "ε = 5" in view.table()


# --- the family in the spec, the engine and the budget ---------------------------------------
def test_guarantees_labels_and_asymptotic_dp_needs_the_budget_flag() -> None:
    spec = build_spec(_doc())
    config = next(spec.configurations())
    promise = bind(spec, config).generator().guarantee()
    assert promise == mcmc_guarantee(20000, 5000) and promise.kind == MCMC_KIND
    assert promise.label == MCMC_LABEL == ("ε-DP for an exact posterior draw; released from "
                                           "MCMC (R̂, ESS of a re-run on the released records "
                                           "in the bundle)")
    assert not promise.is_pure and "finite adaptive MCMC" in promise.caveat
    # issue 34: the proof covers an exact draw, not what ran: a machine reader sees it
    assert (promise.strict, promise.proven_for_release, promise.opt_in) == (
        False, False, "allow_mcmc_draw")
    assert ADP.label == "aDP, not a guarantee" and not ADP.strict
    assert (ADP.proven_for_release, ADP.opt_in) == (False, "allow_asymptotic_dp")
    doc = _doc()
    doc["generator"]["search_space"][0]["mechanism"] = ["weighted"]
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    assert "budget.allow_asymptotic_dp" in str(err.value)
    doc["budget"]["allow_asymptotic_dp"] = True
    spec = build_spec(_quick(doc))
    generator = bind(spec, next(spec.configurations())).generator()
    assert generator.guarantee() == ADP
    # even with the flag, the context decides nothing: only a spec that allows it may run
    denied = build_spec(_quick(_doc(), mechanism="weighted") | {"budget": {
        **_doc()["budget"], "allow_asymptotic_dp": True}})
    assert denied.budget.allow_asymptotic_dp


def test_a_censored_draw_needs_the_mcmc_opt_in(tmp_path) -> None:
    """Issue 24: the censored mechanisms are ε-DP for an exact draw, released from MCMC; a
    spec opts in (budget.allow_mcmc_draw), the validator refuses it otherwise, and so does a
    confidential fit (before anything is charged)."""
    doc = _doc()
    assert doc["budget"]["allow_mcmc_draw"] is True  # the example opts in
    del doc["budget"]["allow_mcmc_draw"]
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    (problem,) = [p for p in err.value.problems if p.path == "budget.allow_mcmc_draw"]
    assert MCMC_LABEL in problem.message and "set allow_mcmc_draw to true" in problem.message
    spec = build_spec(_quick(_doc()))
    config = next(spec.configurations())
    generator = bind(spec, config).generator()
    generator._allow_mcmc = False  # as bound from a spec without the flag
    ctx = PrivacyContext.confidential(accountant=Accountant(10.0),
                                      ledger=Ledger(tmp_path / "ledger.jsonl"))
    codes = spec.table_codec(config).encode(clean(_frame(200), spec))
    with pytest.raises(ValueError, match="allow_mcmc_draw"):
        generator.fit(codes, spec.table_codec(config).domain, 5.0, ctx)
    assert ctx.records == []


def test_release_diagnostics_rerun_the_sampler_on_the_released_records(tmp_path) -> None:
    """R̂ and ESS for the bundle come from the same sampler re-run on the RELEASED codes
    (public); the confidential chain's own go to the enclave ledger only."""
    spec = build_spec(_quick(_doc()))
    config = next(spec.configurations())
    table = spec.table_codec(config)
    codes = table.encode(clean(_frame(), spec))
    ledger = Ledger(tmp_path / "enclave.jsonl", run_id="r")
    ctx = PrivacyContext.simulation(3, noise=SeededNoise(3), ledger=ledger)
    generator = bind(spec, config).generator().fit(codes, table.domain, 5.0, ctx)
    ledger.close()
    (event,) = [json.loads(x) for x in (tmp_path / "enclave.jsonl").read_text().splitlines()
                if json.loads(x)["event"] == "posterior_diagnostics"]
    assert event["enclave_only"] and event["rhat_max"] > 0 and event["kept"] == 300
    released = generator.sample(len(codes), np.random.default_rng(0))
    found = bind(spec, config).generator().release_diagnostics(
        released, table.domain, 5.0, np.random.default_rng(1))
    assert found["kind"] == "mcmc" and found["chains"] == 2 and found["kept"] == 300
    assert found["burn_in"] == 300 and 1.0 <= found["rhat_max"] < 1.5 and found["ess_min"] > 0
    assert "released records" in found["computed_on"]


def test_a_confidential_fit_of_a_pseudo_posterior_is_refused_without_the_flag(tmp_path) -> None:
    spec = build_spec(_quick(_doc()))
    generator = bind(spec, next(spec.configurations())).generator()
    generator.mechanism = "weighted"
    ctx = PrivacyContext.confidential(accountant=Accountant(10.0),
                                      ledger=Ledger(tmp_path / "ledger.jsonl"))
    codes = spec.table_codec(next(spec.configurations())).encode(clean(_frame(200), spec))
    with pytest.raises(ValueError, match="allow_asymptotic_dp"):
        generator.fit(codes, spec.table_codec(next(spec.configurations())).domain, 5.0, ctx)
    assert ctx.records == []


def test_the_family_spends_exactly_epsilon_and_releases_numbers_within_the_bounds() -> None:
    spec = build_spec(_quick(_doc()))
    config = next(spec.configurations())
    table = spec.table_codec(config)
    codes = table.encode(clean(_frame(), spec))
    for neighbour, half in (("replace_one", 1.0), ("add_remove", 2.0)):
        ctx = PrivacyContext.simulation(1, noise=SeededNoise(1), neighbour=neighbour)
        generator = bind(spec, config).generator().fit(codes, table.domain, 5.0, ctx)
        assert ctx.epsilon_recorded() == pytest.approx(5.0)
        assert [r.mechanism for r in ctx.records] == ["discrete_laplace", "posterior_draw"]
        assert generator.posterior_.interval == (-half, half)  # ε_draw = 4, per relation
    synth = generator.sample(3000, np.random.default_rng(0))
    weights = table.codec("birth_weight").numbers()[synth[:, table.names.index("birth_weight")]]
    assert weights.min() >= 200 and weights.max() <= 7000
    assert 2500 < np.median(weights) < 4000
    frame = table.decode(synth)
    assert frame["birth_weight"].map(float).between(200, 7000).all()


def test_run_iteration_evaluates_the_distribution_criteria_with_dp() -> None:
    spec = build_spec(_quick(_doc()))
    config = next(spec.configurations())
    frame = clean(_frame(), spec)
    ctx = PrivacyContext.simulation(2, noise=SeededNoise(2))
    result = run_iteration(bind(spec, config), frame, ctx)
    kinds = {r.kind: r for r in result.results}
    assert {"max_ecdf", "avg_ecdf", "mean_error", "median_error", "q15_error",
            "q90_error"} <= set(kinds)
    assert kinds["median_error"].mechanism == "exponential"
    assert kinds["mean_error"].sensitivity == pytest.approx(6800 / len(frame))
    assert kinds["avg_ecdf"].sensitivity == pytest.approx(2.5 / len(frame))


def test_quantile_error_worked_example() -> None:
    values = np.array([0.0, 5.0, 10.0])
    assert dist.quantile_of(values, np.array([1.0, 2.0, 1.0]), 0.5) == 5.0
    assert dist.quantile_of(values, np.array([1.0, 2.0, 1.0]), 0.9) == 10.0
    assert dist.quantile_scores(values, np.array([1.0, 2.0, 1.0]), values, 0.5).tolist() == \
        [-1.0, -1.0, -2.0]
    assert dist.mean_of(values, np.array([1.0, 2.0, 1.0])) == 5.0


def test_perturbed_histogram_bins_number_columns_and_draws_inside_the_bin() -> None:
    doc = _doc()
    doc["generator"] = {"family": "perturbed_histogram",
                        "search_space": [{"number_bins": [68]}]}
    spec = build_spec(doc)
    config = next(spec.configurations())
    table = spec.table_codec(config)
    codes = table.encode(clean(_frame(), spec))
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(0))
    generator = bind(spec, config).generator().fit(codes, table.domain, 5.0, ctx)
    assert ctx.epsilon_recorded() == pytest.approx(5.0)
    assert generator.joint_.size == 6 * 2 * 3 * 68  # equal-width bins, not 6801 values
    synth = generator.sample(5000, np.random.default_rng(0))
    grams = table.codec("birth_weight").numbers()[synth[:, 3]]
    assert len(np.unique(grams)) > 500  # uniform inside the bins, not the bins' midpoints


@pytest.mark.slow
def test_the_frozen_example_runs_verifies_and_names_the_mcmc_caveat(tmp_path) -> None:
    """Must-show 5 of issue 19 in small, with issue 24's label: workbench run on natality rows,
    numbers within the bounds, verify passes and flags 'ε-DP for an exact posterior draw;
    released from MCMC', R̂ and ESS in diagnostics.json, the README says it."""
    from workbench.cli.main import main

    # The release path is what this test checks, not the criteria: at 1,200 rows and a short
    # chain the example's quantile and avg-ECDF criteria fail most runs (their DP values swing
    # by hundreds of grams and 0.1-0.25), which used to end the test early with no assertion on
    # a release; the max-ECDF and mean criteria are kept, at three times their thresholds
    # (8 of 8 runs released).
    doc = _quick(_doc())
    doc["criteria"] = [c for c in doc["criteria"] if c["kind"] in ("max_ecdf", "mean_error")]
    doc["budget"].pop("epsilon_criteria", None)
    for criterion in doc["criteria"]:
        criterion["threshold"] *= 3
    spec_path = tmp_path / "wide.frozen.json"
    save_spec(doc, spec_path)
    assert load_spec(spec_path).frozen and doc["generator"]["family"] == "bayesian"
    data = tmp_path / "births.csv"
    _frame(1200).to_csv(data, index=False)
    out = tmp_path / "run"
    code = main(["run", str(spec_path), str(data), "--out", str(out),
                 "--budget-store", str(tmp_path / "store")])
    release = out / "release"
    assert code == 0, json.loads((out / "status.json").read_text())
    frame = pd.read_csv(release / "release.csv")
    assert frame["birth_weight"].between(200, 7000).all()
    guarantee = json.loads((release / "guarantee.json").read_text())
    assert guarantee["label"] == MCMC_LABEL and guarantee["kind"] == MCMC_KIND
    readme = (release / "README.md").read_text(encoding="utf-8")
    assert MCMC_LABEL in readme and "Convergence (diagnostics.json): R̂ = " in readme
    diagnostics = json.loads((release / "diagnostics.json").read_text())
    assert diagnostics["chains"] == 2 and diagnostics["rhat_max"] >= 1.0
    check = verify_bundle(release)
    assert check.ok, check.problems
    (flag,) = check.flags
    assert flag.startswith(MCMC_LABEL) and "finite MCMC chain" in flag and "R̂ = " in flag
    assert main(["verify", str(release)]) == 0


def test_faithfulness_tolerance_is_a_distance_in_the_columns_units() -> None:
    from workbench.faithfulness import row_edges
    from workbench.faithfulness.cost import FaithfulnessCost

    spec = build_spec(_doc())
    cost = FaithfulnessCost.from_spec(spec, next(spec.configurations()))
    bw = cost.names.index("birth_weight")
    real = np.zeros((1, 4), dtype=np.int64)
    near, far = real.copy(), real.copy()
    near[0, bw], far[0, bw] = 100, 101  # grams on the 1 g grid: tolerance 100 g costs α
    assert row_edges(real, near, cost).nnz == 1 and row_edges(real, far, cost).nnz == 0
    doc = _doc()
    doc["faithfulness"]["tolerance"] = {"parity": 1}
    doc["faithfulness"]["exact"] = ["gestation_week", "is_female"]
    with pytest.raises(SpecError, match=r"faithfulness\.tolerance\.parity"):
        build_spec(doc)


def test_describe_datasheet_report_and_both_reviews_name_the_mcmc_caveat(
        frozen_censor_uw) -> None:
    """Issue 24: the words go through report.guarantee everywhere (describe, README.md,
    report.html, the spec review's budget, the release review with the bundle's R̂ and ESS)."""
    from workbench.report import describe_spec
    from workbench.report.datasheet import epsilon_words, total_loss_line
    from workbench.report.guarantee import guarantee_html, guarantee_markdown
    from workbench.widgets.dashboards.budget_section import budget_html as spec_budget
    from workbench.widgets.dashboards.release_review import budget_html as release_budget

    spec = load_spec(frozen_censor_uw)
    promise = bind(spec, next(spec.configurations())).generator().guarantee().as_dict()
    assert MCMC_LABEL in describe_spec(spec)
    diagnostics = {"rhat_max": 1.0004, "ess_min": 12000.0, "acceptance": 0.27, "chains": 2,
                   "kept": 20000, "burn_in": 5000}
    md = "\n".join(guarantee_markdown(promise, diagnostics))
    assert MCMC_LABEL in md and "finite adaptive MCMC chain" in md and "R̂ = 1.0004" in md
    assert "if the posterior draw were exact" in total_loss_line(5.3, promise)
    assert epsilon_words(5.3, promise).startswith("For an exact posterior draw")
    page = guarantee_html(promise, diagnostics=diagnostics)
    assert "wb-guarantee-diagnostics" in page and "ESS = 12,000" in page
    assert MCMC_LABEL in spec_budget(spec) and "finite adaptive MCMC" in spec_budget(spec)
    review = release_budget({"epsilon_total": 5.3}, spec, None, promise, diagnostics)
    assert MCMC_LABEL in review and "R̂ = 1.0004" in review
