"""Co-design widgets: behaviour through widget values, button clicks and session observers."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.constraints import parse
from workbench.criteria import sensitivity
from workbench.privacy import laplace_sigma
from workbench.transform.clean import clean
from workbench.trial import bind
from workbench.validation import build_spec, load_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "israel_births_2014.json"
PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"


# --- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def proxy(proxy_slice) -> pd.DataFrame:
    """The shared 20k-row public slice (conftest)."""
    return proxy_slice


@pytest.fixture(scope="module")
def lab(proxy):
    """One ProxyLab for the module: its caches are keyed by content, so sharing is safe."""
    from workbench.widgets import ProxyLab

    return ProxyLab(proxy, seed=0)


@pytest.fixture
def session(example_doc, proxy):
    from workbench.widgets import Session

    return Session(example_doc, proxy)


@pytest.fixture
def app(session, lab, tmp_path):
    from workbench.widgets import CoDesignApp

    lab.preview.transforms, lab.preview.hyper_index, lab.preview.min_count = {}, 0, None
    lab.preview.seed = 0
    lab.preview.samples = 1  # worked numbers of one quick sample; averaging is tested apart
    return CoDesignApp(session, lab, export_path=str(tmp_path / "design.frozen.json"))


def _index(doc: dict, criterion_id: str) -> int:
    return next(i for i, c in enumerate(doc["criteria"]) if c["id"] == criterion_id)


# --- the session (pure Python) -----------------------------------------------------------------
def test_the_model_never_imports_ipywidgets():
    """Every module of ``workbench.widgets.model`` loads without ipywidgets, directly or not."""
    model = REPO / "workbench" / "widgets" / "model"
    modules = sorted(p.stem for p in model.glob("*.py") if p.stem != "__init__")
    assert {"session", "lab", "budget", "readouts", "sampling"} <= set(modules)
    code = (
        "import importlib, sys; from workbench.widgets import Session; "
        f"[importlib.import_module('workbench.widgets.model.' + m) for m in {modules!r}]; "
        "assert 'ipywidgets' not in sys.modules, 'the model pulled in ipywidgets'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_the_quick_sample_is_the_engines_candidate(example_spec, lab):
    """With the same seeds, the widgets' quick S equals the S of ``run_iteration``."""
    from workbench.engine.iteration import run_iteration
    from workbench.privacy import PrivacyContext
    from workbench.privacy.noise import SeededNoise
    from workbench.widgets.model.sampling import quick_sample

    config = lab.configuration(example_spec)
    codes = lab.real_codes(example_spec, config)
    quick = quick_sample(example_spec, config, codes, seed=5, noise=SeededNoise(11))
    ctx = PrivacyContext.simulation(
        5, neighbour=example_spec.budget.neighbour, noise=SeededNoise(11)
    )
    candidate = run_iteration(bind(example_spec, config), pd.DataFrame(), ctx, real_codes=codes)
    assert candidate.codes is not None and np.array_equal(quick.codes, candidate.codes)


def test_apply_updates_draft_and_spec(session):
    assert session.valid and session.spec is not None
    assert session.apply("criteria[0].threshold", 0.02) is True
    assert session.draft["criteria"][0]["threshold"] == 0.02
    assert session.spec.criteria[0].threshold == 0.02


def test_invalid_edit_keeps_last_valid_spec_and_records_errors_by_path(session):
    before = session.spec
    assert session.apply("criteria[0].threshold", -1) is False
    assert session.errors == {"criteria[0].threshold": ("must be > 0",)}
    assert session.spec is before and session.spec.criteria[0].threshold == 0.01
    assert session.draft["criteria"][0]["threshold"] == -1
    assert session.errors_for("criteria[0]") == ["threshold: must be > 0"]


