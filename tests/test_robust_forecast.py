"""The forecast's proxy scenarios (issue 26): what each scenario does to the proxy, and that a
staged rehearsal (``stop_below``) rehearses exactly what a full one would, or stops early."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_dryrun import _cheap_document

from workbench.dryrun import InlineExecutor, prepare_proxy
from workbench.dryrun.robust import SCENARIOS, robust_forecast, scenario_frames
from workbench.proxy import sample_proxy
from workbench.trial import bind
from workbench.validation import build_spec


@pytest.fixture(scope="module")
def spec():
    return build_spec(_cheap_document())


@pytest.fixture(scope="module")
def proxy(spec) -> pd.DataFrame:
    return prepare_proxy(spec, sample_proxy(6_000, seed=11))


def _one_ways(spec, frame: pd.DataFrame) -> list[np.ndarray]:
    codes = bind(spec, next(iter(spec.configurations()))).encode(frame)
    sizes = bind(spec, next(iter(spec.configurations()))).domain.sizes
    return [np.bincount(codes[:, j], minlength=s) / len(codes) for j, s in enumerate(sizes)]


def _entropy(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def test_scenarios_move_the_one_way_marginals_as_declared(spec, proxy) -> None:
    frames = scenario_frames(spec, proxy, tolerance=0.03, seed=5)
    assert list(frames) == list(SCENARIOS) and frames["proxy"] is proxy
    base = _one_ways(spec, proxy)
    for name, towards_uniform in (("flatter", True), ("sharper", False)):
        moved = _one_ways(spec, frames[name])
        tvs = [0.5 * np.abs(m - b).sum() for m, b in zip(moved, base, strict=True)]
        assert max(tvs) < 0.03 + 0.02  # the declared tolerance, plus resampling noise at 6k
        gained = sum(_entropy(m) - _entropy(b) for m, b in zip(moved, base, strict=True))
        assert (gained > 0) == towards_uniform, name
    assert len(frames["rare thinned"]) < len(proxy) < len(frames["rare thickened"])
    again = scenario_frames(spec, proxy, tolerance=0.03, seed=5)
    assert all(again[k].equals(frames[k]) for k in frames)  # seeded
    # raked, not a product of per-column ratios: on 20× the rows the noise is gone and each
    # column moves by the tolerance itself (the product moved correlated columns by 0.055)
    big = prepare_proxy(spec, sample_proxy(120_000, seed=12))
    flat = scenario_frames(spec, big, tolerance=0.03, seed=5, names=["flatter"])["flatter"]
    tvs = [0.5 * np.abs(m - b).sum()
           for m, b in zip(_one_ways(spec, flat), _one_ways(spec, big), strict=True)]
    assert max(tvs) < 0.036, tvs
    with pytest.raises(ValueError, match="unknown proxy scenario"):
        scenario_frames(spec, proxy, names=["warmer"])


def test_a_staged_rehearsal_is_the_full_one_or_stops_at_the_proxy(spec, proxy) -> None:
    """``stop_below`` rehearses the proxy first; when it reaches the bar, every scenario gets
    the p a full call gives it; when it does not, nothing else is rehearsed."""
    kw = {"n": 2_000, "repetitions": 2, "seed": 3, "executor": InlineExecutor()}
    full = robust_forecast(spec, proxy, **kw)
    staged = robust_forecast(spec, proxy, stop_below=0.0, **kw)
    assert staged.scenarios == full.scenarios and list(staged.scenarios) == list(SCENARIOS)
    stopped = robust_forecast(spec, proxy, stop_below=1.01, **kw)
    assert stopped.scenarios == {"proxy": full.scenarios["proxy"]}
    assert stopped.low == full.scenarios["proxy"] >= full.low
