"""The criterion-kind registry: every kind declared once, read by everything; a toy kind added
from this test alone works end to end (validated, evaluated, released with DP, in the editor).

The neighbour check here is parametrised over the registry, so a new kind is audited without
a new test: for R ~ R' (one record replaced) and a fixed candidate S, every value a kind hands
to the privacy layer moves by at most the Δ it declares, and Δ does not depend on R. Random
neighbours rarely reach the worst case, so this catches gross errors (a Δ halved for the
share kinds is caught); the worst-case audits of each Δ are in ``tests/test_criteria.py``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from workbench.audits.harness import Capture
from workbench.criteria import evaluate_all, exact_errors, kinds, release_once
from workbench.criteria.kinds.base import CriterionKind, join_path
from workbench.criteria.kinds.tags import KindTags, Reads
from workbench.evidence.sampler import sample_proxy
from workbench.privacy import PrivacyContext
from workbench.specification import SpecError
from workbench.specification.params import CONTROLS, Param, name_list
from workbench.transform.clean import clean
from workbench.validation import build_spec, json_schema

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
#: The paper's kinds, first in every list in this order; parametrised tests run over every
#: registered kind instead, so a new kind is checked without editing this file.
PAPER_KINDS = ("max_marginal_error", "relative_one_way", "conditional_mean",
               "regression_coefficients", "regression_mae", "faithfulness", "max_ecdf",
               "tv_marginals", "face_privacy_count")
REGISTERED = kinds.names()


# --- the toy kind: written here only, never in the package -----------------------------------
class PairMarginalError(CriterionKind):
    """The largest gap between the 2-way marginal of two chosen columns in R and S, over n."""

    name = "pair_marginal_error"
    description = "the largest gap between one 2-way marginal of R and of the release, over n"
    params = MappingProxyType({
        "columns": Param(None, name_list, "the two columns", control="columns",
                         label="columns"),
    })
    tags = KindTags(clip=(0.0, 1.0))

    def check(self, ctx, params, bounds, threshold, path):
        cols = params.get("columns")
        cpath = join_path(path, "params.columns")
        if isinstance(cols, list):
            if len(cols) != 2:
                ctx.problem(cpath, "must name exactly two columns")
            for j, c in enumerate(cols):
                if c not in ctx.columns:
                    ctx.unknown_column(f"{cpath}[{j}]", c)
        return (0.0, 1.0)

    def exact(self, ev, criterion):
        cols = tuple(criterion.params["columns"])
        gap = ev.pc.marginal(cols, "real") - ev.pc.marginal(cols, "synth")
        return float(np.abs(gap).max()) / ev.n

    def sensitivity(self, spec, table, criterion, pc):
        """Δ = 1/n: a replaced record leaves one cell and enters one, each count moves by ≤ 1,
        so every |r − s|/n, and their max, moves by ≤ 1/n."""
        return 1.0 / pc.n, {}

    def marginals(self, spec, criterion):
        return [tuple(criterion.params["columns"])]

    def template_params(self, document):
        names = [c["name"] for c in document["schema"]["columns"]]
        return {"columns": names[:2]}

    def audit_case(self):
        """S = R; R′ moves one record from cell (a, 0) to (b, 2): the gap goes 0 → 1/n."""
        from workbench.criteria.audit_case import BASE, AuditCase, replaced

        return AuditCase({"kind": self.name, "threshold": 0.5,
                          "params": {"columns": ["g", "x"]}},
                         BASE, replaced(BASE, 0, (1, 2, 0)), BASE, 1 / 4,
                         "S = R; R′ moves one record to another (g, x) cell: the largest gap "
                         "goes 0 → 1/n (Δ = 1/n)")


TOY = {"id": "toy", "kind": "pair_marginal_error", "threshold": 0.05, "epsilon": 0.2,
       "params": {"columns": ["mother_age", "parity"]}}


@pytest.fixture
def toy_kind():
    """The toy kind, registered for one test and removed afterwards."""
    kind = kinds.register(PairMarginalError())
    yield kind
    kinds.unregister(kind.name)


def lean_doc(criteria: list[dict[str, Any]]) -> dict[str, Any]:
    """The lean example with the given criteria (budget kept consistent), independent family."""
    doc = json.loads(LEAN.read_text())
    doc["criteria"] = copy.deepcopy(criteria)
    doc["budget"]["epsilon_criteria"] = sum(c.get("epsilon", 0) for c in criteria)
    doc["generator"] = {"family": "independent", "search_space": [{}]}
    if any(str(c.get("kind", "")).startswith("weighted_") for c in criteria):
        # the weighted kinds read the survey's weight bounds and population total
        doc["survey"] = {"weight": {"column": "w", "bounds": [1, 3]}, "design": {"type": "srs"},
                         "margins": [{"name": "sex", "columns": ["birth_sex"],
                                      "totals": {"M": 300, "F": 300}}],
                         "epsilon": {"binning": 0, "table": 0.5, "counts": 0},
                         # N = 600 against w_U = 3: the weight check needs ε_w ≥ 0.115
                         "weight_check_epsilon": 0.2}
    if {c.get("kind") for c in criteria} & NEEDS_MISSING:  # kinds about missing values
        for col in doc["schema"]["columns"]:
            if col["name"] in ("birth_month", "birth_sex"):
                col["missing"] = "allow"
    return doc


#: Kinds that need columns which may be missing (the lean example forbids them everywhere).
NEEDS_MISSING = {"missing_rate", "co_missingness"}


def codes(spec, n: int, seed: int) -> np.ndarray:
    """n cleaned public proxy rows, encoded with the spec's (only) configuration."""
    table = spec.table_codec(next(spec.configurations()))
    out = table.encode(clean(sample_proxy(int(n * 1.2) + 50, seed=seed), spec))
    assert out.shape[0] >= n
    return out[:n]