def test_undo_and_redo_restore_drafts(session):
    session.apply("criteria[0].threshold", 0.02)
    session.apply("criteria[0].threshold", -1)
    assert session.undo() and session.valid
    assert session.draft["criteria"][0]["threshold"] == 0.02
    assert session.undo() and session.draft["criteria"][0]["threshold"] == 0.01
    assert not session.undo()
    assert session.redo() and session.draft["criteria"][0]["threshold"] == 0.02


def test_observers_hear_every_change(session):
    seen = []
    session.observe(seen.append)
    session.apply("criteria[0].threshold", -1)
    session.undo()
    session.apply("criteria[0].threshold", 0.01)  # no change: no notification
    assert [(c.kind, c.valid) for c in seen] == [("edit", False), ("undo", True)]
    assert seen[0].paths == ("criteria[0].threshold",)


def test_criterion_epsilon_edit_keeps_epsilon_criteria_in_step(session):
    session.apply("criteria[1].epsilon", 0.4)
    assert session.valid
    assert session.draft["budget"]["epsilon_criteria"] == pytest.approx(1.09)
    assert session.spec.epsilon_total == pytest.approx(2 * (4 + 1.09))


def test_from_files_reads_only_the_spec_columns_of_the_proxy():
    from workbench.widgets import Session

    s = Session.from_files(EXAMPLE, PROXY)
    assert list(s.proxy.columns) == [c.name for c in s.spec.columns] and len(s.proxy) > 0


def test_freeze_record_is_dropped_from_a_loaded_draft(example_doc, proxy):
    from workbench.validation import freeze_document
    from workbench.widgets import Session

    s = Session(freeze_document(example_doc), proxy)
    assert "frozen" not in s.draft and s.valid


# --- pure helpers --------------------------------------------------------------------------------
def test_rebalance_keeps_the_total_and_scales_the_rest_proportionally():
    from workbench.specification.derived import budget_items, document_plan
    from workbench.widgets.model.budget import rebalance

    doc = json.loads(EXAMPLE.read_text())
    items = budget_items(doc)
    new = rebalance(items, "relative_1way", 0.5, 9.98)
    after = copy.deepcopy(doc)
    for path, value in new.items():
        i = None if path.startswith("budget") else int(path.split("[")[1].split("]")[0])
        if i is None:
            after["budget"]["epsilon_generator"] = value
        else:
            after["criteria"][i]["epsilon"] = value
    assert document_plan(after).epsilon_total == pytest.approx(9.98, abs=1e-12)
    factor = new["budget.epsilon_generator"] / 4
    assert new["criteria[0].epsilon"] == pytest.approx(0.01 * factor)
    with pytest.raises(ValueError, match="locked"):
        rebalance(items, "relative_1way", 6.0, 9.98)


def test_contradiction_definition():
    from workbench.transform import ColumnSpec
    from workbench.widgets.model.rule_checks import (
        conflict_warnings,
        contradict,
        removes_everything,
    )

    cols = {
        "age": ColumnSpec("age", "integer", None, (10.0, 65.0), "forbid", "drop"),
        "sex": ColumnSpec("sex", "categorical", ("M", "F"), None, "forbid", "drop"),
    }
    assert contradict(parse("age < 30"), parse("age >= 30"), cols)
    assert not contradict(parse("age < 30"), parse("age > 30"), cols)  # age 30 survives
    assert contradict(parse("sex == 'M'"), parse("sex != 'M'"), cols)
    assert removes_everything(parse("age >= 10"), cols)  # the bounds start at 10
    assert not removes_everything(parse("age > 10"), cols)
    warnings = conflict_warnings([("a", parse("age < 30")), ("b", parse("age >= 25"))], cols)
    assert "contradicts 'b'" in warnings["a"][0] and "contradicts 'a'" in warnings["b"][0]


