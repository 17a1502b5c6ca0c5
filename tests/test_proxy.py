"""Tests of the public proxy: committed facts and CSV, the sampler, realism vs the source."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest
from conftest import shared_data

from workbench.evidence import facts as facts_module
from workbench.evidence.facts import build_facts, load_facts, validate_facts
from workbench.evidence.realism import CLEANING_RULES, removed_shares
from workbench.evidence.records import csv_gz_bytes, record_sample
from workbench.evidence.sampler import sample_proxy
from workbench.evidence.us_natality import PROXY_COLUMNS, to_schema
from workbench.specification.document import file_sha256

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SOURCE = SHARED / "us_births_2019_singleton_sample200k.csv.gz"
FACTS_PATH = REPO / "data_public" / "us2019_facts.json"
PROXY_CSV = REPO / "data_public" / "proxy_facts_166k.csv.gz"


def _load_script(name: str) -> ModuleType:
    """Import a file from scripts/ (not a package) by path."""
    spec = importlib.util.spec_from_file_location(f"_script_{name}", REPO / "scripts" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _need_shared() -> None:
    """The public US samples: a failure in CI when absent, a skip elsewhere (conftest)."""
    shared_data(SOURCE.name)


@pytest.fixture(scope="module")
def facts() -> dict:
    """The committed facts file."""
    return load_facts()


@pytest.fixture(scope="module")
def proxy_csv() -> pd.DataFrame:
    """The committed 166k proxy."""
    return pd.read_csv(PROXY_CSV)


@pytest.fixture(scope="module")
def big_proxy(facts: dict) -> pd.DataFrame:
    """A large fresh sample, so shares are measured with little sampling noise."""
    return sample_proxy(1_000_000, seed=7, facts=facts)


@pytest.fixture(scope="module")
def real() -> pd.DataFrame:
    """The real 200k public sample mapped onto the schema (skips when absent)."""
    _need_shared()
    from workbench.evidence.us_natality import read_us_sample

    return read_us_sample(SOURCE)


# ----------------------------------------------------------------------------- facts file


def test_committed_facts_load_with_provenance(facts: dict) -> None:
    prov = facts["provenance"]
    assert prov["source_file"] == "us_births_2019_singleton_sample200k.csv.gz"
    assert len(prov["source_sha256"]) == 64
    int(prov["source_sha256"], 16)
    assert prov["source_rows"] == 200_000
    assert "2019" in prov["data_period"]
    assert prov["smoothing"] and prov["coarsening"]
    assert set(prov["tables"]) == set(facts["tables"])
    for table in facts["tables"].values():
        assert table["what"] and table["how"]
        assert sum(sum(c["counts"]) for c in table["cells"]) == prov["source_rows"]


def test_load_facts_accepts_explicit_paths(facts: dict) -> None:
    assert load_facts(FACTS_PATH) == facts
    assert load_facts(str(FACTS_PATH)) == facts
    assert facts_module.default_facts_path() == FACTS_PATH.resolve()


def test_facts_file_is_readable_deterministic_json(facts: dict) -> None:
    text = FACTS_PATH.read_text(encoding="utf-8")
    assert json.loads(text) == facts
    assert facts_module.facts_to_json(facts) == text
    numeric = [ln for ln in text.splitlines() if ln.strip()[:1].isdigit()]
    assert numeric and max(len(ln) for ln in numeric) <= 100


def test_validate_facts_names_the_problem(facts: dict) -> None:
    broken = json.loads(json.dumps(facts))
    broken["format"] = "something else"
    with pytest.raises(ValueError, match="format"):
        validate_facts(broken)
    broken = json.loads(json.dumps(facts))
    del broken["provenance"]["source_sha256"]
    with pytest.raises(ValueError, match="source_sha256"):
        validate_facts(broken)
    broken = json.loads(json.dumps(facts))
    broken["sampling_plan"] = broken["sampling_plan"][::-1]
    with pytest.raises(ValueError, match="before it"):
        validate_facts(broken)


def test_facts_hold_no_row_level_records(facts: dict) -> None:
    """Every table is counts per cell; no table has a cell per source row."""
    for name, table in facts["tables"].items():
        n_entries = sum(len(c["values"]) for c in table["cells"])
        assert n_entries < facts["provenance"]["source_rows"] / 5, name
        assert "date_of_birth" not in json.dumps(table)


# ----------------------------------------------------------------------------- sampler


def test_sample_proxy_columns_and_dtypes(facts: dict) -> None:
    df = sample_proxy(500, seed=0, facts=facts)
    assert list(df.columns) == list(PROXY_COLUMNS)
    for col in PROXY_COLUMNS:
        if col == "birth_sex":
            assert pd.api.types.is_string_dtype(df[col])
            assert set(df[col]) <= {"F", "M"}
        else:
            assert df[col].dtype == np.int64, col
    assert df["birth_month"].between(1, 12).all()
    assert (df["parity"] >= 1).all()


@pytest.mark.parametrize("n", [0, 1, 2, 999])
def test_sample_proxy_row_count_is_exact(facts: dict, n: int) -> None:
    df = sample_proxy(n, seed=3, facts=facts)
    assert len(df) == n
    assert list(df.columns) == list(PROXY_COLUMNS)
    assert df["mother_age"].dtype == np.int64


def test_sample_proxy_is_reproducible_by_seed(facts: dict) -> None:
    a = sample_proxy(2_000, seed=11, facts=facts)
    pd.testing.assert_frame_equal(a, sample_proxy(2_000, seed=11, facts=facts))
    pd.testing.assert_frame_equal(a, sample_proxy(2_000, seed=11))
    pd.testing.assert_frame_equal(a, sample_proxy(2_000, seed=11, facts=FACTS_PATH))
    assert not a.equals(sample_proxy(2_000, seed=12, facts=facts))


@pytest.mark.parametrize("bad", [-1, 2.5, True, "10"])
def test_sample_proxy_rejects_bad_n(facts: dict, bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="n must"):
        sample_proxy(bad, seed=0, facts=facts)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- dependencies


def test_parity_rises_with_mother_age(big_proxy: pd.DataFrame) -> None:
    band = pd.cut(big_proxy["mother_age"], [0, 24, 29, 34, 99])
    means = big_proxy.groupby(band, observed=True)["parity"].mean().to_numpy()
    assert np.all(np.diff(means) > 0.1), means


def test_preterm_babies_are_much_lighter(big_proxy: pd.DataFrame) -> None:
    preterm = big_proxy["gestation_week"] < 37
    weight = big_proxy["birth_weight"]
    gap = weight[~preterm].mean() - weight[preterm].mean()
    assert gap > 600


def test_boys_are_heavier_than_girls(big_proxy: pd.DataFrame) -> None:
    means = big_proxy.groupby("birth_sex")["birth_weight"].mean()
    assert 60 < means["M"] - means["F"] < 200


def test_preterm_share_depends_on_age_and_parity(big_proxy: pd.DataFrame) -> None:
    preterm = big_proxy["gestation_week"] < 37
    high_parity = big_proxy["parity"] >= 4
    assert preterm[high_parity].mean() > preterm[~high_parity].mean() + 0.02


def _facts_marginal(facts: dict, name: str) -> pd.Series:
    """A one-cell facts table as normalised frequencies."""
    (cell,) = facts["tables"][name]["cells"]
    counts = pd.Series(cell["counts"], index=cell["values"], dtype=float)
    return counts / counts.sum()


@pytest.mark.parametrize(
    "column", ["birth_month", "mother_age", "parity", "gestation_week", "birth_sex"]
)
def test_proxy_marginals_match_facts(facts: dict, big_proxy: pd.DataFrame, column: str) -> None:
    p = big_proxy[column].value_counts(normalize=True)
    q = _facts_marginal(facts, column)
    p, q = p.align(q, fill_value=0.0)
    assert 0.5 * np.abs(p - q).sum() < 0.01


def test_weight_keeps_gram_level_heaping(facts: dict, big_proxy: pd.DataFrame) -> None:
    """Round tens are over-represented in the source; the proxy must keep that."""
    q = _facts_marginal(facts, "birth_weight_grams")
    source_tens = q[q.index.to_numpy() % 10 == 0].sum()
    proxy_tens = (big_proxy["birth_weight"] % 10 == 0).mean()
    assert source_tens > 0.3
    assert abs(proxy_tens - source_tens) < 0.01


# ----------------------------------------------------------------------------- cleaning rules


def test_committed_proxy_loses_a_realistic_share(proxy_csv: pd.DataFrame) -> None:
    shares = removed_shares(proxy_csv)
    assert 0.005 <= shares["total"] <= 0.03, shares
    assert len(shares) == len(CLEANING_RULES) + 1


def test_each_rule_share_matches_the_source(facts: dict, big_proxy: pd.DataFrame) -> None:
    """Per rule, the proxy's share is within sampling noise of the source's (facts record it)."""
    source = facts["provenance"]["source_rows"]
    expected = facts["source_checks"]["removed_share"]
    got = removed_shares(big_proxy)
    for rule, share in expected.items():
        sd = np.sqrt(share * (1 - share) * (1 / source + 1 / len(big_proxy))) + 1e-5
        assert abs(got[rule] - share) < 4 * sd, (rule, got[rule], share)


# ----------------------------------------------------------------------------- committed CSV


def test_committed_csv_has_the_schema(proxy_csv: pd.DataFrame) -> None:
    assert len(proxy_csv) == 166_000
    assert list(proxy_csv.columns) == list(PROXY_COLUMNS)
    assert set(proxy_csv["birth_sex"]) == {"F", "M"}


def test_committed_csv_is_what_the_script_regenerates(proxy_csv: pd.DataFrame) -> None:
    script = _load_script("build_proxy_data.py")
    regenerated = script.build_proxy_frame()
    pd.testing.assert_frame_equal(proxy_csv, regenerated)
    again = pd.read_csv(io.BytesIO(script.csv_gz_bytes(regenerated)), compression="gzip")
    pd.testing.assert_frame_equal(again, regenerated)


# ----------------------------------------------------------------------------- mapping


def test_to_schema_maps_the_us_columns() -> None:
    raw = pd.DataFrame(
        {
            "mother_age": [22, 41],
            "parity": [2, 1],
            "gestation_week": [41, 30],
            "is_female": ["False", "True"],
            "birth_weight": [3513, 1320],
            "date_of_birth": ["2019-09-15", "2019-01-15"],
        }
    )
    out = to_schema(raw)
    assert list(out.columns) == list(PROXY_COLUMNS)
    assert out["birth_month"].tolist() == [9, 1]
    assert out["birth_sex"].tolist() == ["M", "F"]
    assert out["birth_weight"].tolist() == [3513, 1320]
    with pytest.raises(ValueError, match="lacks"):
        to_schema(raw.drop(columns="parity"))


# ----------------------------------------------------------------------------- vs the real sample


def test_committed_facts_name_the_real_source() -> None:
    _need_shared()
    prov = load_facts()["provenance"]
    assert prov["source_sha256"] == file_sha256(SOURCE)


def test_facts_rebuild_identically_from_source(real: pd.DataFrame) -> None:
    rebuilt = build_facts(real, source_file=SOURCE.name, source_sha256=file_sha256(SOURCE))
    assert facts_module.facts_to_json(rebuilt) == FACTS_PATH.read_text(encoding="utf-8")


def total_variation(a: pd.Series, b: pd.Series) -> float:
    """Total-variation distance between the empirical distributions of two columns."""
    p, q = a.value_counts(normalize=True).align(b.value_counts(normalize=True), fill_value=0.0)
    return 0.5 * float(np.abs(p.to_numpy() - q.to_numpy()).sum())


def weight_bins_100g(weight: pd.Series) -> pd.Series:
    """Birth weight floored to 100 g bins, the resolution at which marginals are compared."""
    return pd.Series(weight.to_numpy(dtype=np.int64) // 100 * 100, index=weight.index)


@pytest.mark.parametrize(
    "column",
    ["birth_month", "mother_age", "parity", "gestation_week", "birth_sex", "birth_weight"],
)
def test_proxy_marginals_close_to_real(
    real: pd.DataFrame, proxy_csv: pd.DataFrame, column: str
) -> None:
    if column == "birth_weight":
        tv = total_variation(weight_bins_100g(real[column]), weight_bins_100g(proxy_csv[column]))
    else:
        tv = total_variation(real[column], proxy_csv[column])
    assert tv < 0.02, (column, tv)


def test_removed_share_close_to_real(real: pd.DataFrame, proxy_csv: pd.DataFrame) -> None:
    real_total = removed_shares(real)["total"]
    proxy_total = removed_shares(proxy_csv)["total"]
    assert real_total <= 0.015  # the paper's bound holds on the real sample too
    assert abs(proxy_total - real_total) < 0.002, (proxy_total, real_total)


def _sha256(path: Path) -> str:
    """SHA-256 of one file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_repository_holds_no_copy_of_the_shared_data() -> None:
    _need_shared()
    shared = {p.stat().st_size: _sha256(p) for p in SHARED.iterdir() if p.is_file()}
    shared_hashes = set(shared.values())
    skip_dirs = {".git", "__pycache__", ".ruff_cache", ".pytest_cache", ".hypothesis"}
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in skip_dirs]
        for name in files:
            path = Path(root) / name
            if path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size in shared:
                assert _sha256(path) not in shared_hashes, path


