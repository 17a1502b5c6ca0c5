"""``benchmarks/faithfulness_peers.py`` (issue 37, task 3): workload variants beside the peers.

Its figures are not tested (no fits, no timings); what is tested is that a variant is exactly a
``--families`` candidate applied to the frozen design (nothing else changes, so the comparison
is at equal ε), that refused variants are found before anything is spent, and that the join
with the peers records prints what the records hold ("no record" where a cell has none).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[1]
FRUGAL = REPO / "examples" / "israel_births_2014_frugal.frozen.json"
sys.path.insert(0, str(REPO / "benchmarks"))


def _frugal() -> dict:
    return json.loads(FRUGAL.read_text(encoding="utf-8"))


def _record(generator: str, standin: str, scale: float, run: int, faith: float,
            passed: bool, sha: str) -> dict:
    """A finished cell with made-up scores, as peers.py and the benchmark write them."""
    import _peer_records as records
    from _scoring import RunRow

    ids = ("faithfulness", "marginals")
    row = RunRow(dp_pass=passed, exact_pass=passed, exact={"faithfulness": faith,
                                                           "marginals": 0.001},
                 effective=dict.fromkeys(ids, 0.05), seconds=3.0, fit_seconds=2.0,
                 dp_values=dict.fromkeys(ids, 0.0), exact_passed=dict.fromkeys(ids, passed),
                 dp_passed=dict.fromkeys(ids, passed), epsilon_run=1.45 * scale)
    cell = records.Cell(generator, standin, 95_000, scale, run, 1000 + run)
    return records.record(cell, row, design=FRUGAL.name, design_sha=sha,
                          epsilon_gen=1.45 * scale, neighbour="?", commit="abc")


def _write(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def test_variants_are_family_candidates_and_joint_takes_the_shipped_proxy() -> None:
    """``shipped`` changes nothing; ``NAME=VALUE`` is parsed as a --families candidate (JSON
    values); 'joint' without a proxy gets the shipped one, pinned by its hash."""
    import faithfulness_peers as fp

    from workbench.generators.public_proxy import file_hash

    got = fp.parse_variants(["shipped", "faithfulness_cliques=3",
                             "public_measurements=joint,one_way_share=0.25"], "workload")
    assert [v.label for v in got] == ["shipped", "faithfulness_cliques=3",
                                      "public_measurements=joint,one_way_share=0.25"]
    assert got[0].params == {} and got[1].params == {"faithfulness_cliques": 3}
    assert got[2].params == {"public_measurements": "joint", "one_way_share": 0.25,
                             "public_proxy": fp.PROXY,
                             "public_proxy_sha256": file_hash(REPO / fp.PROXY)}


@pytest.mark.parametrize("texts, words", [
    (["shipped", "bogus=1"], ["--variants[1]", "bogus"]),
    (["epsilon=2"], ["--variants[0]", "equal ε"]),
    (["sampling"], ["--variants[0]", "NAME=VALUE"]),
    (["sampling=iid", "sampling=iid"], ["--variants[1]", "same variant"]),
])
def test_a_bad_variant_fails_naming_it(texts: list[str], words: list[str]) -> None:
    """An unknown hyperparameter, ε (never a variant's own), a bare word or a repeat."""
    import faithfulness_peers as fp

    with pytest.raises(ValueError) as err:
        fp.parse_variants(texts, "workload")
    assert all(w in str(err.value) for w in words), str(err.value)


def test_a_variant_changes_only_the_generator_at_equal_epsilon() -> None:
    """Every section but the generator's is the frozen design's (the recorded forecast, which
    is the shipped generator's, is dropped); ε_total, ε_gen and min_count are unchanged."""
    import faithfulness_peers as fp

    from workbench.specification.document import content_of

    doc = _frugal()
    out = fp.variant_document(doc, {"sampling": "iid"})
    frozen = content_of(doc)
    assert {k: v for k, v in out.items() if k not in ("generator", "selection")} == {
        k: v for k, v in frozen.items() if k not in ("generator", "selection")}
    assert out["generator"]["search_space"][0]["sampling"] == ["iid"]
    config, was = out["selection"]["configurations"][0], frozen["selection"]["configurations"][0]
    assert config["generator"] == was["generator"] | {"sampling": "iid"}
    assert config["min_count"] == was["min_count"] and "forecast" not in out["selection"]
    trials = fp.variant_trials(doc, fp.parse_variants(["shipped", "sampling=iid"], "workload"))
    shipped, iid = trials["shipped"], trials["sampling=iid"]
    assert shipped.spec.epsilon_total == iid.spec.epsilon_total == pytest.approx(1.9636)
    assert shipped.epsilon_generator == iid.epsilon_generator == 1.45
    assert shipped.generator().sampling == "rounded" and iid.generator().sampling == "iid"


def test_structure_variants_on_the_frugal_design_are_refused_before_any_spending() -> None:
    """Its workload already measures every pair, so every structure option's fit would refuse;
    the benchmark finds that from the spec alone."""
    import faithfulness_peers as fp

    texts = ["shipped", "structure=pairs", "structure=tree"]
    trials = fp.variant_trials(_frugal(), fp.parse_variants(texts, "workload"))
    assert fp.refusal(trials["shipped"]) is None
    assert "every column pair is already inside" in fp.refusal(trials["structure=pairs"])
    assert "already connect every column" in fp.refusal(trials["structure=tree"])


def test_run_grid_fits_the_factory_of_each_label(monkeypatch: pytest.MonkeyPatch) -> None:
    """peers.run_grid with ``factories`` fits each cell's own variant, not the design's."""
    import _peer_records as records
    import faithfulness_peers as fp
    import peers

    trials = fp.variant_trials(_frugal(), fp.parse_variants(["shipped", "sampling=iid"],
                                                            "workload"))
    factories = {label: t.generator for label, t in trials.items()}
    made = []
    monkeypatch.setattr(peers, "score_iteration",
                        lambda trial, make, codes, eps, seed: made.append(make)
                        or SimpleNamespace(seconds=1.0))
    cells = records.plan(list(factories), [("us_sample_95k", 95_000)], [1.0],
                         dict.fromkeys(factories, 1), 1000, [])
    assert peers.run_grid(trials["shipped"], cells, lambda name: None, lambda c, r: None,
                          factories=factories) == 2
    assert made == [factories["shipped"], factories["sampling=iid"]]


def test_tables_join_the_peer_records_and_say_no_record(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """From a tiny results file and a tiny peers file (nothing fitted): each variant's median
    faithfulness and k of R beside AIM's; MST has no record; the summary counts the cells where
    a variant is at most AIM's and pairs a variant's runs with the shipped ones by seed."""
    import _peer_records as records
    import faithfulness_peers as fp

    sha = records.design_hash(FRUGAL)
    mine = _write(tmp_path / "mine.jsonl", [
        _record("shipped", "us_sample_95k", 1.0, 0, 0.030, True, sha),
        _record("shipped", "us_sample_95k", 1.0, 1, 0.034, True, sha),
        _record("sampling=iid", "us_sample_95k", 1.0, 0, 0.052, False, sha)])
    peers_file = _write(tmp_path / "peers.jsonl", [
        _record("AIM", "us_sample_95k", 1.0, 0, 0.040, True, sha)])
    assert fp.main(["--results", str(mine), "--peer-results", str(peers_file),
                    "--variants", "shipped", "sampling=iid", "--standins", "us_sample",
                    "--sizes", "95000", "--epsilon-scale", "1", "--runs", "2",
                    "--max-minutes", "0"]) == 0
    out = capsys.readouterr().out
    assert "| shipped | run here | 0.0320 (0.0300–0.0340) | 2 of 2 | 2 of 2 | 2.0 |" in out
    assert "| sampling=iid | run here | 0.0520 | 0 of 1 | 0 of 1 | 2.0 |" in out
    assert "| AIM | peers record | 0.0400 | 1 of 1 |" in out
    assert "| MST | peers record | no record | | | |" in out
    assert "| shipped | 1.45 | 1 | 0.0320 | 1 of 1 |  | 2 of 2 |" in out
    assert "| sampling=iid | 1.45 | 1 | 0.0520 | 0 of 1 | +0.0220, 0 of 1 | 0 of 1 |" in out
    assert "| AIM | 1.45 | 1 | 0.0400 |  |  | 1 of 1 |" in out


def test_peer_records_of_another_design_exit_2_naming_the_option(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A peers file of another design (hash) or a bad variant exits 2 naming the option."""
    import faithfulness_peers as fp

    other = _write(tmp_path / "peers.jsonl",
                   [_record("AIM", "us_sample_95k", 1.0, 0, 0.04, True, "e" * 64)])
    for argv, word in ((["--peer-results", str(other), "--max-minutes", "0"],
                        "--peer-results"),
                       (["--variants", "nonsense=1", "--max-minutes", "0"], "--variants[0]"),
                       (["--sizes", "1234"], "--sizes")):
        with pytest.raises(SystemExit) as stop:
            fp.main(argv)
        assert stop.value.code == 2
        assert word in capsys.readouterr().err
