"""Missing values (issue 16, part 'missing'): spec policies, declared markers, generator
strategies, the missing-value criteria and their audits, profiling, the simulator, and the
bad-input refusals (must-show 5) and the Adult release (must-show 4)."""

from __future__ import annotations

import copy
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data

from workbench.audits import audit_scenario
from workbench.audits.missing import partial_marginal_scenario
from workbench.cli.main import main as cli
from workbench.criteria import evaluate_criterion
from workbench.evidence.missingness import Mask, apply_masks, parse_masks
from workbench.generators import make_generator
from workbench.generators.missing import MissingLayout, ObservedCounts
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.report.missing_profile import missing_profile
from workbench.specification import SpecError
from workbench.transform import IdentityCodec
from workbench.transform.missing import MissingCodec
from workbench.transform.raw import read_raw
from workbench.validation import build_spec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "adult_missing.json"
FROZEN = ROOT / "examples" / "adult_missing.frozen.json"
SECRET = "Zanzibar-77"  # a value that must never reach a message


@pytest.fixture(autouse=True)
def _in_adult_work(adult_halves: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's structure proxy, out/adult/adult_raw_public_proxy.csv, is relative to the
    working directory."""
    monkeypatch.chdir(adult_halves)


def adult_doc() -> dict:
    return json.loads(EXAMPLE.read_text())


def column(doc: dict, name: str) -> dict:
    return next(c for c in doc["schema"]["columns"] if c["name"] == name)


# --- spec ---------------------------------------------------------------------------------


def test_policies_build_missing_codes_and_labels() -> None:
    doc = adult_doc()
    column(doc, "race").update(missing="category", missing_label="NA")
    spec = build_spec(doc)
    table = spec.table_codec(next(spec.configurations()))
    race, work = table.codec("race"), table.codec("workclass")
    assert isinstance(race, MissingCodec) and not race.reserved and race.labels[-1] == "NA"
    assert isinstance(work, MissingCodec) and work.reserved and work.size == 9
    assert spec.allow_columns == ("workclass", "occupation", "native_country")
    assert spec.column("workclass").max_missing_rate == 0.2
    assert spec.file_format.declared and spec.file_format.missing_markers == ("?",)
    # the public bound on rows complete on {workclass, occupation}: n·(1 − 0.2 − 0.2)
    assert spec.complete_rows_lower_bound(1000, ("workclass", "occupation", "age")) == 600


@pytest.mark.parametrize(("edit", "path"), [
    (lambda d: column(d, "age").update(missing_label="NA"),
     "schema.columns[0].missing_label"),
    (lambda d: column(d, "race").update(missing="category", missing_label="White"),
     "schema.columns[6].missing_label"),
    (lambda d: column(d, "race").update(missing="category", missing_label=""),
     "schema.columns[6].missing_label"),
    (lambda d: d["criteria"].append({"id": "m", "kind": "co_missingness", "threshold": 0.1,
                                     "epsilon": 0.1, "params": {"columns": ["age", "race"]}}),
     "criteria[5].params.columns[0]"),
])
def test_invalid_missing_fields_are_reported_with_paths(edit, path) -> None:
    doc = adult_doc()
    edit(doc)
    doc["budget"]["epsilon_criteria"] = sum(c["epsilon"] for c in doc["criteria"])
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    assert path in str(err.value)


def test_missing_codec_round_trip() -> None:
    codec = MissingCodec(IdentityCodec(("a", "b")), "", reserved=True)
    codes = codec.encode(["a", None, "b"])
    assert codes.tolist() == [0, 2, 1]
    assert codec.encode_labels(pd.Series(["a", None, ""])).tolist() == [0, 2, 2]
    assert list(codec.decode(codes)) == ["a", "", "b"]
    assert math.isnan(MissingCodec(IdentityCodec((1, 2)), "NA", False).numbers()[-1])


# --- reading ------------------------------------------------------------------------------


def write_adult_like(path: Path, rows: list[str]) -> Path:
    header = ("age, workclass, education, marital-status, occupation, relationship, race, sex, "
              "capital-gain, capital-loss, hours-per-week, native-country, Y")
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join([header, *rows]) + "\n")
    return path


GOOD = ("39, State-gov, Bachelors, Never-married, Adm-clerical, Not-in-family, White, Male, "
        "2174, 0, 40, United-States, <=50K")


def test_read_raw_applies_declared_markers_and_source_names(tmp_path) -> None:
    spec = build_spec(adult_doc())
    path = write_adult_like(tmp_path / "a.csv.gz", [GOOD, GOOD.replace("State-gov", "?")])
    frame = read_raw(path, spec.columns, spec.file_format)
    assert list(frame.columns) == list(spec.column_names)
    assert frame["occupation"].tolist() == ["Adm-clerical"] * 2
    assert frame["workclass"].isna().tolist() == [False, True]
    assert frame["native_country"].tolist() == ["United-States"] * 2
    assert frame["age"].dtype == np.float64


# --- must-show 5: bad input fails before any noise, naming the column, printing no value ----


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    forbid = GOOD.replace("Bachelors", "?")  # education forbids missing values
    marker = GOOD.replace("State-gov", "N/A")  # 'N/A' is not a declared marker
    gone = [GOOD.replace("United-States", "?")] * 3  # native_country entirely missing
    return {
        "forbid": (write_adult_like(tmp_path / "f.csv.gz", [GOOD, forbid]), "education"),
        "marker": (write_adult_like(tmp_path / "m.csv.gz", [GOOD, marker]), "workclass"),
        "entirely": (write_adult_like(tmp_path / "e.csv.gz", gone), "native_country"),
    }


@pytest.mark.parametrize("case", ["forbid", "marker", "entirely"])
def test_bad_input_fails_before_noise_naming_the_column(tmp_path, capsys, case) -> None:
    path, name = bad_files(tmp_path)[case]
    store, out = tmp_path / "store", tmp_path / "run"
    code = cli(["run", str(FROZEN), str(path), "--out", str(out), "--budget-store", str(store),
                "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"'{name}'" in err and "Traceback" not in err
    for value in ("N/A", "State-gov", "Bachelors", "United-States", "2174"):
        assert value not in err
    ledgers = list(store.rglob("*.jsonl")) + list(out.rglob("ledger.jsonl"))
    assert all("criterion" not in p.read_text() and "privbayes" not in p.read_text()
               for p in ledgers)  # nothing was measured


def test_generators_refuse_a_rate_above_the_declared_bound() -> None:
    spec = build_spec(adult_doc())
    config = next(spec.configurations())
    domain = spec.table_codec(config).domain
    codes = np.zeros((50, len(domain)), dtype=np.int64)
    j = domain.index("workclass")
    codes[:20, j] = domain.sizes[j] - 1  # 40% > 20% declared
    gen = make_generator("privbayes", degree=1)
    gen.bind_spec(spec, spec.table_codec(config))
    ctx = PrivacyContext.simulation(0)
    with pytest.raises(ValueError, match="'workclass'") as err:
        gen.fit(codes, domain, 1.0, ctx)
    assert "0.4" not in str(err.value) and not ctx.records


# --- generators ---------------------------------------------------------------------------


def toy_spec() -> tuple:
    doc = adult_doc()
    keep = {"sex", "race", "workclass", "occupation", "Y"}
    doc["schema"]["columns"] = [c for c in doc["schema"]["columns"] if c["name"] in keep]
    doc["transformations"]["columns"] = {
        k: v for k, v in doc["transformations"]["columns"].items() if k in keep}
    doc["faithfulness"] = {"exact": sorted(keep), "distance": {}, "alpha": 1}
    doc["criteria"] = [c for c in doc["criteria"]
                       if c["kind"] in ("missing_rate", "co_missingness")]
    for c in doc["criteria"]:
        c["params"]["columns"] = ["workclass", "occupation"]
    doc["budget"]["epsilon_criteria"] = sum(c["epsilon"] for c in doc["criteria"])
    for key in ("configurations", "forecast"):  # the example's, for its own columns
        doc["selection"].pop(key, None)
    spec = build_spec(doc)
    config = next(spec.configurations())
    return spec, config, spec.table_codec(config)


def toy_codes(table, n: int = 3000, seed: int = 0) -> np.ndarray:
    """Dependent toy data: occupation follows workclass; 15% / 10% MCAR-ish holes."""
    rng = np.random.default_rng(seed)
    dom = table.domain
    codes = np.column_stack([rng.integers(0, s - (1 if isinstance(table.codec(n_), MissingCodec)
                                                   else 0), n)
                             for n_, s in zip(dom.names, dom.sizes, strict=True)])
    w, o = dom.index("workclass"), dom.index("occupation")
    codes[:, o] = codes[:, w] % (dom.sizes[o] - 1)
    codes[rng.random(n) < 0.15, w] = dom.sizes[w] - 1
    codes[rng.random(n) < 0.10, o] = dom.sizes[o] - 1
    return codes


@pytest.mark.parametrize("strategy", ["complete_rows", "partial", "impute"])
@pytest.mark.parametrize("family", ["privbayes", "workload"])
def test_strategies_spend_exactly_epsilon_and_keep_missing_rates(family, strategy) -> None:
    spec, _, table = toy_spec()
    codes = toy_codes(table)
    hyper = {"degree": 2} if family == "privbayes" else {"iters": 200}
    gen = make_generator(family, missing_strategy=strategy, **hyper)
    gen.bind_spec(spec, table)
    if family == "workload":  # the toy criteria ask for no 2-way marginal: measure all pairs
        from workbench.generators.workload import all_pairs_workload

        gen.bind_workload(all_pairs_workload(table.domain.names, 0.25))
    # seeded noise: the rates and the dependence below are read off a noisy fit
    ctx = PrivacyContext.simulation(1, noise=SeededNoise(1))
    gen.fit(codes, table.domain, 50.0, ctx)
    assert math.isclose(sum(r.epsilon for r in ctx.records), 50.0, rel_tol=1e-12)
    assert any("missingness pattern" in r.purpose for r in ctx.records)
    synth = gen.sample(len(codes), ctx.rng)
    layout = gen.pattern_.layout
    assert np.abs(layout.missing(synth).mean(0) - layout.missing(codes).mean(0)).max() < 0.03
    w, o = table.domain.index("workclass"), table.domain.index("occupation")
    both = ~layout.missing(synth).any(axis=1)
    # the dependence occupation = workclass mod 14 survives in the observed values
    assert (synth[both, o] == synth[both, w] % 14).mean() > 0.6


def test_partial_marginal_reads_rows_complete_on_its_own_columns() -> None:
    _, _, table = toy_spec()
    codes = toy_codes(table)
    layout = MissingLayout.of(table.domain, ("workclass", "occupation"), (0.2, 0.2))
    view = ObservedCounts(codes, layout, complete_rows=False)
    w, s = table.domain.index("workclass"), table.domain.index("sex")
    ok = codes[:, w] != table.domain.sizes[w] - 1
    expected = np.zeros((8, 2), dtype=np.int64)
    np.add.at(expected, (codes[ok, w], codes[ok, s]), 1)
    assert np.array_equal(view.marginal(("workclass", "sex")), expected)
    complete = ObservedCounts(codes, layout, complete_rows=True)
    assert complete.marginal(("sex",)).sum() == (~layout.missing(codes).any(axis=1)).sum()
    assert view.rows_bound(("workclass", "sex")) == 2400  # 3000·(1 − 0.2)


# --- criteria and audits (must-show 3, partial part) ---------------------------------------


def test_missing_value_criteria_exact_values_and_sensitivities() -> None:
    spec, config, table = toy_spec()
    real = toy_codes(table, 400, 1)
    synth = real.copy()
    w = table.domain.index("workclass")
    synth[:40, w] = table.domain.sizes[w] - 1
    gained = 40 - int((real[:40, w] == table.domain.sizes[w] - 1).sum())
    from workbench.criteria import exact_errors

    assert exact_errors(spec, config, real, synth, PrivacyContext.simulation(0),
                        table=spec.table_codec(config))[
        "missing_rates"] == pytest.approx(gained / 400)
    res = evaluate_criterion(spec, config, "missing_rates", real, synth,
                             PrivacyContext.simulation(0), table=spec.table_codec(config))
    assert res.sensitivity == pytest.approx(1 / 400) and res.mechanism == "laplace"


def test_observed_marginal_sensitivity_uses_the_public_bound() -> None:
    from workbench.audits.criteria import audit_case, case_spec
    from workbench.criteria import criterion_sensitivity
    from workbench.transform.cells import PairedCells

    spec, config = case_spec("observed_marginal_error")
    real = audit_case("observed_marginal_error").real
    table = spec.table_codec(config)
    pc = PairedCells.from_codes(real, real, table.domain)
    delta, details = criterion_sensitivity(spec, table, spec.criterion("observed_marginal_error"),
                                           pc)
    assert delta == pytest.approx(1 / 3) and details["complete_rows_lower_bound"] == 3


def test_partial_observation_marginal_audit() -> None:
    scn = partial_marginal_scenario()
    row = audit_scenario(scn)
    assert scn.tightness == pytest.approx(1.0)
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()


# --- simulator, profile, panel --------------------------------------------------------------


def test_mcar_mar_mnar_masks() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.integers(0, 100, 20_000).astype(float),
                          "d": rng.integers(0, 100, 20_000).astype(float),
                          "y": rng.integers(0, 2, 20_000)})
    mcar = apply_masks(frame, [Mask("MCAR", 0.2)], seed=1, exclude=["y"])
    assert mcar["x"].isna().mean() == pytest.approx(0.2, abs=0.01) and not mcar["y"].isna().any()
    mar = apply_masks(frame, parse_masks(["MAR:0.2:x:d"]), seed=1)
    high = frame["d"] > frame["d"].median()
    assert mar["x"].isna().mean() == pytest.approx(0.2, abs=0.01)
    assert mar["x"][high].isna().mean() > 2 * mar["x"][~high].isna().mean()
    mnar = apply_masks(frame, parse_masks(["MNAR:0.2:x"]), seed=1)
    assert frame["x"][mnar["x"].isna()].mean() > frame["x"].mean() + 10
    with pytest.raises(ValueError, match="depends on"):
        parse_masks(["MAR:0.2:x"])


def test_profile_counts_patterns_and_complete_rows_per_marginal() -> None:
    spec = build_spec(adult_doc())
    frame = read_raw(shared_data("adult/adult_train.csv.gz"), spec.columns, spec.file_format)
    prof = missing_profile(frame, spec)
    assert prof.rates["workclass"] == pytest.approx(0.0564, abs=1e-4)
    assert dict(prof.patterns)[("workclass", "occupation")] == 1809
    complete = {c: k for c, k, _ in prof.marginals}
    assert complete[("workclass", "occupation")] == 32561 - 1809 - 27 - 7
    assert all(bound <= k for _, k, bound in prof.marginals)


def test_profile_cli_draws_the_upset_plot(tmp_path, capsys) -> None:
    png = tmp_path / "upset.png"
    code = cli(["profile", str(EXAMPLE), str(shared_data("adult/adult_train.csv.gz")),
                "--upset", str(png)])
    out = capsys.readouterr().out
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert "missingness patterns" in out and "complete rows behind each workload marginal" in out


def test_missingness_panel_follows_the_mcar_slider() -> None:
    from workbench.widgets.editors.missingness_panel import MissingnessPanel
    from workbench.widgets.model.lab import ProxyLab
    from workbench.widgets.model.session import Session

    spec = build_spec(adult_doc())
    proxy = read_raw(shared_data("adult/adult_train.csv.gz"), spec.columns,
                     spec.file_format).iloc[:2000]
    panel = MissingnessPanel(Session(adult_doc()), ProxyLab(proxy))
    before = panel.profile.rates["workclass"]
    panel.mcar.value = 0.3
    assert panel.profile.rates["workclass"] > before + 0.2
    assert panel.profile.rates["age"] == 0  # forbid columns are never masked
    assert "complete rows" in panel.text.value and panel.plot.value[:4] == b"\x89PNG"


# --- must-show 4: the frozen example on an Adult-shaped CSV ---------------------------------


@pytest.mark.slow
def test_frozen_example_releases_adult_missing_rates_and_verifies(tmp_path) -> None:
    source = pd.read_csv(shared_data("adult/adult_train.csv.gz"), dtype=str,
                         skipinitialspace=True, keep_default_na=False)
    sample = source.sample(frac=1.0, random_state=3)  # Adult's columns, another file
    path = tmp_path / "adult_sample.csv"
    sample.to_csv(path, index=False)
    # a single attempt may end in ⊥ (T = 1); retrying is the documented way (--spend-again)
    for attempt in range(3):
        out = tmp_path / f"run{attempt}"
        code = cli(["run", str(FROZEN), str(path), "--out", str(out), "--budget-store",
                    str(tmp_path / "store"), "--quiet", *(["--spend-again"] if attempt else [])])
        if code == 0:
            break
    assert code == 0
    assert cli(["verify", str(out)]) == 0
    release = pd.read_csv(out / "release" / "release.csv", dtype=str, keep_default_na=False)
    for name, src in (("workclass", "workclass"), ("occupation", "occupation"),
                      ("native_country", "native-country")):
        given = (sample[src] == "?").mean()
        assert abs((release[name] == "").mean() - given) < 0.015, name


def test_example_is_the_script_output() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("mk", ROOT / "scripts" / "make_adult_missing.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made, example = module.document(), adult_doc()
    # the design assistant derives the criteria's ε and the selection (its configuration holds
    # ε_gen, the budget's sums become derived; the forecast of exactly this design)
    selection = example["selection"]
    assert selection["forecast"]["n"] == example["schema"]["expected_n"][0]
    (config,) = selection["configurations"]
    assert config["generator"]["epsilon"] == made["budget"]["epsilon_generator"]
    (grid,) = example["generator"]["search_space"]
    assert grid.pop("epsilon") == [made["budget"]["epsilon_generator"]]
    for doc in (made, example):
        for criterion in doc["criteria"]:
            assert criterion.pop("epsilon") > 0
        doc["budget"].pop("epsilon_generator", None)
        doc["budget"].pop("epsilon_criteria", None)
        del doc["selection"]
    assert made == example
    frozen = json.loads(FROZEN.read_text())
    assert {k: v for k, v in frozen.items() if k != "frozen"} == copy.deepcopy(adult_doc())


def _with_allow_hours(doc: dict, criterion: dict) -> dict:
    """Adult with hours_per_week declared missing: allow, and one more criterion."""
    column(doc, "hours_per_week")["missing"] = "allow"
    doc["criteria"].append(criterion)
    doc["budget"]["epsilon_criteria"] = round(
        sum(c["epsilon"] for c in doc["criteria"]), 10)
    return doc


def test_numeric_criteria_on_a_column_that_may_be_missing_are_refused_before_any_noise() -> None:
    """A mean over a column whose missing code has no number used to fail inside the run,
    after the generator had spent ε; the validator now names the criterion's field."""
    mean = {"id": "mean_hours", "kind": "conditional_mean", "threshold": 2, "epsilon": 0.1,
            "bounds": [1, 99], "params": {"target": "hours_per_week", "group_by": ["sex"]}}
    with pytest.raises(SpecError) as info:
        build_spec(_with_allow_hours(adult_doc(), mean))
    message = str(info.value)
    assert "criteria[5].params.target" in message and "'hours_per_week' may be missing" in message
    regression = {"id": "reg", "kind": "regression_coefficients", "threshold": 30,
                  "epsilon": 0.5, "params": {"target": "age", "features": "all_other"}}
    with pytest.raises(SpecError, match=r"criteria\[5\]\.params\.features: column 'workclass'"):
        build_spec(_with_allow_hours(adult_doc(), regression))
    regression["params"]["features"] = ["sex", "education"]  # complete columns only
    assert build_spec(_with_allow_hours(adult_doc(), regression)).criterion("reg")
