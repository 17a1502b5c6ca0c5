"""The spec: validation with JSON paths, hashing, immutability, and the paper's design."""

from __future__ import annotations

import copy
import json
import math
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.specification import (
    SpecError,
    parse_document,
    spec_hash,
)
from workbench.validation import build_spec, freeze_document, load_spec, save_spec


def problems_of(doc: dict) -> list[str]:
    with pytest.raises(SpecError) as info:
        build_spec(doc)
    return [str(p) for p in info.value.problems]


def test_example_is_valid(example_spec):
    assert len(example_spec.columns) == 6
    assert len(example_spec.constraints.raw) == 10
    assert len(example_spec.constraints.synthetic) == 4
    assert len(example_spec.criteria) == 8
    assert example_spec.min_counts == (2, 3)
    assert not example_spec.frozen


def test_paper_budget_is_9_98(example_spec):
    assert example_spec.budget_plan().epsilon_per_iteration == pytest.approx(4.99)
    assert example_spec.epsilon_total == pytest.approx(9.98, abs=1e-12)


def test_moving_regression_out_of_loop_needs_fixed_transformations(example_doc):
    example_doc["criteria"][5]["once"] = True
    msgs = problems_of(example_doc)
    assert any(m.startswith("criteria[5].once: the regression columns have several") for m in msgs)
    # one alternative per regression column lets it leave the loop: 2·(4+0.56)+0.43
    for name in ("mother_age", "parity", "gestation_week"):
        t = example_doc["transformations"]["columns"][name]
        t["alternatives"] = t["alternatives"][:1]
    assert build_spec(example_doc).epsilon_total == pytest.approx(9.55)


def test_configuration_count_is_product_of_alternatives(example_spec):
    # 3 mother_age x 2 parity x 2 gestation binnings; 4 x (12 theta + 3 degree) PrivBayes
    # sets; 2 min_counts
    assert example_spec.configuration_count() == 3 * 2 * 2 * (4 * 12 + 4 * 3) * 2 == 1440
    configs = list(example_spec.configurations())
    assert len(configs) == 1440
    assert len({c.key for c in configs}) == 1440


def test_domain_sizes_of_the_paper(example_spec):
    sizes = {t.column: [a.codec.size for a in t.alternatives] for t in example_spec.transformations}
    assert sizes == {
        "birth_month": [12],
        "mother_age": [9, 10, 29],
        "parity": [5, 11],
        "gestation_week": [6, 15],
        "birth_sex": [2],
        "birth_weight": [32],
    }
    labels = example_spec.transform("mother_age").alternative("ten_bins_35_36_37_39").codec.labels
    assert labels == (
        "<18",
        "18-19",
        "20-24",
        "25-29",
        "30-34",
        "35-36",
        "37-39",
        "40-42",
        "43-44",
        "45+",
    )


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda d: d["criteria"][3].__setitem__("threshold", -1),
            "criteria[3].threshold: must be > 0",
        ),
        (
            lambda d: d["constraints"]["synthetic"][1].__setitem__(
                "reject_if", "motherage < 20 and parity > 3"
            ),
            "constraints.synthetic[1]: unknown column 'motherage'",
        ),
        (
            lambda d: d["budget"].__setitem__("epsilon_generator", 0),
            "budget.epsilon_generator: must be > 0",
        ),
        (
            lambda d: d["criteria"][1]["params"].__setitem__("false_pass_probability", 0.7),
            "criteria[1].params.false_pass_probability: must be a number in (0, 0.5)",
        ),
        (
            lambda d: d["criteria"][2]["params"].__setitem__("group_by", ["mother_agee"]),
            "criteria[2].params.group_by[0]: unknown column 'mother_agee'",
        ),
        (
            lambda d: d["schema"]["columns"][1].__setitem__("bounds", [65, 10]),
            "schema.columns[1].bounds: lower bound must be below upper bound",
        ),
        (
            lambda d: d["transformations"]["columns"]["parity"]["alternatives"][0].__setitem__(
                "edges", [1, 4, 2]
            ),
            "transformations.columns.parity.alternatives[0].edges: must be strictly increasing",
        ),
        (
            lambda d: d["budget"].__setitem__("epsilon_criteria", 0.5),
            "budget.epsilon_criteria: 0.5 does not equal the sum of the criteria's ε (0.99)",
        ),
        (lambda d: d["selection"].update(gamma=0.1, max_iterations=5, epsilon_0=0.5), "selection:"),
        (
            lambda d: d["generator"]["search_space"][0].__setitem__("epsilon_split", [1.5]),
            "generator.search_space[0].epsilon_split[0]: must be a number in (0, 1)",
        ),
        (
            lambda d: d["faithfulness"]["exact"].remove("parity"),
            "faithfulness: every column needs a rule; missing: parity",
        ),
        (
            lambda d: d["criteria"].append(copy.deepcopy(d["criteria"][0])),
            "criteria[8].id: duplicate criterion id 'marginals'",
        ),
        (
            lambda d: d["criteria"][0].__setitem__("kind", "max_marginals"),
            "criteria[0].kind: must be one of",
        ),
        (lambda d: d.__setitem__("extra_section", 1), "(root): unknown field(s)"),
    ],
)
def test_invalid_fields_are_reported_with_paths(example_doc, mutate, expected):
    mutate(example_doc)
    msgs = problems_of(example_doc)
    assert any(m.startswith(expected) for m in msgs), msgs


