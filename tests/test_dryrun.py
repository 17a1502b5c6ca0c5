"""Public dry runs: seeds, seeded noise, records, cache, narrowing, forecast, executors, CLI."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.cli.main import main
from workbench.dryrun import (
    ALL,
    CriterionOutcome,
    DryRunCache,
    DryRunResult,
    InlineExecutor,
    LocalExecutor,
    TaskRecord,
    dry_run,
    iteration_digest,
    noise_source,
    pick_configurations,
    task_seed,
)
from workbench.evidence.sampler import sample_proxy
from workbench.privacy import (
    Accountant,
    Ledger,
    PrivacyContext,
    PrivacyMode,
    expected_iterations,
    probability_bottom,
)
from workbench.privacy.noise import OpenDPNoise, SeededNoise
from workbench.specification import Configuration, SpecError
from workbench.specification.derived import configuration_epsilon
from workbench.trial import bind
from workbench.validation import build_spec, load_spec

REPO = Path(__file__).resolve().parents[1]
NARROWED = REPO / "examples" / "israel_births_2014_narrowed.frozen.json"


def _cheap_document() -> dict:
    """The narrowed example with three cheap criteria and loose thresholds (fast, often passes)."""
    doc = load_spec(NARROWED).to_document()
    keep = {"marginals": 0.05, "mean_gestation": 3.0, "faithfulness": 0.3}
    doc["criteria"] = [dict(c, threshold=keep[c["id"]]) for c in doc["criteria"]
                       if c["id"] in keep]
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    return doc


@pytest.fixture(scope="module")
def cheap_spec():
    return build_spec(_cheap_document())


@pytest.fixture(scope="module")
def proxy_20k() -> pd.DataFrame:
    return sample_proxy(20_000, seed=5)


@pytest.fixture(scope="module")
def two_configs(cheap_spec) -> list[Configuration]:
    return list(cheap_spec.configurations())[:2]


def _outcomes(result: DryRunResult) -> list[dict]:
    return [r.outcome() for r in result.records]


# --- seeds and seeded noise ----------------------------------------------------------------------
def test_task_seed_depends_on_seed_key_and_rep_only() -> None:
    assert task_seed(3, "a", 0) == task_seed(3, "a", 0)
    seeds = {task_seed(s, k, r) for s in (0, 1) for k in ("a", "b") for r in (0, 1)}
    assert len(seeds) == 8
    assert all(0 <= s < 2**63 for s in seeds)


def test_seeded_noise_is_reproducible_and_leaves_opendp_alone() -> None:
    def draws(seed: int) -> tuple:
        ctx = PrivacyContext.simulation(seed, noise=noise_source("seeded", seed))
        a = ctx.laplace(np.zeros(5), sensitivity=1.0, epsilon=1.0, purpose="t").value
        b = ctx.discrete_laplace(np.zeros(5, dtype=np.int64), sensitivity=1, epsilon=1.0,
                                 purpose="t").value
        c = ctx.exponential(np.arange(6.0), sensitivity=1.0, epsilon=0.1, purpose="t").value
        return a.tolist(), b.tolist(), c

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)
    # the seeded source is an argument of one context, not a process-wide swap: a context built
    # alongside it (same seed, default source) still draws from OpenDP
    seeded = PrivacyContext.simulation(7, noise=noise_source("seeded", 7))
    plain = PrivacyContext.simulation(7)
    assert isinstance(seeded.noise, SeededNoise) and type(plain.noise) is OpenDPNoise
    assert type(noise_source("opendp", 7)) is OpenDPNoise
    with pytest.raises(ValueError, match="noise must be one of"):
        noise_source("numpy", 7)


def test_seeded_noise_has_the_mechanisms_scales() -> None:
    noise = noise_source("seeded", 0)
    lap = noise.laplace_vector(np.zeros(200_000), 2.0, 0.5)
    dlap = noise.discrete_laplace_vector(np.zeros(200_000, np.int64), 2, 0.5)
    picks = [noise.noisy_max_index(np.array([0.0, 0.0, 50.0]), 1.0, 1.0) for _ in range(200)]
    b = 2.0 / 0.5
    assert lap.std() == pytest.approx(math.sqrt(2) * b, rel=0.02)
    q = math.exp(-1 / b)
    assert dlap.dtype == np.int64
    assert dlap.var() == pytest.approx(2 * q / (1 - q) ** 2, rel=0.03)
    assert picks.count(2) >= 195


def test_seeded_noise_is_refused_in_a_confidential_context(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    with pytest.raises(ValueError, match="OpenDP only"):
        PrivacyContext(PrivacyMode.CONFIDENTIAL, neighbour="replace_one",
                       rng=np.random.default_rng(), coin_source=random.SystemRandom(),
                       accountant=Accountant(1.0), ledger=ledger,
                       noise=noise_source("seeded", 1))
    assert type(PrivacyContext.confidential(accountant=Accountant(1.0), ledger=ledger).noise) \
        is OpenDPNoise
    ledger.close()


# --- one dry run ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_result(cheap_spec, proxy_20k, two_configs) -> DryRunResult:
    return dry_run(cheap_spec, proxy_20k, two_configs, repetitions=3, seed=4,
                   executor=InlineExecutor(), progress=False, noise="seeded")


def test_records_cover_every_configuration_and_repetition(small_result, cheap_spec,
                                                          two_configs) -> None:
    recs = small_result.records
    assert [(r.config_key, r.rep) for r in recs] == [
        (c.key, rep) for c in two_configs for rep in range(3)]
    ids = [c.id for c in cheap_spec.criteria]
    for r in recs:
        assert r.seed == task_seed(4, r.config_key, r.rep)
        assert list(r.criteria) == ids
        assert r.passed == all(o.passed for o in r.criteria.values())
        for o in r.criteria.values():
            assert o.value is not None and o.exact is not None
            assert o.passed == (o.value < o.threshold)
        assert r.seconds > 0
    frame = small_result.records_frame()
    assert len(frame) == 6
    assert {f"pass:{i}" for i in ids} | {f"dp:{i}" for i in ids} | {f"exact:{i}" for i in ids} \
        <= set(frame.columns)


def test_table_is_sorted_and_matches_the_records(small_result, two_configs) -> None:
    table = small_result.table
    assert list(table[ALL]) == sorted(table[ALL], reverse=True)
    for key, p in small_result.pass_probabilities().items():
        recs = [r for r in small_result.records if r.config_key == key]
        assert p == pytest.approx(sum(r.passed for r in recs) / len(recs))
    row = table[table["key"] == two_configs[0].key].iloc[0]
    recs = [r for r in small_result.records if r.config_key == two_configs[0].key]
    assert row["faithfulness"] == pytest.approx(
        sum(r.criteria["faithfulness"].passed for r in recs) / 3)
    assert row["runs"] == 3 and row["low"] <= row[ALL] <= row["high"]


def test_heatmap_has_a_cell_per_configuration_and_criterion(small_result) -> None:
    fig = small_result.heatmap()
    ax = fig.axes[0]
    image = ax.images[0].get_array()
    assert image.shape == (2, len(small_result.criteria) + 1)
    np.testing.assert_allclose(np.asarray(image), small_result.criterion_pass_rates().to_numpy())
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_same_seed_same_records_other_seed_other_records(cheap_spec, proxy_20k,
                                                         two_configs, small_result) -> None:
    again = dry_run(cheap_spec, proxy_20k, two_configs, repetitions=3, seed=4,
                    executor=InlineExecutor(), progress=False, noise="seeded")
    assert _outcomes(again) == _outcomes(small_result)
    other = dry_run(cheap_spec, proxy_20k, two_configs[:1], repetitions=1, seed=5,
                    executor=InlineExecutor(), progress=False, noise="seeded")
    assert other.records[0].seed != small_result.records[0].seed


def test_progress_callback_counts_to_the_total(cheap_spec, proxy_20k, two_configs) -> None:
    calls: list[tuple[int, int]] = []
    dry_run(cheap_spec, proxy_20k, two_configs[:1], repetitions=2, executor=InlineExecutor(),
            progress=lambda done, total: calls.append((done, total)), noise="seeded")
    assert calls == [(0, 2), (1, 2), (2, 2)]


def test_bad_arguments_are_refused(cheap_spec, proxy_20k) -> None:
    with pytest.raises(ValueError, match="noise"):
        dry_run(cheap_spec, proxy_20k, noise="numpy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repetitions"):
        dry_run(cheap_spec, proxy_20k, repetitions=0)
    with pytest.raises(ValueError, match="workers"):
        LocalExecutor(workers=0)


# --- the cache -----------------------------------------------------------------------------------
def test_cache_hits_and_invalidation(tmp_path: Path, proxy_20k, two_configs) -> None:
    doc = _cheap_document()
    kwargs = dict(configurations=two_configs[:1], repetitions=2, seed=1,
                  executor=InlineExecutor(), cache=DryRunCache(tmp_path), progress=False,
                  noise="seeded")
    first = dry_run(doc, proxy_20k, **kwargs)
    assert (first.computed, first.cached) == (2, 0)
    second = dry_run(doc, proxy_20k, **kwargs)
    assert (second.computed, second.cached) == (0, 2)
    assert [r.to_dict() for r in second.records] == [r.to_dict() for r in first.records]

    # metadata and selection do not change an iteration: still cached
    edited = copy.deepcopy(doc)
    edited["metadata"]["title"] = "another title"
    edited["selection"]["configurations"] = edited["selection"]["configurations"][:2]
    assert iteration_digest(edited) == iteration_digest(doc)
    assert dry_run(edited, proxy_20k, **kwargs).cached == 2

    # a criterion threshold changes pass decisions: recomputed
    stricter = copy.deepcopy(doc)
    stricter["criteria"][0]["threshold"] = 0.001
    assert iteration_digest(stricter) != iteration_digest(doc)
    third = dry_run(stricter, proxy_20k, **kwargs)
    assert (third.computed, third.cached) == (2, 0)
    assert not any(r.criteria["marginals"].passed for r in third.records)

    # another noise mode or another proxy is another key too
    assert dry_run(doc, proxy_20k.head(15_000), **kwargs).computed == 2


def test_cache_skips_a_torn_line(tmp_path: Path) -> None:
    cache = DryRunCache(tmp_path)
    rec = TaskRecord("k", 0, 1, "seeded", True, None,
                     {"c": CriterionOutcome(True, 0.1, 0.2, 0.05)}, 0.5)
    cache.append("p" * 64, "key1", rec)
    with open(next(tmp_path.glob("*.jsonl")), "a") as fh:
        fh.write('{"key": "key2", "rec')
    assert cache.load("p" * 64) == {"key1": rec}


# --- narrowing and the forecast ------------------------------------------------------------------
def _synthetic_result(spec, rates: list[float], reps: int = 4) -> DryRunResult:
    """A result whose configurations pass all criteria at the given rates."""
    configs = list(spec.configurations())[: len(rates)]
    records = []
    for config, rate in zip(configs, rates, strict=True):
        for rep in range(reps):
            ok = rep < round(rate * reps)
            records.append(TaskRecord(config.key, rep, rep, "seeded", ok, None,
                                      {c.id: CriterionOutcome(ok, 0.0, 1.0, 0.0)
                                       for c in spec.criteria}, 1.0))
    return DryRunResult(tuple(c.id for c in spec.criteria), tuple(configs), tuple(records),
                        reps, 0, "seeded")


def test_narrow_and_narrowed_document(cheap_spec) -> None:
    result = _synthetic_result(cheap_spec, [0.25, 1.0, 0.0, 0.5])
    configs = list(cheap_spec.configurations())
    assert result.narrow(0.5) == [configs[1], configs[3]]
    assert result.narrow(0.0) == [configs[1], configs[3], configs[0], configs[2]]
    doc = result.narrowed_document(cheap_spec, 0.5)
    narrowed = build_spec(doc)
    assert list(narrowed.configurations()) == [configs[1], configs[3]]
    assert doc["criteria"] == cheap_spec.to_document()["criteria"]
    # narrowing records its forecast (workbench run needs one when γ = 0 and T = ∞)
    recorded = doc["selection"]["forecast"]
    assert {k: recorded[k] for k in ("p", "repetitions", "min_pass")} == {
        "p": 0.75, "repetitions": result.repetitions, "min_pass": 0.5}
    assert narrowed.selection.forecast.p == 0.75
    # issue 26: the 95% interval over the kept records, and the design it belongs to
    kept = [r for r in result.records if r.config_key in {configs[1].key, configs[3].key}]
    low, high = recorded["interval"]
    assert low < 0.75 < high and len(kept) == 2 * result.repetitions
    from workbench.specification.document import forecast_hash
    from workbench.specification.forecast import forecast_problem

    assert recorded["spec_sha256"] == forecast_hash(doc)
    assert forecast_problem(narrowed.selection.forecast, narrowed.document) is None
    edited = copy.deepcopy(doc)
    edited["criteria"][0]["threshold"] *= 2
    edited_spec = build_spec(edited)
    assert "made for another design" in forecast_problem(edited_spec.selection.forecast,
                                                         edited_spec.document)
    assert result.narrowed_document(cheap_spec, 0.5, proxy="p.csv")["selection"][
        "forecast"]["proxy"] == "p.csv"
    # the n (or range of n) it was made at: workbench run compares the data's n with it
    ranged = result.narrowed_document(cheap_spec, 0.5, n=95_000, n_max=158_500)
    assert ranged["selection"]["forecast"]["n"] == 95_000
    assert build_spec(ranged).selection.forecast.n_max == 158_500
    with pytest.raises(ValueError, match="no configuration"):
        _synthetic_result(cheap_spec, [0.0, 0.0]).narrowed_document(cheap_spec, 0.1)


def test_selection_forecast_uses_the_mean_pass_rate_of_the_narrowed_space(cheap_spec) -> None:
    result = _synthetic_result(cheap_spec, [0.25, 1.0, 0.0, 0.5])
    fc = result.selection_forecast(0.0, None, min_pass=0.25)
    p = (0.25 + 1.0 + 0.5) / 3
    assert fc.configurations == 3 and fc.p == pytest.approx(p)
    assert fc.expected_iterations == pytest.approx(1 / p)
    assert fc.probability_bottom == 0.0
    capped = result.selection_forecast(0.1, 30)
    assert capped.p == pytest.approx(0.4375)
    assert capped.expected_iterations == pytest.approx(expected_iterations(0.4375, 0.1, 30))
    assert capped.probability_bottom == pytest.approx(probability_bottom(0.4375, 0.1, 30))
    assert "P(⊥)" in capped.summary()


def test_pick_configurations_is_a_seeded_ordered_subset() -> None:
    configs = list(build_spec(load_spec(REPO / "examples" / "israel_births_2014.json")
                              .to_document()).configurations())
    picked = pick_configurations(configs, 24, seed=3)
    assert picked == pick_configurations(configs, 24, seed=3) != pick_configurations(
        configs, 24, seed=4)
    idx = [configs.index(c) for c in picked]
    assert idx == sorted(idx) and len(set(idx)) == 24
    assert pick_configurations(configs[:3], 10) == configs[:3]


# --- executors and the command line (slow: worker processes) -------------------------------------
@pytest.mark.slow
def test_local_and_dask_executors_give_identical_records(proxy_20k) -> None:
    distributed = pytest.importorskip("distributed")
    from workbench.dryrun import DaskExecutor

    spec = load_spec(NARROWED)  # every criterion, so every noise primitive is exercised
    configs = list(spec.configurations())[:2]
    args = dict(repetitions=2, seed=11, progress=False, noise="seeded")
    local = dry_run(spec, proxy_20k, configs, executor=LocalExecutor(workers=2), **args)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        dask = dry_run(spec, proxy_20k, configs,
                       executor=DaskExecutor(cluster.scheduler_address), **args)
    inline = dry_run(spec, proxy_20k, configs, executor=InlineExecutor(), **args)
    assert len(local.records) == 4
    assert _outcomes(local) == _outcomes(dask) == _outcomes(inline)


@pytest.mark.slow
def test_cli_gives_the_api_records_and_writes_the_narrowed_frozen_spec(
        tmp_path: Path, proxy_20k, cheap_spec, capsys: pytest.CaptureFixture) -> None:
    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_cheap_document()))
    proxy_20k.to_csv(proxy_path, index=False)
    records, narrowed = tmp_path / "records.jsonl", tmp_path / "narrowed.frozen.json"
    code = main(["dryrun", str(spec_path), str(proxy_path), "--repetitions", "2", "--seed", "9",
                 "--noise", "seeded", "--workers", "2", "--no-cache", "--quiet",
                 "--records", str(records), "--min-pass", "0.5",
                 "--write-narrowed", str(narrowed)])
    out = capsys.readouterr().out
    assert code == 0
    assert "forecast:" in out and "expected iterations" in out and ALL in out
    api = dry_run(cheap_spec, proxy_20k, None, repetitions=2, seed=9, executor=InlineExecutor(),
                  progress=False, noise="seeded")
    cli = [TaskRecord.from_dict(json.loads(line)).outcome()
           for line in records.read_text().splitlines()]
    assert cli == _outcomes(api)
    frozen = load_spec(narrowed, require_frozen=True)
    assert list(frozen.configurations()) == api.narrow(0.5)


def test_cli_refuses_write_narrowed_without_min_pass(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    code = main(["dryrun", str(NARROWED), str(tmp_path / "none.csv"),
                 "--write-narrowed", str(tmp_path / "x.json")])
    assert code == 2
    assert "--min-pass" in capsys.readouterr().err
    assert main(["dryrun", str(NARROWED), str(tmp_path / "none.csv"), "--quiet"]) == 2


def test_cli_limit_and_inline_workers(tmp_path: Path, proxy_20k,
                                      capsys: pytest.CaptureFixture) -> None:
    doc = _cheap_document()
    del doc["selection"]["configurations"]
    doc["generator"]["search_space"] = [{"degree": [2], "epsilon_split": [0.1, 0.25, 0.5]}]
    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(doc))
    proxy_20k.head(8_000).to_csv(proxy_path, index=False)
    code = main(["dryrun", str(spec_path), str(proxy_path), "--configs", "all", "--limit", "2",
                 "--repetitions", "1", "--workers", "0", "--cache", str(tmp_path / "c"),
                 "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 configuration(s) × 1 repetition(s)" in out
    assert main(["dryrun", str(spec_path), str(proxy_path), "--configs", "narrowed"]) == 2


def _epsilon_alternatives_document(epsilons: list[float]) -> dict:
    """The cheap design with ε_gen as a generator alternative on its first two configurations."""
    doc = _cheap_document()
    for grid in doc["generator"]["search_space"]:
        grid["epsilon"] = list(epsilons)
    first = doc["selection"]["configurations"][:2]
    doc["selection"]["configurations"] = [
        {**c, "generator": {**c["generator"], "epsilon": e}} for c in first for e in epsilons
    ]
    doc["budget"]["epsilon_generator"] = max(epsilons)
    return doc


def test_generator_epsilon_is_an_alternative_charged_at_its_largest(proxy_20k) -> None:
    """Each configuration fits with its own ε_gen, ε_total charges the largest, and narrowing
    to the smaller ε lowers the budget the frozen spec would spend."""
    from workbench.engine.iteration import fit_generator

    spec = build_spec(_epsilon_alternatives_document([1.0, 4.0]))
    configs = list(spec.configurations())
    assert [configuration_epsilon(spec, c.params) for c in configs] == [1.0, 4.0, 1.0, 4.0]
    assert spec.budget_plan().epsilon_per_iteration == pytest.approx(
        4.0 + spec.budget.epsilon_criteria)
    codes = bind(spec, configs[0]).encode(proxy_20k)
    for config in configs[:2]:
        ctx = PrivacyContext.simulation(seed=1)
        fit_generator(bind(spec, config), codes, ctx)
        spent = sum(r.epsilon for r in ctx.records)
        assert spent == pytest.approx(configuration_epsilon(spec, config.params))
    too_much = _epsilon_alternatives_document([1.0, 4.0])
    too_much["budget"]["epsilon_generator"] = 5.0
    with pytest.raises(SpecError, match=r"budget\.epsilon_generator.*largest selectable"):
        build_spec(too_much)
    result = _synthetic_result(spec, [1.0, 0.0, 0.75, 0.0])
    assert "epsilon=1" in result.table.index[0]
    doc = result.narrowed_document(spec, 0.5)
    narrowed = build_spec(doc)
    assert "epsilon_generator" not in doc["budget"]  # derived from what is left
    assert narrowed.budget.epsilon_generator == 1.0
    assert narrowed.epsilon_total == pytest.approx(2 * (1.0 + spec.budget.epsilon_criteria))
