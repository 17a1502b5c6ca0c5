"""The workload family's ``public_measurements: joint`` option (issue 26): a public proxy named
and pinned by the spec, validated and refused before any budget when it changed; ε spent exactly
in its declared split; the proxy named in the bundle; private 1-way measurements that keep rare
cells right where the proxy is wrong about them."""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.generators import Workload, WorkloadGenerator, make_generator
from workbench.generators.public_proxy import file_hash
from workbench.generators.workload import WorkloadItem, all_pairs_workload
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.report.datasheet import datasheet_markdown
from workbench.report.spec_summary import describe_spec
from workbench.specification import SpecError
from workbench.transform import Domain
from workbench.transform.cells import CellCounts
from workbench.trial import bind
from workbench.validation import build_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
LEAN = REPO / "examples" / "israel_births_2014_lean.json"
SHIPPED_PROXY = REPO / "data_public" / "proxy_sample_166k.csv.gz"


@pytest.fixture
def small_proxy(tmp_path: Path) -> Path:
    """A public proxy file: the first 3,000 records of the shipped proxy."""
    with gzip.open(SHIPPED_PROXY, "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(3001)]
    path = tmp_path / "proxy.csv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def joint_doc(proxy: Path | None, **grid: list) -> dict:
    """The lean example with the option on (one hyperparameter set), overridden by ``grid``."""
    doc = json.loads(LEAN.read_text())
    space = {"algorithm": ["fixed"], "one_way_share": [0.25], "public_measurements": ["joint"]}
    if proxy is not None:
        space |= {"public_proxy": [str(proxy)], "public_proxy_sha256": [file_hash(proxy)]}
    doc["generator"]["search_space"] = [space | grid]
    return doc


def problems(doc: dict) -> str:
    with pytest.raises(SpecError) as err:
        build_spec(doc)
    return str(err.value)


def test_the_spec_and_make_generator_refuse_bad_values_naming_the_field(small_proxy) -> None:
    path = "generator.search_space[0]"
    assert f"{path}.public_proxy: must name the public proxy file" in problems(joint_doc(None))
    assert f"{path}.public_proxy_sha256: must pin the proxy file's SHA-256" in problems(
        joint_doc(None))
    assert f"{path}.public_proxy_sha256[0]: must be the file's SHA-256" in problems(
        joint_doc(small_proxy, public_proxy_sha256=["abc"]))
    assert f"{path}.public_measurements[0]: must be 'none' or 'joint'" in problems(
        joint_doc(small_proxy, public_measurements=["both"]))
    assert f"{path}.one_way_share: must be > 0 with public_measurements 'joint'" in problems(
        joint_doc(small_proxy, one_way_share=[0, 0.25]))
    assert f"{path}.public_measurements: 'joint' needs algorithm 'fixed'" in problems(
        joint_doc(small_proxy, algorithm=["aim"]))
    assert f"{path}.public_selection_share[0]: must be a number in (0, 1)" in problems(
        joint_doc(small_proxy, public_selection_share=[1]))
    with pytest.raises(ValueError, match="workload: public_selection_share must be a number"):
        make_generator("workload", public_selection_share=0)
    with pytest.raises(ValueError, match="workload: one_way_share must be > 0 with"):
        make_generator("workload", public_measurements="joint", one_way_share=0)
    build_spec(joint_doc(small_proxy))  # the good one validates


def test_the_proxy_is_named_in_describe_guarantee_and_datasheet(small_proxy) -> None:
    spec = build_spec(joint_doc(small_proxy))
    config = next(spec.configurations())
    sha = file_hash(small_proxy)
    text = describe_spec(spec)
    assert "public measurements 'joint'" in text and sha in text
    promise = bind(spec, config).guarantee
    assert promise.is_pure and promise.parameters == {"public_proxy": str(small_proxy),
                                                      "public_proxy_sha256": sha}
    sheet = datasheet_markdown(spec, config.to_dict(), [], {"epsilon_total": 4.0}, 10,
                               promise.as_dict())
    assert sheet.count(sha) >= 2 and "public marginals of the proxy" in sheet


@pytest.mark.parametrize("change", ["edited", "missing"])
def test_a_changed_or_missing_proxy_is_refused_before_any_budget(small_proxy, tmp_path, change,
                                                                 capsys) -> None:
    spec_path = tmp_path / "spec.frozen.json"
    save_spec(joint_doc(small_proxy), spec_path)
    if change == "edited":
        small_proxy.write_text(small_proxy.read_text() + "3,28,3,35,F,2720\n")
    else:
        small_proxy.unlink()
    data = tmp_path / "data.csv"
    data.write_text("birth_month\n1\n")  # never read: the preflight refuses first
    code = main(["run", str(spec_path), str(data), "--out", str(tmp_path / "run"), "--quiet",
                 "--budget-store", str(tmp_path / "budgets")])
    err = capsys.readouterr().err
    assert code == 2
    expected = ("public_proxy_sha256: the public proxy file" if change == "edited"
                else "public_proxy: the public proxy file")
    assert expected in err and "no budget was spent" in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "budgets").exists()


def test_the_fit_refuses_a_changed_proxy_before_spending(small_proxy) -> None:
    spec = build_spec(joint_doc(small_proxy))
    trial = bind(spec, next(spec.configurations()))
    small_proxy.write_text(small_proxy.read_text() + "3,28,3,35,F,2720\n")
    ctx = PrivacyContext.simulation(0, noise=SeededNoise(0))
    codes = np.zeros((50, len(trial.domain)), dtype=np.int64)
    with pytest.raises(ValueError, match=r"public_proxy_sha256: .* changed since the design"):
        trial.generator().fit(codes, trial.domain, trial.epsilon_generator, ctx)
    assert ctx.records == []


