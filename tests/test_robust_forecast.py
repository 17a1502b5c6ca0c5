"""The forecast's proxy scenarios (issue 26): what each scenario does to the proxy, and that a
staged rehearsal (``stop_below``) rehearses exactly what a full one would, or stops early."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from test_dryrun import _cheap_document

from workbench.dryrun import InlineExecutor
from workbench.dryrun.robust import robust_forecast
from workbench.dryrun.worker import task_frame
from workbench.evidence.core import PUBLISHED_SCENARIOS, SCENARIOS, Evidence
from workbench.evidence.population import (
    copied_share,
    raked_weights,
    size_seed,
    systematic_sample,
)
from workbench.evidence.prepare import prepare_proxy
from workbench.evidence.published import published_tables
from workbench.evidence.sampler import sample_proxy
from workbench.trial import bind


def scenario_frames(evidence: Evidence, *, seed: int = 0, size: int | None = None,
                    **options) -> dict[str, pd.DataFrame]:
    """Each scenario realised as one population of ``size`` rows, seeded as a task's."""
    m = len(evidence.frame) if size is None else size
    return {name: evidence.population(m, size_seed(seed, m), weights)
            for name, weights in evidence.scenario_weights(**options).items()}


def _one_ways(spec, frame: pd.DataFrame) -> list[np.ndarray]:
    codes = bind(spec, next(iter(spec.configurations()))).encode(frame)
    sizes = bind(spec, next(iter(spec.configurations()))).domain.sizes
    return [np.bincount(codes[:, j], minlength=s) / len(codes) for j, s in enumerate(sizes)]


def _entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def test_scenarios_move_the_one_way_marginals_as_declared(spec, proxy) -> None:
    half = len(proxy) // 2
    frames = scenario_frames(Evidence(spec, proxy), tolerance=0.03, seed=5, size=half)
    assert list(frames) == list(SCENARIOS) and len(frames["proxy"]) == half
    base = _one_ways(spec, proxy)
    for name, towards_uniform in (("flatter", True), ("sharper", False)):
        moved = _one_ways(spec, frames[name])
        tvs = [0.5 * np.abs(m - b).sum() for m, b in zip(moved, base, strict=True)]
        assert max(tvs) < 0.03 + 0.02  # the declared tolerance, plus sampling noise at 3k
        gained = sum(_entropy(m) - _entropy(b) for m, b in zip(moved, base, strict=True))
        assert (gained > 0) == towards_uniform, name
    codes = bind(spec, next(iter(spec.configurations()))).encode
    rare = {k: _rare_share(spec, codes(frames[k]), codes(proxy))
            for k in ("proxy", "rare thinned", "rare thickened")}
    assert rare["rare thinned"] < rare["proxy"] < rare["rare thickened"], rare
    again = scenario_frames(Evidence(spec, proxy), tolerance=0.03, seed=5, size=half)
    assert all(again[k].equals(frames[k]) for k in frames)  # seeded
    # raked, not a product of per-column ratios: on 20× the rows the noise is gone and each
    # column moves by the tolerance itself (the product moved correlated columns by 0.055)
    big = prepare_proxy(spec, sample_proxy(120_000, seed=12))
    flat = scenario_frames(Evidence(spec, big), tolerance=0.03, seed=5, names=["flatter"],
                           size=60_000)["flatter"]
    tvs = [0.5 * np.abs(m - b).sum()
           for m, b in zip(_one_ways(spec, flat), _one_ways(spec, big), strict=True)]
    assert max(tvs) < 0.036, tvs
    # at half the proxy's size hardly a row is copied; at its own size, re-weighting must copy
    w = Evidence(spec, big).scenario_weights(["flatter"], tolerance=0.03)["flatter"]
    assert copied_share(w, 60_000) < 0.05 < copied_share(w, len(big))


