"""The trivial-generator floor (issue 28): a criterion an independent-marginals release passes
protects no utility; `describe --proxy` names it and `validate --strict` refuses a spec whose
every criterion it passes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_data

from workbench.cli.main import main
from workbench.dryrun.floors import feasibility_floors
from workbench.validation import build_spec

REPO = Path(__file__).resolve().parents[1]
MISSING = json.loads((REPO / "examples" / "adult_missing.json").read_text())


@pytest.fixture(scope="module")
def adult_sample(tmp_path_factory) -> Path:
    """6,000 rows of the public Adult extract, in its own format."""
    frame = pd.read_csv(shared_data("adult/adult_train.csv.gz"), skipinitialspace=True,
                        dtype=str, keep_default_na=False).sample(6000, random_state=28)
    path = tmp_path_factory.mktemp("adult") / "adult.csv"
    frame.to_csv(path, index=False)
    return path


def _keep(ids: set[str]) -> dict:
    doc = copy.deepcopy(MISSING)
    doc["criteria"] = [c for c in doc["criteria"] if c["id"] in ids]
    doc["budget"].pop("epsilon_criteria", None)
    return doc


def test_the_trivial_release_passes_marginal_criteria_and_fails_relations(adult_sample):
    spec = build_spec(MISSING)
    table = feasibility_floors(spec, adult_sample, draws=2)
    by = table.by_id()
    # 1-way statistics are kept exactly by an independent-marginals release
    assert by["one_way"].trivial_passes and by["missing_rates"].trivial_passes
    # co-missingness is a relation between columns: the trivial release breaks it
    assert not by["co_missing"].trivial_passes
    assert by["co_missing"].trivial > by["co_missing"].threshold
    assert set(table.unprotective) == {f.criterion for f in table.floors if f.trivial_passes}
    assert "trivial passes" in table.summary()


def _validate(doc: dict, tmp_path: Path, proxy: Path, capsys: pytest.CaptureFixture
              ) -> tuple[int, str, str]:
    """`workbench validate --strict --proxy` in this process: (exit code, stdout, stderr)."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc))
    code = main(["validate", str(path), "--strict", "--proxy", str(proxy), "--floor-draws", "2"])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_validate_strict_refuses_criteria_that_protect_no_utility(adult_sample, tmp_path,
                                                                  capsys):
    code, out, err = _validate(_keep({"one_way", "missing_rates"}), tmp_path, adult_sample,
                               capsys)
    assert code == 2, out
    assert "protect no utility" in err and "one_way" in err
    code, out, err = _validate(_keep({"one_way", "co_missing"}), tmp_path, adult_sample, capsys)
    assert code == 0, err
    code = main(["validate", str(tmp_path / "spec.json"), "--strict"])
    assert code == 2 and "--strict needs --proxy" in capsys.readouterr().err


def test_describe_floors_of_a_draft_without_criteria_say_so(capsys) -> None:
    """The births empty draft has no criteria yet: `describe --proxy` printed its summary, then
    failed with an IndexError on the empty floor table (exit 1, no words for the user)."""
    code = main(["describe", str(REPO / "examples" / "births_empty_draft.json"), "--proxy",
                 str(REPO / "data_public" / "proxy_sample_166k.csv.gz"), "--n", "2000",
                 "--floor-draws", "2"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "feasibility floors at n = 2,000: none (the spec has no criteria yet)" in out.out
