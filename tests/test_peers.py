"""``benchmarks/peers.py`` (issue 37): OpenDP peers scored beside the workbench at a design's ε.

The benchmark's figures are not tested here (no timings, no pass rates); what is tested is that
its scoring runs end to end on a tiny public case and that what it prints is what it ran: every
column of the table, and each peer run at add/remove ε = replace-one ε_gen / 2.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROBUST = REPO / "examples" / "israel_births_2014_lean_robust.frozen.json"
sys.path.insert(0, str(REPO / "benchmarks"))


def tiny_trial():
    """The robust lean design on coarse bins (1,728 cells), so that a peer's fit stays short."""
    from workbench.specification.document import content_of
    from workbench.trial import bind
    from workbench.validation import build_spec

    doc = copy.deepcopy(content_of(json.loads(ROBUST.read_text(encoding="utf-8"))))
    edges = {"mother_age": [25, 30, 35], "parity": [1, 2, 4], "gestation_week": [37],
             "birth_weight": [2500, 4000]}
    for column, cut in edges.items():
        doc["transformations"]["columns"][column]["alternatives"][0]["edges"] = cut
    spec = build_spec(doc)
    return bind(spec, next(spec.configurations()))


def test_add_remove_epsilon_is_half_the_replace_one_epsilon() -> None:
    """A replacement is a removal and an addition: the peer runs at exactly ε_gen / 2."""
    from _baselines import add_remove_epsilon

    assert add_remove_epsilon(2.0) == 1.0
    assert add_remove_epsilon(0.3) == 0.15
    assert add_remove_epsilon(3.4715) == 3.4715 / 2


def test_peers_cli_refuses_bad_options_naming_them(capsys: pytest.CaptureFixture) -> None:
    """Bad input exits 2 naming the option, before anything is read or fitted."""
    import peers

    for argv, word in ((["--design", "no/such.json"], "--design"),
                       (["--design", str(ROBUST), "--sizes", "1234"], "--sizes"),
                       (["--design", str(ROBUST), "--epsilon-scale", "0"], "--epsilon-scale"),
                       (["--design", str(ROBUST), "--peers", "mwem"], "--peers")):
        with pytest.raises(SystemExit) as stop:
            peers.main(argv)
        assert stop.value.code == 2
        assert word in capsys.readouterr().err


@pytest.mark.slow
def test_peers_scoring_tiny_case_prints_every_column_and_half_epsilon() -> None:
    """MST and the workbench at half the design's ε_gen, one run each on 2,000 public rows:
    both tables carry every criterion and the times, MST ran (inside OpenDP) at add/remove
    ε_gen·scale / 2 and the workbench at replace-one ε_gen·scale."""
    import peers

    from workbench.evidence.prepare import prepare_proxy
    from workbench.transform.raw import read_raw

    trial = tiny_trial()
    raw = read_raw(REPO / "data_public" / "proxy_sample_166k.csv.gz", trial.spec.columns)
    codes = trial.encode(prepare_proxy(trial.spec, raw.iloc[:2_000]))
    scored = peers.score(trial, codes, ["mst", "workbench"], [0.5], runs=1, own_runs=1)
    eps = trial.epsilon_generator * 0.5
    assert [r.epsilon_run for s in scored for r in s.runs] == [eps / 2, eps]  # as fitted
    assert [(s.generator, s.epsilon_gen, s.epsilon_run, s.neighbour) for s in scored] == [
        ("MST", eps, eps / 2, "add/remove"), ("workbench", eps, eps, "replace-one")]
    ids = [c.id for c in trial.spec.criteria]
    for on in ("true", "dp"):
        lines = peers.table(scored, ids, on)
        head = [cell.strip() for cell in lines[0].strip("|").split("|")]
        assert head == ["generator", "replace-one ε_gen", "ε as run", f"P(all {len(ids)} pass)",
                        *ids, "fit s", "s/iter"]
        rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[3:]]
        assert [len(r) for r in rows] == [len(head)] * 2
        assert rows[0][:3] == ["MST", f"{eps:g}", f"add/remove {eps / 2:g}"]
        assert rows[1][:3] == ["workbench", f"{eps:g}", f"replace-one {eps:g}"]
        assert all(r[3] in ("0 of 1", "1 of 1") for r in rows)
        assert all(float(x) == float(x) for r in rows for x in r[4:4 + len(ids)])  # numbers


