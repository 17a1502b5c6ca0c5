"""A network structure from a public proxy (issue 28): ``structure: public`` learns plausible
deniability's and PrivBayes' network from a pinned public proxy — no ε and no record of R for
it, the whole ε_gen on the parameters —, checks the proxy's SHA-256 before any budget, and names
the proxy in the guarantee and ``describe``. Small synthetic data of the Adult PD example's
schema; no shared files."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.generators import make_generator
from workbench.generators.plausible_deniability.structure import bucket_maps, public_structure
from workbench.generators.public_structure import proxy_codes
from workbench.privacy import Ledger, PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.specification import SpecError
from workbench.specification.document import thaw
from workbench.trial import bind
from workbench.validation import build_spec, save_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = json.loads((REPO / "examples" / "adult_plausible_deniability.json").read_text())
EXAMPLE["selection"] = {"gamma": 0, "max_iterations": 1, "epsilon_0": 0}  # any grid we set
EXAMPLE["budget"]["epsilon_generator"] = 1.0  # the grids below name no ε


def _codes(sizes: tuple[int, ...], n: int, seed: int) -> np.ndarray:
    """Codes with some dependence (each column leans on the one before), seeded."""
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, sizes[0], n)]
    for size in sizes[1:]:
        lean = rng.random(n) < 0.6
        cols.append(np.where(lean, cols[-1] % size, rng.integers(0, size, n)))
    return np.column_stack(cols)


def _spec(proxy: Path | None, digest: str | None = None, family: str = "plausible_deniability",
          **grid):
    """The Adult example with ``grid`` as its one hyperparameter set (a public structure reads
    ``proxy`` pinned at ``digest``, by default its true SHA-256)."""
    doc = copy.deepcopy(EXAMPLE)
    base = ({"omega_min": 2, "k": 10, "t": 5, "maxcost": 16} if family == "plausible_deniability"
            else {"degree": 2})
    params = {**base, **grid}
    if proxy is not None:
        digest = digest or hashlib.sha256(proxy.read_bytes()).hexdigest()
        params |= {"structure": "public", "structure_proxy": str(proxy),
                   "structure_proxy_sha256": digest}
        for c in doc["criteria"]:  # the distinguisher's proxy too: the run checks it first
            if c["kind"] == "distinguisher":
                c["params"]["proxy"] = str(proxy)
    doc["generator"] = {"family": family,
                        "search_space": [{k: [v] for k, v in params.items()}]}
    return build_spec(doc)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small PUBLIC proxy of the example's columns (synthetic codes as raw values)."""
    spec = _spec(None)
    table = spec.table_codec(next(spec.configurations()))
    codes = _codes(table.domain.sizes, 1500, seed=7)
    frame = table.decode(codes)
    for column in spec.columns:
        if column.type == "integer":  # a number inside each bin, not the bin's label
            frame[column.name] = table.numbers(codes, column.name).round().astype(int)
    path = tmp_path_factory.mktemp("pd_proxy") / "proxy.csv"
    frame.to_csv(path, index=False)
    return path


def _fit(spec, real: np.ndarray, epsilon: float, seed: int = 1, ledger: Ledger | None = None):
    config = next(spec.configurations())
    ctx = PrivacyContext.simulation(seed, noise=SeededNoise(seed), ledger=ledger)
    gen = bind(spec, config).generator()
    return gen.fit(real, spec.table_codec(config).domain, epsilon, ctx), ctx


