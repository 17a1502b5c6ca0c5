"""The design assistant (``workbench design``): per-criterion ε, ε_gen and mode from the proxy."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.criteria import kinds
from workbench.design.assistant import design
from workbench.design.rules import needed_epsilon, round_up
from workbench.dryrun.executors import InlineExecutor
from workbench.evidence.sampler import sample_proxy
from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.mechanisms import laplace_cdf
from workbench.specification.document import forecast_hash
from workbench.trial import BoundCriterion, bind
from workbench.validation import build_spec, load_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.frozen.json"
LENIENT = {"marginals": 0.05, "mean_gestation": 3.0, "regression_coefficients": 5000.0,
           "regression_mae": 400.0, "faithfulness": 0.9}


def _document(**thresholds: float) -> dict:
    """The lean design with a fast generator and lenient thresholds (a small public test)."""
    doc = load_spec(LEAN).to_document()
    keep = {**LENIENT, **thresholds}
    doc["criteria"] = [dict(c, threshold=keep[c["id"]]) for c in doc["criteria"]
                       if c["id"] in keep]
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    doc["generator"] = {"family": "privbayes", "search_space": [{"degree": [2]}]}
    doc["face_privacy"]["min_count"] = [1]
    doc["selection"] = {"gamma": 0, "max_iterations": 1, "epsilon_0": 0}
    doc["schema"]["expected_n"] = [15000, 20000]
    return doc


@pytest.fixture(scope="module")
def proxy():
    return sample_proxy(25000, seed=4)


@pytest.fixture(scope="module")
def result(proxy):
    return design(build_spec(_document(marginals=0.08)), proxy, epsilon_generators=(1.0, 3.0),
                  divisors=(2.0, 10.0), repetitions=2, draws=3, seed=1, target_p=0.5,
                  check_repetitions=3, scenarios=("proxy", "rare thinned"),
                  executor=InlineExecutor())


# --- the rules -----------------------------------------------------------------------------
def test_needed_epsilon_keeps_sigma_below_margin_over_k(example_doc: dict) -> None:
    spec = build_spec(example_doc)
    faith = spec.criterion("faithfulness")  # threshold 5%
    delta = 1 / 95_000
    eps = needed_epsilon(faith, 0.04, delta, 10)
    assert eps == round_up(10 * math.sqrt(2) * delta / 0.01)
    assert math.sqrt(2) * delta / eps <= 0.01 / 10 + 1e-15
    assert needed_epsilon(faith, 0.05, delta, 10) == math.inf  # no margin
    assert round_up(0.0123) == 0.013 and round_up(1.41) == 1.5


def test_relative_one_way_rule_accounts_for_t_prime(example_doc: dict) -> None:
    """At the ε the rule gives, σ ≤ (T′ − v)/K with T′ = λ + (Δ/ε)·ln 2p (Prop. 6)."""
    spec = build_spec(example_doc)
    rel = spec.criterion("relative_1way")
    delta, v, k = 0.036, 1.2, 4
    eps = needed_epsilon(rel, v, delta, k)
    t_prime = 2.0 + (delta / eps) * math.log(2 * 0.05)
    assert math.sqrt(2) * delta / eps <= (t_prime - v) / k + 1e-12


def pass_probability(criterion, epsilon, exact, delta, details):
    """The design assistant's P(pass): the criterion bound to its kind, at ``epsilon``."""
    at = dataclasses.replace(criterion, epsilon=float(epsilon))
    return BoundCriterion(at, kinds.get(at.kind), ()).pass_probability(exact, delta, details)


def test_pass_probability_is_the_laplace_tail(example_doc: dict) -> None:
    spec = build_spec(example_doc)
    faith = spec.criterion("faithfulness")
    assert pass_probability(faith, 0.01, 0.05, 1e-3, {}) == pytest.approx(0.5)
    assert pass_probability(faith, 0.01, 0.04, 1e-3, {}) == pytest.approx(
        laplace_cdf(0.01, 0.1))
    # relative 1-way: a value clipped at λ passes with the spec's false-pass probability
    rel = spec.criterion("relative_1way")
    details = {"lambda": 2.0}
    assert pass_probability(rel, 0.3, 5.0, 0.029, details) == pytest.approx(0.05)
    assert kinds.get("relative_one_way").adjusted_threshold(rel, 0.029, details) < 2


