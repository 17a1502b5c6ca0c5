"""Criterion 1 (maximum k-way marginal error): exactness against a brute-force pandas groupby,
its edge cases and argument checks, and its sensitivity Δ = 1/n under replace-one neighbours."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench.criteria.marginals as marginals_module
from workbench.criteria import max_marginal_error
from workbench.criteria.marginals import (
    marginal_errors_by_subset,
    max_marginal_error_sensitivity,
)
from workbench.transform import Domain

DOMAINS = [
    Domain(("a",), (3,)),
    Domain(("a", "b"), (2, 7)),
    Domain(("a", "b", "c", "d"), (3, 1, 4, 2)),
    Domain(("m", "age", "par", "gest", "sex", "bw"), (12, 9, 5, 6, 2, 32)),
]


def brute_force(real: np.ndarray, synth: np.ndarray, domain: Domain) -> dict:
    """Reference: every subset's cell counts by pandas groupby, outer-aligned, max |diff| / n."""
    r = pd.DataFrame(real, columns=list(domain.names))
    s = pd.DataFrame(synth, columns=list(domain.names))
    out = {}
    for k in range(1, len(domain) + 1):
        for subset in itertools.combinations(domain.names, k):
            cols = list(subset)
            cr = r.groupby(cols).size()
            cs = s.groupby(cols).size()
            diff = cr.sub(cs, fill_value=0).abs()
            out[subset] = float(diff.max()) / len(real)
    return out


def random_codes(rng: np.random.Generator, n: int, domain: Domain, skew: bool) -> np.ndarray:
    """Random codes; ``skew`` concentrates mass so many cells are shared and some are empty."""
    cols = []
    for size in domain.sizes:
        if skew:
            p = rng.dirichlet(np.full(size, 0.3))
            cols.append(rng.choice(size, n, p=p))
        else:
            cols.append(rng.integers(0, size, n))
    return np.stack(cols, axis=1).astype(np.int64)


# ---------------------------------------------------------------- exactness