@pytest.mark.parametrize("epsilon", [0.3, 4.0])
def test_public_structure_spends_exactly_epsilon_on_the_parameters_alone(
        proxy: Path, epsilon: float, tmp_path: Path) -> None:
    spec = _spec(proxy, split_parameters=0.6)
    sizes = spec.table_codec(next(spec.configurations())).domain.sizes
    ledger = Ledger(tmp_path / "ledger.jsonl", run_id="r")
    gen, ctx = _fit(spec, _codes(sizes, 1200, seed=1), epsilon, ledger=ledger)
    ledger.close()
    (record,) = ctx.records  # the count tables on D_P: no noisy entropies at all
    assert "parameters" in record.purpose and record.part is None
    assert record.epsilon == epsilon == ctx.epsilon_recorded()
    assert record.sensitivity == len(sizes) * ctx.histogram_sensitivity()
    assert gen._seeds.shape[0] == 1200 - int(0.6 * 1200)  # D_T empty, D_S the rest
    events = [json.loads(x) for x in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    (source,) = [e for e in events if e["event"] == "public_structure"]
    assert (source["file"], source["epsilon"], source["records_of_r"]) == (str(proxy), 0.0, 0)
    assert not [e for e in events if e["event"] == "parallel_composition"]
    _, ctx_dp = _fit(_spec(None), _codes(sizes, 1200, seed=1), epsilon)  # the paper's way
    assert {r.part for r in ctx_dp.records} == {"D_T (structure)", "D_P (parameters)"}
    assert ctx_dp.epsilon_recorded() == epsilon  # max over the parts, as before


def test_the_network_is_a_function_of_the_public_proxy_only(proxy: Path) -> None:
    """Two different datasets R get the same network: the proxy's exact CFS."""
    spec = _spec(proxy)
    config = next(spec.configurations())
    sizes = spec.table_codec(config).domain.sizes
    a, _ = _fit(spec, _codes(sizes, 800, seed=2), 1.0, seed=3)
    b, _ = _fit(spec, np.random.default_rng(4).integers(0, sizes, (800, len(sizes))), 1.0,
                seed=5)
    codes = proxy_codes(spec, spec.table_codec(config), str(proxy), _sha(proxy))
    expected = public_structure(codes, bucket_maps(list(sizes), a.buckets), a.maxcost)
    assert a.network_ == b.network_
    assert [(c, tuple(p)) for c, p in zip(a.order_, [n.parents for n in a.nodes_],
                                          strict=True)] == expected
    assert any(parents for _, parents in expected)  # the proxy's dependence is found


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_proxy_whose_bytes_differ_from_the_pin_is_refused_before_any_budget(
        proxy: Path, tmp_path: Path, capsys) -> None:
    wrong = "0" * 64
    spec = _spec(proxy, digest=wrong)
    sizes = spec.table_codec(next(spec.configurations())).domain.sizes
    ctx = PrivacyContext.simulation(1, noise=SeededNoise(1))
    with pytest.raises(ValueError, match=r"generator structure_proxy_sha256: .* pins 0{64}"):
        bind(spec, next(spec.configurations())).generator().fit(
            _codes(sizes, 500, 1), spec.table_codec(next(spec.configurations())).domain, 1.0,
            ctx)
    assert ctx.records == []
    path = tmp_path / "spec.frozen.json"
    save_spec(thaw(spec.document), path)
    data = tmp_path / "data.csv"
    data.write_text("age\n1\n")  # never read: the preflight refuses first
    code = main(["run", str(path), str(data), "--out", str(tmp_path / "run"), "--quiet",
                 "--budget-store", str(tmp_path / "budgets")])
    err = capsys.readouterr().err
    assert code == 2 and f"has SHA-256 {_sha(proxy)}, the spec pins" in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "budgets").exists()


def test_the_spec_refuses_structure_options_that_do_not_fit(proxy: Path) -> None:
    def problems(**grid) -> list[str]:
        doc = copy.deepcopy(EXAMPLE)
        doc["generator"]["search_space"] = [{k: [v] for k, v in grid.items()}]
        with pytest.raises(SpecError) as err:
            build_spec(doc)
        return [f"{p.path}: {p.message}" for p in err.value.problems]

    assert any("structure: public needs structure_proxy" in p
               for p in problems(structure="public", structure_proxy=str(proxy)))
    assert any("structure_proxy only apply with structure: public" in p
               for p in problems(structure_proxy=str(proxy)))
    assert any("split_structure must be unset with structure: public" in p for p in problems(
        structure="public", structure_proxy="p.csv", structure_proxy_sha256="a" * 64,
        split_structure=0.2))
    assert "generator.search_space[0].structure_proxy_sha256[0]: must be the file's " \
           "SHA-256, 64 lowercase hex digits (sha256sum FILE)" in problems(structure="public",
                                                        structure_proxy="p.csv",
                                                        structure_proxy_sha256="ABC")
    with pytest.raises(ValueError, match="structure: public needs structure_proxy"):
        make_generator("plausible_deniability", structure="public")