# --- the resumable grid (``--results``): records, order, resume, tables from records ----------

def fake_row(value: float, passed: bool = True, seconds: float = 2.0):
    """A scored iteration with made-up scores (no fit): the records path needs none."""
    from _scoring import RunRow

    ids = ("marginals", "faithfulness")
    return RunRow(dp_pass=passed, exact_pass=passed, exact=dict.fromkeys(ids, value),
                  effective=dict.fromkeys(ids, 0.05), seconds=seconds, fit_seconds=seconds / 2,
                  dp_values=dict.fromkeys(ids, value + 1), exact_passed=dict.fromkeys(ids, passed),
                  dp_passed=dict.fromkeys(ids, passed), epsilon_run=0.5)


def fake_record(cell, value: float, passed: bool = True, sha: str = "d" * 64) -> dict:
    """The record the grid writes for ``cell`` with :func:`fake_row`'s scores."""
    import _peer_records as records

    row = fake_row(value, passed)
    if cell.generator == "workbench":
        row.epsilon_run = 1.0
    return records.record(cell, row, design="robust.frozen.json", design_sha=sha,
                          epsilon_gen=2.0 * cell.scale, neighbour="?", commit="abc")


def test_plan_gives_every_cell_one_run_before_any_gets_two_cheap_generators_first() -> None:
    """Run index first, then workbench, MST, AIM; finished cells are left out; the workbench
    may have more runs than the peers."""
    import _peer_records as records

    items = [("us_sample_95k", 95_000), ("us_sample_158k", 158_500)]
    runs = {"AIM": 2, "MST": 2, "workbench": 3}
    full = records.plan(["AIM", "MST", "workbench"], items, [1.0, 0.5], runs, 1000, [])
    assert len(full) == 4 * (2 + 2 + 3)
    assert [c.run for c in full] == sorted(c.run for c in full)
    first = [c.generator for c in full if c.run == 0]
    assert first == ["workbench"] * 4 + ["MST"] * 4 + ["AIM"] * 4
    assert {c.generator for c in full if c.run == 2} == {"workbench"}
    assert all(c.seed == 1000 + c.run for c in full)
    done = [full[0].key(), full[5].key()]
    rest = records.plan(["AIM", "MST", "workbench"], items, [1.0, 0.5], runs, 1000, done)
    assert rest == [c for i, c in enumerate(full) if i not in (0, 5)]


def test_records_append_is_whole_lines_and_a_torn_tail_is_dropped(tmp_path: Path) -> None:
    """A kill mid-write leaves a torn last line: it is read as not finished (the cell runs
    again) and the next append leaves only complete records."""
    import _peer_records as records

    path = tmp_path / "results" / "peers.jsonl"
    cells = records.plan(["MST", "workbench"], [("us_sample_95k", 95_000)], [1.0],
                         {"MST": 1, "workbench": 1}, 1000, [])
    records.append(path, fake_record(cells[0], 0.01))
    torn = json.dumps(fake_record(cells[1], 0.02))[:57]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(torn)
    recs, lines = records.load(path, "d" * 64)
    assert [records.cell_of(r) for r in recs] == [cells[0]] and len(lines) == 1
    left = records.plan(["MST", "workbench"], [("us_sample_95k", 95_000)], [1.0],
                        {"MST": 1, "workbench": 1}, 1000, [records.cell_of(r).key() for r in recs])
    assert left == [cells[1]]
    records.append(path, fake_record(cells[1], 0.02))
    text = path.read_text(encoding="utf-8")
    assert torn not in text and text.endswith("\n") and len(text.splitlines()) == 2
    assert [records.cell_of(r) for r in records.load(path)[0]] == cells
    assert records.row_of(records.load(path)[0][1]).exact["marginals"] == 0.02
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_records_refuse_a_bad_line_or_another_designs_file(tmp_path: Path) -> None:
    """A broken line inside the file, or a record of another design, names the file and line."""
    import _peer_records as records

    path = tmp_path / "peers.jsonl"
    cell = records.plan(["MST"], [("us_sample_95k", 95_000)], [1.0], {"MST": 1}, 1000, [])[0]
    good = json.dumps(fake_record(cell, 0.01))
    path.write_text(f"{good}\n{{not json\n{good}\n", encoding="utf-8")
    with pytest.raises(records.RecordsError, match="line 2"):
        records.load(path)
    path.write_text(f"{good}\n", encoding="utf-8")
    with pytest.raises(records.RecordsError, match="line 1 is a record of another design"):
        records.load(path, "e" * 64)


