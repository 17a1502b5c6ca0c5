"""The generator-family registry: hyperparameters declared once, read by the spec validator,
make_generator, describe and the spec review; a toy family added from this test alone is
validated, made, fitted, used by run_iteration and shown in describe."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from workbench.criteria import release_once
from workbench.engine import run_iteration
from workbench.evidence.sampler import sample_proxy
from workbench.generators import (
    GeneratorFamily,
    family_class,
    make_generator,
    register,
    registered,
    unregister,
)
from workbench.privacy import PrivacyContext
from workbench.specification import SpecError
from workbench.specification.params import Param, non_negative, one_of
from workbench.transform.clean import clean
from workbench.trial import bind
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
PAPER = REPO / "examples" / "israel_births_2014.json"


# --- the toy family: written here only, never in the package ----------------------------------
class ToyMarginals(GeneratorFamily):
    """Independent noisy 1-way histograms, each with a floor added (a toy)."""

    name = "toy_marginals"
    description = "independent noisy 1-way histograms with a floor (a toy)"
    hyperparameters = MappingProxyType({
        "floor": Param(0.0, non_negative, "added to every noisy count"),
        "order": Param("schema", one_of("schema", "reverse"), "the order columns are drawn"),
    })

    def bind_spec(self, spec, table=None) -> None:
        self.bound_columns = spec.column_names

    def describe(self, label: str, epsilon: float) -> list[str]:
        d = len(self.bound_columns)
        return [f"Toy marginals {label}: {d} histograms, ε {epsilon / d:.4g} each"]

    def fit(self, codes, domain, epsilon, privacy):
        self.check_params()
        d = len(domain)
        self.probs_ = []
        for j, name in enumerate(domain.names):
            counts = np.bincount(codes[:, j], minlength=domain.sizes[j]).astype(float)
            noisy = privacy.laplace(counts, sensitivity=privacy.histogram_sensitivity(),
                                    epsilon=epsilon / d, purpose=f"toy marginal: {name}").value
            p = np.clip(noisy, 0.0, None) + self.floor
            self.probs_.append(p / p.sum() if p.sum() > 0 else np.full(p.size, 1 / p.size))
        return self

    def sample(self, n, rng):
        out = np.zeros((n, len(self.probs_)), dtype=np.int64)
        order = range(len(self.probs_))
        for j in (reversed(order) if self.order == "reverse" else order):
            out[:, j] = rng.choice(self.probs_[j].size, size=n, p=self.probs_[j])
        return out


@pytest.fixture
def toy_family():
    register(ToyMarginals)
    yield ToyMarginals
    unregister(ToyMarginals.name)


def doc_with(path: Path, family: str, *grids: dict) -> dict:
    """An example spec with another generator family and search space."""
    doc = json.loads(path.read_text())
    doc["generator"] = {"family": family, "search_space": list(grids)}
    return doc


def problems(doc: dict) -> str:
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    return str(err.value)


# --- the toy family end to end ----------------------------------------------------------------
def test_toy_family_is_not_written_anywhere_in_the_package() -> None:
    for path in (REPO / "workbench").rglob("*.py"):
        assert "toy_marginals" not in path.read_text(encoding="utf-8"), path


def test_toy_family_is_validated_by_the_spec(toy_family) -> None:
    spec = build_spec(doc_with(LEAN, "toy_marginals", {"floor": [0, 1]}, {"order": ["reverse"]}))
    assert spec.generator.count() == 3
    text = problems(doc_with(LEAN, "toy_marginals", {"floor": [-1], "order": ["x"], "k": [2]}))
    assert "generator.search_space[0].floor[0]: must be a number >= 0" in text
    assert "generator.search_space[0].order[0]: must be 'schema' or 'reverse'" in text
    assert "generator.search_space[0].k: unknown hyperparameter for 'toy_marginals'" in text
    unregister("toy_marginals")
    try:
        assert "unknown family 'toy_marginals'" in problems(doc_with(LEAN, "toy_marginals", {}))
    finally:
        register(ToyMarginals)


def test_toy_family_is_made_with_its_one_validator(toy_family) -> None:
    made = make_generator("toy_marginals", floor=2)
    assert isinstance(made, ToyMarginals) and made.floor == 2 and made.order == "schema"
    with pytest.raises(ValueError, match="toy_marginals: floor must be a number >= 0, got -1"):
        make_generator("toy_marginals", floor=-1)
    with pytest.raises(ValueError, match=r"has no hyperparameter\(s\) \['k'\]"):
        make_generator("toy_marginals", k=1)


def test_toy_family_is_fitted_used_by_run_iteration_and_shown_in_describe(toy_family) -> None:
    from workbench.report.spec_summary import describe_spec

    spec = build_spec(doc_with(LEAN, "toy_marginals", {"floor": [0.5], "epsilon": [2]}))
    config = next(spec.configurations())
    generator = bind(spec, config).generator()  # the engine's way: made, then bound to the spec
    assert generator.floor == 0.5 and generator.bound_columns == spec.column_names
    frame = clean(sample_proxy(3000, seed=4), spec)
    ctx = PrivacyContext.simulation(0)
    once = release_once(spec, config, spec.table_codec(config).encode(frame), ctx)
    ctx.begin_iteration(1)
    candidate = run_iteration(bind(spec, config), frame, ctx, once_results=once)
    assert candidate.codes is not None and candidate.codes.shape[0] == len(frame)
    assert [r.id for r in candidate.results] == [c.id for c in spec.criteria]
    toy = [r for r in ctx.records if r.purpose.startswith("toy marginal")]
    assert len(toy) == 6 and sum(r.epsilon for r in toy) == pytest.approx(2.0)
    text = describe_spec(spec)
    assert "Generator: toy_marginals, 1 hyperparameter sets" in text
    assert "Toy marginals 1 (epsilon=2, floor=0.5): 6 histograms, ε 0.3333 each" in text


def test_toy_family_is_shown_in_the_spec_review(toy_family) -> None:
    from workbench.widgets.dashboards.spec_review import search_space_html

    spec = build_spec(doc_with(LEAN, "toy_marginals", {"floor": [1]}))
    text = search_space_html(spec, None)
    assert "Generator toy_marginals: floor (1)" in text
    assert ("with a floor (a toy); not in the search space, at their defaults: order = schema"
            in text)


# --- one declaration, one validator -----------------------------------------------------------
def bad_values(param: Param) -> list[object]:
    """Values the declared constraint refuses (from a fixed menu)."""
    menu = [-1, 0, 1.5, 2.5, "x", True, ["a", "a"], 10**9, 0.5]
    return [v for v in menu if param.problem(v) is not None]


@pytest.mark.parametrize("cls", registered(), ids=lambda c: c.name)
def test_spec_and_make_generator_refuse_the_same_values(cls) -> None:
    """Every declared constraint is enforced alike by the spec and by make_generator."""
    checked = 0
    for key, param in cls.hyperparameters.items():
        assert param.doc, (cls.name, key)  # each hyperparameter says what it is
        for value in bad_values(param):
            grid = {key: [value]} | ({"degree": [2]} if key not in ("degree", "theta")
                                     and cls.name == "privbayes" else {})
            assert f"generator.search_space[0].{key}[0]: {param.problem(value)}" in problems(
                doc_with(LEAN, cls.name, grid)), (cls.name, key, value)
            with pytest.raises(ValueError, match=f"{cls.name}: {key} "):
                make_generator(cls.name, **{k: v[0] for k, v in grid.items()})
            checked += 1
    assert checked >= len([p for p in cls.hyperparameters.values() if p.check])


def test_privbayes_defaults_apply_in_spec_and_constructor_alike() -> None:
    """The drift is gone: epsilon_split defaults to 0.5 everywhere; max_cells/max_candidates
    are hyperparameters the spec knows."""
    spec = build_spec(doc_with(PAPER, "privbayes", {"degree": [2], "max_cells": [5000],
                                                    "max_candidates": [50]}))
    generator = bind(spec, next(spec.configurations())).generator()
    assert generator.epsilon_split == 0.5 == make_generator("privbayes", degree=2).epsilon_split
    assert (generator.max_cells, generator.max_candidates) == (5000, 50)
    assert "set exactly one of theta, degree" in problems(doc_with(PAPER, "privbayes", {}))
    with pytest.raises(ValueError, match="set exactly one of theta, degree"):
        make_generator("privbayes")


def test_perturbed_histogram_columns_in_a_spec() -> None:
    """A column list is a hyperparameter value the spec can hold, checked against the schema."""
    doc = doc_with(LEAN, "perturbed_histogram", {"columns": [["parity", "birth_sex"], ["x"]]})
    assert "generator.search_space[0].columns[1]: unknown column 'x'" in problems(doc)
    spec = build_spec(doc_with(LEAN, "perturbed_histogram", {"columns": [["parity",
                                                                          "birth_sex"]]}))
    config = next(spec.configurations())
    assert config.params["columns"] == ("parity", "birth_sex")
    round_trip = type(config).from_dict(json.loads(json.dumps(config.to_dict())))
    assert round_trip == config and hash(round_trip) == hash(config)
    frame = clean(sample_proxy(2000, seed=5), spec)
    ctx = PrivacyContext.simulation(1)
    once = release_once(spec, config, spec.table_codec(config).encode(frame), ctx)
    candidate = run_iteration(bind(spec, config), frame, ctx, once_results=once)
    assert candidate.codes is not None
    assert any("perturbed histogram joint: parity, birth_sex" in r.purpose for r in ctx.records)


def test_registry_refuses_bad_families() -> None:
    class NoName(GeneratorFamily):
        pass

    class OwnEpsilon(GeneratorFamily):
        name = "own_epsilon"
        hyperparameters = MappingProxyType({"epsilon": Param(1.0)})

    with pytest.raises(ValueError, match="identifier"):
        register(NoName)
    with pytest.raises(ValueError, match="common to every family"):
        register(OwnEpsilon)
    with pytest.raises(ValueError, match="already registered"):
        register(family_class("privbayes"))
    with pytest.raises(TypeError):
        register(dict)  # type: ignore[arg-type]
    assert [c.name for c in registered()] == ["privbayes", "independent", "perturbed_histogram",
                                              "workload", "plausible_deniability", "bayesian"]
    assert copy.copy(make_generator("independent")).get_params() == {}


def test_a_family_that_is_not_pure_dp_says_so_in_describe(toy_family, monkeypatch) -> None:
    """The guarantee hook: a family's own words reach describe; pure ε-DP families add none."""
    from workbench.generators import PURE_EPSILON_DP, Guarantee
    from workbench.report.spec_summary import describe_spec

    spec = build_spec(doc_with(LEAN, "toy_marginals", {"floor": [0.5], "epsilon": [2]}))
    assert "guarantee:" not in describe_spec(spec)
    assert bind(spec, next(spec.configurations())).generator().guarantee() == PURE_EPSILON_DP
    promise = Guarantee("per-record (ε, δ)", dataset_level=False, explanation="toy words",
                        kind="toy_per_record", parameters={"epsilon": 1.5, "delta": 1e-9})
    monkeypatch.setattr(ToyMarginals, "guarantee", lambda self: promise)
    text = describe_spec(spec)
    assert ("1 (epsilon=2, floor=0.5) guarantee: per-record (ε, δ) (ε = 1.5, δ = 1e-09): "
            "toy words") in text
