"""Overlay plots of number columns: binned shares over the grid, not one bar per value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workbench.report import overview
from workbench.report.overview import HIST_BINS, MAX_BARS, binned_shares, overlay_png


def grid_shares(seed: int) -> tuple[list[str], pd.Series]:
    order = [str(g) for g in range(200, 7001)]  # birth weight in grams, a 1 g grid
    rng = np.random.default_rng(seed)
    weights = rng.random(len(order))
    return order, pd.Series(weights / weights.sum(), index=order)


def test_binned_shares_keep_the_total_in_equal_bins_of_the_range() -> None:
    order, share = grid_shares(0)
    edges, sums = binned_shares(order, share)
    assert len(sums) == HIST_BINS and sums.sum() == pytest.approx(1.0)
    assert edges[0] == 200 and edges[-1] == 7000
    assert np.allclose(np.diff(edges), (7000 - 200) / HIST_BINS)
    first = share[[o for o in order if float(o) < edges[1]]].sum()
    assert sums[0] == pytest.approx(first)


def test_a_fine_grid_is_drawn_binned_with_the_proxy_beside_it(monkeypatch) -> None:
    calls: list[int] = []

    def spy(order, share):
        calls.append(len(order))
        return binned_shares(order, share)

    monkeypatch.setattr(overview, "binned_shares", spy)
    order, release = grid_shares(1)
    png = overlay_png("birth_weight", order, release, grid_shares(2)[1])
    assert png[:4] == b"\x89PNG" and calls == [len(order), len(order)]
    calls.clear()
    few = [str(v) for v in range(MAX_BARS)]
    overlay_png("parity", few, pd.Series(np.full(MAX_BARS, 1 / MAX_BARS), index=few), None)
    assert calls == []  # a short label list keeps one bar per label
