"""Issue 36, must-show 2: the design assistant writes and freezes only a draft whose recorded
forecast reaches the target at its low end; otherwise it exits 2 naming the best draft, its
forecast, the binding criterion and what to relax, and writes nothing.

The draft is the issue's, rebuilt small: the births columns, the workload family, two 2-way
criteria (whose ε the assistant cut to 0.005–0.008) beside a criterion with a large ε. The
workload used to split ε_gen by the criteria's ε, so the 2-way tables got ~0.0009 of ε each.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.design.progress import Countdown, Eta, duration
from workbench.evidence.sampler import sample_proxy
from workbench.validation import build_spec, load_spec

REPO = Path(__file__).resolve().parents[1]
PAIRS = {"pair_gestation_weight": ["gestation_week", "birth_weight"],
         "pair_age_parity": ["mother_age", "parity"]}


def issue_draft(pair_epsilon: tuple[float, float] = (0.05, 0.05),
                pair_threshold: float = 0.02) -> dict:
    """The empty births draft with the workload family, two 2-way criteria and a mean."""
    doc = json.loads((REPO / "examples" / "births_empty_draft.json").read_text())
    doc["generator"] = {"family": "workload",
                        "search_space": [{"algorithm": ["fixed"], "iters": [300]}]}
    doc["criteria"] = [
        {"id": cid, "kind": "observed_marginal_error", "threshold": pair_threshold,
         "epsilon": eps, "bounds": [0, 1], "params": {"way": 2, "columns": cols}}
        for (cid, cols), eps in zip(PAIRS.items(), pair_epsilon, strict=True)]
    doc["criteria"].append(
        {"id": "mean_gestation", "kind": "conditional_mean", "threshold": 1, "epsilon": 0.9,
         "bounds": [28, 43], "params": {"target": "gestation_week",
                                        "group_by": ["parity", "mother_age"],
                                        "include_overall": True}})
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    return doc


def test_the_issue_drafts_two_way_tables_keep_their_share_of_epsilon_gen() -> None:
    """At the assistant's cut ε (0.005, 0.008) each 2-way table still gets a real share of
    ε_gen (it got 0.75·0.008/0.913 ≈ 0.0066 of ε_gen when weights followed the criteria's ε),
    the same it gets at ε 0.5."""
    spec = build_spec(issue_draft((0.005, 0.008)))
    allocation = dict(spec_generator(spec).workload.allocate(1.0))
    again = dict(spec_generator(build_spec(issue_draft((0.5, 0.5)))).workload.allocate(1.0))
    for cols in PAIRS.values():
        assert allocation[tuple(cols)] >= 0.25  # of ε_gen 1
    assert allocation == again


def spec_generator(spec):
    """The bound generator of the spec's first configuration (public)."""
    from workbench.trial import bind

    return bind(spec, next(spec.configurations())).generator()


def test_eta_says_what_is_left_and_how_long() -> None:
    lines: list[str] = []
    ticks = iter([0.0, 10.0, 10.0, 30.0, 30.0])
    eta = Eta(lines.append, 3, "candidate", clock=lambda: next(ticks))
    eta.step("ε_gen 1")
    eta.step("ε_gen 1")
    eta.step("ε_gen 2")
    assert lines == ["candidate 1 of 3 (ε_gen 1) … ETA: timing the first",
                     "candidate 2 of 3 (ε_gen 1) … ETA ~20 s",  # 2 left × 10 s
                     "candidate 3 of 3 (ε_gen 2) … ETA ~15 s"]  # 1 left × mean 15 s
    assert duration(400) == "~7 min" and duration(9000) == "~2.5 h"


def test_countdown_of_parallel_units_says_what_is_left_from_the_wall_time() -> None:
    """Parallel units (candidate fits, pricing draws) finish in any order: after each, what is
    left and an ETA from the wall time per finished unit (which counts the parallelism)."""
    lines: list[str] = []
    ticks = iter([0.0, 0.0, 12.0, 14.0, 20.0])
    countdown = Countdown(lines.append, 3, "candidate fit", clock=lambda: next(ticks))
    countdown.start("ε_gen 2")
    countdown.finished("repetition 2")
    countdown.finished("repetition 1")
    countdown.finished("repetition 3")
    assert lines == ["candidate fit: 3 to run (ε_gen 2) … ETA: timing the first",
                     "candidate fit 1 of 3 done (repetition 2) … 2 left, ETA ~24 s",
                     # after the first, the time per unit since it (start-up paid once)
                     "candidate fit 2 of 3 done (repetition 1) … 1 left, ETA ~2 s",
                     "candidate fit 3 of 3 done (repetition 3) … all done"]
    assert countdown.seconds_per_unit == 4.0  # (20 - 12) / 2


@pytest.fixture(scope="module")
def proxy_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("proxy") / "proxy.csv"
    sample_proxy(25000, seed=4).to_csv(path, index=False)
    return path


def _design(tmp_path: Path, proxy_csv: Path, doc: dict, *extra: str) -> tuple[int, Path, Path]:
    """``workbench design`` of ``doc`` at n = 3000, ε_gen 2, K 4 (small, to run fast), its
    rehearsals in this process unless ``extra`` gives ``--workers`` (the last one counts)."""
    spec_path = tmp_path / "draft_in.json"
    spec_path.write_text(json.dumps(doc))
    out, frozen = tmp_path / "draft.json", tmp_path / "draft.frozen.json"
    code = main(["design", str(spec_path), str(proxy_csv), "--n", "3000", "--eps-gen", "2",
                 "--divisors", "4", "--repetitions", "2", "--draws", "2",
                 "--check-repetitions", "2", "--out", str(out), "--freeze", str(frozen),
                 "--workers", "0", *extra])
    return code, out, frozen


def test_an_unreachable_draft_exits_2_naming_its_binding_criterion_and_writes_nothing(
        tmp_path: Path, proxy_csv: Path, capsys: pytest.CaptureFixture) -> None:
    doc = issue_draft()
    doc["criteria"][1]["threshold"] = 0.0005  # no generator meets a 0.05% cell gap at 3000
    code, out, frozen = _design(tmp_path, proxy_csv, doc, "--target-p", "0.6")
    captured = capsys.readouterr()
    assert code == 2
    assert not out.exists() and not frozen.exists()
    assert not list(tmp_path.glob("*.partial"))
    text = captured.out
    assert "target not reached" in text and "nothing was written or frozen" in text
    assert "best draft found: ε_gen 2, K 4" in text
    assert "its forecast (a seeded dry run of it as frozen at n = 3,000): p 0.00" in text
    assert "binding criterion: 'pair_age_parity' passes 0% of the rehearsals" in text
    assert "what to relax: the release itself misses 'pair_age_parity': raise its threshold" \
        in text
    assert "error: target not reached (best draft ε_gen 2" in captured.err
    # every long step said what is left and when it should end
    assert "candidate fit: 2 to run (2 per ε_gen, each fitted and sampled at n = 3,000) … " \
        "ETA: timing the first" in captured.err
    assert re.search(r"candidate fit 1 of 2 done \(ε_gen 2, repetition \d of 2\) … 1 left, "
                     r"ETA ~\d+ s", captured.err)
    assert "candidate fit 2 of 2 done (ε_gen 2, repetition" in captured.err
    assert "rehearsing draft 1 of 1 (" in captured.err and "… ETA ~" in captured.err
    assert "  draft 1: scenario 1 of 5 (proxy) … ETA ~" in captured.err


@pytest.fixture(scope="module")
def issue_designs(tmp_path_factory: pytest.TempPathFactory, proxy_csv: Path
                  ) -> dict[str, tuple[int, Path, Path, str]]:
    """``design`` of the issue's draft in this process and on two worker processes (what it
    printed kept): (exit code, draft, frozen file, stdout) by ``--workers``."""
    runs = {}
    for workers in ("0", "2"):
        folder = tmp_path_factory.mktemp(f"workers{workers}")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code, out, frozen = _design(folder, proxy_csv, issue_draft(pair_threshold=0.05),
                                        "--target-p", "0.6", "--quiet", "--workers", workers)
        runs[workers] = (code, out, frozen, printed.getvalue())
    return runs


def test_the_issue_draft_is_frozen_only_with_a_recorded_low_end_at_the_target(
        issue_designs: dict[str, tuple[int, Path, Path, str]]) -> None:
    """The issue's draft: the written, frozen file's recorded forecast (the dry run of that
    file) reaches the target at its low end."""
    code, out, frozen, text = issue_designs["2"]
    assert code == 0, text
    recorded = load_spec(frozen, require_frozen=True).selection.forecast
    assert recorded.low >= 0.6 and recorded.n == 3000
    assert json.loads(out.read_text())["selection"]["forecast"]["range"]["low"] == recorded.low
    assert f"target reached: the draft's recorded forecast has low end {recorded.low:.2f}" \
        in text


def test_design_gives_the_same_seeded_draft_whatever_runs_its_rehearsals(
        issue_designs: dict[str, tuple[int, Path, Path, str]]) -> None:
    """``--workers`` (the dry run's executors) changes who runs the rehearsals, never the draft:
    in this process and in two worker processes the drafts are the same bytes and the frozen
    files the same hash (only their ``frozen_at`` time differs)."""
    drafts, hashes = [], []
    for workers in ("0", "2"):
        code, out, frozen, text = issue_designs[workers]
        assert code == 0, text
        drafts.append(out.read_bytes())
        hashes.append(json.loads(frozen.read_text())["frozen"]["sha256"])
    assert drafts[0] == drafts[1] and hashes[0] == hashes[1]


def test_the_binding_criterion_passes_least_often_then_lies_furthest_above_its_threshold(
        ) -> None:
    from workbench.dryrun.robust import RobustForecast

    rf = RobustForecast({"proxy": 0.0, "sharper": 0.0}, None, criteria={  # type: ignore[arg-type]
        "proxy": {"a": (0.0, 0.04, 0.02), "b": (0.0, 0.007, 0.0005), "c": (1.0, 0.3, 1.0)},
        "sharper": {"a": (0.5, 0.01, 0.02), "b": (0.0, 0.006, 0.0005), "c": (0.0, 2.0, 1.0)}})
    assert rf.binding() == ("b", "proxy", (0.0, 0.007, 0.0005))  # 14× its threshold


def test_write_narrowed_says_it_needs_min_pass(tmp_path: Path, capsys: pytest.CaptureFixture
                                               ) -> None:
    """Issue 36's fix: the option's help says so, and without --min-pass it exits 2 naming it,
    before reading anything and writing nothing."""
    from workbench.cli.main import build_parser

    dryrun = build_parser()._subparsers._group_actions[0].choices["dryrun"]  # type: ignore[union-attr]
    (action,) = [a for a in dryrun._actions if "--write-narrowed" in a.option_strings]
    assert action.help.startswith("needs --min-pass")
    out = tmp_path / "narrowed.frozen.json"
    code = main(["dryrun", str(REPO / "examples" / "israel_births_2014_lean.json"),
                 str(tmp_path / "absent.csv"), "--write-narrowed", str(out)])
    assert code == 2 and not out.exists()
    assert "error: --write-narrowed needs --min-pass" in capsys.readouterr().err
