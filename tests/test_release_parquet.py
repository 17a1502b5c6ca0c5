"""issue 38: `workbench run --format parquet` also writes release.parquet (labels as categories in
code order, numbers as numbers), listed in the manifest; `verify` checks it against
release.csv and names a differing column."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_engine import _test_document

from workbench.cli.main import main
from workbench.engine import verify_bundle
from workbench.engine.release_parquet import parquet_problem
from workbench.evidence.sampler import sample_proxy
from workbench.validation import save_spec

REPO = Path(__file__).resolve().parents[1]


def _small_document() -> dict:
    """The engine tests' narrowed document without its faithfulness criterion (a fast run)."""
    doc = _test_document()
    doc["criteria"] = [c for c in doc["criteria"] if c["id"] != "faithfulness"]
    doc["budget"]["epsilon_criteria"] = round(sum(c["epsilon"] for c in doc["criteria"]), 10)
    return doc


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("parquet")
    spec, data = work / "spec.frozen.json", work / "data.parquet"
    save_spec(_small_document(), spec)
    sample_proxy(5_000, seed=3).to_parquet(data)  # a Parquet source, too
    assert main(["run", str(spec), str(data), "--out", str(work / "run"), "--budget-store",
                 str(work / "budgets"), "--rehearse", "5", "--format", "parquet",
                 "--quiet"]) == 0
    return work / "run" / "release"


def test_release_parquet_is_typed_listed_and_verified(bundle: Path) -> None:
    typed = pd.read_parquet(bundle / "release.parquet")
    text = pd.read_csv(bundle / "release.csv", dtype=str, keep_default_na=False)
    assert list(typed.columns) == list(text.columns) and len(typed) == len(text)
    sex = typed["birth_sex"]
    assert isinstance(sex.dtype, pd.CategoricalDtype) and list(sex.cat.categories) == ["M", "F"]
    assert (sex.astype(str).to_numpy() == text["birth_sex"].to_numpy()).all()
    assert "release.parquet" in json.loads((bundle / "MANIFEST.json").read_text())
    result = verify_bundle(bundle)
    assert result.ok, result.problems
    assert "parquet" in result.summary()


def test_verify_names_a_parquet_column_that_differs(bundle: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(bundle, tmp_path / "copy")
    typed = pd.read_parquet(copy / "release.parquet")
    typed["birth_sex"] = typed["birth_sex"].cat.reorder_categories(["F", "M"])
    typed.to_parquet(copy / "release.parquet", index=False)
    labels = {"birth_sex": ("M", "F")}
    assert "categories are not its labels" in (parquet_problem(copy, labels) or "")
    flipped = pd.read_parquet(bundle / "release.parquet")
    flipped["birth_sex"] = pd.Categorical(
        flipped["birth_sex"].astype(str).map({"M": "F", "F": "M"}), categories=["M", "F"])
    flipped.to_parquet(copy / "release.parquet", index=False)
    assert parquet_problem(copy, labels) == \
        "release.parquet column 'birth_sex' differs from release.csv"
    assert not verify_bundle(copy).ok


def test_parquet_is_written_only_inside_release_formats() -> None:
    from workbench.engine.release_parquet import release_formats, wanted

    assert wanted() is False
    with release_formats(["parquet"]):
        assert wanted() is True
    assert wanted() is False