def test_tstr_is_priced_by_the_sigma_of_its_value_not_the_matrix_delta(proxy) -> None:
    """Issue 28: TSTR's noise is Laplace(Δ/ε) on each cell of the confusion matrix (Δ = 2), its
    value a ratio of those counts, so σ·ε of the value is about Δ/n — measured by simulation,
    not √2·Δ (which priced a TSTR criterion at ε ≈ 55 on Adult)."""
    from workbench.design.jobs import sigma_epsilon as _sigma_epsilon
    from workbench.evidence.prepare import prepare_proxy

    doc = _document()
    doc["criteria"].append(kinds.get("tstr").template("tstr", doc))
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    spec = build_spec(doc)
    trial = bind(spec, next(spec.configurations()))
    frame = prepare_proxy(spec, proxy).head(3000)
    real = trial.encode(frame)
    assert trial.criterion("tstr").kind.tags.sigma_by_simulation
    sigma_eps = _sigma_epsilon(trial, frame, real, real, "tstr", 10, 0)
    assert 0 < sigma_eps < 0.1 < math.sqrt(2) * 2  # ~Δ/n·(a few), far below √2·Δ
    assert needed_epsilon(spec.criterion("tstr"), 0.7, 2.0, 3, sigma_eps) < 3


# --- the assistant -------------------------------------------------------------------------
def test_design_rehearses_at_the_low_end_of_expected_n(result) -> None:
    assert result.n == 15000
    assert result.document["selection"]["forecast"]["n"] == 15000
    assert result.document["schema"]["expected_n"] == [15000, 20000]


def test_every_alternative_is_priced_by_the_budget_plan(result) -> None:
    assert len(result.alternatives) == 4
    priced = [a for a in result.alternatives if all(map(math.isfinite, a.epsilons.values()))]
    assert priced
    for a in priced:
        assert 0.0 <= a.p <= 1.0
        loop = sum(a.epsilons[c] for c in a.epsilons if c != "regression_coefficients")
        once = a.epsilons["regression_coefficients"]
        factor = 1 if a.mode == "single attempt" else None
        plan = BudgetPlan(a.epsilon_generator, loop, once, 0.0, factor)
        assert a.epsilon_total == pytest.approx(plan.epsilon_total)
        # the cheaper mode at p: a single attempt iff ε₁/p < 2ε₁
        assert (a.mode == "single attempt") == (a.p > 0.5)
    # a larger K asks for less noise: every criterion's ε grows
    for g in (1.0, 3.0):
        by_k = {a.divisor: a for a in result.alternatives if a.epsilon_generator == g}
        assert all(by_k[10.0].epsilons[c] >= by_k[2.0].epsilons[c] for c in by_k[2.0].epsilons
                   if math.isfinite(by_k[2.0].epsilons[c]))


def test_the_chosen_design_is_the_cheapest_reaching_the_target(result) -> None:
    assert result.reached
    feasible = sorted((a for a in result.alternatives if a.p >= result.target_p),
                      key=lambda a: a.epsilon_total)
    # the drafts are rehearsed cheapest first; the first whose rehearsal reaches the target
    # is written (a cheaper one the model liked may fail as frozen: it is skipped)
    assert result.chosen in feasible[:3]
    spec = build_spec(result.document)  # the draft is a valid spec
    assert spec.epsilon_total == pytest.approx(result.chosen.epsilon_total)
    assert spec.budget.epsilon_generator == result.chosen.epsilon_generator
    assert {c.id: c.epsilon for c in spec.criteria} == pytest.approx(result.chosen.epsilons)
    # issue 26: the recorded forecast is the rehearsal of exactly this draft
    forecast = spec.selection.forecast
    assert forecast.p == pytest.approx(result.forecast.scenarios["proxy"], abs=1e-6)
    assert (forecast.low, forecast.high) == pytest.approx((result.forecast.low,
                                                          result.forecast.high), abs=1e-6)
    assert forecast.low >= result.target_p and forecast.interval[0] <= forecast.p
    assert forecast.spec_sha256 == forecast_hash(result.document)
    assert spec.selection.max_iterations == (1 if result.chosen.mode == "single attempt"
                                             else None)
    weights = spec.criterion("regression_coefficients").params["statistic_weights"]
    assert weights == result.tuned["regression_coefficients"]["statistic_weights"] and weights
    assert "← chosen" in result.table()