def correlated(n: int, seed: int) -> tuple[np.ndarray, Domain]:
    """Four dependent columns (b follows a, d follows c)."""
    rng = np.random.default_rng(seed)
    a, c = rng.integers(0, 5, n), rng.integers(0, 4, n)
    b, d = (a + rng.integers(0, 2, n)) % 6, (c + a) % 4
    return np.stack([a, b, c, d], 1), Domain(("a", "b", "c", "d"), (5, 6, 4, 4))


def joint_fit(codes, domain, public, epsilon, seed=1, share=0.25):
    generator = WorkloadGenerator(public_measurements="joint", iters=200, one_way_share=share)
    generator.bind_workload(all_pairs_workload(domain.names, share))
    generator.bind_public(CellCounts.from_codes(public, domain))
    ctx = PrivacyContext.simulation(seed, noise=SeededNoise(seed))
    generator.fit(codes, domain, epsilon, ctx)
    return generator, ctx


@pytest.mark.parametrize("epsilon", [0.3, 4.0])
@pytest.mark.parametrize("proxy", ["another_sample", "the_data_itself"])
def test_joint_fit_spends_exactly_epsilon_in_its_declared_split(epsilon, proxy) -> None:
    codes, domain = correlated(3000, 0)
    exact = proxy == "the_data_itself"
    public = codes if exact else correlated(5000, 7)[0]
    # an exact proxy and precise 1-way tables (share 0.9): every pair is taken for free, and
    # the rest of the budget measures the 1-way tables a second time
    gen, ctx = joint_fit(codes, domain, public, epsilon, share=0.9 if exact else 0.25)
    assert math.isclose(sum(r.epsilon for r in ctx.records), epsilon, rel_tol=1e-12)
    choices = [r for r in ctx.records if "public choice" in r.purpose]
    assert len(choices) == 6 and all(r.sensitivity == 2 for r in choices)  # one per pair
    assert math.isclose(sum(r.epsilon for r in choices), 0.05 * epsilon, rel_tol=1e-12)
    one_way = [c for c in gen.choices_ if len(c.clique) == 1]
    assert len(one_way) == 4 and not any(c.public for c in one_way)
    public_pairs = [c for c in gen.choices_ if c.public]
    assert all(c.epsilon_measured == 0 for c in public_pairs)
    if exact and epsilon == 4.0:
        assert len(public_pairs) == 6
        assert len([r for r in ctx.records if "workload marginal" in r.purpose]) == 8
    assert gen.sample(100, np.random.default_rng(0)).shape == (100, 4)


def rare_cell_data(n: int, seed: int, thin: bool) -> np.ndarray:
    """Five columns whose first has a 0.3% cell; ``thin`` keeps 30% of that cell's rows."""
    rng = np.random.default_rng(seed)
    a = rng.choice(6, n, p=[0.3, 0.3, 0.2, 0.1, 0.097, 0.003])
    m, g = rng.integers(0, 12, n), np.clip(a + rng.integers(0, 4, n), 0, 8)
    w = np.clip(np.rint(8 + 2 * g + rng.normal(0, 5, n)), 0, 31).astype(np.int64)
    s = np.clip(np.rint(w / 6 + rng.normal(0, 1, n)), 0, 5).astype(np.int64)
    codes = np.stack([a, m, g, w, s], 1)
    return codes[(a != 5) | (rng.random(n) < 0.3)] if thin else codes


def test_joint_keeps_rare_one_way_cells_right_on_a_thinned_stand_in() -> None:
    """The proxy has three times the registry's share in a rare cell (thinned registry). The lean
    design's plain family (no 1-way share) overstates that cell several times over; 'joint'
    measures the 1-way tables privately, rakes the proxy's pairs to them and is far closer,
    while still taking some pairs from the proxy for free (seeded noise)."""
    domain = Domain(("a", "m", "g", "w", "s"), (6, 12, 9, 32, 6))
    registry, proxy = rare_cell_data(30_000, 2, thin=True), rare_cell_data(60_000, 1, thin=False)
    items = tuple(WorkloadItem(q, 1.0, ("test",)) for q in itertools.combinations(domain.names, 2))
    true = np.bincount(registry[:, 0], minlength=6)[5]
    errors = {"plain": [], "joint": []}
    for seed in (1, 2, 3):
        for mode, share in (("plain", 0.0), ("joint", 0.25)):
            gen = WorkloadGenerator(public_measurements="joint" if mode == "joint" else "none",
                                    one_way_share=share, iters=500, sampling="rounded")
            gen.bind_workload(Workload(domain.names, items, share))
            if mode == "joint":
                gen.bind_public(CellCounts.from_codes(proxy, domain))
            gen.fit(registry, domain, 1.0, PrivacyContext.simulation(seed, noise=SeededNoise(seed)))
            synth = gen.sample(len(registry), np.random.default_rng(seed))
            errors[mode].append(abs(math.log((np.bincount(synth[:, 0], minlength=6)[5] + 1)
                                             / (true + 1))))
            if mode == "joint":
                assert any(c.public for c in gen.choices_)
    assert all(j < p for j, p in zip(errors["joint"], errors["plain"], strict=True)), errors
    assert max(errors["plain"]) > math.log(2.5) > math.log(1.6) > max(errors["joint"]), errors
