"""Issue 27: a co-design app that can finish a real design — the generator and metadata tabs, the
autosave, the forecast in the sign-off, a checklist of what the user did, the formatted design
table, consistent units, and the smaller faults (labels, progress, datasheet, one_way_share).

Widgets are driven through their values and buttons, in plain Python (no kernel); a different
schema than births: ``examples/adult_empty_draft.json`` on a small Adult proxy built here.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import ADULT_DRAFT, REPO, adult_proxy_csv, widget_by_class

from workbench.specification import SpecError
from workbench.validation import build_spec, load_spec

BIRTHS_DRAFT = REPO / "examples" / "births_empty_draft.json"


# --- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return adult_proxy_csv(tmp_path_factory.mktemp("adult"))


@pytest.fixture
def draft(tmp_path: Path) -> Path:
    """The Adult empty draft, copied where the test may write beside it."""
    path = tmp_path / "census_draft.json"
    shutil.copy(ADULT_DRAFT, path)
    return path


@pytest.fixture
def app(draft: Path, adult_csv: Path, tmp_path: Path):
    from workbench.widgets import CoDesignApp, ProxyLab, Session

    session = Session.from_files(draft, adult_csv)
    lab = ProxyLab(session.proxy)
    lab.preview.samples = 2
    return CoDesignApp(session, lab, export_path=str(tmp_path / "out" / "census.frozen.json"))


def _conditional_mean(app, group_by=("age", "sex")) -> None:
    """Add a conditional mean of hours per week by two columns (reads 3 columns jointly)."""
    from workbench.widgets.model.criteria_templates import new_criterion

    crit = new_criterion("conditional_mean", "mean_hours", app.session.draft)
    crit["params"].update(target="hours_per_week", group_by=list(group_by))
    crit["threshold"], crit["epsilon"] = 5.0, 0.5  # hours; the noise is small beside 5
    assert app.session.apply(f"criteria[{len(app.session.get('criteria'))}]", crit)


# --- the generator tab ------------------------------------------------------------------------
def test_every_family_declares_an_editor_control_for_every_hyperparameter() -> None:
    from workbench.generators import registered
    from workbench.specification.params import CONTROLS

    for cls in registered():
        for name, param in cls.hyperparameters.items():
            assert param.control in CONTROLS, (cls.name, name)
            if param.control == "choice":
                assert param.choices and param.default in param.choices, (cls.name, name)


def test_the_generator_tab_makes_each_control_from_the_registry_and_validates_once(app) -> None:
    from workbench.generators import family_class
    from workbench.widgets.model.generator_choice import family_names

    tab = app.generator
    assert tab.family.value == "independent" and tuple(tab.family.options) == family_names()
    assert tab.controls == {}  # independent declares no hyperparameter
    tab.family.value = "workload"
    assert app.session.draft["generator"] == {"family": "workload", "search_space": [{}]}
    assert set(tab.controls) == set(family_class("workload").hyperparameters)
    assert tab.controls["one_way_share"].value == 0.25  # unset shows the declared default
    tab.controls["sampling"].value = "rounded"  # a 'choice' control
    tab.controls["iters"].value = 500  # a 'whole_number' control
    grid = app.session.draft["generator"]["search_space"][0]
    assert grid == {"sampling": ["rounded"], "iters": [500]} and app.session.valid
    tab.controls["one_way_share"].value = 1.5  # the spec validator's message, beside it
    field = next(f for f in tab.fields if f.path.endswith(".one_way_share"))
    message = app.session.errors["generator.search_space[0].one_way_share[0]"][0]
    assert message in field.error.value.replace("&lt;", "<") and "[0]:" not in field.error.value
    with pytest.raises(SpecError, match="one_way_share"):  # the same validator, no second one
        build_spec(app.session.draft)
    tab.family.value = "privbayes"  # exactly one of theta/degree: the grid's message
    assert "set exactly one of theta, degree" in tab.grid_error.value
    tab.controls["degree"].value = "2"
    assert app.session.valid and app.session.draft["generator"]["search_space"] == [
        {"sampling": ["rounded"], "degree": [2]}]  # shared hyperparameters are kept
    app.undo_button.click()
    app.undo_button.click()
    assert tab.family.value == "workload"


def test_a_text_control_sets_a_public_structure_proxy_and_blank_unsets_it(app,
                                                                         adult_csv) -> None:
    """Issue 28: plausible deniability's structure source is a choice, its proxy and SHA-256
    text boxes; the spec validator's combination check speaks beside the grid."""
    import hashlib

    tab = app.generator
    tab.family.value = "plausible_deniability"
    tab.controls["structure"].value = "public"
    assert "structure: public needs structure_proxy" in " ".join(
        app.session.errors.get("generator.search_space", []))
    tab.controls["structure_proxy"].value = f"  {adult_csv}  "
    tab.controls["structure_proxy_sha256"].value = hashlib.sha256(
        adult_csv.read_bytes()).hexdigest()
    grid = app.session.draft["generator"]["search_space"][0]
    assert grid["structure_proxy"] == [str(adult_csv)] and app.session.valid
    tab.controls["structure_proxy"].value = ""  # blank: the key goes, the check is back
    assert "structure_proxy" not in app.session.draft["generator"]["search_space"][0]
    assert not app.session.valid