def test_every_task_of_a_scenario_draws_its_own_population(spec, proxy) -> None:
    """A weighted dry run's task rehearses on its own draw at n: none of a weight-0 row, no
    copies where every expected count is below 1, different rows for another seed."""
    weights = np.where(np.arange(len(proxy)) % 3 == 0, 0.0, 1.0)
    one, two = (task_frame(proxy, 2_000, weights, seed) for seed in (1, 2))
    assert abs(len(one) - 2_000) <= 1 and not one.equals(two)
    rows = systematic_sample(2_000 * weights / weights.sum(), size_seed(1, 2_000))
    assert np.all(rows % 3 != 0) and len(np.unique(rows)) == len(rows)
    assert task_frame(proxy, None, weights, 1) is proxy
    with pytest.raises(ValueError, match="unknown proxy scenario"):
        scenario_frames(Evidence(spec, proxy), names=["warmer"])


def _rare_share(spec, codes: np.ndarray, reference: np.ndarray) -> float:
    """Share of rows in a 1-way cell under 1% of ``reference``."""
    rare = np.zeros(len(codes), dtype=bool)
    for j in range(codes.shape[1]):
        shares = np.bincount(reference[:, j], minlength=codes[:, j].max() + 1) / len(reference)
        rare |= shares[codes[:, j]] < 0.01
    return float(rare.mean())


