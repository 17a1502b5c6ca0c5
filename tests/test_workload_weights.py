"""Issue 36, must-show 3: the workload's ε allocation and the seeded release do not depend on how
a criterion is tested (its ε); they follow what the criteria need of the generator."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from workbench.engine.before_loop import release_before_loop
from workbench.engine.iteration import run_iteration
from workbench.generators import derive_workload
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import SeededNoise
from workbench.trial import bind
from workbench.validation import build_spec

LEAN = Path(__file__).resolve().parents[1] / "examples" / "israel_births_2014_lean.json"
EPS_GEN = 2.0


def _lean_doc(iters: int = 150) -> dict:
    """The lean workload example at ε_gen 2, one configuration, a short fit (speed only)."""
    doc = json.loads(LEAN.read_text())
    doc["generator"]["search_space"] = [{"algorithm": ["fixed"], "one_way_share": [0.25],
                                         "regression_weight": [2], "iters": [iters],
                                         "epsilon": [EPS_GEN]}]
    for key in ("epsilon_generator", "epsilon_criteria"):
        doc["budget"].pop(key, None)
    doc.pop("sha256", None)
    return doc


def _with_epsilon(doc: dict, criterion_id: str, factor: float) -> dict:
    """The same document with one criterion's ε multiplied by ``factor``."""
    out = copy.deepcopy(doc)
    (c,) = [c for c in out["criteria"] if c["id"] == criterion_id]
    c["epsilon"] = round(c["epsilon"] * factor, 9)
    return out


def _allocation(doc: dict) -> list:
    """(clique, ε) of every workload measurement of the bound generator at ε_gen."""
    spec = build_spec(doc)
    trial = bind(spec, next(spec.configurations()))
    return trial.generator().workload.allocate(EPS_GEN)


@pytest.mark.parametrize("criterion_id", [
    "marginals", "relative_1way", "mean_parity", "mean_birth_weight", "mean_gestation",
    "regression_coefficients", "regression_mae", "faithfulness"])
@pytest.mark.parametrize("factor", [0.1, 7.0])
def test_a_criterions_epsilon_does_not_move_the_allocation(criterion_id: str,
                                                            factor: float) -> None:
    doc = _lean_doc()
    before, after = _allocation(doc), _allocation(_with_epsilon(doc, criterion_id, factor))
    assert [q for q, _ in after] == [q for q, _ in before]
    assert [e for _, e in after] == [e for _, e in before]  # bit for bit
    assert sum(e for _, e in after) == pytest.approx(EPS_GEN, rel=1e-12)


def test_a_tighter_share_threshold_draws_more_of_the_generators_budget() -> None:
    """What moves the allocation is what the criterion needs: its threshold (0.05/T)."""
    doc = _lean_doc()
    spec = build_spec(doc)
    tight = copy.deepcopy(doc)
    (c,) = [c for c in tight["criteria"] if c["id"] == "marginals"]
    c["threshold"] = c["threshold"] / 2
    base = {i.clique: i.weight for i in derive_workload(spec).items}
    more = {i.clique: i.weight for i in derive_workload(build_spec(tight)).items}
    pair = ("birth_month", "mother_age")  # only the regression and max-marginal ask for it
    marginal_part = base[pair] - 2 / 15  # regression kinds: need 1 each over 15 pairs
    assert marginal_part == pytest.approx(5 / 21)  # T 0.01: 0.05/0.01 over 6 + 15 cliques
    assert more[pair] == pytest.approx(2 / 15 + 10 / 21)


def test_raising_a_criterions_epsilon_leaves_the_seeded_release_unchanged(proxy_slice) -> None:
    """Same seed, same data, one criterion's ε ×20: identical rows; only its test changes."""
    frame = proxy_slice.iloc[:4_000].reset_index(drop=True)
    doc = _lean_doc()
    outcomes = []
    for d in (doc, _with_epsilon(doc, "mean_birth_weight", 20.0)):
        spec = build_spec(d)
        trial = bind(spec, next(spec.configurations()))
        ctx = PrivacyContext.simulation(seed=11, noise=SeededNoise(11))
        once = release_before_loop(trial, frame, ctx).once
        outcomes.append((run_iteration(trial, frame, ctx, once_results=once), ctx))
    (low, ctx_low), (high, ctx_high) = outcomes
    assert low.codes is not None and high.codes is not None
    assert np.array_equal(np.asarray(low.codes), np.asarray(high.codes))
    gen_low = [(r.purpose, r.epsilon) for r in ctx_low.records if "workload" in r.purpose]
    gen_high = [(r.purpose, r.epsilon) for r in ctx_high.records if "workload" in r.purpose]
    assert gen_low and gen_low == gen_high
    eps = {r.id: r.epsilon for r in high.results}
    assert eps["mean_birth_weight"] == pytest.approx(
        20 * {r.id: r.epsilon for r in low.results}["mean_birth_weight"])