def test_a_family_switch_drops_the_configurations_and_forecast_of_the_old_one(app) -> None:
    doc = app.session.draft
    doc["selection"]["configurations"] = [next(iter(app.session.spec.configurations())).to_dict()]
    doc["selection"]["forecast"] = {"p": 0.9, "repetitions": 2, "min_pass": 0.0}
    assert app.session.replace(doc)
    app.generator.family.value = "perturbed_histogram"
    selection = app.session.draft["selection"]
    assert "configurations" not in selection and "forecast" not in selection
    assert app.session.valid


def test_a_family_that_cannot_serve_a_criterion_says_why(app) -> None:
    """Issue 27: the empty draft's 'independent' cannot reproduce a conditional mean's
    columns jointly; the hint is on the criterion's row, in the checklist and on the tab."""
    from workbench.generators import family_class

    _conditional_mean(app)
    row = app.criteria.row("mean_hours")
    assert row.hint and "'independent' generator cannot reproduce" in row.hint
    assert "hours_per_week" in row.hint and "'workload'" in row.hint
    assert "cannot reproduce" in row.row_error.value
    assert any("cannot reproduce" in x for x in app.guide.lacking["criteria"])
    assert "cannot reproduce" in app.generator.hints.value
    app.generator.family.value = "perturbed_histogram"
    assert app.criteria.row("mean_hours").hint is None
    assert "can reproduce what every criterion reads" in app.generator.hints.value
    privbayes = family_class("privbayes")
    assert privbayes.models_jointly({"degree": 1}, ("a", "b", "c")) is False
    assert privbayes.models_jointly({"degree": 2}, ("a", "b", "c")) is None  # the data decide
    assert family_class("perturbed_histogram").models_jointly({"columns": ["a", "b"]},
                                                              ("a", "c")) is False


# --- the metadata tab -------------------------------------------------------------------------
def test_metadata_is_edited_and_validated_by_the_spec_validator(app) -> None:
    tab = app.metadata
    assert "metadata.dataset is not set" in tab.dataset_note.value
    assert any("metadata.dataset is not set" in x for x in app.guide.lacking["data"])
    tab.title_box.value = "Census extract 2024"
    tab.owner.value = "Statistics office"
    tab.dataset.value = "Census 2024!"
    error = next(f for f in tab.fields if f.path == "metadata.dataset").error.value
    assert "lower-case letters, digits" in error and not app.session.valid
    tab.dataset.value = "il-births-2014"  # a shipped example's id: its budget store
    assert "israel_births_2014.json" in tab.dataset_note.value
    assert any("share their budget store" in x for x in app.guide.lacking["data"])
    tab.dataset.value = "census-extract-2024"
    tab.title_box.value = ""
    assert "must not be empty" in next(f for f in tab.fields
                                       if f.path == "metadata.title").error.value
    tab.title_box.value = "Census extract 2024"
    meta = app.session.draft["metadata"]
    assert (meta["title"], meta["owner"], meta["dataset"]) == (
        "Census extract 2024", "Statistics office", "census-extract-2024")
    assert app.session.valid and app.guide.lacking["data"] == []


def test_the_empty_drafts_do_not_carry_an_example_dataset_id() -> None:
    for path in (BIRTHS_DRAFT, ADULT_DRAFT):
        assert "dataset" not in json.loads(path.read_text())["metadata"], path


