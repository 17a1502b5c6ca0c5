"""Must-show 5: a γ = 0, T = ∞ spec without a forecast is refused by ``workbench run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_engine import _test_document

from workbench.cli.main import main
from workbench.engine import RunRefused
from workbench.engine.unbounded import MIN_FORECAST_P, check_bounded, unbounded_problem
from workbench.proxy import sample_proxy
from workbench.spec import SpecError
from workbench.validation import build_spec, load_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
FIXES = ("selection.gamma > 0", "selection.max_iterations = 1", "--allow-unbounded")


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
