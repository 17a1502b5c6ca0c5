"""Issue 34, part A: one declared relation for n, ``metadata.n_policy`` (``public`` | ``dp``).

Must-show 1 (public: the words), 2 (dp: sizes are DP draws, the ledger prices n̂) and 3 (the
validator refuses what has no bound under dp), plus each derivation checked on neighbours.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from own_data_helpers import small_doc, small_frame, write_csv

from workbench.cli.main import main as cli
from workbench.criteria.marginal_kinds import tv_marginals_error
from workbench.criteria.marginals import max_marginal_error
from workbench.engine import verify_bundle
from workbench.engine.n_check import n_problem
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.report.own_data import cleaning_describe_line
from workbench.specification import SpecError
from workbench.specification.derived import document_plan
from workbench.specification.n_policy import (
    MIN_N_HAT,
    PURPOSE,
    NPolicy,
    n_statement,
    noisy_n,
    parse,
    pilot_words,
    removed_words,
)
from workbench.transform import Domain
from workbench.transform.cells import PairedCells
from workbench.validation import build_spec, load_spec, save_spec

ROOT = Path(__file__).resolve().parents[1]
KEEP = ("age", "workclass", "sex", "hours_per_week", "Y")
N_RAW, N_LONG = 3000, 5  # D: 3,000 rows, 5 above 90 hours (the reproduction)
N_EPS = 0.1


def _doc(relation: str = "public") -> dict:
    """The own-data example cut to a few columns, a raw rule ``hours_per_week > 90``, DP
    cleaning counts at ε 0.2 and a criterion with a bound under both relations."""
    doc = small_doc(KEEP)
    doc["constraints"]["raw"] = [{"name": "long_hours", "reject_if": "hours_per_week > 90"}]
    doc["criteria"] = [{"id": "c1", "kind": "max_marginal_error", "threshold": 0.9,
                        "epsilon": 0.5, "bounds": [0, 1], "params": {"max_way": 1}}]
    doc["budget"]["epsilon_criteria"] = 0.5
    doc["faithfulness"] = {"exact": ["workclass", "sex", "Y"],
                           "distance": {"age": 1, "hours_per_week": 1}, "alpha": 1}
    doc["cleaning_counts"] = {"release": "dp", "epsilon": 0.2}
    if relation == "dp":
        doc["metadata"] |= {"n_policy": "dp", "n_epsilon": N_EPS}
    return doc


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    """D (5 rows above 90 hours) and D′ (one more row crosses the rule: hours 99)."""
    tmp = tmp_path_factory.mktemp("npolicy")
    frame = small_frame(N_RAW, seed=3)
    frame["hours-per-week"] = np.random.default_rng(1).integers(1, 90, N_RAW)
    frame.loc[: N_LONG - 1, "hours-per-week"] = 95
    d = write_csv(frame, tmp / "D.csv")
    frame.loc[10, "hours-per-week"] = 99
    return d, write_csv(frame, tmp / "D2.csv")


def _run(tmp: Path, relation: str, data: Path, name: str, *extra: str) -> Path:
    spec = tmp / f"spec_{relation}.frozen.json"
    if not spec.exists():
        save_spec(_doc(relation), spec)
    assert cli(["run", str(spec), str(data), "--out", str(tmp / name), "--quiet",
                "--budget-store", str(tmp / f"store-{name}"), *extra]) == 0
    return tmp / name / "release"


def _ledger(release: Path) -> list[dict]:
    return [json.loads(x) for x in (release / "ledger.jsonl").read_text().splitlines()]


def _rows(release: Path) -> int:
    return len((release / "release.csv").read_text(encoding="utf-8").splitlines()) - 1


# --- must-show 1: public ------------------------------------------------------------------
def test_public_states_that_the_removed_total_is_public(files, tmp_path, capsys) -> None:
    """The reproduction under the default relation: n is published (2,995 vs 2,994 rows), and
    the datasheet and own-data report now say so, from the one module of words."""
    d, d2 = files
    sizes = [_rows(_run(tmp_path, "public", f, name)) for f, name in ((d, "a"), (d2, "b"))]
    capsys.readouterr()
    assert sizes == [N_RAW - N_LONG, N_RAW - N_LONG - 1]  # n public: the rule count shows
    spec = load_spec(tmp_path / "spec_public.frozen.json")
    assert spec.n_policy == NPolicy() and not spec.n_policy.dp
    readme = (tmp_path / "a" / "release" / "README.md").read_text(encoding="utf-8")
    words = removed_words(spec.n_policy, "dp")
    assert n_statement(spec.n_policy) in readme and words in readme
    assert "The removed total is public" in words
    assert "protect how the removals split across the rules and policies, not their total" \
        in words
    assert "the number of records is the same and public" in readme
    assert any(words in line for line in cleaning_describe_line(spec))  # the own-data report
    assert verify_bundle(tmp_path / "a" / "release").checks["n"].startswith("n public")


def test_the_words_are_one_function_of_the_policy() -> None:
    """Public and dp say opposite things about n, each once; the pilot's help says both."""
    public, dp = NPolicy(), NPolicy("dp", 0.3)
    assert "is public" in removed_words(public, None)
    assert "not released exactly" in removed_words(dp, None)
    assert "not released" in removed_words(public, None)  # the split stays inside
    assert "n̂" in n_statement(dp) and "ε_n = 0.3" in n_statement(dp)
    assert "publishes the cleaned n exactly" in pilot_words() and "'dp'" in pilot_words()


