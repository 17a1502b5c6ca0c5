"""Issue 15 options of the workload family: faithfulness cliques from the cost rule, weights by
cell count, and no separate 1-way share."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench.criteria.kinds.faithfulness import rule_cliques as faithfulness_rule_cliques
from workbench.generators.workload import derive_workload, size_factors
from workbench.specification import Configuration, SpecError
from workbench.trial import bind
from workbench.validation import build_spec, load_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.frozen.json"
ORDINAL = ("mother_age", "gestation_week", "birth_weight")


@pytest.fixture(scope="module")
def lean():
    return load_spec(LEAN)


def test_rule_cliques_join_exact_and_ordinal_columns(lean) -> None:
    """Exact: birth_month, parity, birth_sex; ordinal: mother_age, gestation_week, birth_weight."""
    two = faithfulness_rule_cliques(lean, 2)
    assert len(two) == 15 and ("birth_month", "birth_weight") in two  # all 6 columns pair up
    three = faithfulness_rule_cliques(lean, 3)
    triples = [q for q in three if len(q) == 3]
    assert len(triples) == 12  # 3 ordinal pairs × the 4 other rule columns
    assert all(sum(c in ORDINAL for c in q) >= 2 for q in triples)
    assert ("mother_age", "gestation_week", "parity") in triples
    # the kind's own cliques are the three ordinal pairs only
    default = derive_workload(lean)
    assert {q for i in default.items for q in [i.clique] if "faithfulness" in i.sources} == {
        ("mother_age", "gestation_week"), ("mother_age", "birth_weight"),
        ("gestation_week", "birth_weight")}
    ruled = derive_workload(lean, faithfulness_order=2)
    assert sum("faithfulness" in i.sources for i in ruled.items) == 15


def test_size_factors_scale_by_cells_around_the_geometric_mean() -> None:
    sizes = {"a": 2, "b": 8, "c": 32}
    f = size_factors([("a", "b"), ("b", "c")], sizes, 0.5)
    assert f[("b", "c")] / f[("a", "b")] == pytest.approx(math.sqrt(256 / 16))
    assert math.prod(f.values()) == pytest.approx(1.0)
    assert size_factors([("a", "b")], sizes, 0.0) == {("a", "b"): 1.0}


def test_bound_generator_weighs_wide_marginals_up_and_may_drop_the_one_way_share(lean) -> None:
    config = Configuration.from_dict({**next(lean.configurations()).to_dict(), "generator": {
        "family": "workload", "one_way_share": 0, "size_power": 0.5,
        "faithfulness_cliques": 2}})
    gen = bind(lean, config).generator()
    items = {i.clique: i.weight for i in gen.workload.items}
    assert items[("birth_month", "birth_weight")] > 2 * items[("birth_month", "birth_sex")]
    allocation = gen.workload.allocate(2.0)
    # no share of separate 1-way measurements: only the 1-ways criteria ask for, each once
    singles = [q for q, _ in allocation if len(q) == 1]
    asked = {i.clique for i in gen.workload.items if len(i.clique) == 1}
    assert len(singles) == len(set(singles)) and asked == set(singles)
    assert math.fsum(e for _, e in allocation) == pytest.approx(2.0)


def test_spec_accepts_a_zero_share_and_refuses_bad_options(lean) -> None:
    doc = lean.to_document()
    doc["generator"]["search_space"] = [{"one_way_share": [0], "faithfulness_cliques": [3],
                                         "size_power": [0.5]}]
    doc.pop("selection")
    doc["selection"] = {"gamma": 0, "max_iterations": 1, "epsilon_0": 0}
    build_spec(doc)
    for bad in ({"one_way_share": [1]}, {"faithfulness_cliques": [4]}, {"size_power": [-1]}):
        doc["generator"]["search_space"] = [bad]
        with pytest.raises(SpecError):
            build_spec(doc)