# --- the app: edits through widget values --------------------------------------------------------
def test_app_has_the_tabs_and_a_hook_for_more(app):
    import ipywidgets as widgets

    from workbench.widgets.model.steps import STEPS

    assert app.tabs.titles == (
        "Data & schema", "Metadata", "Missing values",  # added by add_tab in its step (16)
        "Constraints", "Faithfulness", "Criteria", "Generator", "Budget", "Feasibility",
        "Export",
    )
    assert app.steps_of == sorted(app.steps_of, key=[s.key for s in STEPS].index)
    extra = type("Extra", (), {"widget": widgets.Label("later"), "calls": 0})()
    extra.refresh_preview = lambda: setattr(extra, "calls", extra.calls + 1)
    app.add_tab("Extra", extra, index=6)
    assert app.tabs.titles[6] == "Extra" and app.tab("Extra") is extra
    app.preview.seed.value = 1  # a preview change reaches the added tab
    assert extra.calls == 1


def test_setting_a_threshold_widget_updates_the_draft(app, session):
    row = app.criteria.row("regression_mae")
    row.threshold.value = 4.0
    i = _index(session.draft, "regression_mae")
    assert session.draft["criteria"][i]["threshold"] == 4
    assert session.spec.criterion("regression_mae").threshold == 4.0
    assert row.readout.threshold == 4.0


def test_invalid_edit_shows_the_error_beside_the_field_and_keeps_the_last_valid(app, session):
    row = app.criteria.row("regression_mae")
    row.threshold.value = -1.0
    assert "must be &gt; 0" in row.errors["threshold"].value
    assert row.errors["epsilon"].value == ""
    assert session.spec.criterion("regression_mae").threshold == 5.0
    assert "draft invalid" in app.status.value
    assert "last valid" in row.readout_html.value


def test_undo_button_restores_the_previous_state(app, session):
    row = app.criteria.row("regression_mae")
    row.threshold.value = 4.0
    row.threshold.value = -1.0
    app.undo_button.click()
    assert session.valid and row.threshold.value == 4.0 and row.errors["threshold"].value == ""
    app.undo_button.click()
    assert row.threshold.value == 5.0
    assert app.undo_button.disabled
    app.redo_button.click()
    assert row.threshold.value == 4.0


def test_epsilon_edit_gives_the_engines_sigma(app, session, proxy):
    row = app.criteria.row("regression_mae")
    row.epsilon.value = 0.08
    n = len(clean(proxy, session.spec))
    delta = sensitivity.regression_mae(1400, 4600, n)
    assert row.readout.sensitivity == delta
    assert row.readout.sigma == laplace_sigma(delta, 0.08)
    assert f"{laplace_sigma(delta, 0.08):.4g}" in row.readout_html.value
    marg = app.criteria.row("marginals")
    marg.epsilon.value = 0.02
    assert marg.readout.sigma == laplace_sigma(sensitivity.one_over_n(n), 0.02)


def test_relative_one_way_readouts_follow_props_4_to_6(app, session, lab):
    row = app.criteria.row("relative_1way")
    row.epsilon.value = 0.2
    row.p.value = 0.1
    spec = session.spec
    synth = lab.sample(spec, lab.configuration(spec)).codes
    table = spec.table_codec(lab.configuration(spec))
    s_min = min(int(np.bincount(synth[:, j], minlength=size).min())
                for j, size in enumerate(table.domain.sizes))
    delta = sensitivity.relative_one_way(s_min, 2.0, 1)
    r = row.readout
    assert r.sensitivity == delta and r.sigma == laplace_sigma(delta, 0.2)
    assert r.adjusted_threshold == sensitivity.false_pass_threshold(2.0, 0.1, delta, 0.2)
    # P(pass) = F_Laplace(min(T, T′) − value) with b = Δ/ε
    x, b = min(2.0, r.adjusted_threshold) - r.value, delta / 0.2
    expected = 0.5 * math.exp(x / b) if x < 0 else 1 - 0.5 * math.exp(-x / b)
    assert r.probability_pass == pytest.approx(expected)


