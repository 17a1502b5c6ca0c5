"""Public evidence as one room (issue 35): one IPF, one population-at-n sampler and one reader
of published aggregates in the package (a grep guard that fails on a planted second one), the
published-tables form read as FACTS list-form facts, and a new kind of evidence — a proxy
re-weighted to a published mean — reaching the dry run, the floors and the design assistant
without an edit to any of them."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.design.assistant import design
from workbench.dryrun import InlineExecutor, dry_run
from workbench.dryrun.floors import feasibility_floors
from workbench.evidence.core import Evidence, EvidenceKind, register, registered, unregister
from workbench.evidence.published import published_tables, read_published_tables

REPO = Path(__file__).resolve().parents[1]
#: Where each one of a kind lives; anything like it elsewhere is a second one.
HOMES = {"ipf": "workbench/survey/raking.py", "sampler": "workbench/evidence/population.py",
         "reader": "workbench/evidence/facts.py"}
#: Names a population-at-n sampler goes by.
SAMPLER_NAME = re.compile(r"resample|_to_n$|^at_n|population|systematic")
#: Keys of a published-aggregates document (tables form and list form); a function that
#: json-loads a document in a module that names two of them is a reader.
AGGREGATE_KEYS = {"columns", "counts", "pairs", "facts", "shares", "step", "rounding"}


# --- must-show 2: the guard -----------------------------------------------------------------------
def _calls(node: ast.AST, name: str) -> list[ast.Call]:
    return [c for c in ast.walk(node) if isinstance(c, ast.Call)
            and getattr(c.func, "attr", getattr(c.func, "id", None)) == name]


def _scales_in_a_nested_loop(loop: ast.For) -> bool:
    """A sweep loop holding a loop over margins that divides and multiplies (IPF's shape)."""
    for inner in (n for n in ast.walk(loop) if isinstance(n, ast.For) and n is not loop):
        divides = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
                      for n in ast.walk(inner)) or bool(_calls(inner, "divide"))
        scales = any((isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Mult))
                     or (isinstance(n, ast.Assign) and isinstance(n.value, ast.BinOp)
                         and isinstance(n.value.op, ast.Mult)) for n in ast.walk(inner))
        if divides and scales:
            return True
    return False


def _kwarg(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def second_ones(path: Path) -> list[str]:
    """'kind: line' for every IPF, population-at-n sampler or published-aggregate reader in
    ``path`` outside its one home."""
    rel = path.relative_to(path.parents[len(path.parents) - 1]).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    keys = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)
                and getattr(node.iter.func, "id", None) == "range"
                and _scales_in_a_nested_loop(node) and not rel.endswith(HOMES["ipf"])):
            found.append(f"ipf: {node.lineno}")
        if isinstance(node, ast.Call) and not rel.endswith(HOMES["sampler"]):
            attr = getattr(node.func, "attr", None)
            replace = _kwarg(node, "replace")
            with_replacement = (replace is None and attr == "choice" and _kwarg(node, "p") is None
                                and node.args and isinstance(node.args[0], ast.Call)
                                and getattr(node.args[0].func, "id", None) == "len"
                                ) or (isinstance(replace, ast.Constant) and replace.value is True)
            if attr in ("choice", "sample") and with_replacement:
                found.append(f"sampler: {node.lineno}")
        if (isinstance(node, ast.Subscript) and getattr(node.value, "attr", None) == "iloc"
                and _calls(node.slice, "integers") and not rel.endswith(HOMES["sampler"])):
            found.append(f"sampler: {node.lineno}")
        if (isinstance(node, ast.FunctionDef) and SAMPLER_NAME.search(node.name)
                and not rel.endswith(HOMES["sampler"])
                and any(_calls(node, f) for f in ("choice", "integers", "permutation"))):
            found.append(f"sampler: {node.lineno}")
        if (isinstance(node, ast.FunctionDef) and len(keys & AGGREGATE_KEYS) >= 2
                and not (rel.endswith(HOMES["reader"]) and node.name == "read_json")
                and any(getattr(c.func, "value", None) is not None
                        and getattr(c.func.value, "id", "") == "json"
                        for c in _calls(node, "load") + _calls(node, "loads"))):
            found.append(f"reader: {node.lineno}")
    return found