# --- autosave and reload ----------------------------------------------------------------------
def test_the_draft_is_autosaved_beside_the_spec_and_reopened(draft, adult_csv, monkeypatch):
    from workbench.widgets.dashboards.codesign import codesign_dashboard

    monkeypatch.delenv("WORKBENCH_DRAFTS")
    root = codesign_dashboard(draft, adult_csv)
    saver = root.autosaver
    app = saver.app
    assert app.export.path.value == str(draft.parent / "census_draft.frozen.json")
    assert not (draft.parent / "census_draft.autosave.json").exists()  # nothing edited yet
    app.metadata.title_box.value = "Census extract 2024"
    app.metadata.dataset.value = "census-extract-2024"
    app.generator.family.value = "perturbed_histogram"
    app.budget.accept.click()
    saved = json.loads((draft.parent / "census_draft.autosave.json").read_text())
    assert saved["document"]["metadata"]["title"] == "Census extract 2024"
    assert saved["autosave_of"] == str(draft.resolve()) and "budget" in saved["done_steps"]
    assert json.loads(draft.read_text())["metadata"]["title"] != "Census extract 2024"

    again = codesign_dashboard(draft, adult_csv)  # a page reload: a new kernel, same files
    reopened = again.autosaver.app
    assert reopened.session.draft == app.session.draft
    assert reopened.metadata.title_box.value == "Census extract 2024"
    assert reopened.generator.family.value == "perturbed_histogram"
    assert "budget" in reopened.guide.did and "reopened the draft" in again.autosaver.status.value
    assert "Census extract 2024" in widget_by_class(again, "wb-codesign-title").value
    reopened.undo_button.click()  # undo goes back to the spec file's draft
    assert reopened.session.draft["generator"]["family"] == "independent"

    widget_by_class(again, "wb-start-again").click()
    fresh = codesign_dashboard(draft, adult_csv).autosaver.app
    assert fresh.session.draft["metadata"]["title"] == json.loads(draft.read_text())[
        "metadata"]["title"] and fresh.guide.did == set()


def test_drafts_of_shipped_examples_autosave_to_the_state_folder(monkeypatch, tmp_path):
    from workbench.widgets.model.drafts import DraftStore

    monkeypatch.delenv("WORKBENCH_DRAFTS")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    store = DraftStore(ADULT_DRAFT)
    folder = tmp_path / "state" / "release-workbench" / "drafts"
    assert store.folder == folder and not store.beside
    assert store.path.parent == folder and store.path.name.startswith("adult_empty_draft-")
    assert store.export_path == folder / "adult_empty_draft.frozen.json"
    assert store.save({"a": 1}) and store.load().document == {"a": 1}
    store.path.write_text("{not json")
    assert store.load() is None and "could not be read" in store.error
    frozen = tmp_path / "design.frozen.json"  # reopening a frozen spec never overwrites it
    frozen.write_text("{}")
    monkeypatch.setenv("WORKBENCH_DRAFTS", str(tmp_path))
    assert DraftStore(frozen).export_path == tmp_path / "design.edited.frozen.json"


# --- the forecast in the sign-off -------------------------------------------------------------
def _ready(app) -> None:
    """A valid design with a dataset id, a criterion and a family that serves it."""
    app.metadata.dataset.value = "census-extract-2024"
    app.generator.family.value = "perturbed_histogram"
    _conditional_mean(app)


def test_export_below_the_target_needs_an_acknowledgement_and_records_the_forecast(app):
    _ready(app)
    app.criteria.row("mean_hours").threshold.value = 0.01  # out of reach: P(all pass) ≈ 0
    forecast, target = app.forecast_now()
    assert forecast.below(target) and "quick samples" in forecast.source
    export = app.export
    export.refresh()
    assert export.acknowledge.layout.display is None and "Below the target" in \
        export.forecast.value
    assert export.export() is None and "tick the acknowledgement" in export.status.value
    assert export.written is None
    export.acknowledge.value = True
    export.freeze.click()
    spec_path, signoff = export.written
    text = signoff.read_text()
    assert "## Forecast" in text and "P(all criteria pass) per attempt =" in text
    assert "**not met**" in text and "Acknowledged at export" in text
    assert "P(a release) under this selection plan" in text
    assert load_spec(spec_path, require_frozen=True).sha256 in text
    assert app.guide.lacking["signoff"] == []
    assert "exported below the target forecast, acknowledged" in app.guide.checklist.value


def test_export_at_or_above_the_target_needs_no_acknowledgement(app):
    _ready(app)
    app.criteria.row("mean_hours").threshold.value = 50.0  # every group mean is far closer
    app.budget.design.target.value = 0.05
    forecast, target = app.forecast_now()
    assert target == 0.05 and not forecast.below(target)
    app.export.refresh()
    assert app.export.acknowledge.layout.display == "none"
    assert app.export.export() is not None
    text = app.export.written[1].read_text()
    assert "— met." in text and "Acknowledged" not in text


