"""Feasibility floors in the co-design criteria editor and the spec review (issue 15).

Widgets are driven through their values and the session's observers, on a public 20k-row
slice of the proxy (floors at n = 20,000 unless ``schema.expected_n`` says otherwise).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from conftest import widget_by_class

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "israel_births_2014.json"


@pytest.fixture(scope="module")
def proxy(proxy_slice) -> pd.DataFrame:
    """The shared 20k-row public slice (conftest)."""
    return proxy_slice


@pytest.fixture(scope="module")
def lab(proxy):
    """A lab of its own: one quick sample per readout keeps the floor tests fast."""
    from workbench.widgets import ProxyLab

    lab = ProxyLab(proxy, seed=0)
    lab.preview.samples = 1
    return lab


@pytest.fixture
def app(example_doc, proxy, lab, tmp_path):
    from workbench.widgets import CoDesignApp, Session

    lab.preview.transforms, lab.preview.hyper_index, lab.preview.min_count = {}, 0, None
    return CoDesignApp(Session(example_doc, proxy), lab,
                       export_path=str(tmp_path / "design.frozen.json"))


def _index(doc: dict, criterion_id: str) -> int:
    return next(i for i, c in enumerate(doc["criteria"]) if c["id"] == criterion_id)


def test_the_flag_follows_the_threshold_beside_the_floor(app, lab) -> None:
    """Below floor + SD the row says "infeasible at n" (the FloorTable's flag); above, not."""
    from workbench.widgets.model.floors import INFEASIBLE, floor_words

    editor = app.select("Criteria")
    row = editor.row("faithfulness")
    floor = lab.floors(app.session.spec).by_id()["faithfulness"]
    n = len(lab.cleaned(app.session.spec))
    assert row.floor == floor and f"at n = {n:,}" in row.floor_html.value
    assert floor_words(floor, n, share=True) in row.floor_html.value  # the threshold's unit
    assert 0 < floor.sd < floor.mean

    row.threshold.value = floor.mean + 10 * floor.sd
    assert app.session.get(f"criteria[{_index(app.session.draft, 'faithfulness')}].threshold") \
        == pytest.approx(floor.mean + 10 * floor.sd)
    assert not row.floor.infeasible and INFEASIBLE not in row.floor_html.value
    assert row.floor.threshold == pytest.approx(floor.mean + 10 * floor.sd)  # a new table
    assert "faithfulness" not in editor.floors_bar.info.value

    row.threshold.value = floor.mean + 0.5 * floor.sd  # within one SD of the floor
    assert row.floor.infeasible and INFEASIBLE in row.floor_html.value
    assert "wb-infeasible" in row.floor_html.value
    assert f"{INFEASIBLE}: " in editor.floors_bar.info.value
    assert "faithfulness" in editor.floors_bar.info.value.split(f"{INFEASIBLE}: ")[1]

    row.threshold.value = 0.5
    assert INFEASIBLE not in row.floor_html.value and row.floor.mean == floor.mean


def test_the_floor_follows_expected_n(app, lab) -> None:
    """Setting schema.expected_n (a number, a range, blank) moves the floors' n; a smaller n
    has a higher faithfulness floor (issue 15: 2.3% at 164k, 3.1% at 95k)."""
    editor = app.select("Criteria")
    at_proxy = editor.row("faithfulness").floor
    box = editor.floors_bar.expected_n
    box.value = "5000"
    assert app.session.get("schema.expected_n") == 5000 and app.session.valid
    row = editor.row("faithfulness")
    assert "at n = 5,000" in row.floor_html.value and "schema.expected_n" in \
        editor.floors_bar.info.value
    assert row.floor.mean > at_proxy.mean

    box.value = "5000, 9000"
    assert app.session.get("schema.expected_n") == [5000, 9000]
    assert "at n = 5,000" in editor.row("faithfulness").floor_html.value
    assert "low end of schema.expected_n (5,000–9,000)" in editor.floors_bar.info.value

    box.value = "many"
    assert "not a number" in editor.floors_bar.field.error.value
    box.value = "1, 2, 3"
    assert "one whole number, or two" in editor.floors_bar.field.error.value
    assert app.session.get("schema.expected_n") == [5000, 9000]

    box.value = ""
    assert app.session.get("schema.expected_n", None) is None
    assert editor.row("faithfulness").floor == at_proxy
    assert box.value == ""

    app.session.apply("schema.expected_n", 8000)  # another editor (or undo) sets it
    assert box.value == "8000" and "at n = 8,000" in editor.row("faithfulness").floor_html.value


def test_the_floor_follows_min_count_the_rule_and_the_transformations(app, lab) -> None:
    """The projection's min_count, the faithfulness rule and the binnings all move floors."""
    editor = app.select("Criteria")
    before = editor.row("faithfulness").floor
    app.session.apply("face_privacy.min_count", [3])
    after_m3 = editor.row("faithfulness").floor
    assert after_m3.mean > before.mean  # the projection drops more rows at m = 3
    assert lab.floors(app.session.spec).by_id()["faithfulness"] == after_m3

    app.session.apply("faithfulness.alpha", 3)
    assert editor.row("faithfulness").floor.mean < after_m3.mean  # a looser match

    marginals = editor.row("marginals").floor  # a draft edit of a binning
    app.session.apply("transformations.columns.mother_age.alternatives[0].edges",
                      [18, 20, 25, 30, 35, 40])
    assert editor.row("marginals").floor != marginals
    marginals = editor.row("marginals").floor  # the preview's choice of alternative
    app.preview.alternatives["parity"].value = "single_to_ten"
    assert lab.configuration(app.session.spec).transform_of("parity") == "single_to_ten"
    assert editor.row("marginals").floor != marginals


def test_a_hidden_criteria_tab_catches_up_when_shown(app) -> None:
    """Floors are computed only while the tab is shown; showing it brings them up to date."""
    editor = app.select("Criteria")
    old = editor.row("faithfulness").floor
    app.select("Budget")
    app.session.apply("face_privacy.min_count", [3])
    assert editor.row("faithfulness").floor == old  # not recomputed while hidden
    app.select("Criteria")
    assert editor.row("faithfulness").floor.mean > old.mean


def test_the_spec_review_shows_a_floor_beside_each_threshold(tmp_path, proxy,
                                                            example_spec) -> None:
    """Given a proxy, the criteria table has a floor column with the table's own flags."""
    from workbench.widgets import ProxyLab
    from workbench.widgets.dashboards.spec_review import SpecReview, spec_review_dashboard
    from workbench.widgets.model.floors import INFEASIBLE

    lab = ProxyLab(proxy)  # the first configuration, as the dashboard's own lab

    path = tmp_path / "proxy.csv"
    proxy.to_csv(path, index=False)
    widget = spec_review_dashboard(EXAMPLE, path)
    html = widget_by_class(widget, "wb-section-criteria").value
    table = lab.floors(example_spec)
    assert "floor at n" in html and html.count("class='wb-floor ") == len(example_spec.criteria)
    assert f"at n = {table.n:,}" in html and "mean ± SD of 3 draws" in html
    flagged = table.infeasible
    assert flagged and "faithfulness" in flagged  # 5% is below the floor at n = 20,000
    rows = html.split("<tr>")[2:]
    for cid, row in zip((c.id for c in example_spec.criteria), rows, strict=True):
        assert (INFEASIBLE in row) == (cid in flagged), cid

    plain = widget_by_class(SpecReview(example_spec).widget, "wb-section-criteria").value
    assert "floor at n" not in plain and "wb-floor" not in plain  # no proxy, no column


def test_both_front_ends_warn_where_an_independent_marginals_release_passes(
        app, lab, tmp_path, proxy, example_doc) -> None:
    """Issue 28: beside each floor, the trivial generator's value; a criterion it passes is
    flagged "does not protect utility" in the Criteria tab and in the spec review, and only
    that one."""
    from workbench.validation import save_spec
    from workbench.widgets.dashboards.spec_review import spec_review_dashboard
    from workbench.widgets.model.floors import UNPROTECTIVE, trivial_value

    editor = app.select("Criteria")
    table = lab.floors(app.session.spec)
    loose = "marginals"
    assert loose not in table.unprotective  # tight enough that independence fails it
    row = editor.row(loose)
    assert trivial_value(table.by_id()[loose]) in row.floor_html.value
    assert UNPROTECTIVE not in row.floor_html.value
    row.threshold.value = 0.9  # any release passes a max marginal error of 90% of n
    assert editor.row(loose).floor.trivial_passes
    assert "wb-unprotective" in editor.row(loose).floor_html.value
    assert f"{UNPROTECTIVE}: {loose}" in editor.floors_bar.info.value
    others = [c for c in table.by_id() if c != loose and c not in table.unprotective]
    assert others and all(UNPROTECTIVE not in editor.row(c).floor_html.value for c in others)

    doc = dict(example_doc, criteria=[dict(c, threshold=0.9) if c["id"] == loose else c
                                      for c in example_doc["criteria"]])
    spec_path, proxy_path = tmp_path / "loose.json", tmp_path / "proxy.csv"
    save_spec(doc, spec_path)
    proxy.to_csv(proxy_path, index=False)
    html = widget_by_class(spec_review_dashboard(spec_path, proxy_path),
                           "wb-section-criteria").value
    table_html, note = html.split("</table>", 1)
    rows = dict(zip((c["id"] for c in doc["criteria"]), table_html.split("<tr>")[2:],
                    strict=True))
    assert UNPROTECTIVE in rows[loose] and "independent-marginals release" in rows[loose]
    assert all(UNPROTECTIVE not in rows[c] for c in others)
    assert f"{UNPROTECTIVE}</span> {loose}" in note  # the note names it