def test_an_unreachable_target_is_reported_not_hidden(proxy) -> None:
    res = design(build_spec(_document(faithfulness=0.0001)), proxy, 2000,
                 epsilon_generators=(1.0,), divisors=(3.0,), repetitions=1, draws=2,
                 check_repetitions=2, scenarios=("proxy",), executor=InlineExecutor())
    assert not res.reached and res.chosen.p == 0.0
    assert "∞: no margin" in res.criteria_table(build_spec(_document(faithfulness=0.0001)))
    build_spec(res.document)  # still a valid draft (the unreachable criterion keeps its ε)


@pytest.mark.slow
def test_cli_prints_the_derivation_and_writes_the_draft(tmp_path: Path, proxy,
                                                        capsys: pytest.CaptureFixture) -> None:
    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_document()))
    proxy.to_csv(proxy_path, index=False)
    draft, frozen = tmp_path / "draft.json", tmp_path / "draft.frozen.json"
    code = main(["design", str(spec_path), str(proxy_path), "--n", "2000:3000",
                 "--target-p", "0.5", "--eps-gen", "2", "--divisors", "3", "--repetitions",
                 "1", "--draws", "2", "--check-repetitions", "2", "--quiet", "--out", str(draft),
                 "--freeze", str(frozen), "--workers", "0"])
    out = capsys.readouterr().out
    assert "design at n = 2,000" in out and "| ε_gen | K |" in out and "chosen:" in out
    assert "ε_total = " in out and "| criterion | threshold |" in out
    if code == 2:  # issue 36: a draft below the target is neither written nor frozen
        assert "binding criterion: " in out and not draft.exists() and not frozen.exists()
        return
    assert code == 0
    assert build_spec(json.loads(draft.read_text())).selection.forecast.n == 2000
    assert load_spec(frozen, require_frozen=True).selection.forecast.low >= 0.5


def test_cli_design_anchors_its_rehearsal_on_published_tables(tmp_path: Path, proxy,
                                                              capsys: pytest.CaptureFixture
                                                              ) -> None:
    """`workbench design --published-tables`: every draft is rehearsed on the proxy raked to
    the registry's tables, as `dryrun --robust --published-tables` does, and the recorded
    forecast is that rehearsal (its one scenario, the proxy named as raked); a table that does
    not fit the spec is refused naming its column, before any rehearsal. Issue 36: this draft
    does not reach the target on the raked proxy, so the CLI exits 2 and writes nothing."""
    import numpy as np

    from workbench.evidence.prepare import as_evidence, prepare_proxy
    from workbench.evidence.published import read_published_tables
    from workbench.trial import bind

    doc = _document()
    spec = build_spec(doc)
    codes = bind(spec, next(iter(spec.configurations()))).encode(prepare_proxy(spec, proxy))
    column = spec.column_names[1]
    counts = np.bincount(codes[:, 1]).tolist()
    counts[0] += 50  # the registry has more of the first cell than the proxy
    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    tables = tmp_path / "tables.json"
    spec_path.write_text(json.dumps(doc))
    proxy.to_csv(proxy_path, index=False)
    tables.write_text(json.dumps({"source": "abstract 2015", "counts": {column: counts}}))
    draft = tmp_path / "draft.json"
    base = ["design", str(spec_path), str(proxy_path), "--n", "2000", "--target-p", "0.5",
            "--eps-gen", "2", "--divisors", "3", "--repetitions", "1", "--draws", "2",
            "--check-repetitions", "2", "--quiet", "--workers", "0"]
    code = main([*base, "--published-tables", str(tables), "--out", str(draft)])
    out = capsys.readouterr().out
    assert code == 2 and not draft.exists()
    assert "p 0.00 on the proxy raked to the published tables" in out
    assert "binding criterion: 'marginals' passes 0% of the rehearsals on 'published'" in out
    evidence = as_evidence(spec, str(proxy_path), read_published_tables(spec, str(tables)))
    res = design(spec, evidence, 2000, target_p=0.5, epsilon_generators=(2.0,),
                 divisors=(3.0,), repetitions=1, draws=2, check_repetitions=2,
                 executor=InlineExecutor())
    recorded = build_spec(res.document).selection.forecast
    assert recorded.proxy == "proxy.csv raked to abstract 2015"
    scenarios = res.document["selection"]["forecast"]["range"]["scenarios"]
    assert set(scenarios) == {"published"}
    assert recorded.p == recorded.low == scenarios["published"]
    tables.write_text(json.dumps({"counts": {column: counts[:-1]}}))
    assert main([*base, "--published-tables", str(tables)]) == 2
    assert f"column '{column}' needs {len(counts)} shares" in capsys.readouterr().err