def test_export_refuses_a_draft_without_a_dataset_id(app):
    app.export.acknowledge.value = True
    assert app.export.export() is None
    assert "metadata.dataset is not set" in app.export.status.value


# --- the checklist ----------------------------------------------------------------------------
def test_the_checklist_ticks_only_what_the_user_did(app):
    guide = app.guide
    assert all(guide.lacking[s] for s in guide.lacking), guide.lacking  # nothing done yet
    assert "done ✓" not in guide.checklist.value
    summary = guide.summary_widget.value
    assert "no criteria yet: nothing to forecast" in summary
    assert "100%" not in summary and "no criterion at risk" not in summary
    assert guide.lacking["budget"] == [
        "no budget chosen yet: set the ε's (sliders or the design assistant) or press "
        "'use this budget'"]
    app.select("Constraints")  # opening a review step's tab reviews it
    assert guide.lacking["rules"] == []
    app.select("Budget")  # ... but looking at the budget does not choose it
    assert guide.lacking["budget"]
    app.budget.accept.click()
    assert guide.lacking["budget"] == []
    _ready(app)
    assert "nothing to forecast" not in guide.summary_widget.value


@pytest.mark.slow
def test_feasibility_is_not_done_below_the_target_and_shows_progress(app, tmp_path,
                                                                       monkeypatch):
    """A dry run of this design that forecasts below the target leaves Feasibility undone;
    the moving bar shows before the first task finishes and is gone after."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _ready(app)
    app.criteria.row("mean_hours").threshold.value = 0.01
    panel = app.feasibility
    panel.limit.value, panel.repetitions.value, panel.workers.value = 1, 1, 0
    panel.noise.value = "seeded"
    shown = []
    panel.working.layout.observe(lambda c: shown.append(c["new"]), names="display")
    panel.run_button.click()
    assert panel.result_for(app.session.spec) is not None
    assert shown[0] is None and shown[-1] == "none" and panel.running.value == ""
    assert any("below the target" in x for x in app.guide.lacking["feasibility"]), \
        app.guide.lacking
    assert "dry run at n = 4,000" in app.forecast_now()[0].source
    app.criteria.row("mean_hours").threshold.value = 0.02  # a new design: the run is stale
    assert panel.result_for(app.session.spec) is None
    assert app.guide.lacking["feasibility"] == [
        "no dry run of this design yet (advised before sign-off)"]


# --- the Budget tab ---------------------------------------------------------------------------
def test_the_budget_header_formula_is_the_plans_own(app):

    header = app.budget.header.value
    assert "ε_total = 1 × (ε_gen + Σ in-loop criterion ε)" in header  # a single attempt
    assert app.session.spec.budget_plan().formula_terms() in app.budget.total.value
    app.session.apply("selection", {"gamma": 0, "max_iterations": None, "epsilon_0": 0})
    assert "ε_total = 2 × (ε_gen" in app.budget.header.value
    assert "2 × (1 + 0)" in app.budget.total.value


def test_the_design_assistant_shows_a_formatted_table_with_infinity_explained(app):
    from workbench.dryrun.executors import InlineExecutor
    from workbench.widgets.editors.design_panel import WHY_INFINITE, DesignPanel

    _ready(app)
    app.criteria.row("mean_hours").threshold.value = 0.001  # no margin at any ε_gen
    panel = DesignPanel(app.session, app.lab, epsilon_generators=(1.0,), divisors=(2.0,),
                        repetitions=1, draws=2, executor=InlineExecutor())
    result = panel.run()
    out = panel.output.value
    assert result is not None and "<table" in out and "|---|" not in out
    assert "inf" not in out.replace("info", "") and "∞" in out
    assert all(html.escape(WHY_INFINITE[k]) in out for k in ("criteria", "expected"))
    assert "← chosen" in out and "target" in out and "not reached" in out


# --- smaller faults ---------------------------------------------------------------------------
def test_a_shares_floor_reads_in_its_thresholds_unit() -> None:
    from workbench.dryrun.floors import Floor
    from workbench.widgets.editors.criteria_floors import floor_html

    text = floor_html(Floor("marginals", 0.05, 0.00267, 0.0001, 3), 95_000, share=True,
                      threshold=0.05)
    assert "floor 0.00267 ± 0.0001 at n = 95,000" in text  # beside a threshold of 0.05
    assert "%" not in text.split(">", 1)[1]  # no percent beside a fraction


def test_open_bins_and_the_missing_value_read_plainly_on_screen() -> None:
    from workbench.report.overview import overlay_png
    from workbench.transform.codecs import BinsCodec
    from workbench.transform.display import shown_label

    codec = BinsCodec(edges=(18, 20), integer=True)
    assert [shown_label(x) for x in codec.labels] == ["< 18", "18-19", "≥ 20"]
    assert codec.labels[-1] == "20+"  # the release's own label (ASCII; issue 36)
    captured = {}
    from matplotlib.axes import Axes

    original = Axes.set_xticks

    def spy(self, ticks, labels=None, **kw):
        captured["labels"] = list(labels)
        return original(self, ticks, labels, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Axes, "set_xticks", spy)
        overlay_png("workclass", ["Private", ""], pd.Series([0.9, 0.1]), None)
    assert captured["labels"] == ["Private", "(missing)"]


def test_the_heat_map_keeps_its_labels_and_rows_inside_the_figure() -> None:
    """Two configurations with long names and nine criteria (the narrowed example's shape):
    every label lies inside the figure and each row keeps its height (it was squashed flat)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from workbench.dryrun.plots import pass_rate_heatmap

    names = [f"criterion_number_{j}" for j in range(9)]
    rates = pd.DataFrame([[0.5] * 9, [1.0] * 9], columns=names,
                         index=["birth_weight=grams_100|" * 4 + "split=0.1", "split=0.25"])
    fig = pass_rate_heatmap(rates)
    FigureCanvasAgg(fig).draw()
    box = fig.bbox
    ax = fig.axes[0]
    for label in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
        extent = label.get_window_extent()
        assert extent.x0 >= box.x0 - 1 and extent.y0 >= box.y0 - 1, label.get_text()
    assert ax.get_window_extent().height / len(rates) >= 0.25 * fig.dpi


def test_no_button_of_the_app_has_a_fixed_width_that_cuts_its_label(app) -> None:
    import ipywidgets as widgets

    todo, buttons = [app.widget], []
    while todo:
        w = todo.pop()
        buttons += [w] if isinstance(w, widgets.Button) else []
        todo.extend(getattr(w, "children", ()))
    assert len(buttons) > 15
    for b in buttons:
        fixed = b.layout.width
        assert fixed is not None, b.description
        if fixed.endswith("px"):  # a fixed width must hold its label (about 8 px a letter)
            assert int(fixed[:-2]) >= 8 * len(b.description) + 16, b.description


def test_the_datasheet_prints_the_criteria_table_once(example_spec) -> None:
    from workbench.report.datasheet import datasheet_markdown

    results = [{"id": c.id, "kind": c.kind, "value": 0.5 * c.threshold, "threshold": c.threshold,
                "epsilon": c.epsilon, "passed": True} for c in example_spec.criteria]
    text = datasheet_markdown(example_spec, {}, results, {"epsilon_total": 9.98}, 1000)
    header = next(line for line in text.splitlines() if line.startswith("| "))
    assert text.count(header) == 1
    assert all(text.count(f"| {c.id} |") <= 1 for c in example_spec.criteria)


def test_validate_refuses_a_one_way_share_of_zero_that_leaves_a_column_unmeasured() -> None:
    from workbench.report import describe_spec

    doc = json.loads(ADULT_DRAFT.read_text())
    doc["generator"] = {"family": "workload", "search_space": [{"one_way_share": [0]}]}
    doc["criteria"] = [{"id": "hours_by_age", "kind": "conditional_mean", "threshold": 5,
                        "epsilon": 0.1, "bounds": [1, 99],
                        "params": {"target": "hours_per_week", "group_by": ["age"]}}]
    doc["budget"]["epsilon_criteria"] = 0.1
    with pytest.raises(SpecError) as info:
        build_spec(doc)
    [problem] = info.value.problems
    assert problem.path == "generator.search_space"
    assert "no criterion reads education, sex, income" in problem.message
    doc["criteria"].append({"id": "pairs", "kind": "max_marginal_error", "threshold": 0.05,
                            "epsilon": 0.1, "params": {"max_way": 2}})  # every column paired
    doc["budget"]["epsilon_criteria"] = 0.2
    assert "workload" in describe_spec(build_spec(doc))