def test_the_guarantee_and_describe_name_the_proxy_and_keep_the_record_bound(
        proxy: Path, capsys) -> None:
    public = make_generator("plausible_deniability", structure="public",
                            structure_proxy="out/p.csv", structure_proxy_sha256="ab" * 32)
    dp = make_generator("plausible_deniability")
    assert public.guarantee().parameters == dp.guarantee().parameters  # Thm 1: same (ε, δ)
    assert "PUBLIC proxy 'out/p.csv' (SHA-256 " + "ab" * 32 in public.guarantee().explanation
    assert "proxy" not in dp.guarantee().explanation
    (line,) = public.describe("1", 1.0)
    assert "D_P 0.5 / D_S 0.5 of R" in line and "no ε, no records of R" in line
    assert "D_T 0.25 / D_P 0.25 / D_S 0.5" in dp.describe("1", 1.0)[0]


# --- PrivBayes --------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.3, 4.0])
def test_privbayes_public_structure_spends_exactly_epsilon_on_the_marginals(
        proxy: Path, epsilon: float, tmp_path: Path) -> None:
    """ε₁ = 0: no exponential-mechanism step; the d marginals share all of ε (ε/d each)."""
    spec = _spec(proxy, family="privbayes")
    sizes = spec.table_codec(next(spec.configurations())).domain.sizes
    ledger = Ledger(tmp_path / "ledger.jsonl", run_id="r")
    gen, ctx = _fit(spec, _codes(sizes, 1200, seed=1), epsilon, ledger=ledger)
    ledger.close()
    assert not [r for r in ctx.records if "structure" in r.purpose]
    assert [r.epsilon for r in ctx.records] == pytest.approx([epsilon / len(sizes)] * len(sizes))
    assert sum(r.epsilon for r in ctx.records) == pytest.approx(epsilon, rel=1e-12)
    assert gen.structure_epsilon_ == 0.0
    events = [json.loads(x) for x in (tmp_path / "ledger.jsonl").read_text().splitlines()]
    (source,) = [e for e in events if e["event"] == "public_structure"]
    assert (source["family"], source["epsilon"], source["sha256"]) == ("privbayes", 0.0,
                                                                       _sha(proxy))
    _, ctx_dp = _fit(_spec(None, family="privbayes"), _codes(sizes, 1200, seed=1), epsilon)
    assert len([r for r in ctx_dp.records if "structure" in r.purpose]) == len(sizes) - 1


def test_privbayes_public_network_reads_the_proxy_not_r(proxy: Path) -> None:
    """The same seed (the free first node) on two different datasets: the same network."""
    spec = _spec(proxy, family="privbayes")
    sizes = spec.table_codec(next(spec.configurations())).domain.sizes
    a, _ = _fit(spec, _codes(sizes, 900, seed=2), 1.0, seed=3)
    b, _ = _fit(spec, np.random.default_rng(4).integers(0, sizes, (900, len(sizes))), 1.0,
                seed=3)
    assert a.network_ == b.network_ and any(parents for _, parents in a.network_)
    (line,) = a.describe("1", 1.0)
    assert f"PUBLIC proxy {str(proxy)!r}" in line and a.guarantee().is_pure


def test_privbayes_refuses_epsilon_split_with_a_public_structure(proxy: Path) -> None:
    doc = copy.deepcopy(EXAMPLE)
    doc["generator"] = {"family": "privbayes", "search_space": [{
        "degree": [2], "structure": ["public"], "structure_proxy": ["p.csv"],
        "structure_proxy_sha256": ["a" * 64], "epsilon_split": [0.3]}]}
    with pytest.raises(SpecError, match="epsilon_split does not apply with structure: public"):
        build_spec(doc)
    with pytest.raises(ValueError, match="privbayes: structure: public needs structure_proxy"):
        make_generator("privbayes", degree=2, structure="public")