# --- the Budget tab's button ---------------------------------------------------------------
def test_budget_tab_button_designs_and_applies_the_draft(proxy) -> None:
    from conftest import widget_by_class

    from workbench.widgets.editors.budget_planner import BudgetPlanner
    from workbench.widgets.editors.design_panel import DesignPanel
    from workbench.widgets.model.lab import ProxyLab
    from workbench.widgets.model.session import Session

    session = Session(_document(marginals=0.08), proxy)
    lab = ProxyLab(proxy)
    planner = BudgetPlanner(session, lab)
    assert widget_by_class(planner.widget, "wb-design-button") is planner.design.button
    panel = DesignPanel(session, lab, epsilon_generators=(3.0,), divisors=(10.0,),
                        repetitions=1, draws=2, check_repetitions=2, scenarios=("proxy",),
                        executor=InlineExecutor())
    panel.target.value = 0.5
    panel.button.click()
    assert panel.result is not None and "← chosen" in panel.output.value
    assert not panel.apply_button.disabled
    panel.apply_button.click()
    chosen = panel.result.chosen
    assert session.spec.budget.epsilon_generator == chosen.epsilon_generator
    assert session.spec.selection.forecast.p == pytest.approx(
        panel.result.forecast.scenarios["proxy"], abs=1e-6)
    assert session.undo() and session.spec.selection.forecast is None


def test_budget_tab_cannot_apply_a_draft_below_the_target(proxy) -> None:
    """Issue 36: the app keeps the CLI's word: an unreached draft is explained, not applied."""
    from workbench.widgets.editors.design_panel import DesignPanel
    from workbench.widgets.model.lab import ProxyLab
    from workbench.widgets.model.session import Session

    doc = _document(faithfulness=0.0001)
    doc["schema"]["expected_n"] = [2000, 3000]
    session = Session(doc, proxy)
    panel = DesignPanel(session, ProxyLab(proxy), epsilon_generators=(1.0,), divisors=(3.0,),
                        repetitions=1, draws=2, check_repetitions=2, scenarios=("proxy",),
                        executor=InlineExecutor())
    panel.target.value = 0.5
    panel.button.click()
    assert panel.result is not None and not panel.result.reached
    assert panel.apply_button.disabled
    assert "so the draft cannot be applied" in panel.output.value
    assert "binding criterion: &#x27;faithfulness&#x27;" in panel.output.value


def test_budget_tab_button_anchors_on_published_tables_or_names_the_bad_column(
        tmp_path: Path, proxy) -> None:
    """The design panel's published-tables path: a file that does not fit is reported naming
    its column and nothing is designed; a fitting one anchors the rehearsal (its one
    scenario) and the applied draft's forecast names the tables."""
    import numpy as np

    from workbench.evidence.prepare import prepare_proxy
    from workbench.trial import bind
    from workbench.widgets.editors.design_panel import DesignPanel
    from workbench.widgets.model.lab import ProxyLab
    from workbench.widgets.model.session import Session

    session = Session(_document(), proxy)
    spec = session.spec
    codes = bind(spec, next(iter(spec.configurations()))).encode(prepare_proxy(spec, proxy))
    column = spec.column_names[1]
    counts = np.bincount(codes[:, 1]).tolist()
    tables = tmp_path / "tables.json"
    tables.write_text(json.dumps({"source": "abstract 2015", "counts": {column: counts[:-1]}}))
    panel = DesignPanel(session, ProxyLab(proxy), epsilon_generators=(3.0,), divisors=(10.0,),
                        repetitions=1, draws=2, check_repetitions=2, executor=InlineExecutor())
    panel.target.value = 0.5
    panel.tables.value = str(tables)
    panel.button.click()
    assert panel.result is None and panel.apply_button.disabled
    assert f"column &#x27;{column}&#x27; needs {len(counts)} shares" in panel.output.value
    tables.write_text(json.dumps({"source": "abstract 2015", "counts": {column: counts}}))
    panel.button.click()
    assert panel.result is not None and "raked to the published tables" in panel.output.value
    assert set(panel.result.forecast.scenarios) == {"published"}
    panel.apply_button.click()
    assert session.spec.selection.forecast.proxy == "the proxy raked to abstract 2015"


