"""Dry runs at the registry's size (resampling, --n) and feasibility floors (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_dryrun import _cheap_document

from workbench.cli.main import main
from workbench.dryrun import InlineExecutor, dry_run, dry_run_at, parse_n
from workbench.dryrun.floors import Floor, feasibility_floors, floors_at
from workbench.dryrun.size import check_n, low_end, size_ends
from workbench.evidence.population import population, population_rows
from workbench.evidence.prepare import prepare_proxy
from workbench.evidence.sampler import sample_proxy
from workbench.validation import build_spec


@pytest.fixture(scope="module")
def cheap_spec():
    return build_spec(_cheap_document())


@pytest.fixture(scope="module")
def proxy_6k() -> pd.DataFrame:
    return sample_proxy(6_000, seed=11)


# --- a population at n ---------------------------------------------------------------------------
def test_smaller_n_draws_without_replacement() -> None:
    rows = population_rows(100, 40, np.random.default_rng(0))
    assert len(rows) == 40 and len(set(rows.tolist())) == 40 and rows.max() < 100
    # the draw below the proxy's size is the simple random sample it always was (seeded)
    assert rows.tolist() == np.sort(np.random.default_rng(0).choice(100, 40, False)).tolist()


def test_n_equal_to_the_proxy_keeps_every_row_once() -> None:
    assert sorted(population_rows(50, 50, np.random.default_rng(1)).tolist()) == list(range(50))


def test_larger_n_copies_each_row_only_as_often_as_it_must() -> None:
    """Above the proxy's size every row appears ⌊n/N⌋ or ⌈n/N⌉ times (a resample with
    replacement once left rows out and copied others many times)."""
    rows = population_rows(30, 305, np.random.default_rng(2))
    counts = np.bincount(rows, minlength=30)
    assert len(rows) == 305 and set(counts.tolist()) == {10, 11} and (counts == 11).sum() == 5


def test_a_population_gives_n_records_of_the_frame(proxy_6k) -> None:
    small = population(proxy_6k, 1_000, np.random.default_rng(3))
    big = population(proxy_6k.head(100), 1_000, np.random.default_rng(3))
    assert len(small) == 1_000 and len(big) == 1_000
    assert list(small.columns) == list(proxy_6k.columns)
    assert big.duplicated().sum() >= 900  # only 100 distinct rows to draw from


def test_sizes_parse_and_the_low_end_counts() -> None:
    assert parse_n("95000") == 95_000 and parse_n("95_000:158,500") == (95_000, 158_500)
    assert size_ends(None) == () and size_ends((7, 9)) == (7, 9) and size_ends((8, 8)) == (8,)
    assert low_end((95_000, 158_500)) == 95_000 and low_end(None) is None


@pytest.mark.parametrize("bad, words", [("9x", "record count N or a range LOW:HIGH"),
                                        ("9:5", "low end 9 is above its high end 5"),
                                        ("1", "at least 2"), ("-3", "record count")])
def test_bad_sizes_are_refused_with_a_reason(bad: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_n(bad)


@pytest.mark.parametrize("bad", [True, 1.5, (1, 2, 3), (10,), "100"])
def test_check_n_refuses_non_counts(bad) -> None:
    with pytest.raises(ValueError, match="n"):
        check_n(bad)


# --- dry runs at n -------------------------------------------------------------------------------
def test_dry_run_at_n_rehearses_on_its_own_resample(cheap_spec, proxy_6k) -> None:
    config = list(cheap_spec.configurations())[:1]
    opts = dict(repetitions=1, seed=4, executor=InlineExecutor(), progress=False,
                noise="seeded")
    at_proxy = dry_run(cheap_spec, proxy_6k, config, **opts)
    at_2k = dry_run(cheap_spec, proxy_6k, config, n=2_000, **opts)
    assert at_proxy.n == len(prepare_proxy(cheap_spec, proxy_6k)) and at_2k.n == 2_000
    faith = [r.records[0].criteria["faithfulness"].exact for r in (at_proxy, at_2k)]
    assert faith[0] != faith[1]
    with pytest.raises(ValueError, match="dry_run_at"):
        dry_run(cheap_spec, proxy_6k, config, n=(2_000, 3_000), **opts)


def test_dry_run_at_a_range_reports_both_ends(cheap_spec, proxy_6k) -> None:
    config = list(cheap_spec.configurations())[:1]
    sized = dry_run_at(cheap_spec, proxy_6k, config, (2_000, 9_000), repetitions=1,
                       executor=InlineExecutor(), progress=False, noise="seeded")
    assert sized.sizes == (2_000, 9_000)
    assert sized.result is sized.results[2_000]
    assert list(sized.pass_table().columns) == ["n=2,000", "n=9,000"]


# --- feasibility floors --------------------------------------------------------------------------
def test_one_distinct_record_has_zero_floors(cheap_spec) -> None:
    same = pd.DataFrame([{"birth_month": 5, "mother_age": 30, "parity": 2, "gestation_week": 39,
                          "birth_sex": "F", "birth_weight": 3300}] * 400)
    table = feasibility_floors(cheap_spec, same, n=300, draws=2)
    floors = table.by_id()
    assert table.n == 300
    assert floors["marginals"].mean == 0 and floors["faithfulness"].mean == 0
    assert floors["faithfulness"].sd == 0 and not table.infeasible


def test_floors_rise_as_n_falls_and_flag_infeasible_thresholds(cheap_spec, proxy_6k) -> None:
    tables = floors_at(cheap_spec, proxy_6k, None, (500, 6_000), draws=3, seed=1)
    small, big = (tables[k][0].by_id()["faithfulness"] for k in (500, 6_000))
    assert small.mean > big.mean > 0 and small.sd > 0
    assert Floor("x", 0.10, 0.09, 0.02, 3).infeasible  # within one SD
    assert Floor("x", 0.05, 0.09, 0.02, 3).infeasible  # below
    assert not Floor("x", 0.20, 0.09, 0.02, 3).infeasible
    doc = _cheap_document()
    next(c for c in doc["criteria"] if c["id"] == "faithfulness")["threshold"] = small.mean / 2
    flagged = feasibility_floors(build_spec(doc), proxy_6k, n=500, draws=3, seed=1)
    assert "faithfulness" in flagged.infeasible


# --- command line --------------------------------------------------------------------------------
@pytest.fixture()
def files(tmp_path: Path, proxy_6k) -> tuple[str, str]:
    spec_path, proxy_path = tmp_path / "spec.json", tmp_path / "proxy.csv"
    spec_path.write_text(json.dumps(_cheap_document()))
    proxy_6k.to_csv(proxy_path, index=False)
    return str(spec_path), str(proxy_path)


def test_cli_dryrun_at_n_prints_sizes_and_floors(files, capsys) -> None:
    code = main(["dryrun", *files, "--n", "1500:3000", "--limit", "1", "--repetitions", "1",
                 "--workers", "0", "--no-cache", "--quiet", "--noise", "seeded",
                 "--floor-draws", "2"])
    out = capsys.readouterr().out
    assert code == 0
    assert "at n = 1,500, 3,000" in out and "the low end counts" in out
    assert "feasibility floors at n = 1,500" in out and "feasibility floors at n = 3,000" in out
    assert "infeasible at n" in out


@pytest.mark.parametrize("bad", ["lots", "5000:100", "1"])
def test_cli_names_a_bad_n(files, capsys, bad: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["dryrun", *files, "--n", bad])
    assert exc.value.code == 2
    assert "argument --n" in capsys.readouterr().err


def test_cli_describe_with_proxy_shows_floors(files, capsys) -> None:
    assert main(["describe", files[0], "--proxy", files[1], "--n", "2000",
                 "--floor-draws", "2"]) == 0
    out = capsys.readouterr().out
    assert "feasibility floors at n = 2,000" in out and "threshold" in out
    assert main(["describe", files[0], "--n", "2000"]) == 2
    assert "--n needs --proxy" in capsys.readouterr().err


def test_cli_describe_with_proxy_and_no_floor_draws_says_no_floors(files, capsys) -> None:
    assert main(["describe", files[0], "--proxy", files[1], "--floor-draws", "0"]) == 0
    out = capsys.readouterr().out
    assert "--floor-draws 0: no floors" in out and "feasibility floors at n" not in out
    assert main(["describe", files[0], "--proxy", files[1], "--floor-draws", "1"]) == 2
    assert "0 (no floors) or at least 2" in capsys.readouterr().err


def test_without_n_the_spec_expected_n_is_the_size(cheap_spec) -> None:
    from workbench.dryrun import spec_n

    doc = _cheap_document()
    doc["schema"]["expected_n"] = [1_500, 3_000]
    assert spec_n(build_spec(doc)) == (1_500, 3_000)
    assert spec_n(build_spec(doc), 2_000) == 2_000  # --n wins
    assert spec_n(cheap_spec) is None


def test_proxy_lab_gives_the_floors_the_editors_show(proxy_6k) -> None:
    from workbench.widgets.model.lab import ProxyLab

    doc = _cheap_document()
    doc["schema"]["expected_n"] = [1_000, 3_000]
    spec = build_spec(doc)
    lab = ProxyLab(proxy_6k, seed=0)
    table = lab.floors(spec, draws=2)
    assert table.n == 1_000  # the low end of schema.expected_n
    assert table is lab.floors(spec, draws=2)  # cached
    assert "floor" in table.by_id()["faithfulness"].words()