def test_preview_configuration_drives_the_readouts(app, session, lab):
    before = app.criteria.row("relative_1way").readout
    app.preview.alternatives["mother_age"].value = "single_years"
    assert lab.configuration(session.spec).transform_of("mother_age") == "single_years"
    after = app.criteria.row("relative_1way").readout
    assert after is not before and after.sigma == laplace_sigma(after.sensitivity, 0.3)
    assert "n = " in app.preview.status.value


def test_budget_total_shows_9_98_and_follows_the_generator_slider(app):
    assert "<b>9.98</b>" in app.budget.total.value
    app.select("Budget")
    assert app.budget.bar.value and app.budget.sigma_plot.value
    drawn = bytes(app.budget.bar.value)
    app.budget.eps_generator.value = 3.0
    assert bytes(app.budget.bar.value) != drawn
    assert "<b>7.98</b>" in app.budget.total.value
    assert app.budget.total_value == pytest.approx(7.98)
    app.select("Criteria")  # while hidden, the plots are not redrawn ...
    drawn = bytes(app.budget.bar.value)
    app.budget.eps_generator.value = 3.5
    assert bytes(app.budget.bar.value) == drawn and "<b>8.98</b>" in app.budget.total.value
    app.select("Budget")  # ... and are brought up to date when the tab is opened
    assert bytes(app.budget.bar.value) != drawn


def test_locking_the_total_rebalances_the_other_epsilons(app, session):
    budget = app.budget
    budget.lock.value = True
    assert budget.locked_total.value == pytest.approx(9.98)
    before = session.draft
    budget.sliders["relative_1way"].value = 0.5
    after = session.draft
    assert session.valid
    assert session.spec.epsilon_total == pytest.approx(9.98, abs=1e-9)
    assert after["criteria"][1]["epsilon"] == 0.5
    ratio = after["budget"]["epsilon_generator"] / before["budget"]["epsilon_generator"]
    assert ratio < 1
    for b, a in zip(before["criteria"], after["criteria"], strict=True):
        if b["id"] != "relative_1way":
            assert a["epsilon"] == pytest.approx(b["epsilon"] * ratio)
    assert budget.sliders["generator"].value == pytest.approx(4 * ratio)
    budget.sliders["relative_1way"].value = 6.0  # impossible under the lock
    assert "locked" in budget.message.value
    assert session.draft["criteria"][1]["epsilon"] == 0.5
    assert budget.sliders["relative_1way"].value == 0.5


def test_schema_editor_edits_edges_and_shows_sizes_and_histogram(app, session):
    schema = app.schema
    schema.column.value = "mother_age"
    panel = schema.panel("mother_age")
    alt = panel.alternatives[0]
    assert alt.size.value == "<b>9</b> codes"
    assert schema.histogram.value  # a PNG was drawn
    assert schema.hist_counts.sum() == len(clean(app.lab.proxy, session.spec))
    alt.edges.value = "18, 20, 25, 30, 35, 40"
    path = "transformations.columns.mother_age.alternatives[0].edges"
    assert session.get(path) == [18, 20, 25, 30, 35, 40]
    assert alt.size.value == "<b>7</b> codes" and schema.hist_note.value.count("7 bins") == 1
    alt.edges.value = "18, x"  # not parseable: shown at once, nothing applied
    assert "not a number" in alt.errors["edges"].value
    assert session.get(path) == [18, 20, 25, 30, 35, 40]
    alt.edges.value = "20, 18"  # parseable but invalid: a spec error at that path
    assert "strictly increasing" in alt.errors["edges"].value
    last_valid = session.spec.document["transformations"]["columns"]["mother_age"]
    assert list(last_valid["alternatives"][0]["edges"]) == [18, 20, 25, 30, 35, 40]


def test_schema_editor_bounds_and_type(app, session):
    panel = app.schema.panel("parity")
    panel.bounds.value = "1, 40"
    assert session.get("schema.columns[2].bounds") == [1, 40]
    panel.type.value = "ordinal"
    col = session.get("schema.columns[2]")
    assert col["type"] == "ordinal" and col["domain"][:3] == [1, 2, 3] and "bounds" not in col