def test_the_designed_lean_example_records_its_derivation() -> None:
    """examples/israel_births_2014_lean_designed.*: made by `workbench design` (a new file; the
    earlier examples keep their hashes)."""
    designed = load_spec(REPO / "examples" / "israel_births_2014_lean_designed.frozen.json",
                         require_frozen=True)
    draft = build_spec(json.loads(
        (REPO / "examples" / "israel_births_2014_lean_designed.json").read_text()))
    assert designed.sha256 == draft.sha256
    assert designed.selection.max_iterations == 1 and designed.selection.forecast.n == 95_000
    assert designed.epsilon_total <= 4.1
    assert designed.expected_n.low == 95_000
    assert load_spec(LEAN).sha256 == json.loads(LEAN.read_text())["frozen"]["sha256"]


def _bin_shares(spec, frame) -> dict[str, list[float]]:
    """Each column's share of the records per released bin (the spec's first configuration)."""
    import numpy as np

    table = spec.table_codec(next(spec.configurations()))
    codes = table.encode(frame)
    return {name: (np.bincount(codes[:, j], minlength=size) / len(codes)).tolist()
            for j, (name, size) in enumerate(zip(spec.column_names, table.domain.sizes,
                                                 strict=True))}


def test_the_robust_lean_example_merges_every_rare_tail_of_the_lean_design() -> None:
    """examples/israel_births_2014_lean_robust.*: issue 26, must-show 3(b). The lean design's
    interior runs of rare bins (mother's age 43–44 and 45+, parity 11+, gestation under 32 weeks,
    birth weight 1500–2299 g and 4300–4499 g in 100 g cells; each under 1% of births on the US
    samples, from 0.1% to 0.87% on the proxy) are sparse regions where a smooth
    generator cannot match rows one-to-one on a registry whose rare cells are thicker than the
    proxy's; the robust design merges each run of them into one bin, keeps every other bin, and
    is made by `workbench design` at ε_total ≤ 3.5."""
    from workbench.evidence.prepare import prepare_proxy

    robust = load_spec(REPO / "examples" / "israel_births_2014_lean_robust.frozen.json",
                       require_frozen=True)
    draft = build_spec(json.loads(
        (REPO / "examples" / "israel_births_2014_lean_robust.json").read_text()))
    assert robust.sha256 == draft.sha256 and robust.epsilon_total <= 3.5
    assert robust.selection.forecast.n == 95_000 and robust.selection.forecast.low is not None
    lean = load_spec(REPO / "examples" / "israel_births_2014_lean_designed.frozen.json")
    frame = prepare_proxy(robust, REPO / "data_public" / "proxy_sample_166k.csv.gz")
    before, after = _bin_shares(lean, frame), _bin_shares(robust, frame)
    merged = ("mother_age", "parity", "gestation_week", "birth_weight")
    assert min(min(before[c]) for c in merged) < 0.002  # parity 11+ on the proxy
    assert min(min(after[c]) for c in merged) > 0.005
    for column in merged:
        rare, kept = sum(s < 0.01 for s in before[column]), sum(s >= 0.01 for s in before[column])
        assert rare > 0 and sum(s >= 0.01 for s in after[column]) >= kept
        assert len(after[column]) < len(before[column])
    assert before["birth_month"] == after["birth_month"]