def test_run_grid_saves_each_cell_and_a_kill_keeps_the_finished_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells are worked in order and saved as they finish; a kill during the third cell leaves
    two records, and the rerun's plan holds exactly the rest; a zero time limit runs none."""
    import _peer_records as records
    import peers

    trial = tiny_trial()
    items = [("us_sample_95k", 95_000), ("us_thinned_95k", 95_000)]
    runs = {"MST": 1, "workbench": 1}
    cells = records.plan(["MST", "workbench"], items, [0.5], runs, 1000, [])
    calls = []

    def fake_score(trial, make, codes, epsilon, seed):
        calls.append((epsilon, seed))
        if len(calls) == 3:
            raise KeyboardInterrupt  # the kill
        return fake_row(0.01)

    monkeypatch.setattr(peers, "score_iteration", fake_score)
    path = tmp_path / "peers.jsonl"

    def save(cell, row):
        records.append(path, records.record(cell, row, design="d", design_sha="d" * 64,
                                            epsilon_gen=1.0, neighbour="?", commit="abc"))

    with pytest.raises(KeyboardInterrupt):
        peers.run_grid(trial, cells, lambda name: None, save)
    assert calls[0] == (trial.epsilon_generator * 0.5, 1000)
    done = [records.cell_of(r) for r in records.load(path)[0]]
    assert done == cells[:2]
    left = records.plan(["MST", "workbench"], items, [0.5], runs, 1000, [c.key() for c in done])
    assert left == cells[2:]
    assert peers.run_grid(trial, left, lambda name: None, save, max_seconds=0) == 0
    assert len(calls) == 3  # nothing started past the limit
    assert peers.run_grid(trial, left, lambda name: None, save, max_seconds=3600,
                          slowest={"MST": 7200.0}) == 0  # would end past the limit


def test_tables_from_records_say_k_of_r_with_r_the_runs_so_far() -> None:
    """Medians and pass counts over every record of a cell; a generator without records yet
    has a row saying so."""
    import _peer_records as records
    import peers

    items = [("us_sample_95k", 95_000)]
    cells = records.plan(["MST", "workbench"], items, [1.0], {"MST": 1, "workbench": 3},
                         1000, [])
    values = {("workbench", 0): 0.01, ("workbench", 1): 0.03, ("workbench", 2): 0.02,
              ("MST", 0): 0.2}
    recs = [fake_record(c, values[c.generator, c.run], passed=(c.run != 1)) for c in cells]
    recs.append(fake_record(records.Cell("MST", "us_thinned_95k", 95_000, 1.0, 0, 1000), 9.0))
    scored = peers.from_records(recs, "us_sample_95k", 2.0, [1.0], ["aim", "mst", "workbench"])
    assert [(s.generator, len(s.runs)) for s in scored] == [("AIM", 0), ("MST", 1),
                                                            ("workbench", 3)]
    assert scored[0].epsilon_run == 1.0 and scored[2].epsilon_run == 1.0
    lines = peers.table(scored, ["marginals", "faithfulness"], "true")
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[3:]]
    assert rows[0][:4] == ["AIM", "2", "add/remove 1", "0 of 0 (not run yet)"]
    assert rows[1][3:6] == ["1 of 1", "0.2", "0.2"]
    assert rows[2][3:6] == ["2 of 3", "0.02", "0.02"]
    dp = [[cell.strip() for cell in line.strip("|").split("|")]
          for line in peers.table(scored, ["marginals", "faithfulness"], "dp")[3:]]
    assert dp[2][3:5] == ["2 of 3", "1.02"]