def test_constraint_editor_reports_syntax_errors_and_removed_shares(app, session, proxy):
    editor = app.constraints
    row = editor.rows["raw"][1]
    expected = float(parse("birth_weight < 500 or birth_weight > 5500").evaluate_raw(proxy).mean())
    assert row.removed_share == pytest.approx(expected)
    assert f"{expected:.2%}" in row.share.value
    row.reject_if.value = "birth_weight <"
    assert "syntax error" in row.error.value and "position 14" in row.error.value
    assert not session.valid and "constraints.raw[1].reject_if" in session.errors
    row.reject_if.value = "birth_weight < 2500"
    assert session.valid
    expected = float((proxy["birth_weight"] < 2500).mean())
    assert row.removed_share == pytest.approx(expected)
    assert "more than 5.00%" in row.warning.value  # the low-weight share is above 5%


def test_constraint_editor_adds_rules_and_flags_contradictions(app, session):
    editor = app.constraints
    for name, text in (("young", "mother_age < 30"), ("old", "mother_age >= 25")):
        editor.new_name["synthetic"].value = name
        editor.new_rule["synthetic"].value = text
        assert editor.add_rule("synthetic")
    rows = editor.rows["synthetic"]
    assert [r.name.value for r in rows[-2:]] == ["young", "old"]
    assert "contradicts &#x27;old&#x27;" in rows[-2].warning.value
    assert rows[-1].binned_share is not None
    editor.new_name["raw"].value = "bad"
    editor.new_rule["raw"].value = "mother_age <"
    assert not editor.add_rule("raw")
    assert "syntax error" in editor.add_error["raw"].value
    rows[-1].remove.click()
    assert len(session.draft["constraints"]["synthetic"]) == 5


def test_faithfulness_editor_edits_the_rule_and_previews_beta(app, session):
    editor = app.faithfulness
    assert "locks 35-39" in editor.locked.value
    editor.columns["birth_month"].mode.value = "distance"
    editor.columns["birth_month"].weight.value = 2.0
    rule = session.draft["faithfulness"]
    assert "birth_month" not in rule["exact"] and rule["distance"]["birth_month"] == 2
    editor.alpha.value = 2.0
    editor.must_match.value = "mother_age = 37, gestation_week = 37"
    assert session.draft["faithfulness"]["must_match"][1] == {"column": "gestation_week",
                                                               "value": 37}
    assert session.valid
    editor.preview_button.click()
    result = editor.last_preview
    assert 0 <= result.beta <= 1 and result.alpha == 2
    assert result.matched == tuple(sorted(result.matched))  # more cost, more matches
    assert f"{result.beta:.4f}" in editor.preview.value and editor.cost_plot.value


def test_criteria_editor_adds_and_removes_criteria(app, session):
    editor = app.criteria
    editor.new_kind.value = "max_ecdf"
    assert editor.add_criterion()
    row = editor.row("max_ecdf")
    assert row.readout is not None and row.readout.sensitivity is not None
    editor.new_kind.value = "conditional_mean"
    editor.add_criterion()
    mean = editor.row("conditional_mean")
    mean.group_by.value = ("birth_sex",)
    assert session.get("criteria[9].params.group_by") == ["birth_sex"]
    assert session.valid and mean.readout.sigma is not None
    mean.remove.click()
    assert [c["id"] for c in session.draft["criteria"]][-1] == "max_ecdf"
    assert session.draft["budget"]["epsilon_criteria"] == pytest.approx(1.0)


