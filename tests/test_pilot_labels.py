"""Label discovery in the pilot (issue 36): thresholded DP selection of unknown labels and DP side
counts of out-of-range values, each charged and labelled (ε, δ) in the ledger, the store, the
FACTS file and the datasheet."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from own_data_helpers import small_doc, small_frame, write_csv

from workbench.cli.main import main as cli
from workbench.engine.pilot_labels import Discovery, release, side_counts, unknown_label_counts
from workbench.privacy import Accountant, BudgetExceeded, PrivacyContext, mechanisms, sensitivity
from workbench.privacy.budget_store import DatasetBudget
from workbench.privacy.noise import SeededNoise
from workbench.transform import ColumnSpec
from workbench.validation import build_spec

SECRET = "Zanzibar-77"  # an unknown label held by ONE row: it must never leave
FREQUENT = "Contractor"  # an unknown label held by 400 rows: discovery must name it
WORK = ColumnSpec("workclass", "categorical", ("Private", "Local-gov"), None, "allow",
                  "to_missing")
AGE = ColumnSpec("age", "integer", None, (17.0, 90.0), "forbid", "error")


def _distance(a: dict[str, int], b: dict[str, int]) -> tuple[int, int, int]:
    """(L0, L1, L∞) between two label → count maps."""
    diff = [abs(a.get(k, 0) - b.get(k, 0)) for k in a.keys() | b.keys()]
    diff = [d for d in diff if d]
    return len(diff), sum(diff), max(diff, default=0)


def _neighbours(relation: str, trials: int = 150):
    """Random public tables and a neighbour under ``relation`` (values often out of domain)."""
    rng = np.random.default_rng(36)
    labels = np.array(["Private", "Local-gov", "X", "Y", "Z", None], dtype=object)
    ages = np.array([10.0, 16.0, 17.0, 50.0, 90.0, 91.0, 120.0, 33.5, np.nan])
    for _ in range(trials):
        n = int(rng.integers(1, 8))
        frame = pd.DataFrame({"workclass": pd.array(rng.choice(labels, n), dtype="string"),
                              "age": rng.choice(ages, n)})
        i = int(rng.integers(n))
        if relation == "replace_one":
            other = frame.copy()
            other.loc[i, "workclass"] = rng.choice(labels)
            other.loc[i, "age"] = rng.choice(ages)
        else:
            other = frame.drop(index=i).reset_index(drop=True)
        yield frame, other


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_unknown_label_map_moves_by_the_partition_distance(relation) -> None:
    """(L0, L1, L∞) of the unknown-label map on neighbouring datasets: within the written-down
    bound, every coordinate attained."""
    bound = sensitivity.partition_distance(relation)
    worst = [0, 0, 0]
    for a, b in _neighbours(relation):
        got = _distance(unknown_label_counts(a, WORK), unknown_label_counts(b, WORK))
        assert all(g <= m for g, m in zip(got, bound, strict=True)), (got, bound)
        worst = [max(w, g) for w, g in zip(worst, got, strict=True)]
    assert tuple(worst) == bound


@pytest.mark.parametrize("relation", ["replace_one", "add_remove"])
def test_side_counts_move_by_the_histogram_sensitivity(relation) -> None:
    """Δ₁ of (below, above, other) is 2 under replace-one, 1 under add-remove; each side alone
    moves by at most 1; attained."""
    bound = sensitivity.histogram(relation)
    worst = 0
    for a, b in _neighbours(relation):
        move = np.abs(side_counts(a, AGE) - side_counts(b, AGE))
        assert move.sum() <= bound and move.max() <= sensitivity.count(relation)
        worst = max(worst, int(move.sum()))
    assert worst == bound


def test_side_counts_put_each_value_on_its_side() -> None:
    frame = pd.DataFrame({"age": [10.0, 16.0, 17.0, 90.0, 91.0, 120.0, 33.5, np.nan]})
    assert side_counts(frame, AGE).tolist() == [2, 2, 1]  # 33.5 is not an integer


def test_threshold_is_the_smallest_whose_delta_fits() -> None:
    """τ from OpenDP's own map: (ε, δ) hold at τ, δ does not at τ − 1; b = L1/ε."""
    distance = sensitivity.partition_distance("replace_one")
    scale, tau = mechanisms.partition_threshold(distance, 0.5, 1e-6)
    assert scale == 4.0
    eps, delta = mechanisms._threshold_measurement(scale, tau).map(distance)
    assert eps <= 0.5 + 1e-9 and delta <= 1e-6
    assert mechanisms._threshold_measurement(scale, tau - 1).map(distance)[1] > 1e-6