def test_every_problem_is_listed_at_once(example_doc):
    example_doc["criteria"][3]["threshold"] = 0
    example_doc["budget"]["epsilon_generator"] = -1
    example_doc["constraints"]["raw"][2]["reject_if"] = "gestation_week <"
    msgs = problems_of(example_doc)
    # schema and semantic problems are reported in one pass
    assert any(m.startswith("budget.epsilon_generator") for m in msgs)
    assert any(m.startswith("constraints.raw[2].reject_if") for m in msgs)
    example_doc["budget"]["epsilon_generator"] = 4
    msgs = problems_of(example_doc)
    assert any(m.startswith("criteria[3].threshold") for m in msgs)
    assert any(m.startswith("constraints.raw[2].reject_if") for m in msgs)


def test_selection_theorem_condition(example_doc):
    # γ > 0 with T below max{(1/γ)ln(2/ε0), 1 + 1/(eγ)} is refused
    example_doc["selection"] = {"gamma": 0.1, "max_iterations": 10, "epsilon_0": 0.5}
    assert any(m.startswith("selection:") for m in problems_of(example_doc))
    t_min = math.ceil(max((1 / 0.1) * math.log(2 / 0.5), 1 + 1 / (math.e * 0.1)))
    example_doc["selection"]["max_iterations"] = t_min
    assert build_spec(example_doc).epsilon_total == pytest.approx(9.98 + 0.5)
    # γ = 0 with a finite cap would make ⊥ depend on the data
    example_doc["selection"] = {"gamma": 0, "max_iterations": 100, "epsilon_0": 0}
    assert any(m.startswith("selection:") for m in problems_of(example_doc))


def test_spec_is_immutable(example_spec):
    with pytest.raises(AttributeError):
        example_spec.budget.epsilon_generator = 1  # type: ignore[misc]
    assert isinstance(example_spec.document, MappingProxyType)
    with pytest.raises(TypeError):
        example_spec.document["budget"]["epsilon_generator"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        example_spec.criteria[0].params["max_way"] = 2  # type: ignore[index]


def test_hash_is_stable_across_save_and_load(example_doc, tmp_path):
    h1 = save_spec(example_doc, tmp_path / "a.json")
    spec_a = load_spec(tmp_path / "a.json", require_frozen=True)
    h2 = save_spec(spec_a, tmp_path / "b.json")
    spec_b = load_spec(tmp_path / "b.json", require_frozen=True)
    assert spec_a.sha256 == spec_b.sha256 == spec_hash(example_doc)
    assert h1 == h2 == spec_b.document["frozen"]["sha256"]
    # YAML carries the same design and the same hash
    import yaml

    (tmp_path / "c.yaml").write_text(yaml.safe_dump(example_doc))
    assert load_spec(tmp_path / "c.yaml").sha256 == spec_a.sha256


def _leaf_paths(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_paths(v, (*path, i))
    else:
        yield path


def _changed(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, int | float):
        return v + 1
    if v is None:
        return 0
    return str(v) + "x"


def test_changing_any_value_changes_the_hash(example_document):
    base = spec_hash(example_document)
    paths = list(_leaf_paths(example_document))
    assert len(paths) > 200
    for path in paths:
        doc = copy.deepcopy(example_document)
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = _changed(target[path[-1]])
        assert spec_hash(doc) != base, path


def test_frozen_spec_detects_tampering(example_doc, tmp_path):
    frozen = freeze_document(example_doc)
    frozen["criteria"][0]["threshold"] = 0.02
    (tmp_path / "t.json").write_text(json.dumps(frozen))
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path / "t.json")
    assert "frozen.sha256" in info.value.paths


def test_unfrozen_spec_refused_when_freeze_required(example_doc, tmp_path):
    (tmp_path / "u.json").write_text(json.dumps(example_doc))
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path / "u.json", require_frozen=True)
    assert "frozen" in info.value.paths


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", '{"a": NaN}', "null"])
def test_unparseable_text_is_a_spec_error(text):
    with pytest.raises(SpecError):
        parse_document(text)


def test_missing_file_is_a_spec_error(tmp_path):
    with pytest.raises(SpecError, match="cannot read spec file"):
        load_spec(tmp_path / "nope.json")