def test_export_writes_a_frozen_spec_with_the_edited_threshold(app, session, tmp_path):
    app.criteria.row("regression_mae").threshold.value = 4.0
    app.export.acknowledge.value = True  # the paper's design forecasts below 60% on the proxy
    app.export.freeze.click()
    spec_path, signoff = app.export.written
    frozen = load_spec(spec_path, require_frozen=True)
    assert frozen.criterion("regression_mae").threshold == 4.0
    assert frozen.sha256 == app.export.sha256
    text = signoff.read_text()
    assert frozen.sha256 in text and "## Signatures" in text and "regression_mae" in text
    assert "Readouts on the public proxy" in text


def test_export_refuses_an_invalid_draft(app, session):
    app.criteria.row("regression_mae").threshold.value = -1.0
    assert app.export.export() is None
    assert "invalid" in app.export.status.value and app.export.written is None


def test_session_without_proxy_still_edits(example_doc):
    from workbench.widgets import CoDesignApp, Session

    s = Session(example_doc)
    app = CoDesignApp(s)
    app.criteria.row("marginals").threshold.value = 0.02
    assert s.draft["criteria"][0]["threshold"] == 0.02
    assert "No proxy" in app.criteria.message.value
    assert build_spec(s.draft).criteria[0].threshold == 0.02


@pytest.mark.slow
def test_feasibility_tab_matches_the_dry_run_api_and_narrows(tmp_path, monkeypatch) -> None:
    """The tab's records equal ``dry_run``'s for the same seeds; narrowing edits the draft."""
    from workbench.dryrun import InlineExecutor, dry_run, select_configurations
    from workbench.evidence.sampler import sample_proxy
    from workbench.specification.document import read_document
    from workbench.widgets import CoDesignApp, Session

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    doc = read_document(REPO / "examples" / "israel_births_2014_narrowed.frozen.json")
    proxy = sample_proxy(30_000, seed=3)
    session = Session(doc, proxy)
    app = CoDesignApp(session, export_path=str(tmp_path / "x.json"))
    panel = app.feasibility
    assert "Feasibility" in app.tabs.titles
    panel.limit.value, panel.repetitions.value, panel.workers.value = 2, 2, 0
    panel.noise.value = "seeded"
    result = panel.run()
    assert result is not None and panel.progress.value == panel.progress.max == 4
    assert "<table" in panel.table.value and len(panel.heatmap.value) > 1000
    configs = select_configurations(session.spec, None, 2, 0)
    direct = dry_run(session.spec, proxy, configs, repetitions=2, seed=0,
                     executor=InlineExecutor(), cache=False, progress=False, noise="seeded")
    assert [r.to_dict() | {"seconds": 0} for r in result.records] == [
        r.to_dict() | {"seconds": 0} for r in direct.records]
    panel.min_pass.value = 0.0
    assert panel.show_forecast() is not None
    assert panel.apply_narrowing()
    kept = session.draft["selection"]["configurations"]
    assert len(kept) == 2 and session.valid


def test_feasibility_tab_rehearses_at_the_expected_size(tmp_path, monkeypatch) -> None:
    """Issue 15: the tab resamples the proxy to n like ``workbench dryrun --n`` — blank takes
    ``schema.expected_n``, a range runs both ends and the low end counts."""
    from workbench.dryrun import InlineExecutor, dry_run, select_configurations
    from workbench.evidence.sampler import sample_proxy
    from workbench.specification.document import read_document
    from workbench.widgets import CoDesignApp, Session

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    doc = read_document(REPO / "examples" / "israel_births_2014_narrowed.frozen.json")
    doc.pop("frozen", None)
    doc["schema"]["expected_n"] = 4_000
    proxy = sample_proxy(12_000, seed=3)
    session = Session(doc, proxy)
    panel = CoDesignApp(session, export_path=str(tmp_path / "x.json")).feasibility
    panel.limit.value, panel.repetitions.value, panel.workers.value = 1, 1, 0
    panel.noise.value = "seeded"
    result = panel.run()
    assert result is not None and result.n == 4_000 and panel.sized.sizes == (4_000,)
    assert "at n = 4,000" in panel.status.value
    configs = select_configurations(session.spec, None, 1, 0)
    direct = dry_run(session.spec, proxy, configs, repetitions=1, seed=0, n=4_000,
                     executor=InlineExecutor(), cache=False, progress=False, noise="seeded")
    assert [r.to_dict() | {"seconds": 0} for r in result.records] == [
        r.to_dict() | {"seconds": 0} for r in direct.records]
    panel.n.value = "3000:5000"
    result = panel.run()
    assert panel.sized.sizes == (3_000, 5_000) and result.n == 3_000  # the low end counts
    assert "n=3,000" in panel.table.value and "n=5,000" in panel.table.value
    panel.n.value = "lots"
    assert panel.run() is None and "LOW:HIGH" in panel.status.value


