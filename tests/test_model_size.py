"""Size guards (issue 36): the model's cells and memory from the spec alone, and a refusal
above ``generator.model_limit`` in validate, freeze, run, dryrun and design, and the Budget tab."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from size_helpers import wide_doc

from workbench.cli.main import main
from workbench.generators.model_size import (
    COPIES,
    DEFAULT_CELLS,
    ModelLimit,
    junction_tables,
    model_size,
)
from workbench.generators.model_size_advice import size_refusal
from workbench.validation import build_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.json"))
LEAN = REPO / "examples" / "israel_births_2014_lean.json"


def test_the_junction_tree_is_mbis() -> None:
    """The estimate's tables are those mbi's own junction tree builds (random clique sets)."""
    import mbi
    from mbi import junction_tree

    rng = random.Random(36)
    for _ in range(25):
        names = [f"c{i}" for i in range(rng.randint(2, 10))]
        sizes = {n: rng.randint(2, 30) for n in names}
        cliques = [tuple(rng.sample(names, rng.randint(1, min(3, len(names)))))
                   for _ in range(rng.randint(0, 10))]
        domain = mbi.Domain(names, [sizes[n] for n in names])
        tree, _ = junction_tree.make_junction_tree(
            domain, [tuple(q) for q in cliques] + [(n,) for n in names])
        theirs = sorted(domain.size(q) for q in junction_tree.maximal_cliques(tree))
        assert sorted(c for _, c in junction_tables(sizes, cliques)) == theirs


def test_every_pair_of_ten_columns_is_one_ten_column_table() -> None:
    size = model_size(build_spec(wide_doc(10, 30)))
    clique, cells = size.largest
    assert len(clique) == 10 and cells == 30**10 and size.bytes == size.cells * 8 * COPIES


def _assert_refused(text: str) -> None:
    assert "generator.model_limit" in text and "x0 × x1" in text
    assert "criterion 'pairs'" in text and "drop x0" in text and "coarser bins" in text


@pytest.fixture()
def no_fit(monkeypatch):
    """Any fit or stand-in rehearsal fails the test: the refusal must come before both."""
    from workbench.engine import stand_in
    from workbench.generators.workload_generator import WorkloadGenerator

    def boom(*args, **kwargs):
        raise AssertionError("a model was fitted")

    monkeypatch.setattr(WorkloadGenerator, "fit", boom)
    monkeypatch.setattr(stand_in, "rehearse_on_stand_in", boom)


def test_a_wide_design_is_refused_before_anything_runs(tmp_path, capsys, no_fit) -> None:
    draft = tmp_path / "wide.json"
    draft.write_text(json.dumps(wide_doc(10, 30)))
    frozen = tmp_path / "wide.frozen.json"
    save_spec(wide_doc(10, 30), frozen)  # frozen directly: `workbench freeze` refuses it
    data = tmp_path / "data.csv"
    data.write_text("x0\n1\n")
    store, out = tmp_path / "store", tmp_path / "out"
    commands = [["validate", str(draft)], ["freeze", str(draft), str(tmp_path / "f.json")],
                ["dryrun", str(draft), str(data)], ["design", str(draft), str(data)],
                ["run", str(frozen), str(data), "--out", str(out), "--budget-store",
                 str(store)]]
    for argv in commands:
        assert main(argv) == 2, argv
        _assert_refused(capsys.readouterr().err)
    assert not (tmp_path / "f.json").exists() and not store.exists() and not out.exists()


def test_describe_prints_the_estimate_and_warns(tmp_path, capsys) -> None:
    draft = tmp_path / "wide.json"
    draft.write_text(json.dumps(wide_doc(10, 30)))
    assert main(["describe", str(draft)]) == 0
    out = capsys.readouterr().out
    assert "model size (workload): 5.9e+14 cells" in out and "WARNING: generator.model_limit" \
        in out
    assert main(["describe", str(LEAN)]) == 0
    out = capsys.readouterr().out
    assert "model size (workload): 207,360 cells" in out and "WARNING" not in out


def test_the_proposal_is_within_the_limit() -> None:
    """25 columns, every pair (the issue's 12 GB case): the columns it keeps fit the limit."""
    spec = build_spec(wide_doc(25, 12))
    text = size_refusal(spec)
    assert text is not None
    kept = re.search(r"link only ([x0-9, ]+) \(drop", text).group(1).split(", ")
    proposed = model_size(build_spec(wide_doc(len(kept), 12)))
    assert 2 <= len(kept) < 25 and proposed.cells <= DEFAULT_CELLS
    said = int(re.search(r"the model would be ([0-9,]+) cells", text).group(1).replace(",", ""))
    assert said == proposed.cells + (25 - len(kept)) * 12  # the dropped columns' 1-way tables


def test_the_declared_limit_is_the_one_used() -> None:
    doc = json.loads(LEAN.read_text())
    assert size_refusal(build_spec(doc)) is None
    doc["generator"]["model_limit"] = {"cells": 100_000}
    assert "limit 100,000 cells" in size_refusal(build_spec(doc))
    doc["generator"]["model_limit"] = {"bytes": 1_000_000}  # 207,360 cells × 32 B is 6.6 MB
    assert ModelLimit.of(build_spec(doc)).cells == DEFAULT_CELLS
    assert size_refusal(build_spec(doc)) is not None
    doc["generator"]["model_limit"] = {"cells": 0}
    with pytest.raises(Exception, match="model_limit"):
        build_spec(doc)


def test_other_families_count_their_own_tables() -> None:
    doc = wide_doc(4, 10)
    doc["generator"] = {"family": "perturbed_histogram", "search_space": [{}]}
    assert model_size(build_spec(doc)).cells == 10**4
    doc["generator"] = {"family": "privbayes", "search_space": [{"degree": [2]}]}
    assert model_size(build_spec(doc)).cells == 4 * 10**3  # X × its 2 largest parents, 4 times
    doc["generator"] = {"family": "independent", "search_space": [{}]}
    assert model_size(build_spec(doc)).cells == 40


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_shipped_example_is_below_the_default_limit(path: Path) -> None:
    from workbench.validation import load_spec

    spec = load_spec(path)
    assert size_refusal(spec) is None
    assert model_size(spec).cells * 3 <= DEFAULT_CELLS


def test_the_budget_tab_shows_the_estimate_and_warns_above_the_limit() -> None:
    from workbench.widgets import Session
    from workbench.widgets.editors.budget_planner import BudgetPlanner

    session = Session(wide_doc(10, 30))
    planner = BudgetPlanner(session)
    assert "model too large" in planner.model_size.value
    assert "criterion &#x27;pairs&#x27;" in planner.model_size.value
    session.apply("generator.model_limit", {"cells": 10**15, "bytes": 10**17})
    planner.refresh()
    assert "model too large" not in planner.model_size.value
    assert "5.9e+14 cells" in planner.model_size.value


def test_privbayes_theta_tables_follow_expected_n() -> None:
    """With θ, a table holds at most n·ε/(d·θ) cells: declaring expected_n shrinks the bound."""
    doc = wide_doc(30, 30)
    doc["generator"] = {"family": "privbayes", "search_space": [{"theta": [4.0]}]}
    doc["budget"]["epsilon_generator"] = 2.0
    doc["schema"].pop("expected_n", None)
    text = size_refusal(build_spec(doc))  # 30 tables of up to 1e6 cells (max_cells)
    assert text is not None and "Declare schema.expected_n" in text
    doc["schema"]["expected_n"] = [40_000, 48_000]
    size = model_size(build_spec(doc))
    assert size.largest[1] == 800 and size_refusal(build_spec(doc)) is None  # 48e3·2/(30·4)