def _selection(counts: dict[str, int], seed: int, noise=None) -> dict[str, int]:
    ctx = PrivacyContext.simulation(seed, noise=noise or SeededNoise(seed),
                                    accountant=Accountant(1.0, delta_budget=1e-6))
    return ctx.partition_select(counts, epsilon=0.5, delta=1e-6, purpose="test").value


def test_a_one_row_label_never_appears_and_a_frequent_one_does() -> None:
    """Over 400 seeded repetitions (and once through OpenDP itself)."""
    counts = {SECRET: 1, FREQUENT: 400, "rare": 20}
    for seed in range(400):
        got = _selection(counts, seed)
        assert SECRET not in got and "rare" not in got and FREQUENT in got
        assert abs(got[FREQUENT] - 400) < 60
    real = _selection(counts, 0, noise=None)
    assert set(real) == {FREQUENT}


def test_delta_is_charged_against_a_delta_budget_only() -> None:
    """A pure-ε accountant refuses a δ > 0 measurement; δ composes by addition."""
    pure = PrivacyContext.simulation(0, noise=SeededNoise(0), accountant=Accountant(5.0))
    with pytest.raises(BudgetExceeded, match="δ"):
        pure.partition_select({"a": 9}, epsilon=0.5, delta=1e-7, purpose="p")
    acc = Accountant(5.0, delta_budget=3e-7)
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(0), accountant=acc)
    for _ in range(3):
        ctx.partition_select({"a": 9}, epsilon=0.5, delta=1e-7, purpose="p")
    assert acc.delta_spent() == pytest.approx(3e-7) and acc.epsilon_spent() == 1.5
    with pytest.raises(BudgetExceeded, match="δ"):
        ctx.partition_select({"a": 9}, epsilon=0.5, delta=1e-7, purpose="p")
    ctx.begin_iteration(1)
    with pytest.raises(BudgetExceeded, match="once"):
        ctx.partition_select({"a": 9}, epsilon=0.1, delta=1e-9, purpose="p")


def test_release_labels_its_epsilon_and_delta() -> None:
    frame = pd.DataFrame({"workclass": pd.array(["Private"] * 50 + [FREQUENT] * 300 + [SECRET],
                                                dtype="string"),
                          "age": [15.0] * 100 + [95.0] * 251})
    disc = Discovery((WORK, AGE), 2.0, 1e-6)
    ctx = PrivacyContext.simulation(3, noise=SeededNoise(3),
                                    accountant=Accountant(2.0, delta_budget=1e-6))
    from workbench.engine.pilot_labels import exact_inputs

    section = release(exact_inputs(frame, disc), disc, ctx)
    labels, sides = section["columns"]
    assert (labels["epsilon"], labels["delta"]) == (1.0, 1e-6)
    assert [d["label"] for d in labels["labels"]] == [FREQUENT]
    assert (sides["epsilon"], sides["delta"], sides["sensitivity"]) == (1.0, 0.0, 2)
    assert abs(sides["below"] - 100) < 25 and abs(sides["above"] - 251) < 25
    assert SECRET not in json.dumps(section)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    frame = small_frame(4000, seed=36)
    frame.loc[frame.index[:400], "workclass"] = FREQUENT
    frame.loc[frame.index[400], "workclass"] = SECRET
    frame.loc[frame.index[500:800], "age"] = 95  # above [17, 90]
    frame.loc[frame.index[800:900], "age"] = 12  # below
    return write_csv(frame, tmp_path_factory.mktemp("labels") / "confidential.csv")


