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