# --- the registry itself ---------------------------------------------------------------------
def test_built_in_kinds_are_registered_in_menu_order() -> None:
    assert kinds.names()[: len(PAPER_KINDS)] == PAPER_KINDS
    assert json_schema()["properties"]["criteria"]["items"]["properties"]["kind"]["enum"] == [
        *kinds.names()]


@pytest.mark.parametrize("name", REGISTERED)
def test_every_kind_declares_everything_in_one_place(name: str) -> None:
    kind = kinds.get(name)
    assert kind.description and kind.__class__.__module__ == f"workbench.criteria.kinds.{name}"
    assert all(p.control is None or p.control in CONTROLS for p in kind.params.values())
    for method in ("sensitivity", "exact"):  # each kind documents its own Δ and query
        assert getattr(type(kind), method).__doc__, (name, method)
    doc = json.loads(LEAN.read_text())
    crit = kind.template(name, doc)
    assert crit["kind"] == name and set(crit["params"]) <= set(kind.params)


def test_register_refuses_duplicates_and_bad_declarations(toy_kind) -> None:
    with pytest.raises(ValueError, match="already registered"):
        kinds.register(PairMarginalError())
    with pytest.raises(TypeError):
        kinds.register(object())  # type: ignore[arg-type]

    class NoExact(CriterionKind):
        name = "no_exact"

    with pytest.raises(TypeError, match="exact"):  # every kind declares its exact error
        NoExact()

    class Bad(CriterionKind):
        name = "bad_group"
        tags = KindTags(workload_group="nonsense")

        def exact(self, ev, criterion) -> float:
            """Never called: registration fails first."""
            return 0.0

        def audit_case(self):
            """Never called: registration fails first."""
            raise AssertionError("not reached")

    with pytest.raises(ValueError, match="workload_group"):
        kinds.register(Bad())
    with pytest.raises(TypeError, match=r"declare clip, strict in tags = KindTags"):
        class Stray(CriterionKind):  # a flag beside tags would be silently ignored
            name = "stray_flags"
            clip = (0.0, 1.0)
            strict = False
    with pytest.raises(ValueError, match="unknown criterion kind 'nope'; known: max_marginal"):
        kinds.get("nope")