def test_a_population_copies_a_row_only_where_it_must() -> None:
    """Systematic sampling of expected counts π: row i ⌊π_i⌋ times plus once with probability
    π_i − ⌊π_i⌋, so frequencies ≈ π, size Σπ, 1-way targets hit, and no copy unless π_i > 1
    (a resample with replacement copies rows everywhere, which alone failed faithfulness)."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 4, size=(2_000, 2))
    weights = np.where(codes[:, 0] == 0, 3.0, 1.0)
    pi = 500 * weights / weights.sum()
    hits = np.zeros(len(pi))
    for k in range(400):
        rows = systematic_sample(pi, np.random.default_rng(k))
        assert len(np.unique(rows)) == len(rows) and abs(len(rows) - 500) <= 1  # all π < 1
        hits[rows] += 1
    for w in (1.0, 3.0):
        assert abs(hits[weights == w].mean() / 400 - pi[weights == w].mean()) < 0.01
    target = {1: np.array([0.4, 0.3, 0.2, 0.1])}
    w = raked_weights(codes, target)
    rows = systematic_sample(1_000 * w / w.sum(), np.random.default_rng(1))
    assert len(np.unique(rows)) == len(rows) and abs(len(rows) - 1_000) <= 1
    assert copied_share(w, 1_000) == 0
    got = np.bincount(codes[rows, 1], minlength=4) / len(rows)
    assert 0.5 * np.abs(got - target[1]).sum() < 0.03
    # 2,000 rows with 40% of code 0 when it is a quarter of the sample: those rows are copied
    whole = systematic_sample(2_000 * w / w.sum(), np.random.default_rng(1))
    got = np.bincount(codes[whole, 1], minlength=4) / len(whole)
    copied = 1 - len(np.unique(whole)) / len(whole)
    assert 0.5 * np.abs(got - target[1]).sum() < 0.01 and 0.05 < copied < 0.2
    assert abs(copied_share(w, 2_000) - copied) < 0.02  # the reported share is the realised one
    resampled = np.random.default_rng(2).integers(0, 2_000, size=1_000)  # with replacement
    assert 1 - len(np.unique(resampled)) / 1_000 > 0.2  # the copies this avoids


def test_a_staged_rehearsal_is_the_full_one_or_stops_at_the_proxy(spec, proxy) -> None:
    """``stop_below`` rehearses the proxy first; when it reaches the bar, every scenario gets
    the p a full call gives it; when it does not, nothing else is rehearsed."""
    kw = {"n": 2_000, "repetitions": 2, "seed": 3, "executor": InlineExecutor()}
    full = robust_forecast(spec, proxy, **kw)
    staged = robust_forecast(spec, proxy, stop_below=0.0, **kw)
    assert staged.scenarios == full.scenarios and list(staged.scenarios) == list(SCENARIOS)
    stopped = robust_forecast(spec, proxy, stop_below=1.01, **kw)
    assert stopped.scenarios == {"proxy": full.scenarios["proxy"]}
    assert stopped.low == full.scenarios["proxy"] >= full.low


def _published_from(spec, frame: pd.DataFrame, column: str, shift: np.ndarray | None = None,
                    step: float = 0.001) -> dict:
    """Tables as an office publishes them: ``frame``'s 1-way shares of ``column`` (moved by
    ``shift``), rounded to ``step``."""
    j = list(spec.column_names).index(column)
    p = _one_ways(spec, frame)[j] + (0 if shift is None else shift)
    return {"source": "test", "step": step,
            "columns": {column: [round(round(x / step) * step, 6) for x in p / p.sum()]}}


def test_published_tables_anchor_the_scenarios(spec) -> None:
    """With the registry's own 1-way tables the proxy is raked to them (the column moves to the
    tables, the others stay), flatter/sharper move it only within the tables' rounding, and
    thinning rare cells (whose shares are published) is refused."""
    big = prepare_proxy(spec, sample_proxy(60_000, seed=12))
    column = spec.column_names[0]
    j = 0
    base = _one_ways(spec, big)
    shift = np.zeros(len(base[j]))
    shift[0], shift[-1] = 0.05, -min(0.05, base[j][-1])
    tables = published_tables(spec, _published_from(spec, big, column, shift))
    target = tables.target(column)
    assert 0.5 * np.abs(target - base[j]).sum() > 0.02  # the tables differ from the proxy
    frames = scenario_frames(Evidence(spec, big, tables), seed=4, size=30_000)
    assert list(frames) == list(PUBLISHED_SCENARIOS)
    raked = _one_ways(spec, frames["published"])
    assert 0.5 * np.abs(raked[j] - target).sum() < 0.015  # sampling noise at 30k
    others = [0.5 * np.abs(a - b).sum() for a, b in zip(raked[1:], base[1:], strict=True)]
    assert max(others) < 0.025
    for name in ("flatter", "sharper"):
        moved = _one_ways(spec, frames[name])[j]
        assert 0.5 * np.abs(moved - target).sum() < tables.tolerance(column) + 0.01, name
    with pytest.raises(ValueError, match="published tables fix the 1-way shares"):
        scenario_frames(Evidence(spec, big, tables), names=["rare thinned"])


def test_published_tables_that_do_not_fit_the_spec_fail_naming_the_column(spec, proxy) -> None:
    column = spec.column_names[0]
    good = _published_from(spec, proxy, column)
    with pytest.raises(ValueError, match="column 'no_such' is not in the spec"):
        published_tables(spec, {"columns": {"no_such": [1.0]}})
    with pytest.raises(ValueError, match=f"column '{column}' needs"):
        published_tables(spec, {"columns": {column: good["columns"][column][:-1]}})
    wrong = [2 * x for x in good["columns"][column]]
    with pytest.raises(ValueError, match=f"column '{column}': the shares sum to 2"):
        published_tables(spec, {"columns": {column: wrong}})
    with pytest.raises(ValueError, match="'columns'"):
        published_tables(spec, {"step": 0.001})


def test_published_counts_are_exact_and_keep_a_rare_cell_that_rounding_erases(spec) -> None:
    """Counts (as an office publishes births per cell) give the shares exactly: a cell of 3
    births in 30,000, which rounded shares publish as 0, keeps its share in the raked
    population; the one scenario is the tables themselves; a bad count names its column."""
    big = prepare_proxy(spec, sample_proxy(60_000, seed=12))
    codes = bind(spec, next(iter(spec.configurations()))).encode(big)
    j = next(j for j in range(codes.shape[1]) if (np.bincount(codes[:, j]) > 0).sum() > 3)
    column = spec.column_names[j]
    counts = np.bincount(codes[:, j]).astype(int)
    rare = int(np.argmin(np.where(counts > 0, counts, counts.max() + 1)))
    counts = counts * 10
    counts[rare] = 3  # 3 in ≈ 600,000: 0.0005%, rounded to 0.1 points it is 0
    document = {"source": "test", "counts": {column: [int(c) for c in counts]}}
    tables = published_tables(spec, document)
    assert tables.step == 0 and tables.tolerance(column) == 0
    assert tables.shares[column][rare] == pytest.approx(3 / counts.sum())
    rounded = published_tables(spec, {"step": 0.001, "columns": {column: [
        round(round(c / counts.sum() / 0.001) * 0.001, 6) for c in counts]}})
    assert rounded.shares[column][rare] == 0
    assert Evidence(spec, big, tables).default_scenarios() == ("published",)
    assert Evidence(spec, big, rounded).default_scenarios() == PUBLISHED_SCENARIOS
    frames = scenario_frames(Evidence(spec, big, tables), seed=4, size=600_000)
    assert list(frames) == ["published"]
    got = np.bincount(bind(spec, next(iter(spec.configurations()))).encode(
        frames["published"])[:, j], minlength=len(counts))
    assert got[rare] == pytest.approx(3, abs=2) and got[rare] > 0
    erased = scenario_frames(Evidence(spec, big, rounded), seed=4, size=60_000)["published"]
    assert np.bincount(bind(spec, next(iter(spec.configurations()))).encode(erased)[:, j],
                       minlength=len(counts))[rare] == 0
    with pytest.raises(ValueError, match=f"column '{column}': every count must be a whole"):
        published_tables(spec, {"counts": {column: [1.5] * len(counts)}})
    with pytest.raises(ValueError, match=f"column '{column}': the counts are all 0"):
        published_tables(spec, {"counts": {column: [0] * len(counts)}})


def test_published_cross_tables_fix_how_two_columns_co_occur(spec) -> None:
    """A published cross-table (counts, "a|b") is hit by the raked population as well as the
    1-way tables — here one that reverses the proxy's dependence between two columns — and a
    table that does not fit names its pair."""
    big = prepare_proxy(spec, sample_proxy(60_000, seed=12))
    codes = bind(spec, next(iter(spec.configurations()))).encode(big)
    sizes = codes.max(axis=0) + 1
    a, b = [j for j in range(codes.shape[1]) if sizes[j] >= 3][:2]
    na, nb = spec.column_names[a], spec.column_names[b]
    table_sizes = bind(spec, next(iter(spec.configurations()))).table.domain.sizes
    cross = np.zeros((table_sizes[a], table_sizes[b]), dtype=np.int64)
    np.add.at(cross, (codes[:, a], codes[:, b]), 1)
    target = cross[:, ::-1].copy()  # column b's cells reversed within every row of a
    document = {"counts": {na: [int(x) for x in cross.sum(axis=1)]},
                "pairs": {f"{na}|{nb}": target.tolist()}}
    tables = published_tables(spec, document)
    assert set(tables.pairs) == {(na, nb)}
    frame = scenario_frames(Evidence(spec, big, tables), seed=5)["published"]
    got = np.zeros_like(cross)
    c2 = bind(spec, next(iter(spec.configurations()))).encode(frame)
    np.add.at(got, (c2[:, a], c2[:, b]), 1)
    want = target / target.sum()
    assert np.abs(got / got.sum() - want).sum() / 2 < 0.01  # TV to the published table
    assert np.abs(cross / cross.sum() - want).sum() / 2 > 0.05  # and the proxy was far from it
    ones = {na: [1] * int(table_sizes[a])}
    with pytest.raises(ValueError, match=re.escape("pair 'no|such' must be two different columns")):
        published_tables(spec, {"counts": ones, "pairs": {"no|such": []}})
    shape = re.escape(f"pair '{na}|{nb}' needs {table_sizes[a]} rows")
    with pytest.raises(ValueError, match=shape):
        published_tables(spec, {"counts": ones, "pairs": {f"{na}|{nb}": [[1]]}})
    skewed = {na: [int(x) for x in cross.sum(axis=1) * 2], nb: [1] * int(table_sizes[b])}
    with pytest.raises(ValueError, match=re.escape(f"its margin of '{nb}' differs")):
        published_tables(spec, {"counts": skewed, "pairs": {f"{na}|{nb}": target.tolist()}})
    bad = [[0.5] * int(table_sizes[b])] * int(table_sizes[a])
    with pytest.raises(ValueError, match="every count must be a whole number"):
        published_tables(spec, {"counts": ones, "pairs": {f"{na}|{nb}": bad}})


def test_a_robust_forecast_with_published_tables_rehearses_the_raked_proxy(spec, proxy) -> None:
    tables = published_tables(spec, _published_from(spec, proxy, spec.column_names[1]))
    fc = robust_forecast(spec, Evidence(spec, proxy, tables), n=2_000, repetitions=2, seed=3,
                         executor=InlineExecutor())
    assert list(fc.scenarios) == list(PUBLISHED_SCENARIOS)
    assert "the proxy raked to the published tables" in fc.words()


def test_cli_records_a_forecast_anchored_on_published_tables(tmp_path, spec, proxy, capsys) -> None:
    """`workbench dryrun --robust --published-tables FILE` records the range over the published
    scenarios and says the proxy was raked; without --robust, or with a table that does not
    fit the spec, it refuses naming why."""
    import json

    from workbench.cli.main import main

    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_cheap_document()))
    proxy.to_csv(proxy_path, index=False)
    tables = tmp_path / "tables.json"
    tables.write_text(json.dumps(_published_from(spec, proxy, spec.column_names[0])))
    base = ["dryrun", str(spec_path), str(proxy_path), "--repetitions", "1", "--seed", "2",
            "--noise", "seeded", "--workers", "0", "--no-cache", "--quiet", "--floor-draws", "0",
            "--n", "2000"]
    assert main([*base, "--published-tables", str(tables)]) == 2
    assert "--published-tables needs --robust" in capsys.readouterr().err
    out = tmp_path / "narrowed.frozen.json"
    assert main([*base, "--min-pass", "0", "--write-narrowed", str(out), "--robust",
                 "--published-tables", str(tables)]) == 0
    recorded = json.loads(out.read_text())["selection"]["forecast"]
    assert list(recorded["range"]["scenarios"]) == list(PUBLISHED_SCENARIOS)
    assert recorded["proxy"] == "proxy.csv raked to tables.json"
    assert "the proxy as it is" in capsys.readouterr().out
    tables.write_text(json.dumps({"columns": {"no_such": [1.0]}}))
    assert main([*base, "--min-pass", "0", "--write-narrowed", str(out), "--robust",
                 "--published-tables", str(tables)]) == 2
    assert "column 'no_such' is not in the spec" in capsys.readouterr().err


def test_cli_robust_scenarios_say_what_is_left_and_when(tmp_path, proxy, capsys) -> None:
    """`workbench dryrun --write-narrowed --robust` (not quiet) announces each scenario's dry
    run with how many are left and an ETA (issue 36: no long step sits silent)."""
    import json

    from workbench.cli.main import main

    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_cheap_document()))
    proxy.to_csv(proxy_path, index=False)
    out = tmp_path / "narrowed.frozen.json"
    assert main(["dryrun", str(spec_path), str(proxy_path), "--repetitions", "1", "--seed", "2",
                 "--noise", "seeded", "--workers", "0", "--no-cache", "--floor-draws", "0",
                 "--n", "2000", "--min-pass", "0", "--write-narrowed", str(out),
                 "--robust"]) == 0
    err = capsys.readouterr().err
    names = list(SCENARIOS[1:])
    for k, name in enumerate(names, start=1):
        assert f"robust forecast: scenario {k} of {len(names)} ({name}) … ETA ~" in err