# --- fuzzing: every failure is a SpecError with paths, never another exception ------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def mutated_specs(draw, base):
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        paths = [*list(_leaf_paths(doc)), ()]
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "delete", "replace_parent"]))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if action == "replace":
            parent[path[-1]] = draw(_values)
        elif action == "delete":
            del parent[path[-1]]
        elif len(path) > 1:
            grand = doc
            for key in path[:-2]:
                grand = grand[key]
            grand[path[-2]] = draw(_values)
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_specs_fail_only_with_spec_errors(example_document, data):
    doc = data.draw(mutated_specs(example_document))
    try:
        build_spec(doc)
    except SpecError as exc:
        assert exc.problems
        for p in exc.problems:
            assert isinstance(p.path, str) and p.message
            assert "internal validation error" not in p.message, exc


def test_regression_statistic_weights_are_checked(example_doc):
    """Per-entry regression weights must name the regression's columns and be > 0."""
    doc = copy.deepcopy(example_doc)
    crit = next(c for c in doc["criteria"] if c["kind"] == "regression_coefficients")
    crit["params"]["statistic_weights"] = {
        "birth_weight*gestation_week": 2.0,
        "birth_weight*height": 1.0,
        "parity^2": 0,
        "birth_sex=X": 1.0,
    }
    found = problems_of(doc)
    path = "criteria[5].params.statistic_weights"
    assert any(f"{path}.birth_weight*height" in p and "'height'" in p for p in found)
    assert any(f"{path}.parity^2" in p and "> 0" in p for p in found)
    assert any(f"{path}.birth_sex=X" in p and "'X'" in p for p in found)
    assert not any("gestation_week" in p for p in found)
    crit["params"]["statistic_weights"] = {"birth_weight*gestation_week": 2.0}
    build_spec(doc)


# --- sections: one module per section, each builds its own immutable object -----------------
def test_each_section_builds_its_own_immutable_model_object(example_document):
    """Every section module fills one Spec keyword; Spec takes keywords only."""
    import dataclasses

    from workbench.specification.model import Spec
    from workbench.validation.sections import SECTIONS, BuildContext

    fields = {f.name for f in dataclasses.fields(Spec)}
    ctx = BuildContext(example_document)
    for section in SECTIONS:
        assert section.FIELD in fields, section.__name__
        built = section.build(ctx)
        ctx.built[section.FIELD] = built
        if dataclasses.is_dataclass(built):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(built, dataclasses.fields(built)[0].name, None)
        elif built is not None:  # None: an optional section the example leaves out
            assert isinstance(built, tuple), section.__name__
    assert not ctx.problems
    assert set(ctx.built) | {"document", "sha256", "frozen"} == fields
    with pytest.raises(TypeError):
        Spec(example_document, "0" * 64, False, *ctx.built.values())  # never positional
    spec = Spec(document=example_document, sha256="0" * 64, frozen=False, **ctx.built)
    assert spec.epsilon_total == pytest.approx(9.98)


def test_a_section_reports_problems_with_paths_on_its_own(example_document):
    """A section can be exercised alone: its problems carry the JSON paths of its part."""
    from workbench.validation.sections import BuildContext, budget, columns, criteria

    doc = copy.deepcopy(example_document)
    doc["budget"]["epsilon_criteria"] = 2
    ctx = BuildContext(doc)
    columns.build(ctx)
    ctx.built["criteria"] = criteria.build(ctx)
    assert budget.build(ctx).epsilon_criteria == pytest.approx(0.99)  # derived, not written
    assert [str(p) for p in ctx.problems] == [
        "budget.epsilon_criteria: 2 does not equal the sum of the criteria's ε (0.99); leave "
        "it out: it is derived from the criteria"]


def test_json_schema_kind_enum_comes_from_the_registry():
    from workbench.criteria import kinds
    from workbench.validation import json_schema

    enum = json_schema()["properties"]["criteria"]["items"]["properties"]["kind"]["enum"]
    assert enum == list(kinds.names())
    json_schema()["properties"].clear()  # callers get a copy
    assert json_schema()["properties"]["criteria"]


def test_schema_and_semantic_problems_are_reported_in_one_pass(example_doc, tmp_path, capsys):
    """A shape error no longer hides the rule-syntax and ε-sum errors: `validate` lists all."""
    from workbench.cli.main import main

    doc = copy.deepcopy(example_doc)
    doc["schema"]["columns"][0]["type"] = "banana"
    doc["constraints"]["synthetic"][0]["reject_if"] = "mother_age <<< 3"
    doc["budget"]["epsilon_criteria"] = 5.0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "schema.columns[0].type: must be one of" in err
    assert "constraints.synthetic[0].reject_if: unknown operator '<<<'" in err
    assert "budget.epsilon_criteria: 5 does not equal the sum of the criteria's ε" in err
    assert "Traceback" not in err
