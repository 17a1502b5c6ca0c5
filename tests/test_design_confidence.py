"""``workbench design --confidence`` (issue 37): a draft's low end is judged by what its
rehearsal shows (a Wilson lower bound), not by its point estimate.

The frugal design was accepted at target 0.9 on 10 of 10 iterations per proxy scenario, whose
95% lower bound is 0.72; a first draft of it then passed 17 of 20 on a US stand-in."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from workbench.cli.main import main
from workbench.design import rehearse
from workbench.dryrun.forecast import wilson_interval
from workbench.dryrun.result import DryRunResult
from workbench.dryrun.robust import RobustForecast
from workbench.dryrun.tasks import TaskRecord
from workbench.specification.document import content_of
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
FRUGAL = REPO / "examples" / "israel_births_2014_frugal.frozen.json"


def test_ten_of_ten_does_not_show_ninety_percent_and_thirty_five_do() -> None:
    """10 of 10 has a 95% lower bound 0.72 (the recorded interval's); 35 of 35 is the fewest
    perfect scores that reach 0.9, 381 for 0.99."""
    assert rehearse.lower_bound(1.0, 10) == pytest.approx(0.7225, abs=1e-4)
    assert rehearse.lower_bound(1.0, 10) == pytest.approx(wilson_interval(10, 10)[0])
    assert rehearse.lower_bound(0.9, 20) == pytest.approx(wilson_interval(18, 20)[0])
    assert rehearse.repetitions_needed(0.9) == 35
    assert rehearse.lower_bound(1.0, 35) >= 0.9 > rehearse.lower_bound(1.0, 34)
    assert rehearse.repetitions_needed(0.99) == 381
    assert rehearse.repetitions_needed(0.9, 0.99) > 35
    with pytest.raises(ValueError, match="--confidence"):
        rehearse.lower_bound(1.0, 10, 1.5)


def _perfect_forecast(monkeypatch: pytest.MonkeyPatch, repetitions: int) -> None:
    """Every rehearsal passes all of its ``repetitions`` iterations on every scenario."""
    def fake(spec, evidence, configurations, n, *, repetitions: int, **_options):
        records = tuple(TaskRecord(c.key, rep, rep, "seeded", True, None)
                        for c in configurations for rep in range(repetitions))
        result = DryRunResult((), tuple(configurations), records, repetitions, 0, "seeded")
        names = ("proxy", "flatter", "sharper", "rare thinned", "rare thickened")
        return RobustForecast(dict.fromkeys(names, 1.0), result)

    monkeypatch.setattr(rehearse, "robust_forecast", fake)


@pytest.mark.parametrize(("repetitions", "confidence", "reached"),
                         [(10, None, True), (10, 0.95, False), (35, 0.95, True)])
def test_a_draft_reaches_the_target_only_when_its_bound_does(
        monkeypatch: pytest.MonkeyPatch, repetitions: int, confidence: float | None,
        reached: bool) -> None:
    """Without --confidence 10 of 10 reaches 0.9 (as before); with it only 35 of 35 does."""
    _perfect_forecast(monkeypatch, repetitions)
    draft = content_of(json.loads(FRUGAL.read_text(encoding="utf-8")))
    evidence = SimpleNamespace(published=None, source="proxy.csv")
    out = rehearse.rehearse_drafts([draft], evidence, 95_000, target_p=0.9,
                                   repetitions=repetitions, seed=0, confidence=confidence)
    assert out.reached is reached
    assert out.forecast.low == 1.0  # the point estimate is the same either way
    build_spec(out.document)  # the recorded forecast is still a valid document
    words = rehearse.bound_words(out.forecast, 0.9, confidence or 0.95)
    assert f"{repetitions} of {repetitions} iterations" in words
    assert ("under the target" in words) is (repetitions < 35)


def test_cli_refuses_too_few_check_repetitions_for_the_confidence(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Before anything is fitted: --check-repetitions 10 can never show 0.9 at 95%."""
    code = main(["design", str(FRUGAL), str(tmp_path / "no_proxy.csv"), "--target-p", "0.9",
                 "--confidence", "0.95", "--check-repetitions", "10", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--check-repetitions 10" in err and "0.72" in err and "at least 35" in err
    assert main(["design", str(FRUGAL), str(tmp_path / "no_proxy.csv"), "--confidence",
                 "1.2", "--quiet"]) == 2
    assert "--confidence" in capsys.readouterr().err