def test_false_pass_readout_follows_the_threshold(app) -> None:
    """P(false pass) is judged 10% above T whatever the proxy says (one definition), so T
    moves it."""
    from workbench.criteria.false_pass import FALSE_PASS_MARGIN

    row = app.criteria.row("mean_birth_weight")
    row.threshold.value = 150.0
    high = row.readout
    row.threshold.value = 120.0  # above the record-sample proxy's value (its noise varies)
    low = row.readout
    assert high.value < 120  # the proxy's candidate passes both: the readout uses T·1.1
    b = low.sensitivity / low.epsilon
    assert low.false_pass == pytest.approx(0.5 * math.exp(-120 * FALSE_PASS_MARGIN / b))
    assert low.false_pass > high.false_pass > 0


def test_budget_arithmetic_follows_a_single_attempt(example_doc):
    """With selection.max_iterations = 1 every loop ε counts once, in total, bar and rebalance."""
    from workbench.specification.derived import budget_items, document_plan
    from workbench.widgets.model.budget import rebalance, segments

    example_doc["selection"] = {"gamma": 0, "max_iterations": 1, "epsilon_0": 0}
    assert document_plan(example_doc).epsilon_total == pytest.approx(4.99)
    assert document_plan(example_doc) == build_spec(example_doc).budget_plan()
    items = budget_items(example_doc)
    assert {it.weight for it in items} == {1.0} and all(it.in_loop for it in items)
    assert not any(label.startswith("2×") for label, _ in segments(example_doc))
    moved = rebalance(items, "relative_1way", 0.5, 4.99)
    assert sum(moved.values()) == pytest.approx(4.99)
    example_doc["selection"] = {"gamma": 0, "max_iterations": None, "epsilon_0": 0}
    assert document_plan(example_doc).epsilon_total == pytest.approx(9.98)


def test_readouts_average_seeded_quick_samples_and_show_their_spread(session, proxy) -> None:
    """N quick samples (default 5), seeded: the same seed gives the same numbers in a fresh
    lab; the value and P(pass) are means with their range; the label names N."""
    from workbench.widgets import ProxyLab
    from workbench.widgets.editors.criteria_editor import readout_html
    from workbench.widgets.model.readouts import DEFAULT_SAMPLES

    spec = session.spec
    first, second = ProxyLab(proxy, seed=3), ProxyLab(proxy, seed=3)
    assert first.preview.samples == DEFAULT_SAMPLES == 5
    a, b = first.readouts(spec), second.readouts(spec)
    assert a == b
    r = a["mean_parity"]
    assert r.samples == 5 and r.value_range[0] < r.value < r.value_range[1]
    singles = [first.exact_values(spec, first.configuration(spec), i)["mean_parity"]
               for i in range(5)]
    assert r.value == pytest.approx(sum(singles) / 5) and len(set(singles)) == 5
    assert "from 5 quick samples of the proxy" in readout_html(r)
    assert "wb-spread" in readout_html(r)
    other = ProxyLab(proxy, seed=4).readouts(spec)["mean_parity"]
    assert other.value != r.value
    forecast = first.all_pass(spec)
    assert forecast.samples == 5 and forecast.low <= forecast.probability <= forecast.high