# --- the toy kind end to end -----------------------------------------------------------------
def test_toy_kind_is_not_written_anywhere_in_the_package() -> None:
    for path in (REPO / "workbench").rglob("*"):
        if path.suffix in {".py", ".json"}:
            assert "pair_marginal_error" not in path.read_text(encoding="utf-8"), path


def test_toy_kind_is_validated_by_the_spec(toy_kind) -> None:
    kinds.unregister(toy_kind.name)  # unknown until registered: the schema's enum says so
    try:
        with pytest.raises(SpecError, match=r"criteria\[0\]\.kind: must be one of"):
            build_spec(lean_doc([TOY]))
    finally:
        kinds.register(toy_kind)
    spec = build_spec(lean_doc([TOY]))
    crit = spec.criterion("toy")
    assert crit.kind == "pair_marginal_error" and crit.bounds == (0.0, 1.0)
    assert spec.epsilon_total == pytest.approx(2 + 0.2)  # T = 1: ε_gen + ε of the criterion
    bad = copy.deepcopy(TOY) | {"params": {"columns": ["mother_age", "parity", "nope"],
                                           "extra": 1}, "epsilon": 0}
    with pytest.raises(SpecError) as err:
        build_spec(lean_doc([bad]))
    text = str(err.value)
    assert "criteria[0].params.columns: must name exactly two columns" in text
    assert "criteria[0].params.columns[2]: unknown column 'nope'" in text
    assert "criteria[0].params.extra: unknown parameter for kind 'pair_marginal_error'" in text
    assert "criteria[0].epsilon: must be > 0 (the criterion reads confidential data)" in text
    once = copy.deepcopy(TOY) | {"once": True}
    with pytest.raises(SpecError, match=r"criteria\[0\]\.once: a 'pair_marginal_error'"):
        build_spec(lean_doc([once]))


def test_toy_kind_is_evaluated_and_released_with_dp(toy_kind) -> None:
    spec = build_spec(lean_doc([TOY]))
    config = next(spec.configurations())
    real, synth = codes(spec, 1500, 1), codes(spec, 1500, 2)
    ctx = PrivacyContext.simulation(0)
    ctx.begin_iteration(1)
    (result,) = evaluate_all(spec, config, real, synth, ctx, table=spec.table_codec(config))
    exact = exact_errors(spec, config, real, synth, PrivacyContext.simulation(0),
                         table=spec.table_codec(config))["toy"]
    table = spec.table_codec(config)
    i, j = table.names.index("mother_age"), table.names.index("parity")
    shape = (table.domain.sizes[i], table.domain.sizes[j])
    gap = (np.bincount(np.ravel_multi_index((real[:, i], real[:, j]), shape), minlength=9 * 5)
           - np.bincount(np.ravel_multi_index((synth[:, i], synth[:, j]), shape), minlength=45))
    assert exact == pytest.approx(np.abs(gap).max() / 1500)
    (record,) = ctx.records  # one ε-DP measurement through the privacy layer, in the ledger
    assert record.purpose == "criterion toy (pair_marginal_error)"
    assert record.mechanism == "laplace" and record.epsilon == 0.2 and record.iteration == 1
    assert result.sensitivity == record.sensitivity == pytest.approx(1 / 1500)
    assert result.mechanism == "laplace" and 0.0 <= result.value <= 1.0  # clipped like shares
    assert result.passed is (result.value < 0.05)


