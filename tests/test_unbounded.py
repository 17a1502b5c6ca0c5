"""Must-show 5 (issue 5) and 4 (issue 24): a γ = 0, T = ∞ spec without a forecast, or run on
data whose n lies outside the sizes its forecast was made at, is refused by ``workbench run``
before any budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_engine import _test_document

from workbench.cli.main import main
from workbench.engine import RunRefused
from workbench.engine.run import load_confidential
from workbench.engine.unbounded import (
    MIN_FORECAST_P,
    check_bounded,
    check_size,
    covered_sizes,
    unbounded_problem,
)
from workbench.evidence.sampler import sample_proxy
from workbench.specification import SpecError
from workbench.validation import build_spec, load_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
FIXES = ("selection.gamma > 0", "selection.max_iterations = 1", "--allow-unbounded")
#: the three ways out of a forecast made at another n
WAYS = ("a forecast at this n", "--write-narrowed", "a cap T with γ > 0",
        "selection.gamma > 0 and a finite selection.max_iterations", "--allow-unbounded")


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("unbounded") / "confidential.csv"
    sample_proxy(20_000, seed=5).to_csv(path, index=False)
    return path


def _spec(tmp: Path, forecast: dict | None, **selection: object) -> Path:
    doc = _test_document()
    doc["selection"].pop("forecast")
    if forecast is not None:
        doc["selection"]["forecast"] = forecast
    doc["selection"].update(selection)
    path = tmp / "spec.frozen.json"
    save_spec(doc, path)
    return path


def _run(spec: Path, data: Path, out: Path, *extra: str) -> int:
    return main(["run", str(spec), str(data), "--out", str(out), "--quiet",
                 "--budget-store", str(out.parent / "budgets"), *extra])


@pytest.mark.parametrize("forecast", [None, {"p": 0.01, "repetitions": 20, "min_pass": 0.0}])
def test_unbounded_spec_without_a_good_forecast_is_refused_before_any_noise(
        tmp_path: Path, data_csv: Path, forecast: dict | None,
        capsys: pytest.CaptureFixture) -> None:
    spec = _spec(tmp_path, forecast)
    out = tmp_path / "run"
    assert _run(spec, data_csv, out) == 2
    err = capsys.readouterr().err
    assert "selection.gamma = 0" in err and "T = ∞" in err
    assert all(fix in err for fix in FIXES)
    assert ("no dry-run forecast" in err) if forecast is None else ("p = 0.010" in err)
    # refused before anything was written or spent: no run folder, no budget store
    assert not out.exists() and not (tmp_path / "budgets").exists()


def test_allow_unbounded_or_a_forecast_lets_the_run_go(tmp_path: Path, data_csv: Path) -> None:
    bare = _spec(tmp_path, None)
    assert _run(bare, data_csv, tmp_path / "a" / "run", "--allow-unbounded") == 0
    forecast = {"p": MIN_FORECAST_P, "repetitions": 20, "min_pass": 0.0}
    assert unbounded_problem(load_spec(_spec(tmp_path, forecast))) is None


@pytest.mark.parametrize("selection", [{"max_iterations": 1},
                                       {"gamma": 0.1, "max_iterations": 100,
                                        "epsilon_0": 0.5}])
def test_bounded_loops_need_no_forecast(tmp_path: Path, selection: dict) -> None:
    spec = load_spec(_spec(tmp_path, None, **selection))
    assert not spec.selection.unbounded
    check_bounded(spec)  # no RunRefused


def test_paper_example_is_unbounded_and_carries_its_forecast() -> None:
    spec = load_spec(REPO / "examples" / "israel_births_2014_narrowed.frozen.json")
    assert spec.selection.unbounded and spec.selection.forecast.p >= 0.05
    check_bounded(spec)  # the recorded forecast admits it
    bare = spec.to_document()
    del bare["selection"]["forecast"]
    with pytest.raises(RunRefused, match="no dry-run forecast"):
        check_bounded(build_spec(bare))
    check_bounded(build_spec(bare), allow_unbounded=True)
    lean = load_spec(REPO / "examples" / "israel_births_2014_lean.frozen.json")
    check_bounded(lean)  # a single attempt


def test_recorded_forecast_is_validated_with_its_path(example_doc: dict) -> None:
    example_doc["selection"]["forecast"] = {"p": 1.5, "repetitions": 20, "min_pass": 0.1}
    with pytest.raises(SpecError) as err:
        build_spec(example_doc)
    assert "selection.forecast" in str(err.value)
    example_doc["selection"]["forecast"] = {"p": 0.4, "repetitions": 20, "min_pass": 0.1,
                                            "proxy": "proxy.csv.gz"}
    recorded = build_spec(example_doc).selection.forecast
    assert (recorded.p, recorded.repetitions, recorded.proxy) == (0.4, 20, "proxy.csv.gz")
    assert json.loads(json.dumps(example_doc))["selection"]["forecast"]["p"] == 0.4


def test_a_forecast_made_at_another_n_is_refused_before_any_budget(
        tmp_path: Path, data_csv: Path, capsys: pytest.CaptureFixture) -> None:
    """The paper's narrowed spec loops for ever at n = 3,000 (issue 24): its forecast was made
    at 166,000. The data are read and cleaned, n compared, and nothing else happens."""
    forecast = {"p": 0.3, "repetitions": 10, "min_pass": 0.1, "n": 166_000}
    spec = _spec(tmp_path, forecast)
    out = tmp_path / "run"
    assert _run(spec, data_csv, out) == 2
    err = capsys.readouterr().err
    n = len(load_confidential(load_spec(spec), data_csv))  # the cleaned n: public
    assert "made at n = 166,000" in err and f"the cleaned data have n = {n:,} records" in err
    assert all(way in err for way in WAYS) and f"--n {n} " in err, err
    assert "no budget was spent" in err
    # nothing in the run folder, nothing in the budget store (no ledger, no lock, no folder)
    assert not out.exists() and not (tmp_path / "budgets").exists()
    # --allow-unbounded is the third way out: the same spec runs (and ends: it passes)
    assert _run(spec, data_csv, tmp_path / "ok" / "run", "--allow-unbounded") == 0


def test_sizes_a_forecast_covers() -> None:
    doc = _test_document()
    doc["selection"]["forecast"] = {"p": 0.3, "repetitions": 10, "min_pass": 0.1,
                                    "n": 166_000}
    spec = build_spec(doc)
    assert covered_sizes(spec)[:2] == (149_400, 182_600)  # ±10% of a single n
    for n in (149_400, 166_000, 182_600):
        check_size(spec, n)
    for n in (149_399, 182_601, 3_000):
        with pytest.raises(RunRefused, match=f"n = {n:,} records"):
            check_size(spec, n)
    check_size(spec, 3_000, allow_unbounded=True)
    doc["selection"]["forecast"]["n_max"] = 200_000  # a range: both ends rehearsed
    assert covered_sizes(build_spec(doc))[:2] == (166_000, 200_000)
    del doc["selection"]["forecast"]["n"]
    with pytest.raises(SpecError, match=r"selection\.forecast\.n_max"):
        build_spec(doc)
    del doc["selection"]["forecast"]["n_max"]  # no n recorded: schema.expected_n, else refuse
    with pytest.raises(RunRefused, match=r"neither its forecast nor schema\.expected_n"):
        check_size(build_spec(doc), 20_000)
    doc["schema"]["expected_n"] = [15_000, 25_000]
    check_size(build_spec(doc), 20_000)
    with pytest.raises(RunRefused, match=r"schema\.expected_n covers 15,000–25,000"):
        check_size(build_spec(doc), 30_000)
    bounded = _test_document()
    bounded["selection"].update(max_iterations=1)
    check_size(build_spec(bounded), 3)  # a bounded loop ends whatever n


def test_paper_spec_on_3000_records_is_refused_and_spends_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import gzip

    with gzip.open(REPO / "data_public" / "proxy_sample_166k.csv.gz", "rt") as fh:
        lines = [next(fh) for _ in range(3001)]
    data = tmp_path / "small.csv"
    data.write_text("".join(lines[:3001]))
    out = tmp_path / "run"
    assert _run(REPO / "examples" / "israel_births_2014_narrowed.frozen.json", data, out) == 2
    err = capsys.readouterr().err
    assert "made at n = 166,000" in err and "n = 3,000 records" in err
    assert not out.exists() and not (tmp_path / "budgets").exists()


def test_a_forecast_made_for_another_design_is_refused_before_any_budget(
        tmp_path: Path, data_csv: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 26: the forecast records the hash of the design it was made for; a spec edited
    after its dry run is refused by `workbench run` (any mode), nothing written or spent."""
    from workbench.specification.document import forecast_hash

    doc = _test_document()
    doc["selection"]["max_iterations"] = 1
    doc["selection"]["forecast"] = {"p": 0.5, "repetitions": 4, "min_pass": 0.0,
                                    "spec_sha256": forecast_hash(doc)}
    doc["criteria"][0]["threshold"] *= 2  # edited after the dry run
    spec = tmp_path / "spec.frozen.json"
    save_spec(doc, spec)
    assert _run(spec, data_csv, tmp_path / "run") == 2
    assert "made for another design" in capsys.readouterr().err
    assert not (tmp_path / "budgets").exists() and not (tmp_path / "run").exists()