# --- the proxy's cell sizes (issue 36: thresholds, floors, the proxy's cell sizes) ---------------
ASSOC = Path(__file__).resolve().parents[1] / "examples" / "births_associations.json"
SHIPPED_PROXY = Path(__file__).resolve().parents[1] / "data_public" / "proxy_sample_166k.csv.gz"


@pytest.fixture(scope="module")
def pinned_proxy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A public proxy file: the first 4,000 records of the shipped proxy."""
    import gzip

    with gzip.open(SHIPPED_PROXY, "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(4001)]
    path = tmp_path_factory.mktemp("pinned") / "proxy.csv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _joint_assoc(proxy: Path) -> dict:
    """The associations example with the workload's 'joint' option pinning ``proxy``."""
    from workbench.generators.public_proxy import file_hash

    doc = json.loads(ASSOC.read_text())
    doc["generator"]["search_space"] = [{
        "algorithm": ["fixed"], "one_way_share": [0.25], "iters": [30],
        "public_measurements": ["joint"], "public_proxy": [str(proxy)],
        "public_proxy_sha256": [file_hash(proxy)]}]
    doc.pop("sha256", None)
    return doc


def _pinned(doc: dict) -> tuple:
    """(spec, codec, the pinned proxy's counts in it)."""
    from workbench.generators.public_proxy import proxy_counts

    spec = build_spec(doc)
    config = next(spec.configurations())
    params = config.params
    table = spec.table_codec(config)
    return spec, table, proxy_counts(spec, table, params["public_proxy"],
                                     params["public_proxy_sha256"])


def test_rate_and_ratio_needs_scale_with_the_proxys_smallest_cell(pinned_proxy: Path) -> None:
    """With the pinned proxy, relative_risk needs 0.05/(T·p) for p its smallest 2×2 cell and
    rate_by_group for p its smallest group (recomputed here from the proxy's raw rows); share
    criteria and rare_cell_rate keep their needs; without the proxy the rate criteria need 1."""
    import pandas as pd

    from workbench.criteria import kinds
    from workbench.generators.workload import need

    spec, table, counts = _pinned(_joint_assoc(pinned_proxy))
    raw = pd.read_csv(pinned_proxy)
    older, low = raw["mother_age"] >= 40, raw["birth_weight"] < 2500
    two = [(older & low).sum(), (older & ~low).sum(), (~older & low).sum(), (~older & ~low).sum()]
    p_rr = min(two) / len(raw)
    groups = raw.groupby(table.codec("gestation_week").encode(raw["gestation_week"])).size()
    p_group = groups.min() / len(raw)
    by_id = {c.id: c for c in spec.criteria}
    expected = {"marginals": 0.05 / 0.03, "older_mothers_lbw": 0.05 / (0.2 * p_rr),
                "lbw_by_gestation": 0.05 / (0.15 * p_group), "lbw_in_rare_cells": 1.0}
    for cid, value in expected.items():
        kind = kinds.get(by_id[cid].kind)
        assert need(kind, by_id[cid], (table, counts)) == pytest.approx(value, rel=1e-9), cid
    assert need(kinds.get("relative_risk"), by_id["older_mothers_lbw"]) == 1.0
    assert 0 < p_rr < 0.05 and expected["older_mothers_lbw"] > 5  # a rare cell asks for more


def test_proxy_sized_weights_do_not_depend_on_criteria_epsilon(pinned_proxy: Path) -> None:
    """The property of this file holds with the proxy too: a rate criterion's ε ×7 leaves the
    proxy-sized allocation bit for bit."""
    doc = _joint_assoc(pinned_proxy)
    allocations = []
    for d in (doc, _with_epsilon(doc, "older_mothers_lbw", 7.0)):
        spec, table, counts = _pinned(d)
        allocations.append(derive_workload(spec, proxy=(table, counts)).allocate(EPS_GEN))
    assert allocations[0] == allocations[1]


def test_the_joint_fit_allocates_with_the_proxy_sized_workload(pinned_proxy: Path) -> None:
    """The fit reads the pinned proxy before spending and allocates ε_gen by the proxy-sized
    needs: more for the relative-risk clique than the spec's plain workload gives it."""
    import pandas as pd

    spec, table, counts = _pinned(_joint_assoc(pinned_proxy))
    trial = bind(spec, next(spec.configurations()))
    generator = trial.generator()
    plain = dict(generator.workload.allocate(trial.epsilon_generator))
    codes = trial.encode(pd.read_csv(pinned_proxy).iloc[:1500])
    ctx = PrivacyContext.simulation(seed=2, noise=SeededNoise(2))
    generator.fit(codes, trial.domain, trial.epsilon_generator, ctx)
    sized = derive_workload(spec, proxy=(table, counts)).allocate(trial.epsilon_generator)
    assert generator.allocation_ == sized
    pair = ("mother_age", "birth_weight")
    assert dict(sized)[pair] > 2 * plain[pair]