def _spec_file(tmp: Path) -> Path:
    path = tmp / "spec.json"
    path.write_text(json.dumps(small_doc()), encoding="utf-8")
    return path


def test_pilot_discovers_labels_and_sides(data, tmp_path, capsys, budget_store) -> None:
    """The CLI prints and writes the frequent label and the sides, labelled (ε, δ); the ledger,
    the store and the spec section it prints carry δ; the one-row label never leaves."""
    out = tmp_path / "pilot.json"
    assert cli(["pilot", str(_spec_file(tmp_path)), str(data), "--epsilon", "1",
                "--discover-labels", "workclass,age", "--discover-epsilon", "1",
                "--discover-delta", "1e-6", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "ε = 2, δ = 1e-06 charged" in printed and SECRET not in printed
    assert f"{FREQUENT!r} ≈" in printed and "below 17 ≈" in printed
    text = out.read_text(encoding="utf-8")
    assert SECRET not in text
    doc = json.loads(text)
    labels, sides = doc["discovered"]["columns"]
    assert [d["label"] for d in labels["labels"]] == [FREQUENT]
    assert (labels["epsilon"], labels["delta"]) == (0.5, 1e-6)
    assert abs(sides["below"] - 100) < 40 and abs(sides["above"] - 300) < 40
    assert doc["pilot"]["epsilon"] == 2.0 and doc["pilot"]["delta"] == 1e-6
    book = DatasetBudget(budget_store, "test-own-data")
    lines = [e for e in book.entries() if e.get("event") == "measurement"]
    select = next(e for e in lines if e["mechanism"] == "laplace_threshold")
    assert select["delta"] == 1e-6 and select["threshold"] == labels["threshold"]
    assert book.spent() == pytest.approx(2.0) and book.delta_spent() == pytest.approx(1e-6)
    end = [e for e in book.entries() if e.get("event") == "pilot_end"][-1]
    assert end["delta"] == pytest.approx(1e-6) and end["epsilon"] == pytest.approx(2.0)
    section = json.loads(printed.split("datasheet show it):\n")[1].splitlines()[0])
    assert section["pilot"]["delta"] == pytest.approx(1e-6)


def test_the_datasheet_states_the_pilots_delta() -> None:
    from workbench.report.own_data import pilot_describe_lines, pilot_markdown

    doc = small_doc()
    doc["pilot"] = {"facts": "p.json", "sha256": "a" * 64, "epsilon": 2.0, "delta": 1e-6}
    spec = build_spec(doc)
    assert spec.pilot.delta == 1e-6
    assert "δ = 1e-06" in pilot_markdown(spec)[0]
    assert "delta = 1e-06" in pilot_describe_lines(spec, 1.0)[0]


@pytest.mark.parametrize(("args", "words"), [
    (["--discover-labels", "nope", "--discover-epsilon", "1", "--discover-delta", "1e-6"],
     "--discover-labels: the spec has no column 'nope'"),
    (["--discover-labels", "workclass", "--discover-delta", "1e-6"],
     "--discover-epsilon must be a number > 0"),
    (["--discover-labels", "workclass", "--discover-epsilon", "-1", "--discover-delta", "1e-6"],
     "--discover-epsilon must be a number > 0"),
    (["--discover-labels", "workclass", "--discover-epsilon", "1"],
     "--discover-delta must be a number in (0, 0.001]"),
    (["--discover-labels", "workclass", "--discover-epsilon", "1", "--discover-delta", "0.5"],
     "--discover-delta must be a number in (0, 0.001]"),
    (["--discover-labels", "age", "--discover-epsilon", "1", "--discover-delta", "1e-6"],
     "--discover-delta: no column of --discover-labels has labels"),
    (["--discover-epsilon", "1"], "need --discover-labels"),
    (["--discover-labels", "age,age", "--discover-epsilon", "1"], "named twice"),
])
def test_bad_discovery_options_exit_2_naming_the_option(data, tmp_path, capsys, budget_store,
                                                        args, words) -> None:
    out = tmp_path / "f.json"
    assert cli(["pilot", str(_spec_file(tmp_path)), str(data), "--epsilon", "1", *args,
                "--out", str(out)]) == 2
    assert words in capsys.readouterr().err
    assert not out.exists() and DatasetBudget(budget_store, "test-own-data").spent() == 0.0


def test_discovered_sides_audit() -> None:
    """The side counts through the audit harness: consistent at Δ₁ = 2, flagged at Δ/2."""
    from test_audits_release import assert_row

    from workbench.audits.pilot import SIDES_EPSILON, discovery_scenario

    scn = discovery_scenario()
    assert (scn.d.primitive, scn.d.sensitivity, scn.d.epsilon) == ("discrete_laplace", 2.0,
                                                                   SIDES_EPSILON)
    assert scn.d.values.tolist() == [1.0, 0.0, 0.0]
    assert scn.d_prime.values.tolist() == [0.0, 1.0, 0.0]
    assert_row(scn, seed=36)


def test_a_run_refuses_a_spec_that_misstates_the_pilots_delta(tmp_path) -> None:
    """``check_pilot``: the spec's pilot δ must be the one the store recorded for that pilot."""
    from workbench.engine.guard import check_pilot
    from workbench.engine.rundir import RunRefused
    from workbench.privacy import Ledger

    book = DatasetBudget(tmp_path, "test-own-data").open()
    with Ledger(book.ledger_path) as ledger:
        ledger.event("pilot_end", status="complete", facts_sha256="b" * 64, epsilon=2.0,
                     delta=1e-6)
    doc = small_doc()
    doc["pilot"] = {"facts": "p.json", "sha256": "b" * 64, "epsilon": 2.0, "delta": 1e-6}
    check_pilot(build_spec(doc), book)
    del doc["pilot"]["delta"]
    with pytest.raises(RunRefused, match="records δ = 1e-06"):
        check_pilot(build_spec(doc), book)


def test_seeded_threshold_draws_follow_opendps_law() -> None:
    """The seeded selection (tests, rehearsals) keeps a label as OpenDP does: at count = τ its
    pass rate and noisy mean agree (a ≥/> slip would move the rate by P(Z = 0) ≈ 0.12)."""
    from workbench.privacy.noise import OpenDPNoise

    distance = sensitivity.partition_distance("replace_one")
    scale, tau = mechanisms.partition_threshold(distance, 0.5, 1e-6)
    rates = []
    for source in (OpenDPNoise(), SeededNoise(7)):
        kept = [source.laplace_threshold({"a": tau}, scale, tau, distance, 0.5, 1e-6)
                for _ in range(3000)]
        rates.append(np.mean([bool(k) for k in kept]))
    assert abs(rates[0] - rates[1]) < 0.05 and 0.5 < rates[0] < 0.65


def test_a_one_row_label_passes_with_probability_at_most_delta() -> None:
    """Empirical δ at a measurable δ = 0.02: a label of one row passes at most δ of the time
    (99.9% binomial upper margin), a label of τ rows about half the time."""
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(11))
    passed = 0
    trials = 20_000
    for _ in range(trials // 500):  # 500 one-row labels per call: independent noise each
        got = ctx.partition_select({f"l{i}": 1 for i in range(500)}, epsilon=1.0, delta=0.02,
                                   purpose="t")
        passed += len(got.value)
    rate = passed / trials
    assert rate <= 0.02 + 3.1 * np.sqrt(0.02 * 0.98 / trials)
    assert rate > 0.001  # the threshold is tight, not far beyond what δ asks