@pytest.fixture(params=["dense", "sparse", "rowwise"])
def grouping(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force each of the three grouping routes (dense table, distinct cells, row-wise unique)."""
    if request.param != "dense":
        monkeypatch.setattr(marginals_module, "_BINCOUNT_MAX_CELLS", 0)
    if request.param == "rowwise":
        monkeypatch.setattr(marginals_module, "_RAVEL_MAX_CELLS", 0)
    return request.param


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: "x".join(map(str, d.sizes)))
@pytest.mark.parametrize("seed", range(4))
def test_matches_pandas_groupby_brute_force(domain: Domain, seed: int, grouping: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    real = random_codes(rng, n, domain, skew=seed % 2 == 0)
    synth = random_codes(rng, n, domain, skew=seed % 2 == 1)
    expected = brute_force(real, synth, domain)
    got = marginal_errors_by_subset(real, synth, domain)
    assert set(got) == set(expected)
    assert len(got) == 2 ** len(domain) - 1
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-15), key
    assert max_marginal_error(real, synth, domain) == pytest.approx(max(expected.values()))


def test_huge_joint_domain_beyond_int64() -> None:
    """A joint domain with more than 2^63 cells still works (row-wise grouping)."""
    domain = Domain(tuple(f"c{i}" for i in range(8)), (300,) * 8)  # 300^8 ≈ 6.6e19 cells
    rng = np.random.default_rng(3)
    real = rng.integers(0, 3, (200, 8))
    synth = rng.integers(0, 3, (200, 8))
    got = marginal_errors_by_subset(real, synth, domain, max_way=3)
    expected = {k: v for k, v in brute_force(real, synth, domain).items() if len(k) <= 3}
    assert got == pytest.approx(expected)


def test_max_way_limits_the_subsets() -> None:
    domain = DOMAINS[2]
    rng = np.random.default_rng(1)
    real, synth = random_codes(rng, 100, domain, True), random_codes(rng, 100, domain, False)
    full = marginal_errors_by_subset(real, synth, domain)
    two = marginal_errors_by_subset(real, synth, domain, max_way=2)
    assert set(two) == {k for k in full if len(k) <= 2}
    assert all(two[k] == full[k] for k in two)
    assert max_marginal_error(real, synth, domain, max_way=1) == max(
        v for k, v in full.items() if len(k) == 1
    )


def test_error_is_max_over_subsets_not_only_the_full_joint() -> None:
    # Same 1-way marginals, different joint: only the 2-way marginal sees the difference.
    domain = Domain(("a", "b"), (2, 2))
    real = np.array([[0, 0], [1, 1]] * 50)
    synth = np.array([[0, 1], [1, 0]] * 50)
    errs = marginal_errors_by_subset(real, synth, domain)
    assert errs[("a",)] == 0 and errs[("b",)] == 0
    assert errs[("a", "b")] == 0.5 == max_marginal_error(real, synth, domain)


def test_coarse_marginal_can_exceed_every_joint_cell() -> None:
    # Joint cells differ by 1 each, but the differences add up in the 1-way marginal of a.
    domain = Domain(("a", "b"), (2, 4))
    real = np.array([[0, 0], [0, 1], [0, 2], [0, 3]])
    synth = np.array([[1, 0], [1, 1], [1, 2], [1, 3]])
    errs = marginal_errors_by_subset(real, synth, domain)
    assert errs[("a", "b")] == 0.25 and errs[("b",)] == 0
    assert max_marginal_error(real, synth, domain) == errs[("a",)] == 1.0


# ---------------------------------------------------------------- edge cases and neighbours


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: "x".join(map(str, d.sizes)))
def test_identical_and_permuted_data_give_zero(domain: Domain) -> None:
    rng = np.random.default_rng(0)
    real = random_codes(rng, 250, domain, skew=True)
    assert max_marginal_error(real, real.copy(), domain) == 0.0
    assert max_marginal_error(real, real[rng.permutation(250)], domain) == 0.0


def test_one_changed_row_gives_exactly_one_over_n() -> None:
    domain = DOMAINS[3]
    rng = np.random.default_rng(5)
    real = random_codes(rng, 1000, domain, skew=True)
    for _ in range(20):
        changed = real.copy()
        i, j = rng.integers(1000), rng.integers(len(domain))
        changed[i, j] = (changed[i, j] + rng.integers(1, domain.sizes[j])) % domain.sizes[j]
        # the changed column's 1-way marginal moves by exactly 1 in two cells; nothing more
        assert max_marginal_error(real, changed, domain) == 1 / 1000


@settings(max_examples=200, deadline=None)
@given(data=st.data(), sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4))
def test_sensitivity_is_one_over_n_for_replace_one(data, sizes: list[int]) -> None:
    """|E(R, S) − E(R', S)| ≤ 1/n for R' = R with one row replaced by any row (S fixed)."""
    domain = Domain(tuple(f"c{i}" for i in range(len(sizes))), tuple(sizes))
    row = st.tuples(*(st.integers(0, s - 1) for s in sizes))
    n = data.draw(st.integers(1, 12))
    real = np.array(data.draw(st.lists(row, min_size=n, max_size=n)), dtype=np.int64)
    synth = np.array(data.draw(st.lists(row, min_size=n, max_size=n)), dtype=np.int64)
    neighbour = real.copy()
    neighbour[data.draw(st.integers(0, n - 1))] = data.draw(row)
    gap = abs(
        max_marginal_error(real, synth, domain) - max_marginal_error(neighbour, synth, domain)
    )
    assert gap <= max_marginal_error_sensitivity(n) + 1e-12


def test_sensitivity_bound_is_attained() -> None:
    """Δ = 1/n is tight: a neighbour can move the error by the full 1/n."""
    domain = Domain(("a",), (2,))
    real = np.array([[0], [0], [1], [1]])
    neighbour = np.array([[0], [1], [1], [1]])
    gap = max_marginal_error(neighbour, real, domain) - max_marginal_error(real, real, domain)
    assert gap == max_marginal_error_sensitivity(4) == 0.25


def test_sensitivity_rejects_bad_n() -> None:
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n must"):
            max_marginal_error_sensitivity(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- argument checks


def test_different_sizes_raise_naming_arguments_only() -> None:
    domain = Domain(("a", "b"), (5, 5))
    real = np.array([[3, 4], [2, 1], [4, 4]])
    with pytest.raises(ValueError, match=r"real and synth.*same number of rows") as info:
        max_marginal_error(real, real[:2], domain)
    assert not any(ch.isdigit() for ch in str(info.value))  # neither sizes nor values leak


@pytest.mark.parametrize("which", ["real", "synth"])
@pytest.mark.parametrize("bad", [9137, -4242])
def test_codes_outside_domain_raise_without_values(which: str, bad: int) -> None:
    domain = Domain(("a", "b"), (5, 6))
    good = np.zeros((4, 2), dtype=np.int64)
    broken = good.copy()
    broken[2, 1] = bad
    args = (broken, good) if which == "real" else (good, broken)
    with pytest.raises(ValueError, match=rf"{which}: column 'b'") as info:
        max_marginal_error(*args, domain)
    assert str(abs(bad)) not in str(info.value)


def test_shape_dtype_empty_and_max_way_checks() -> None:
    domain = Domain(("a", "b"), (5, 6))
    good = np.zeros((4, 2), dtype=np.int64)
    with pytest.raises(ValueError, match=r"synth must be an \(n, 2\)"):
        max_marginal_error(good, good[:, :1], domain)
    with pytest.raises(ValueError, match="real must be an integer"):
        max_marginal_error(good.astype(float), good, domain)
    with pytest.raises(ValueError, match="no rows"):
        max_marginal_error(good[:0], good[:0], domain)
    with pytest.raises(ValueError, match="no columns"):
        max_marginal_error(good[:, :0], good[:, :0], Domain((), ()))
    for bad in (0, 3, 1.5, True):
        with pytest.raises(ValueError, match="max_way"):
            max_marginal_error(good, good, domain, max_way=bad)  # type: ignore[arg-type]


def test_domain_sizes_come_from_the_domain() -> None:
    """Codes the data never uses still count as cells: a wider domain changes nothing."""
    rng = np.random.default_rng(2)
    real, synth = rng.integers(0, 3, (300, 3)), rng.integers(0, 3, (300, 3))
    narrow = Domain(("x", "y", "z"), (3, 3, 3))
    wide = Domain(("x", "y", "z"), (3, 40, 7))
    assert marginal_errors_by_subset(real, synth, narrow) == marginal_errors_by_subset(
        real, synth, wide
    )


def test_result_is_a_fraction_in_unit_interval() -> None:
    domain = DOMAINS[3]
    rng = np.random.default_rng(4)
    real = random_codes(rng, 500, domain, skew=True)
    synth = random_codes(rng, 500, domain, skew=True)
    err = max_marginal_error(real, synth, domain)
    assert 0 < err <= 1 and math.isclose(err * 500, round(err * 500))