# ----------------------------------------------------------------------------- record sample

SAMPLE_CSV = REPO / "data_public" / "proxy_sample_166k.csv.gz"


def test_record_sample_is_cleaned_seeded_and_without_replacement() -> None:
    frame = pd.DataFrame({"mother_age": [30, 18, 25, 40, 33], "parity": [1, 5, 2, 3, 1],
                          "gestation_week": [39, 40, 38, 41, 20],
                          "birth_weight": [3300, 3100, 3000, 3500, 400], "row": range(5)})
    drawn = record_sample(frame, 3, seed=7)
    assert sorted(drawn["row"]) == [0, 2, 3]  # rows 1 and 4 break cleaning rules
    assert drawn.equals(record_sample(frame, 3, seed=7))
    with pytest.raises(ValueError, match="3 cleaned rows"):
        record_sample(frame, 4, seed=7)


def test_default_proxy_is_the_record_sample_the_script_draws() -> None:
    committed = pd.read_csv(SAMPLE_CSV)
    assert len(committed) == 166_000 and list(committed.columns) == list(PROXY_COLUMNS)
    assert removed_shares(committed)["total"] == 0.0  # drawn after the cleaning rules
    _need_shared()
    script = _load_script("build_proxy_sample.py")
    rebuilt = record_sample(to_schema(pd.read_csv(SOURCE)), script.N_ROWS, script.SEED)
    assert csv_gz_bytes(rebuilt) == SAMPLE_CSV.read_bytes()