@pytest.mark.slow
def test_a_new_users_unequal_epsilon_draft_records_the_dry_run_of_what_it_froze(proxy) -> None:
    """Issue 26, must-show 2: a workload draft whose criteria have unequal ε (the family weights
    each criterion's marginals by its ε, which the design's model holds fixed) recorded the
    model's 0.965 where a dry run of the frozen file gave 0.000. Now the recorded forecast is
    a seeded dry run of exactly the frozen output: a dry run of that file agrees."""
    from workbench.dryrun import dry_run
    doc = json.loads((REPO / "examples" / "israel_births_2014_lean_input.json").read_text())
    doc["schema"]["expected_n"] = 4000
    res = design(build_spec(doc), proxy, epsilon_generators=(3.0,), divisors=(4.0,),
                 repetitions=1, draws=2, seed=3, target_p=0.8, check_repetitions=4,
                 scenarios=("proxy",), executor=InlineExecutor())
    frozen = build_spec(res.document)
    recorded = frozen.selection.forecast
    assert recorded.spec_sha256 == forecast_hash(res.document) and recorded.n == 4000
    again = dry_run(frozen, proxy, repetitions=4, seed=3, noise="seeded", n=4000,
                    progress=False, executor=InlineExecutor())
    p = sum(again.pass_probabilities().values()) / len(again.pass_probabilities())
    assert abs(p - recorded.p) <= 0.1


def test_a_draft_over_the_lifetime_cap_is_skipped_not_an_abort(proxy) -> None:
    """Issue 36 (found on NHANES): one alternative over the dataset's lifetime cap used to abort
    the whole search; it is skipped and said, and the draft written is within the cap."""
    doc = _document(marginals=0.08)
    doc["budget"]["epsilon_lifetime_max"] = 3.6  # the spec itself (ε_total 3.5519) fits
    said: list[str] = []
    res = design(build_spec(doc), proxy, epsilon_generators=(1.0, 3.0), divisors=(2.0, 10.0),
                 repetitions=1, draws=2, seed=1, target_p=0.5, check_repetitions=2,
                 scenarios=("proxy",), executor=InlineExecutor(), progress=said.append)
    over = [a for a in res.alternatives if a.epsilon_total > 3.6]
    assert over, "the test needs an alternative over the cap"
    assert any(m.startswith("skipping the draft") and "lifetime cap" in m for m in said)
    assert res.chosen.epsilon_total <= 3.6
    assert build_spec(res.document).epsilon_total <= 3.6
    doc["budget"]["epsilon_lifetime_max"] = 3.56  # every alternative's draft is over it
    with pytest.raises(ValueError, match="no alternative makes a valid spec"):
        design(build_spec(doc), proxy, epsilon_generators=(3.0,), divisors=(2.0,),
               repetitions=1, draws=2, seed=1, target_p=0.5, check_repetitions=2,
               scenarios=("proxy",), executor=InlineExecutor())


def test_a_criterion_divisor_raises_only_that_criterions_k(proxy) -> None:
    """--criterion-divisors: the named criterion is priced at max(K, K_id), the others at K."""
    spec = build_spec(_document(marginals=0.08))

    def priced(floors):
        return design(spec, proxy, 2000, epsilon_generators=(3.0,), divisors=(2.0,),
                      repetitions=1, draws=2, check_repetitions=1, scenarios=("proxy",),
                      executor=InlineExecutor(), criterion_divisors=floors
                      ).alternatives[0].epsilons

    plain = priced(None)
    cid = next(c for c, v in plain.items() if math.isfinite(v) and "regression" not in c)
    other = next(c for c in plain if c != cid)
    floored = priced({cid: 6.0, other: 1.0})
    assert floored[cid] > 2 * plain[cid]  # K 6 instead of 2
    assert {k: v for k, v in floored.items() if k != cid} == \
        {k: v for k, v in plain.items() if k != cid}  # K 1 < 2 changes nothing
    with pytest.raises(ValueError, match="--criterion-divisors nope=3"):
        design(spec, proxy, 2000, epsilon_generators=(3.0,), criterion_divisors={"nope": 3.0},
               executor=InlineExecutor())


def test_cli_refuses_a_malformed_criterion_divisor(tmp_path: Path, proxy,
                                                   capsys: pytest.CaptureFixture) -> None:
    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_document()))
    proxy.head(3000).to_csv(proxy_path, index=False)
    code = main(["design", str(spec_path), str(proxy_path), "--criterion-divisors",
                 "faithfulness=ten", "--quiet", "--workers", "0"])
    assert code == 2
    assert "--criterion-divisors 'faithfulness=ten'" in capsys.readouterr().err