def test_peers_cli_skips_finished_cells_and_prints_tables_from_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A rerun with ``--max-minutes 0`` reads the file, runs nothing and prints the records;
    a file of another design exits 2 naming --results."""
    import _peer_records as records
    import peers

    from workbench.validation import load_spec

    path = tmp_path / "peers.jsonl"
    sha = records.design_hash(ROBUST)
    cell = records.Cell("workbench", "us_sample_95k", 95_000, 1.0, 0, 1000)
    ids = [c.id for c in load_spec(ROBUST).criteria]
    rec = fake_record(cell, 0.01, sha=sha)
    rec.update(exact=dict.fromkeys(ids, 0.01), effective=dict.fromkeys(ids, 0.05),
               dp_values=dict.fromkeys(ids, 0.02), epsilon_run=2.0)
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    argv = ["--design", str(ROBUST), "--results", str(path), "--standins", "us_sample",
            "--sizes", "95000", "--peers", "mst", "--epsilon-scale", "1", "--max-minutes", "0",
            "--runs", "1"]
    assert peers.main(argv) == 0
    out, err = capsys.readouterr()
    assert "1 records read, 1 cells to run" in err  # MST's; the workbench's cell is finished
    assert "| workbench | 2 | replace-one 2 | 1 of 1 | 0.01 |" in out
    assert "| MST | 2 | add/remove 1 | 0 of 0 (not run yet) |" in out
    rec["design_sha256"] = "e" * 64
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        peers.main(argv)
    assert stop.value.code == 2 and "--results" in capsys.readouterr().err


def test_verdict_compares_rates_at_equal_and_at_half_epsilon() -> None:
    """The workbench is compared with AIM as rates (k of R with different R), at equal ε and at
    its half ε against AIM's full ε; a NO and a missing record are reported, never hidden."""
    import peers
    from _scoring import RunRow

    def runs(*passes: bool) -> list[RunRow]:
        return [RunRow(dp_pass=p, exact_pass=p, exact={}, effective={}, seconds=1.0,
                       fit_seconds=1.0, dp_values={}, exact_passed={}, dp_passed={},
                       epsilon_run=1.0) for p in passes]

    def scored(gen: str, eps: float, rows: list[RunRow]) -> peers.Scored:
        return peers.Scored(gen, eps, eps, "replace-one", rows)

    by = {
        "a": [scored("AIM", 2.0, runs(True, False)), scored("workbench", 2.0, runs(True)),
              scored("AIM", 1.0, runs(False)), scored("workbench", 1.0, runs(True, True, False))],
        "b": [scored("AIM", 2.0, runs(True)), scored("workbench", 2.0, runs(True, False)),
              scored("AIM", 1.0, []), scored("workbench", 1.0, runs(True))],
    }
    lines = peers.verdict(by)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:4]]
    assert rows[0] == ["a", "1 of 1", "1 of 2", "2 of 3", "0 of 1", "yes", "yes"]
    assert rows[1] == ["b", "1 of 2", "1 of 1", "1 of 1", "no record", "NO", "yes"]
    assert "on 1 of 2 stand-ins (1 below, 0 without" in lines[4]
    assert "on 2 of 2 stand-ins (0 below" in lines[5]