def test_one_ipf_one_sampler_one_reader_in_the_package() -> None:
    """Every module of workbench/ and benchmarks/: no IPF loop outside survey/raking.py, no
    population drawn with replacement (or by frame.iloc[rng.integers(...)]) outside
    evidence/population.py, no function that json-loads a published-aggregates document
    outside the one reader (``evidence.facts.read_json``, which knows no aggregate key)."""
    found = [f"{p.relative_to(REPO)}: {hit}"
             for root in ("workbench", "benchmarks") for p in sorted((REPO / root).rglob("*.py"))
             for hit in second_ones(p)]
    assert not found, found


PLANTED = {
    "ipf": '''
import numpy as np
def raked(codes, targets, sweeps=50):
    w = np.ones(len(codes))
    for _ in range(sweeps):
        for j, target in targets.items():
            now = np.bincount(codes[:, j], weights=w) / w.sum()
            w = w * (target / now)[codes[:, j]]
    return w
''',
    "sampler": '''
def grow(frame, n, rng):
    return frame.iloc[rng.choice(len(frame), size=n, replace=True)]
def grow_too(frame, n, rng):
    return frame.iloc[rng.integers(0, len(frame), size=n)]
''',
    "reader": '''
import json
def tables(path):
    with open(path) as fh:
        doc = json.load(fh)
    return doc["columns"], doc.get("step", 0.001)
''',
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_the_guard_fails_on_a_planted_second_one(tmp_path: Path, kind: str) -> None:
    planted = tmp_path / "workbench" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(PLANTED[kind])
    hits = second_ones(planted)
    assert hits and all(h.startswith(f"{kind}:") for h in hits), hits
    assert len(hits) == (2 if kind == "sampler" else 1)


# --- the reader: the tables form is a subset of the list form -----------------------------------
def _labels(spec, column: str) -> list[str]:
    from workbench.trial import bind

    table = bind(spec, next(iter(spec.configurations()))).table
    return [str(x) for x in table.codec(column).labels]


def test_the_tables_form_and_the_list_form_read_into_the_same_facts(spec, tmp_path) -> None:
    column = "birth_sex"
    labels = _labels(spec, column)
    tables = published_tables(spec, {"source": "t", "step": 0.01,
                                     "columns": {column: [0.49, 0.51]}})
    listed = {"format": "workbench.facts", "format_version": 1, "title": "t", "facts": [
        {"kind": "shares", "axes": [{"column": column, "values": labels}],
         "shares": [0.49, 0.51], "rounding": 0.01, "source": "t"}]}
    path = tmp_path / "listed.json"
    path.write_text(json.dumps(listed))
    read = read_published_tables(spec, path)
    assert read.shares == tables.shares and read.step == tables.step == 0.01
    assert [(f.kind, f.axes, f.shares) for f in read.facts] == [
        (f.kind, f.axes, f.shares) for f in tables.facts]
    listed["facts"][0]["axes"][0]["values"] = labels[::-1]
    with pytest.raises(ValueError, match="facts\\[0\\]: a forecast's anchor needs the design's "
                                         "cells of 'birth_sex'"):
        published_tables(spec, listed)


def test_the_table_form_reads_into_the_same_facts() -> None:
    """The shipped US 2019 table form: every table a ``shares`` fact, exact (rounding 0), its
    cells the counts' shares, the child axis last."""
    from workbench.evidence.fact_list import load_fact_file

    loaded = load_fact_file(REPO / "data_public" / "us2019_facts.json")
    facts = {f.id: f for f in loaded.facts}
    assert loaded.form == "tables" and set(facts) == set(loaded.document["tables"])
    month = loaded.document["tables"]["birth_month"]["cells"][0]["counts"]
    assert facts["birth_month"].shares == pytest.approx([c / sum(month) for c in month])
    pair = facts["parity_given_mother_age"]
    assert [a.column for a in pair.axes] == ["mother_age", "parity"] and pair.rounding == 0
    assert sum(pair.shares) == pytest.approx(1) and len(pair.shares) == 33 * pair.axes[1].size


# --- must-show 5: a published mean, a new kind of evidence ----------------------------------------
# Written from docs/architecture.md, "…a kind of evidence": the aggregate is a FACTS list-form
# fact (``mean``), the kind subclasses EvidenceKind and registers; nothing else is edited.
COLUMN = "gestation_week"


class PublishedMean(EvidenceKind):
    """Every published ``mean`` fact met by exponential tilting, w_i·exp(λ·z_i) with z the
    column standardised (among the weights meeting the mean, the closest to the given ones in
    KL divergence), λ bisected; a mean outside the proxy's values is refused naming the fact."""

    name = "mean"

    def applies(self, published) -> bool:
        return any(f.kind == "mean" for f in published.facts)

    def reweight(self, evidence: Evidence, weights: np.ndarray | None) -> np.ndarray:
        w = np.ones(len(evidence.frame)) if weights is None else np.array(weights, float)
        for fact in (f for f in evidence.published.facts if f.kind == "mean"):
            x = pd.to_numeric(evidence.frame[fact.column], errors="coerce").to_numpy(float)
            ok = np.isfinite(x)
            if not x[ok].min() < fact.value < x[ok].max():
                raise ValueError(f"published mean {fact.where}: {fact.value:g} lies outside "
                                 "the proxy's values")
            z = (x[ok] - x[ok].mean()) / x[ok].std()
            a, b = -50.0, 50.0
            for _ in range(100):
                t = w[ok] * np.exp((a + b) / 2 * z - abs((a + b) / 2) * np.abs(z).max())
                a, b = ((a + b) / 2, b) if np.dot(t, x[ok]) / t.sum() < fact.value else (
                    a, (a + b) / 2)
            w[ok] = t * (w[ok].sum() / t.sum())  # the rows missing the column keep their share
        return w


@pytest.fixture(scope="module", autouse=True)
def mean_kind():
    register(PublishedMean())
    yield
    unregister("mean")


def _mean_evidence(spec, proxy: pd.DataFrame, value: float) -> Evidence:
    document = {"format": "workbench.facts", "format_version": 1, "title": "office", "facts": [
        {"id": "gestation_mean", "kind": "mean", "column": COLUMN, "value": value,
         "rounding": 0.1, "source": "the office's yearbook, table 2"}]}
    return Evidence(spec, proxy, published_tables(spec, document))


def test_a_published_mean_re_weights_the_anchor(spec, proxy) -> None:
    assert [k.name for k in registered()] == ["shares", "mean"]
    proxy_mean = float(proxy[COLUMN].mean())
    for value in (proxy_mean - 1.0, proxy_mean + 0.5):
        w = _mean_evidence(spec, proxy, value).anchor
        assert w is not None and np.dot(w, proxy[COLUMN]) / w.sum() == pytest.approx(value)
        drawn = _mean_evidence(spec, proxy, value).population(4_000, np.random.default_rng(0))
        assert abs(float(drawn[COLUMN].mean()) - value) < 0.15  # sampling noise at 4,000
    with pytest.raises(ValueError, match=r"gestation_mean.*outside the proxy's values"):
        _ = _mean_evidence(spec, proxy, 99.0).anchor


def test_a_published_mean_reaches_dry_run_floors_and_design_unedited(spec, proxy) -> None:
    """Moving the published mean moves the dry run's records, the floors and the design
    assistant's margins; none of the three modules names the kind (the recipe edits none)."""
    low, high = (_mean_evidence(spec, proxy, float(proxy[COLUMN].mean()) + d)
                 for d in (-1.5, 1.0))
    config = next(iter(spec.configurations()))

    def exact(ev: Evidence) -> list[float]:
        result = dry_run(spec, ev, [config], repetitions=2, seed=3, noise="seeded",
                         executor=InlineExecutor(), progress=False, n=2_000)
        return [o.exact for r in result.records for o in r.criteria.values()]

    assert exact(low) != exact(high)
    floors = [feasibility_floors(spec, ev, config, 2_000, draws=2, seed=1).by_id()
              for ev in (low, high)]
    assert floors[0]["mean_gestation"].mean != floors[1]["mean_gestation"].mean
    margins = [design(spec, ev, 2_000, epsilon_generators=(2.0,), divisors=(3.0,),
                      repetitions=1, draws=1, check_repetitions=1, checks=1,
                      executor=InlineExecutor()).margins[2.0] for ev in (low, high)]
    assert margins[0] != margins[1]
    for module in ("dryrun/run.py", "dryrun/floors.py", "design/assistant.py"):
        source = (REPO / "workbench" / module).read_text(encoding="utf-8")
        assert "mean_kind" not in source and "PublishedMean" not in source, module
