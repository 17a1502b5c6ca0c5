"""Issue 34, must-show 2: ``guarantee.json`` of an MCMC release says what its words say
(``strict: false``, ``proven_for_release: false``), and ``verify`` fails a bundle whose
guarantee fields, kind and label disagree, naming the field — even when the tamperer re-hashes
the manifest, so the disagreement is the only failure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_bayesian import _doc, _frame, _quick

from workbench.cli.main import main
from workbench.engine import verify_bundle
from workbench.engine.bundle import MANIFEST
from workbench.generators import (
    MCMC_KIND,
    PURE_EPSILON_DP,
    Guarantee,
    guarantee_problems,
)
from workbench.generators.bayesian import ADP, MCMC_LABEL
from workbench.report.guarantee import caveats
from workbench.specification.document import file_sha256
from workbench.validation import save_spec


@pytest.fixture(scope="module")
def mcmc_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh Censor_uw release: the example's design with a short chain (300 + 300) and one
    loose criterion, so the single attempt releases (nothing checked here depends on it)."""
    work = tmp_path_factory.mktemp("mcmc_words")
    doc = _quick(_doc())
    doc["criteria"] = [dict(c, threshold=0.9) for c in doc["criteria"] if c["id"] == "ecdf_max"]
    doc["budget"]["epsilon_criteria"] = 0.05
    doc["metadata"]["dataset"] = "guarantee-words-mcmc"
    spec = work / "mcmc.frozen.json"
    save_spec(doc, spec)
    data = work / "births.csv"
    _frame(1200).to_csv(data, index=False)
    assert main(["run", str(spec), str(data), "--out", str(work / "run"), "--quiet",
                 "--budget-store", str(work / "store")]) == 0
    return work / "run" / "release"


def _tampered(release: Path, where: Path, **fields: object) -> Path:
    """A copy of the bundle with guarantee.json's ``fields`` replaced and MANIFEST re-hashed."""
    shutil.copytree(release, where)
    stated = json.loads((where / "guarantee.json").read_text(encoding="utf-8"))
    (where / "guarantee.json").write_text(json.dumps({**stated, **fields}, ensure_ascii=False),
                                          encoding="utf-8")
    manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    manifest["guarantee.json"] = file_sha256(where / "guarantee.json")
    (where / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return where


def test_a_fresh_mcmc_bundle_says_strict_false_and_not_proven(mcmc_release: Path) -> None:
    stated = json.loads((mcmc_release / "guarantee.json").read_text(encoding="utf-8"))
    assert stated["kind"] == MCMC_KIND and stated["label"] == MCMC_LABEL
    assert stated["strict"] is False and stated["proven_for_release"] is False
    assert "re-run on the released records" in stated["label"]
    check = verify_bundle(mcmc_release)
    assert check.ok, check.problems
    (flag,) = check.flags
    assert "strict false, proven_for_release false" in flag
    readme = (mcmc_release / "README.md").read_text(encoding="utf-8")
    assert "proven_for_release false, strict false" in readme
    assert "computed on the data itself" not in readme  # the aDP sentence is not MCMC's


@pytest.mark.parametrize(("fields", "named"), [
    ({"strict": True}, "field 'strict' is true, but kind 'epsilon_dp_exact_posterior_mcmc' "
                       "requires false"),
    ({"proven_for_release": True}, "field 'proven_for_release' is true, but 'strict' is false"),
    ({"label": "ε-DP"}, "field 'label' is 'ε-DP', but kind 'epsilon_dp_exact_posterior_mcmc' "
                        "is labelled"),
    ({"kind": "pure_epsilon_dp"}, "field 'label' is 'ε-DP for an exact posterior draw"),
    ({"strict": "yes"}, "field 'strict' must be true or false, not 'yes'"),
])
def test_verify_fails_a_bundle_whose_guarantee_fields_and_label_disagree(
        mcmc_release: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        fields: dict, named: str) -> None:
    root = _tampered(mcmc_release, tmp_path / "bundle", **fields)
    v = verify_bundle(root)
    assert v.checks["manifest"] == "every file matches its SHA-256"  # re-hashed: not the cause
    assert [p.split(":")[0] for p in v.problems] == ["guarantee"]
    assert named in v.checks["guarantee"]
    assert main(["verify", str(root)]) == 1
    assert named in capsys.readouterr().out


def test_the_field_rules_for_every_built_in_kind() -> None:
    from workbench.generators.plausible_deniability.family import KIND, LABEL

    pd = Guarantee(LABEL, dataset_level=False, kind=KIND, proven_for_release=False,
                   parameters={"epsilon": 1.2, "delta": 1e-9, "epsilon_pd": 1.1,
                               "epsilon_criteria": 0.1})
    for g in (PURE_EPSILON_DP, ADP, pd):
        assert guarantee_problems(g.as_dict()) == [], g.kind
    assert guarantee_problems({**pd.as_dict(), "proven_for_release": True}) == [
        "field 'proven_for_release' is true, but 'dataset_level' is false (a bound proven for "
        "the release as a whole is strict and dataset-level)",
        "field 'proven_for_release' is true, but kind 'per_record_plausible_deniability' "
        "requires false"]
    assert guarantee_problems({**PURE_EPSILON_DP.as_dict(), "proven_for_release": False}) == [
        "field 'proven_for_release' is false, but kind 'pure_epsilon_dp' requires true"]
    toy = Guarantee("ε-DP", kind="toy_kind")  # a plug-in kind may not borrow a known label
    assert guarantee_problems(toy.as_dict()) == [
        "field 'label' is 'ε-DP', the label of kind 'pure_epsilon_dp', but field 'kind' is "
        "'toy_kind'"]
    assert "field 'parameters.epsilon' is 1.1" in guarantee_problems(
        {**pd.as_dict(), "parameters": {**pd.parameters, "epsilon": 1.1}})[0]
    # a derived default: a strict dataset-level plug-in is proven, a per-record one is not
    assert Guarantee("x", kind="k").proven_for_release is True
    assert Guarantee("x", kind="k", dataset_level=False).proven_for_release is False
    # an old bundle without the field reads as not proven (and verify then names it)
    old = {k: v for k, v in PURE_EPSILON_DP.as_dict().items() if k != "proven_for_release"}
    assert Guarantee.from_dict(old).proven_for_release is False
    assert any("No proof covers this release" in c for c in caveats(ADP))
    assert not any("No proof covers" in c for c in caveats(PURE_EPSILON_DP))