def test_toy_kind_reaches_the_workload_and_describe(toy_kind) -> None:
    from workbench.generators import derive_workload
    from workbench.report.spec_summary import describe_spec

    doc = lean_doc([TOY])
    doc["generator"] = {"family": "workload", "search_space": [{"algorithm": ["fixed"]}]}
    spec = build_spec(doc)
    assert [i.clique for i in derive_workload(spec).items] == [("mother_age", "parity")]
    text = describe_spec(spec)
    assert "mother_age × parity: weight 1, ε 1.5 (from toy)" in text
    assert "toy  pair_marginal_error" in text


def html_of(widget: Any) -> list[str]:
    """The HTML values of a widget tree."""
    own = [widget.value] if type(widget).__name__ == "HTML" else []
    return own + [t for child in getattr(widget, "children", ()) for t in html_of(child)]


def test_toy_kind_is_shown_in_the_criteria_editor(toy_kind) -> None:
    from workbench.evidence.sampler import sample_proxy as proxy_rows
    from workbench.widgets import CriteriaEditor, ProxyLab, Session
    from workbench.widgets.dashboards.spec_review import criterion_reviews

    proxy = proxy_rows(4000, seed=3)
    session = Session(lean_doc([]), proxy)
    editor = CriteriaEditor(session, ProxyLab(proxy, seed=0))
    assert "pair_marginal_error" in editor.new_kind.options
    editor.new_kind.value = "pair_marginal_error"
    assert editor.add_criterion() and session.valid
    row = editor.row("pair_marginal_error")
    assert session.draft["criteria"][0]["params"] == {"columns": ["birth_month", "mother_age"]}
    assert any("one 2-way marginal" in t for t in html_of(row.widget))  # its plain words
    row.columns.value = ("parity", "birth_weight")  # the declared 'columns' control
    assert session.spec.criteria[0].params["columns"] == ("parity", "birth_weight")
    n = row.readout.n
    assert row.readout.sensitivity == pytest.approx(1 / n) and row.readout.sigma is not None
    (review,) = criterion_reviews(session.spec, editor.readouts)
    assert review.measures == PairMarginalError.description
    # one definition of false pass: the editor's readout and the review agree
    from workbench.widgets.dashboards.spec_review import _percent

    assert review.false_pass == _percent(row.readout.false_pass)


# --- the parametrised neighbour check over the registry --------------------------------------
def released_values() -> tuple[Capture, list[tuple[np.ndarray, float, str]]]:
    """A noise source that records every Laplace release (values, Δ, 'l1') and every noisy
    max (scores, Δ, 'linf': Δ bounds each score) and adds no noise."""
    capture = Capture()
    seen: list[tuple[np.ndarray, float, str]] = []
    original = capture.laplace_vector
    original_max = capture.noisy_max_index

    def laplace_vector(values, sensitivity, epsilon):
        seen.append((np.asarray(values, dtype=np.float64).copy(), float(sensitivity), "l1"))
        return original(values, sensitivity, epsilon)

    def noisy_max_index(scores, sensitivity, epsilon):
        seen.append((np.asarray(scores, dtype=np.float64).copy(), float(sensitivity), "linf"))
        return original_max(scores, sensitivity, epsilon)

    capture.laplace_vector = laplace_vector  # type: ignore[method-assign]
    capture.noisy_max_index = noisy_max_index  # type: ignore[method-assign]
    return capture, seen