def test_guided_flow_lists_what_each_step_lacks_and_exports(tmp_path, proxy) -> None:
    """From the empty draft: the checklist asks for a criterion, a dry run and the export;
    adding a criterion and exporting ticks them; the summary shows ε_total by BudgetPlan."""
    from workbench.widgets import CoDesignApp, ProxyLab, Session
    from workbench.widgets.model.steps import STEPS

    session = Session.from_files(REPO / "examples" / "births_empty_draft.json")
    session = Session(session.draft, proxy)
    lab = ProxyLab(proxy)
    lab.preview.samples = 2
    app = CoDesignApp(session, lab, export_path=str(tmp_path / "new.frozen.json"))
    guide = app.guide
    assert [s.key for s in STEPS] == ["data", "rules", "criteria", "budget", "feasibility",
                                      "signoff"]
    assert guide.lacking["criteria"] == ["no acceptance criterion yet: add at least one",
                                         "not reviewed yet: open its tab"]
    assert guide.lacking["signoff"] == ["not frozen and exported yet"]
    assert guide.summary.epsilon_total == session.spec.budget_plan().epsilon_total
    guide.go("criteria")
    assert app.tabs.selected_index == app.tabs.titles.index("Criteria")
    assert guide.lacking["criteria"] == ["no acceptance criterion yet: add at least one"]
    app.criteria.new_kind.value = "max_marginal_error"
    assert app.criteria.add_criterion()
    [hint] = guide.lacking["criteria"]  # the empty draft's 'independent' cannot serve k-ways
    assert "'independent' generator cannot reproduce" in hint and "'workload'" in hint
    app.generator.family.value = "perturbed_histogram"  # the full joint: fast to fit here
    assert not any("cannot reproduce" in x for x in guide.lacking["criteria"])
    app.criteria.rows[0].threshold.value = 0.9
    assert guide.lacking["criteria"] == []
    row = app.criteria.rows[0]
    row.epsilon.value = 0.0  # a criterion that reads R needs an ε
    assert any("no ε" in x for x in guide.lacking["criteria"])
    row.epsilon.value = 0.05  # choosing a criterion's ε is choosing the budget too
    assert guide.lacking["budget"] == []
    guide.next.click()
    assert app.tabs.titles[app.tabs.selected_index] == "Generator"
    guide.go("signoff")
    app.metadata.dataset.value = "births-test"
    app.export.acknowledge.value = True  # no dry run: the quick-sample forecast may be low
    app.export.freeze.click()
    assert guide.lacking["signoff"] == []
    assert "Sign-off &amp; export: done ✓" in guide.checklist.value
    assert "wb-summary" in guide.summary_widget._dom_classes


def test_small_faults_of_the_co_design_tabs(app, session) -> None:
    """Feasibility: no image before the first run, full labels, a table that scrolls; the ε
    slider steps on a two-digit grid; with ε = 0 typed in the Budget total, like the
    criteria, shows the last valid design."""

    feas = app.feasibility
    assert feas.heatmap.layout.display == "none" and feas.heatmap.value == b""
    assert feas.which.style.description_width == "initial"
    assert feas.table.layout.overflow == "auto"
    before = session.draft["budget"]["epsilon_generator"]
    app.budget.eps_generator.value = before * 10 ** 0.01  # one arrow-key step of the log slider
    after = session.draft["budget"]["epsilon_generator"]
    assert after == round(after, 1 if after >= 1 else 2) and after > before
    assert app.budget.eps_generator.value == after
    valid_total = session.spec.budget_plan().epsilon_total
    row = app.criteria.row("regression_mae")
    row.epsilon.value = 0.0
    assert not session.valid
    assert "last valid design" in app.budget.total.value
    assert f"<b>{valid_total:.6g}</b>" in app.budget.total.value
    assert "last valid design" in row.readout_html.value
