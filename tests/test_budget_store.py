"""The budget per dataset: the store, the guard, once-statistics charged once, the lifetime cap,
the one budget plan, and the validator's refusal of add_remove."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli.main import main
from workbench.engine import verify_bundle
from workbench.evidence.sampler import sample_proxy
from workbench.privacy import Accountant, Ledger
from workbench.privacy.budget_store import (
    ENV_VAR,
    BudgetStoreError,
    DatasetBudget,
    default_root,
    resolve_root,
    table_fingerprint,
)
from workbench.specification import SpecError
from workbench.specification.derived import document_plan
from workbench.validation import build_spec, load_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
DATASET = "il-births-2014"
README_SPEC = REPO / "examples" / "israel_births_2014_narrowed.frozen.json"
README_DATA = REPO / "data_public" / "proxy_sample_166k.csv.gz"


def _narrowed_document() -> dict:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from narrow_example import CHOSEN, narrowed_document
    finally:
        sys.path.pop(0)
    doc = narrowed_document()
    # γ = 0, T = ∞ needs a recorded forecast (the paper's narrowed design: p ≈ 0.4 on the proxy)
    doc["selection"]["forecast"] = {"p": 0.4, "repetitions": 10, "min_pass": 0.1, "n": 1_000,
                                    "n_max": 20_000}  # the sizes these tests run at
    return doc, CHOSEN


def _once_document() -> dict:
    """One PrivBayes configuration, a single attempt, a loop criterion and a once-regression."""
    doc, chosen = _narrowed_document()
    doc["selection"] = {"gamma": 0, "max_iterations": 1, "epsilon_0": 0,
                        "configurations": doc["selection"]["configurations"][:1]}
    for name, alt in chosen.items():  # a once-criterion needs single alternatives
        column = doc["transformations"]["columns"][name]
        column["alternatives"] = [a for a in column["alternatives"] if a["name"] == alt]
    keep = {"marginals": 0.5, "regression_coefficients": 1e6}  # lenient: attempts release
    doc["criteria"] = [dict(c, threshold=keep[c["id"]], once=c["id"] == "regression_coefficients")
                       for c in doc["criteria"] if c["id"] in keep]
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    return doc


def _cheap_document(**budget: float) -> dict:
    """The narrowed design with one configuration and one cheap criterion."""
    doc, _ = _narrowed_document()
    doc["selection"]["configurations"] = doc["selection"]["configurations"][:1]
    doc["criteria"] = [dict(c, threshold=0.5) for c in doc["criteria"] if c["id"] == "marginals"]
    doc["budget"].update(epsilon_criteria=doc["criteria"][0]["epsilon"], **budget)
    return doc


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("store-data") / "confidential.csv"
    sample_proxy(12_000, seed=21).to_csv(path, index=False)
    return path


def _run(spec: Path, data: Path, out: Path, store: Path, *extra: str) -> int:
    return main(["run", str(spec), str(data), "--out", str(out), "--quiet",
                 "--budget-store", str(store), *extra])


def _once_lines(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e.get("event") == "measurement" and e.get("stage") == "once"]


# --- must-show 2: once-statistics are charged once, ever -----------------------------------------
def test_three_spend_again_attempts_charge_the_once_epsilon_once(
    tmp_path: Path, data_csv: Path, capsys: pytest.CaptureFixture
) -> None:
    spec_path = tmp_path / "once.frozen.json"
    save_spec(_once_document(), spec_path)
    spec = load_spec(spec_path)
    plan = spec.budget_plan()
    assert (plan.epsilon_once, plan.epsilon_selection) == (0.43, 4.01)
    store = tmp_path / "store"
    # the third attempt reads the same people with one cell changed: warned, never a new budget
    changed = tmp_path / "changed.csv"
    frame = pd.read_csv(data_csv)
    frame.loc[3, "birth_weight"] = 2000 if frame.loc[3, "birth_weight"] != 2000 else 3000
    frame.to_csv(changed, index=False)
    kept = store / DATASET / "once" / f"{spec.sha256}.json"
    codes = []
    for i, data in enumerate((data_csv, data_csv, changed), start=1):
        codes.append(_run(spec_path, data, tmp_path / f"attempt{i}", store, "--spend-again"))
        if i == 1:
            kept_bytes = kept.read_bytes()
    assert kept.read_bytes() == kept_bytes  # released once, never recomputed
    err = capsys.readouterr().err
    assert "content fingerprint changed" in err and "nothing is granted afresh" in err
    book = Ledger.read(store / DATASET / "ledger.jsonl")
    once = _once_lines(book)
    assert len(once) == 1 and once[0]["epsilon"] == 0.43
    assert Accountant.spent_in_ledger(store / DATASET / "ledger.jsonl") == pytest.approx(
        0.43 + 3 * 4.01, abs=1e-9)  # not 3 x (0.43 + 4.01)
    reused = [e for e in book if e.get("event") == "once_reused"]
    assert len(reused) == 2 and all(e["released_by"] == once[0]["run_id"] for e in reused)
    for i, code in enumerate(codes, start=1):
        out = tmp_path / f"attempt{i}"
        if code != 0:  # ⊥ is possible (single attempt), but nothing may be published then
            assert not (out / "release").exists()
            continue
        assert verify_bundle(out).ok
        lines = Ledger.read(out / "release" / "ledger.jsonl")
        assert len(_once_lines(lines)) == 1
        summary = lines[-1]
        assert summary["epsilon_total"] == pytest.approx(4.44)
        assert summary["epsilon_charged"] == pytest.approx(4.44 if i == 1 else 4.01)
        assert bool(_once_lines(lines)[0].get("reused")) is (i > 1)


def test_a_tampered_reuse_flag_fails_verification(tmp_path: Path, data_csv: Path) -> None:
    """A bundle cannot claim a lower charge: 'reused' once-lines must match the summary."""
    spec_path = tmp_path / "once.frozen.json"
    save_spec(_once_document(), spec_path)
    out = tmp_path / "run"
    if _run(spec_path, data_csv, out, tmp_path / "store") != 0:
        pytest.skip("the single attempt ended in ⊥")
    ledger = out / "release" / "ledger.jsonl"
    lines = [json.loads(x) for x in ledger.read_text().splitlines()]
    for line in lines:
        if line.get("stage") == "once":
            line["reused"] = True
    ledger.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = verify_bundle(out)
    assert result.checks["ledger"].startswith("FAILED") and "charged" in result.checks["ledger"]


# --- must-show 3: the README's main job, twice, into two folders ---------------------------------
@pytest.mark.slow
def test_readme_main_job_twice_needs_spend_again_and_shows_prior_epsilon(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    store = tmp_path / "store"
    first, second = tmp_path / "example-1", tmp_path / "example-2"
    assert _run(README_SPEC, README_DATA, first, store) == 0
    capsys.readouterr()
    dataset_ledger = store / DATASET / "ledger.jsonl"
    before = dataset_ledger.read_bytes()
    # another folder, and the same data re-encoded (plain CSV, rows shuffled): still refused
    plain = tmp_path / "proxy.csv"
    with gzip.open(README_DATA, "rb") as fh:
        pd.read_csv(fh).sample(frac=1.0, random_state=3).to_csv(plain, index=False)
    for data in (README_DATA, plain):
        assert _run(README_SPEC, data, second, store) == 2
        err = capsys.readouterr().err
        assert "dataset 'il-births-2014' already has ε = 9.98 spent by 1 earlier run(s)" in err
        assert "--spend-again" in err
    assert dataset_ledger.read_bytes() == before and not second.exists()
    assert _run(README_SPEC, plain, second, store, "--spend-again") == 0
    captured = capsys.readouterr()
    assert "cumulative epsilon on dataset 'il-births-2014': 19.96" in captured.out
    assert "fingerprint changed" not in captured.err  # re-encoding is the same content
    assert verify_bundle(second).ok
    readme = (second / "release" / "README.md").read_text()
    assert "Earlier runs on dataset `il-births-2014` spent ε = 9.98" in readme
    assert "cumulative privacy loss is ε = 19.96" in readme
    summary = Ledger.read(second / "release" / "ledger.jsonl")[-1]
    assert (summary["epsilon_earlier_runs"], summary["epsilon_cumulative"]) == (9.98, 19.96)
    assert Accountant.spent_in_ledger(dataset_ledger) == pytest.approx(19.96)


def test_lifetime_cap_refuses_before_any_noise(tmp_path: Path, data_csv: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    spec_path = tmp_path / "capped.frozen.json"
    save_spec(_cheap_document(epsilon_lifetime_max=12.0), spec_path)
    assert load_spec(spec_path).epsilon_total == pytest.approx(8.02)
    store = tmp_path / "store"
    assert _run(spec_path, data_csv, tmp_path / "first", store) == 0
    capsys.readouterr()
    dataset_ledger = store / DATASET / "ledger.jsonl"
    before = dataset_ledger.read_bytes()
    assert _run(spec_path, data_csv, tmp_path / "second", store, "--spend-again") == 2
    err = capsys.readouterr().err
    assert "dataset 'il-births-2014' already has ε = 8.02 spent" in err
    assert "16.04 in all, over budget.epsilon_lifetime_max = 12" in err
    assert dataset_ledger.read_bytes() == before  # not one line: no noise was drawn
    assert not (tmp_path / "second").exists()


def test_lifetime_cap_below_one_run_is_a_spec_error() -> None:
    doc = _cheap_document(epsilon_lifetime_max=5.0)
    with pytest.raises(SpecError) as info:
        build_spec(doc)
    assert [p.path for p in info.value.problems] == ["budget.epsilon_lifetime_max"]


def test_a_spec_without_dataset_cannot_run(tmp_path: Path, data_csv: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    doc = _cheap_document()
    del doc["metadata"]["dataset"]
    spec_path = tmp_path / "anonymous.frozen.json"
    save_spec(doc, spec_path)
    assert _run(spec_path, data_csv, tmp_path / "out", tmp_path / "store") == 2
    assert "metadata.dataset" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "store").exists()


def test_a_run_in_progress_holds_the_dataset(tmp_path: Path) -> None:
    book = DatasetBudget(tmp_path, DATASET)
    with (book.locked(), pytest.raises(BudgetStoreError, match="in progress"),
          DatasetBudget(tmp_path, DATASET).locked()):
        pass
    with DatasetBudget(tmp_path, DATASET).locked():  # released at the end of the run
        pass


# --- must-show 4: add_remove is refused by the validator -----------------------------------------
def test_validate_refuses_add_remove_with_its_path(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    doc = json.loads((REPO / "examples" / "israel_births_2014.json").read_text())
    doc["budget"]["neighbour"] = "add_remove"
    path = tmp_path / "add_remove.json"
    path.write_text(json.dumps(doc))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "budget.neighbour" in err and "records n is public" in err


# --- the store's location and the fingerprint ----------------------------------------------------
def test_store_location_flag_then_variable_then_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "from-env"))
    assert resolve_root(tmp_path / "flag") == tmp_path / "flag"
    assert resolve_root() == tmp_path / "from-env"
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert resolve_root() == tmp_path / "state" / "release-workbench" / "budgets"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_root() == tmp_path / "home" / ".local" / "state" / "release-workbench" / \
        "budgets"


@pytest.mark.parametrize("name", ["", "../etc", "IL-births", "a/b", ".hidden", "x" * 101])
def test_dataset_names_are_safe_identifiers(tmp_path: Path, name: str) -> None:
    with pytest.raises(BudgetStoreError, match=r"metadata\.dataset"):
        DatasetBudget(tmp_path, name)


def test_fingerprint_survives_reencoding_and_row_order_not_a_changed_cell() -> None:
    spec = load_spec(README_SPEC)
    frame = sample_proxy(2_000, seed=5)[list(spec.column_names)]
    key = b"k" * 32
    base = table_fingerprint(frame, key)
    shuffled = frame.sample(frac=1.0, random_state=1)[list(reversed(frame.columns))]
    as_float = frame.astype({c: "float64" for c in frame.select_dtypes("number").columns})
    assert table_fingerprint(shuffled, key) == base == table_fingerprint(as_float, key)
    neighbour = frame.copy()
    neighbour.iloc[0, 0] = neighbour.iloc[1, 0] if neighbour.iloc[0, 0] != neighbour.iloc[1, 0] \
        else neighbour.iloc[2, 0]
    assert table_fingerprint(neighbour, key) != base
    assert table_fingerprint(frame, b"j" * 32) != base  # keyed: says nothing without the key


# --- the one budget plan --------------------------------------------------------------------------
def test_budget_plan_numbers_and_words(example_spec) -> None:
    paper = example_spec.budget_plan()
    assert paper.epsilon_total == 9.98 == example_spec.epsilon_total
    assert paper.formula() == "ε_total = 2 × (4 + 0.99) + 0 + 0 = 9.98"
    assert "not needed" in paper.retry_text()  # γ = 0, T = ∞: the loop ends with a release
    lean = load_spec(REPO / "examples" / "israel_births_2014_lean.frozen.json").budget_plan()
    assert lean.epsilon_total == pytest.approx(4.0939)
    assert lean.expected_epsilon_until_release(0.8) == pytest.approx(1.4 + 2.6939 / 0.8)
    assert "1.4 + 2.6939/p" in lean.retry_text() and "charged once, ever" in lean.retry_text()
    assert lean.retry_text(0.9).endswith(f"p = 0.9: {1.4 + 2.6939 / 0.9:.6g}.")  # a forecast p
    again = lean.with_prior(4.0939, once_reused=True)
    assert (again.epsilon_charged, again.epsilon_cumulative) == (2.6939, 6.7878)
    doc = json.loads((REPO / "examples" / "israel_births_2014_lean.json").read_text())
    assert document_plan(doc) == build_spec(doc).budget_plan()


def test_describe_and_the_planner_show_the_cost_of_retrying(capsys: pytest.CaptureFixture) -> None:
    lean = REPO / "examples" / "israel_births_2014_lean.frozen.json"
    assert main(["describe", str(lean)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "epsilon_total = 1 x (2 + 0.6939) + 0 + 1.4 = 4.0939" in text
    assert "costs epsilon_1 = 2.6939 per attempt" in text and "p = 0.8: 4.76737" in text
    from workbench.widgets import Session
    from workbench.widgets.editors.budget_planner import BudgetPlanner

    planner = BudgetPlanner(Session(json.loads(lean.read_text())))
    assert "= <b>4.0939</b>" in planner.total.value
    assert "1.4 + 2.6939/p" in planner.total.value


ONE_PLACE = {
    "prices the loop": r"(?<!def )\bselection_epsilon\(",
    "adds the once-ε": r"epsilon_once\s*\+|\+\s*[\w.()]*epsilon_once\b",
    "writes the formula": r"\(\{[^}]*epsilon_generator",
}


def test_epsilon_total_is_computed_in_one_place() -> None:
    """Must-show 6 (budget half): only the budget plan prices the loop, adds the once-ε and
    writes the formula; everything else asks it (a grep over the package, doctests aside)."""
    found = set()
    for path in (REPO / "workbench").rglob("*.py"):
        code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                         if not line.lstrip().startswith(">>>"))
        found |= {(name, path.relative_to(REPO).as_posix())
                  for name, pattern in ONE_PLACE.items() if re.search(pattern, code)}
    assert {path for _, path in found} == {"workbench/privacy/budget_plan.py"}, found
    # the patterns catch the five copies this replaced
    old = ["loop = selection_epsilon(self.epsilon_in_loop, e0, t)",
           "return round(loop + self.epsilon_once, 12)",
           'f"ε_total = {factor} × ({format_number(spec.budget.epsilon_generator)} + "']
    assert all(re.search(pattern, text) for pattern, text in zip(ONE_PLACE.values(), old,
                                                                 strict=True))


#: issue 25, must-show 4: each fact has one owner (pattern → the one file that may hold it)
ONE_OWNER = {
    "the Laplace CDF": (r"def \w*laplace_cdf\(|0\.5 \* math\.exp\(",
                        "workbench/privacy/mechanisms.py"),
    "the effective threshold": (
        r"min\([\w.]*\b(threshold|t)\s*,\s*(float\()?[\w.]*(adjusted|t_prime)",
        "workbench/criteria/kinds/base.py"),
    "ε₁ (in-loop criteria ε)": (
        r"sum\([^\n]*\bin_loop\b|not once and e > 0|epsilon_generator \+ sum",
                                "workbench/privacy/budget_plan.py"),
    # issue 35: the relative 1-way T′ algebra (λ, p, the ln 2p in its ε rule) is its kind's
    "the relative 1-way T′ algebra": (
        r"""params(\[|\.get\()\s*["'](lambda|false_pass_probability)["']"""
        r"|-\s*math\.log\(2(\.0)?\s*\*\s*p\)",
        "workbench/criteria/kinds/relative_one_way.py"),
}


def test_each_fact_of_the_pass_rule_and_the_budget_has_one_owner() -> None:
    """One Laplace CDF, one effective-threshold computation, one ε₁, one T′ algebra (a grep
    over the package, doctests aside); the patterns catch the copies they replaced."""
    for name, (pattern, owner) in ONE_OWNER.items():
        found = set()
        for path in (REPO / "workbench").rglob("*.py"):
            code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                             if not line.lstrip().startswith(">>>"))
            if re.search(pattern, code):
                found.add(path.relative_to(REPO).as_posix())
        assert found == {owner}, (name, found)
    old = ["def laplace_cdf(x: float, b: float) -> float:",
           "effective = threshold if adjusted_threshold is None else min(threshold, "
           "adjusted_threshold)",
           "return self.budget.epsilon_generator + sum(c.epsilon for c in self.criteria if "
           "c.in_loop)",
           "need = delta * (divisor * SQRT2 - math.log(2 * p)) / margin if margin > 0 else "
           "math.inf"]
    assert all(re.search(p, text) for (p, _), text in zip(ONE_OWNER.values(), old, strict=True))