def neighbour_check(criteria: list[dict[str, Any]], trials: int = 4) -> int:
    """For R ~ R' and fixed S, ‖q(R) − q(R')‖₁ ≤ Δ for every release; returns the count."""
    spec = build_spec(lean_doc(criteria))
    config = next(spec.configurations())
    real, synth = codes(spec, 600, 11), codes(spec, 600, 12)
    sizes = spec.table_codec(config).domain.sizes
    rng = np.random.default_rng(5)
    capture, seen = released_values()
    checked = 0
    for _ in range(trials):
        other = real.copy()
        other[rng.integers(len(other))] = [rng.integers(k) for k in sizes]
        # the loop conditions on R's once-releases (adaptive composition): the same for both
        once = release_once(spec, config, real, PrivacyContext.simulation(0))
        if spec.survey is not None:  # R's base weights (public bounds' maximum), no raking
            from workbench.criteria.weighting import SURVEY_KEY, SurveyInputs

            w = spec.survey.weight_bounds[1]
            once = {**once, SURVEY_KEY: SurveyInputs(np.full(len(real), w), None)}
        runs = []
        for data in (real, other):
            seen.clear()
            release_once(spec, config, data, PrivacyContext.simulation(0, noise=capture))
            ctx = PrivacyContext.simulation(0, noise=capture)
            evaluate_all(spec, config, data, synth, ctx, once, table=spec.table_codec(config))
            runs.append(list(seen))
        assert len(runs[0]) == len(runs[1])
        for (a, da, norm), (b, db, _) in zip(runs[0], runs[1], strict=True):
            assert da == db  # Δ comes from n, the spec and S, never from R
            move = np.abs(a - b).max() if norm == "linf" else np.abs(a - b).sum()
            assert move <= da * (1 + 1e-9) + 1e-12
            checked += 1
    return checked


@pytest.mark.parametrize("name", REGISTERED)
def test_released_values_move_by_at_most_their_sensitivity(name) -> None:
    kind = kinds.get(name)
    lean = json.loads(LEAN.read_text())
    criteria = [kind.template(name, lean_doc([{"kind": name}]))]
    if name == "regression_mae":  # it uses the DP coefficients of this criterion, released once
        criteria.append(next(c for c in lean["criteria"] if c["id"] == "regression_coefficients"))
    checked = neighbour_check(criteria)
    assert (checked == 0) is (kind.tags.reads is Reads.S_ONLY)


def test_toy_kind_passes_the_same_neighbour_check(toy_kind) -> None:
    assert neighbour_check([TOY]) == 4


# --- the recipe of docs/architecture.md, end to end: audit, run, report, verify ---------------
def test_toy_kind_passes_its_audit_from_its_declared_case(toy_kind) -> None:
    """The generic audit runs the toy's own case: ε-DP at Δ, flagged at Δ/2."""
    from workbench.audits import audit_scenario, criterion_scenario

    row = audit_scenario(criterion_scenario(toy_kind.name))
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()


def test_toy_kind_runs_and_is_reported_and_verified(toy_kind, tmp_path) -> None:
    """A run with the toy criterion publishes a bundle whose report, datasheet and criteria
    table show it, and `verify` re-makes its decision with the kind."""
    from workbench.criteria.audit_case import audit_document
    from workbench.engine import run, verify_bundle
    from workbench.validation import save_spec

    doc = audit_document(toy_kind.audit_case())
    doc.pop("survey")
    doc["metadata"]["dataset"] = "toy-kind-recipe"
    doc["selection"]["max_iterations"] = 1
    doc["face_privacy"] = {"min_count": [1]}
    spec_path = tmp_path / "toy.frozen.json"
    save_spec(doc, spec_path)
    rng = np.random.default_rng(0)
    rows = np.stack([rng.integers(0, 2, 300), rng.integers(0, 3, 300), rng.integers(0, 3, 300)],
                    axis=1)
    values = {"g": ["a", "b"], "x": [0, 1, 2], "y": [0, 5, 10]}
    lines = ["g,x,y"] + [",".join(str(values[c][v]) for c, v in zip("gxy", r, strict=True))
                         for r in rows]
    data = tmp_path / "toy.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = run(spec_path, data, tmp_path / "run", quiet=True,
                  budget_store=tmp_path / "budgets")
    assert outcome.status == "complete"
    release = outcome.release_dir
    assert verify_bundle(release).ok
    results = json.loads((release / "criteria.json").read_text())["criteria"]
    assert [r["id"] for r in results] == ["pair_marginal_error"] and results[0]["passed"]
    for name in ("README.md", "report.html", "criteria.md"):
        assert "pair_marginal_error" in (release / name).read_text(encoding="utf-8"), name