def test_the_pilot_help_says_what_a_run_publishes_about_n(capsys) -> None:
    with pytest.raises(SystemExit):
        cli(["pilot", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "publishes the cleaned n exactly" in out


# --- must-show 2: dp -----------------------------------------------------------------------
def test_dp_sizes_are_dp_draws_and_the_ledger_prices_n_hat(files, tmp_path, capsys) -> None:
    """D and D′ (one row crosses the rule) under n_policy dp, rehearsed with seeded noise on
    these public stand-ins: each release has n̂ records, not the cleaned n; the ledger has one
    n̂ measurement at ε_n = 0.1, Δ = 1, and ε_total includes it."""
    d, d2 = files
    exact = {"a": N_RAW - N_LONG, "b": N_RAW - N_LONG - 1}
    runs = {name: _run(tmp_path, "dp", f, name, "--rehearse", seed)
            for f, name, seed in ((d, "a", "1"), (d2, "b", "2"))}
    capsys.readouterr()
    spec = load_spec(tmp_path / "spec_dp.frozen.json")
    public_total = build_spec(_doc("public")).epsilon_total
    assert spec.epsilon_total == pytest.approx(public_total + N_EPS)
    for name, release in runs.items():
        ledger = _ledger(release)
        (line,) = [e for e in ledger if e.get("purpose") == PURPOSE]
        assert line["epsilon"] == N_EPS and line["sensitivity"] == 1
        assert line["mechanism"] == "discrete_laplace"
        summary = ledger[-1]
        assert summary["n_records"] == _rows(release) != exact[name]  # n̂, not n
        assert summary["epsilon_total"] == pytest.approx(spec.epsilon_total)
        assert "n estimate 0.1" in summary["epsilon_total_formula"]
        check = verify_bundle(release)
        assert check.ok, check.summary()
        assert "n̂" in check.checks["n"] and "ε_n = 0.1" in check.checks["n"]
        readme = (release / "README.md").read_text(encoding="utf-8")
        assert n_statement(spec.n_policy) in readme
        assert "not released exactly" in readme and "number of records is NOT public" in readme
        assert f"{exact[name]:,}" not in readme and str(exact[name]) not in readme
    # the store charged n̂ too: ε of a run = ε_total
    from workbench.privacy.budget_store import DatasetBudget

    book = DatasetBudget(tmp_path / "store-a", spec.metadata.dataset)
    assert book.spent() == pytest.approx(spec.epsilon_total)


def test_verify_needs_exactly_one_n_hat_line_at_the_declared_epsilon() -> None:
    spec = build_spec(_doc("dp"))
    line = {"event": "measurement", "purpose": PURPOSE, "epsilon": N_EPS, "sensitivity": 1.0,
            "mechanism": "discrete_laplace"}
    assert n_problem(spec, [line]) == ""
    assert "not 1" in n_problem(spec, [])
    assert "Δ = 1" in n_problem(spec, [line | {"epsilon": 0.05}])
    public = build_spec(_doc())
    assert n_problem(public, []) == "" and "spends no ε" in n_problem(public, [line])


def test_budget_plan_of_a_draft_and_of_its_spec_agree_on_epsilon_n() -> None:
    doc = _doc("dp")
    plan = document_plan(doc)
    assert plan is not None and plan.epsilon_n == N_EPS
    assert plan.epsilon_total == pytest.approx(build_spec(doc).epsilon_total)
    assert document_plan(_doc()).epsilon_n == 0.0


# --- must-show 3: refusals -----------------------------------------------------------------
@pytest.mark.parametrize(("change", "path", "named"), [
    (lambda d: d["criteria"].append(
        {"id": "c2", "kind": "observed_marginal_error", "threshold": 0.5, "epsilon": 0.5,
         "bounds": [0, 1], "params": {"way": 1, "columns": None}}),
     "criteria[1].kind", "'observed_marginal_error'"),
    (lambda d: d["criteria"].__setitem__(0, {
        "id": "miss", "kind": "missing_rate", "threshold": 0.5, "epsilon": 0.5,
        "bounds": [0, 1], "params": {"columns": ["workclass"]}}),
     "criteria[0].kind", "'missing_rate'"),
    (lambda d: d.__setitem__("generator", {"family": "privbayes", "search_space": [{}]}),
     "generator.family", "'privbayes'"),
    (lambda d: d["metadata"].pop("n_epsilon"), "metadata.n_epsilon", "n_epsilon"),
    (lambda d: d["budget"].__setitem__("neighbour", "add_remove"), "budget.neighbour",
     "replace_one"),
    (lambda d: d["selection"].update(gamma=0, max_iterations=None),
     "selection.max_iterations", "max_iterations"),
])
def test_validate_refuses_what_has_no_bound_under_dp(tmp_path, capsys, change, path,
                                                     named) -> None:
    doc = _doc("dp")
    change(doc)
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(doc), encoding="utf-8")
    assert cli(["validate", str(draft)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:" in err and named in err
    assert "Traceback" not in err


def test_the_same_kinds_are_accepted_under_public_and_dp() -> None:
    assert build_spec(_doc("dp")).n_policy == NPolicy("dp", N_EPS)
    doc = _doc()
    doc["criteria"].append({"id": "c2", "kind": "observed_marginal_error", "threshold": 0.5,
                            "epsilon": 0.5, "bounds": [0, 1],
                            "params": {"way": 1, "columns": None}})
    doc["budget"]["epsilon_criteria"] = 1.0
    assert not build_spec(doc).n_policy.dp


ASSOCIATION_CRITERIA = [
    {"id": "rr", "kind": "relative_risk", "threshold": 5.0, "epsilon": 0.5,
     "params": {"exposure": "sex", "exposed": ["Male"], "outcome": "Y", "positive": [">50K"]}},
    {"id": "by_class", "kind": "rate_by_group", "threshold": 1.0, "epsilon": 0.5,
     "params": {"group": "workclass", "outcome": "Y", "positive": [">50K"]}},
]


def test_association_kinds_run_under_dp_with_the_count_tables_delta(files, tmp_path,
                                                                    capsys) -> None:
    """The count-table kinds state their bound under dp and are accepted; a rehearsed dp run
    releases their tables at Δ = 2 (the count table's, not 1/n̂) beside n̂."""
    doc = _doc("dp")
    doc["criteria"] += ASSOCIATION_CRITERIA
    doc["budget"]["epsilon_criteria"] = 1.5
    spec = build_spec(doc)
    assert spec.n_policy.dp and [c.kind for c in spec.criteria][1:] == [
        "relative_risk", "rate_by_group"]
    path = tmp_path / "assoc_dp.frozen.json"
    save_spec(doc, path)
    out = tmp_path / "assoc"
    assert cli(["run", str(path), str(files[0]), "--out", str(out), "--quiet",
                "--budget-store", str(tmp_path / "store-assoc"), "--rehearse", "3"]) == 0
    capsys.readouterr()
    ledger = _ledger(out / "release")
    for cid, kind in (("rr", "relative_risk"), ("by_class", "rate_by_group")):
        lines = [e for e in ledger if e.get("purpose") == f"criterion {cid} ({kind})"]
        assert lines and all(e["sensitivity"] == 2 and e["mechanism"] == "laplace"
                             for e in lines), lines
    assert [e for e in ledger if e.get("purpose") == PURPOSE]  # n̂ released too


def test_count_tables_move_by_at_most_two_and_one_under_dp_moves() -> None:
    """R's 2×2 and group × outcome tables with S (|S| = n̂ ≠ n) fixed: replace-one moves them by
    L1 ≤ 2 and add/remove-one by ≤ 1 (each reached), whatever n̂ — the dp bound the kinds state."""
    from workbench.criteria import associations as assoc
    from workbench.transform import IdentityCodec, TableCodec

    table = TableCodec((("e", IdentityCodec(("n", "y"))), ("g", IdentityCodec(
        ("a", "b", "c"))), ("o", IdentityCodec(("n", "y")))))
    pair = {"exposure": "e", "exposed": ["y"], "outcome": "o", "positive": ["y"]}
    keys = assoc.domain_keys(table, ["g"])
    rng = np.random.default_rng(8)
    worst = {"add/remove": 0, "replace": 0}
    for _ in range(200):
        n, n_hat = (int(x) for x in rng.integers(5, 40, 2))
        real, synth = rng.integers(0, 2, (n, 3)), rng.integers(0, 2, (n_hat, 3))
        real[:, 1], synth[:, 1] = rng.integers(0, 3, n), rng.integers(0, 3, n_hat)
        row = np.array([[rng.integers(0, 2), rng.integers(0, 3), rng.integers(0, 2)]])

        def tables(r, synth=synth):
            pc = PairedCells.from_codes(r, synth, table.domain, n=synth.shape[0])
            return np.concatenate([
                assoc.two_by_two(pc, table, pair)[0].ravel(),
                assoc.group_table(pc, table, ["g"], "o", ["y"], keys)[0].ravel()])

        base = tables(real)
        for move, moved in (("add/remove", np.concatenate([real, row])),
                            ("add/remove", real[1:]),
                            ("replace", np.concatenate([real[1:], row]))):
            # the two tables are released by two criteria: each moves by its own L1
            step = np.abs(tables(moved) - base)
            for part in (step[:4], step[4:]):
                assert part.sum() <= (1 if move == "add/remove" else 2)
                worst[move] = max(worst[move], int(part.sum()))
    assert worst == {"add/remove": 1, "replace": 2}


def test_a_word_that_is_not_a_relation_is_refused_and_sentences_read_as_public() -> None:
    assert parse("dp") == ("dp", "") and parse(None) == ("public", "")
    assert parse("The number of records after cleaning is treated as public.") == ("public", "")
    relation, problem = parse("DP")
    assert relation == "public" and "neither 'public'" in problem
    doc = _doc()
    doc["metadata"]["n_policy"] = "private"
    with pytest.raises(SpecError, match=r"metadata\.n_policy"):
        build_spec(doc)


def test_frozen_examples_keep_their_hash_and_read_as_public() -> None:
    """The field is optional and older specs carry a sentence: every frozen example still
    verifies its hash and reads as the public relation."""
    frozen = sorted((ROOT / "examples").glob("*.frozen.json"))
    assert frozen
    for path in frozen:
        spec = load_spec(path, require_frozen=True)
        assert spec.n_policy == NPolicy(), path.name


# --- the derivations, on neighbours ---------------------------------------------------------
def test_n_hat_has_sensitivity_one_and_is_clipped() -> None:
    """n and n − 1 (a row crossing a rule) give output laws within e^ε of each other on the
    common support (seeded simulation, many draws), and n̂ ≥ 2."""
    eps, draws = 1.0, 40_000
    counts = []
    for n in (50, 49):
        ctx = PrivacyContext.simulation(7 + n, noise=SeededNoise(np.random.default_rng(n)))
        out = np.array([noisy_n(n, eps, ctx) for _ in range(draws)])
        counts.append({v: int(np.sum(out == v)) for v in range(40, 60)})
        assert len(ctx.records) == draws and ctx.records[0].sensitivity == 1
    for v in range(45, 55):  # cells with ≥ ~1,500 draws: ratios within e^ε up to sampling
        ratio = counts[0][v] / counts[1][v]
        assert np.exp(-eps) * 0.85 < ratio < np.exp(eps) * 1.15
    assert noisy_n(0, 5.0, PrivacyContext.simulation(0)) >= MIN_N_HAT


def _random_tables(rng: np.random.Generator, dom: Domain
                   ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """A public n̂ with S of n̂ rows, an R of another size, and one more row for R's moves."""
    n_hat = int(rng.integers(5, 40))
    synth = np.stack([rng.integers(0, k, n_hat) for k in dom.sizes], axis=1)
    n = int(rng.integers(5, 40))
    real = np.stack([rng.integers(0, k, n) for k in dom.sizes], axis=1)
    row = np.array([[rng.integers(0, k) for k in dom.sizes]])
    return n_hat, synth, real, row


def test_max_marginal_error_moves_by_at_most_one_over_n_hat_under_add_remove() -> None:
    """E = max |q(R) − q(S)|/n̂ with S (|S| = n̂) fixed: add, remove and replace one record of R
    move it by ≤ 1/n̂, and the add move reaches 1/n̂."""
    rng = np.random.default_rng(4)
    dom = Domain(("a", "b", "c"), (3, 2, 4))
    worst = 0.0
    for _ in range(200):
        n_hat, synth, real, row = _random_tables(rng, dom)
        base = max_marginal_error(real, synth, dom, n=n_hat)
        for moved in (np.concatenate([real, row]), real[1:],
                      np.concatenate([real[1:], row])):
            gap = abs(max_marginal_error(moved, synth, dom, n=n_hat) - base)
            assert gap <= 1 / n_hat + 1e-12
            worst = max(worst, gap * n_hat)
    assert worst == pytest.approx(1.0)


def test_tv_marginals_moves_by_at_most_one_over_n_hat_under_add_remove_and_replace() -> None:
    """½Σ|q_R − q_S|/n̂ with S (|S| = n̂) fixed: add/remove moves it by ≤ ½/n̂, replace-one by
    ≤ 1/n̂ — so Δ = 1/n̂ holds for the dp relation (the max of the two)."""
    rng = np.random.default_rng(5)
    dom = Domain(("a", "b", "c"), (3, 2, 4))

    def tv(real, synth, n_hat):
        return tv_marginals_error(PairedCells.from_codes(real, synth, dom, n=n_hat), 2, "max")

    worst = {"add/remove": 0.0, "replace": 0.0}
    for _ in range(200):
        n_hat, synth, real, row = _random_tables(rng, dom)
        base = tv(real, synth, n_hat)
        for move, moved in (("add/remove", np.concatenate([real, row])),
                            ("add/remove", real[1:]),
                            ("replace", np.concatenate([real[1:], row]))):
            gap = abs(tv(moved, synth, n_hat) - base) * n_hat
            assert gap <= 1 + 1e-9
            worst[move] = max(worst[move], gap)
    assert worst["add/remove"] <= 0.5 + 1e-9 and worst["replace"] == pytest.approx(1.0)


def test_max_ecdf_moves_by_at_most_one_over_n_hat_under_add_remove_and_replace() -> None:
    """max_x |C_R(x) − C_S(x)|/n̂ (cumulative counts) with S (|S| = n̂) fixed: every move of
    one record of R changes it by ≤ 1/n̂, and adding a record reaches 1/n̂."""
    from workbench.criteria.marginal_kinds import max_ecdf_error
    from workbench.transform import BinsCodec, TableCodec

    table = TableCodec((("x", BinsCodec((1, 2, 3, 4))),))
    k = table.domain.sizes[0]
    rng = np.random.default_rng(6)
    worst = 0.0
    for _ in range(200):
        n_hat, n = int(rng.integers(5, 40)), int(rng.integers(5, 40))
        synth, real = rng.integers(0, k, (n_hat, 1)), rng.integers(0, k, (n, 1))
        row = rng.integers(0, k, (1, 1))

        def gap(r, synth=synth, n_hat=n_hat):
            return max_ecdf_error(PairedCells.from_codes(r, synth, table.domain, n=n_hat),
                                  table, "x")

        base = gap(real)
        for moved in (np.concatenate([real, row]), real[1:], np.concatenate([real[1:], row])):
            step = abs(gap(moved) - base) * n_hat
            assert step <= 1 + 1e-9
            worst = max(worst, step)
    assert worst == pytest.approx(1.0)
