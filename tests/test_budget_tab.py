"""The co-design Budget tab on every shipped example: an ε_gen control, a bar summing to ε_total.

ε_gen may be declared in the budget, in the generator's grid and in the narrowed configurations
(``israel_births_2014_lean_robust`` declares it in the last two only); the one derivation,
:mod:`workbench.specification.derived`, finds it wherever it is, and the bar's parts are the
plan's. The fast tests drive the widget on every example; the slow one opens one example per
way of declaring a budget in a real browser (one Voilà server, one page per example, no proxy:
the Budget tab does not need one).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from test_dashboards import _shot, browser, voila

from workbench.cli import dashboard as dash
from workbench.specification.derived import GENERATOR_KEY, budget_items, document_plan
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.json"))
ROBUST = REPO / "examples" / "israel_births_2014_lean_robust.json"
#: One example per way a budget is declared, for the browser (each page load starts a kernel,
#: 12-25 s): ε_gen in the grid and narrowed configurations only, a survey's ε, DP cleaning
#: counts, an MCMC family's, a PD family's per-record figure, and a draft with no budget yet.
#: The widget-level test above covers all 22 shipped examples.
IN_BROWSER = [REPO / "examples" / f"{name}.json" for name in (
    "israel_births_2014_lean_robust", "adult_survey", "adult_own_data",
    "us_birth_weight_continuous.frozen", "adult_plausible_deniability", "births_empty_draft")]


def _planner(document: dict[str, Any]) -> Any:
    from workbench.widgets import Session
    from workbench.widgets.editors.budget_planner import BudgetPlanner

    return BudgetPlanner(Session(document))


def _parts_sum(html_text: str) -> float:
    """Σ of the data-value of every part the planner lists under the bar."""
    return math.fsum(float(v) for v in re.findall(r"data-value='([^']+)'", html_text))


def _shown_total(html_text: str) -> float:
    """The ε_total the planner shows in bold."""
    return float(html_text.split("<b>", 1)[1].split("</b>", 1)[0])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_bar_sums_to_epsilon_total_and_eps_gen_has_a_control(path: Path) -> None:
    """Every shipped example: the ε_gen slider is shown and Σ parts == ε_total (spec's too)."""
    from workbench.widgets.model.budget import segments

    doc = json.loads(path.read_text())
    planner = _planner(doc)
    assert planner.eps_generator in planner.slider_box.children
    total = document_plan(doc).epsilon_total
    assert math.fsum(v for _, v in segments(doc)) == pytest.approx(total, abs=1e-9)
    assert _parts_sum(planner.parts.value) == pytest.approx(total, abs=1e-9)
    assert _shown_total(planner.total.value) == pytest.approx(total, rel=1e-6)
    assert total == pytest.approx(build_spec(doc).epsilon_total, abs=1e-9)


def test_the_eps_gen_control_edits_the_grid_and_the_narrowed_configuration() -> None:
    """lean_robust declares ε_gen = 2 in its grid and its narrowed configuration: the slider
    moves both (the draft stays valid) and ε_total follows (a single attempt: weight 1)."""
    planner = _planner(json.loads(ROBUST.read_text()))
    (item,) = [it for it in budget_items(planner.session.draft) if it.key == GENERATOR_KEY]
    assert [p for p, _ in item.declared] == ["generator.search_space[0].epsilon[0]",
                                           "selection.configurations[0].generator.epsilon"]
    planner.eps_generator.value = 2.5
    draft = planner.session.draft
    assert draft["generator"]["search_space"][0]["epsilon"] == [2.5]
    assert draft["selection"]["configurations"][0]["generator"]["epsilon"] == 2.5
    assert "epsilon_generator" not in draft["budget"]
    spec = build_spec(draft)
    assert spec.budget.epsilon_generator == 2.5
    assert spec.epsilon_total == pytest.approx(3.9715)
    assert _shown_total(planner.total.value) == pytest.approx(3.9715)
    assert _parts_sum(planner.parts.value) == pytest.approx(3.9715)


def test_a_locked_total_rebalances_eps_gen_where_it_is_declared() -> None:
    """With ε_total locked, moving a criterion's ε rescales ε_gen in the grid and the narrowed
    configuration together, and the total stays."""
    planner = _planner(json.loads(ROBUST.read_text()))
    planner.lock.value = True
    criterion = next(k for k in planner.sliders if k != GENERATOR_KEY)
    planner.sliders[criterion].value = planner.sliders[criterion].value * 2
    draft = planner.session.draft
    grid = draft["generator"]["search_space"][0]["epsilon"][0]
    assert grid < 2.0
    assert draft["selection"]["configurations"][0]["generator"]["epsilon"] == grid
    assert build_spec(draft).epsilon_total == pytest.approx(3.4715)


# --- real browser ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def codesign_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One co-design Voilà server for every example (drafts autosave to a temporary folder)."""
    tmp = tmp_path_factory.mktemp("budget_tab")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_DRAFTS", str(tmp / "drafts"))
        with voila("codesign", tmp) as base, browser(tmp, base) as (page, _blocked):
            yield base, page


@pytest.mark.slow
@pytest.mark.parametrize("path", IN_BROWSER, ids=lambda p: p.stem)
def test_the_budget_tab_in_a_browser(codesign_server: Any, path: Path) -> None:
    """Must-show 4: an example opened in the co-design app shows the ε_gen control on the
    Budget tab, and the parts listed under the bar sum to the ε_total shown."""
    base, page = codesign_server
    query = dash.dashboard_query({"spec": path, "proxy": "none"})
    page.goto(f"{base}?{query}")
    page.wait_for_selector(".wb-codesign-tabs", state="visible")
    page.get_by_role("tab", name="Budget", exact=True).click()
    page.wait_for_selector(".wb-eps-generator", state="visible")
    page.wait_for_selector(".wb-budget-part")
    shown = _shown_total(page.inner_html(".wb-budget-total"))
    values = page.eval_on_selector_all(".wb-budget-part", "els => els.map(e => e.dataset.value)")
    assert math.fsum(float(v) for v in values) == pytest.approx(shown, rel=1e-5)
    assert shown == pytest.approx(build_spec(json.loads(path.read_text())).epsilon_total,
                                  rel=1e-5)
    if path == ROBUST:  # ε_gen declared in the grid only: the control moves it (2 → 2.5)
        readout = page.locator(".wb-eps-generator .widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("2.5")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('.wb-budget-total')"
                               ".innerText.includes('= 3.9715')")
        values = page.eval_on_selector_all(".wb-budget-part",
                                           "els => els.map(e => e.dataset.value)")
        assert math.fsum(float(v) for v in values) == pytest.approx(3.9715, rel=1e-6)
        page.wait_for_function("() => document.querySelector('.wb-summary')"
                               ".innerText.includes('ε_total = 3.971')")  # the summary follows
        _shot(page, "codesign_budget_robust")



DERIVES_EPS_GEN = {
    "reads a document's ε_gen": r"\.get\(\s*\"epsilon_generator\"|\[\"epsilon_generator\"\]",
    "falls back to the budget's ε_gen": r"get\(\s*\"epsilon\",\s*[\w.]*epsilon_generator",
    "defines an ε_gen derivation": r"def \w*generator_epsilon\(",
}


def test_eps_gen_is_derived_in_one_place() -> None:
    """ε_gen had four derivations (validator, Spec, draft plan, Budget tab): only
    ``specification/derived.py`` may read it from a document or fall back to the budget's."""
    found = set()
    for path in (REPO / "workbench").rglob("*.py"):
        code = path.read_text(encoding="utf-8")
        found |= {(name, path.relative_to(REPO).as_posix())
                  for name, pattern in DERIVES_EPS_GEN.items() if re.search(pattern, code)}
    assert {path for _, path in found} == {"workbench/specification/derived.py"}, found
    old = ['eps_gen = _number(document.get("budget", {}).get("epsilon_generator"))',
           'configuration.params.get(\n    "epsilon", self.budget.epsilon_generator)',
           "def _draft_generator_epsilon(document: Mapping[str, Any]) -> float | None:"]
    assert all(any(re.search(p, o) for p in DERIVES_EPS_GEN.values()) for o in old)
