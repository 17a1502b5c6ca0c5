"""Post-processing: face-privacy projection (Alg. 3, Prop. 11, Remark 1) and constraint sampling."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import shared_csv
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.constraints import parse
from workbench.evidence.us_natality import read_us_sample
from workbench.generators import IndependentMarginals
from workbench.postprocess import (
    SamplingError,
    distinct_rows,
    project_counts,
    project_min_count,
    reject_counts,
    sample_valid,
    sample_valid_for,
    semantics_for,
)
from workbench.privacy import PrivacyContext
from workbench.transform.clean import clean

# --- face-privacy projection ---------------------------------------------------------------

counts_strategy = st.lists(st.integers(0, 9), min_size=0, max_size=40).map(
    lambda xs: np.array(xs, dtype=np.int64)
)


def _divisible(counts: np.ndarray, m: int) -> bool:
    return all((k * int((counts == k).sum())) % m == 0 for k in range(1, m))


@settings(max_examples=400, deadline=None)
@given(counts=counts_strategy, m=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_projection_properties_of_proposition_11(counts: np.ndarray, m: int, seed: int) -> None:
    n = int(counts.sum())
    rng = np.random.default_rng(seed)
    if 0 < n < m:
        with pytest.raises(ValueError, match="fewer rows than min_count"):
            project_counts(counts, m, rng)
        return
    out = project_counts(counts, m, rng)
    assert out.shape == counts.shape
    assert int(out.sum()) == n  # (6), with Remark 1's top-up when m does not divide k·n_k
    assert not ((out > 0) & (counts == 0)).any()  # (1) the support does not grow
    assert ((out == 0) | (out >= m)).all()  # (4) no record occurs fewer than m times
    if _divisible(counts, m):
        big = counts > m
        np.testing.assert_array_equal(out[big], counts[big])  # (2)
        assert (out[counts == m] == m).all()  # (3)
        for k in range(1, m):
            cls = counts == k
            assert int(out[cls].sum()) == int(counts[cls].sum())  # (5)
            assert int((out[cls] == m).sum()) == (k * int(cls.sum())) // m  # Alg. 3 line 3
            assert set(np.unique(out[cls]).tolist()) <= {0, m}


@settings(max_examples=200, deadline=None)
@given(counts=counts_strategy, m=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
def test_top_up_lands_where_remark_1_does_least_harm(counts: np.ndarray, m: int, seed: int) -> None:
    if 0 < int(counts.sum()) < m:
        return
    out = project_counts(counts, m, np.random.default_rng(seed))
    raising = [k for k in range(1, m) if (k * int((counts == k).sum())) // m > 0]
    orphan_rows = sum(k * int((counts == k).sum()) for k in range(1, m) if k not in raising)
    if orphan_rows == 0 or orphan_rows >= m:
        for k in raising:  # (5) holds for every class that raised a record
            assert int(out[counts == k].sum()) == k * int((counts == k).sum())
    elif raising:  # a small orphan pool tops up the raised records only
        mask = np.isin(counts, raising)
        assert int(out[mask].sum()) == int(counts[mask].sum()) + orphan_rows
    if raising or orphan_rows == 0 or orphan_rows >= m:
        np.testing.assert_array_equal(out[counts > m], counts[counts > m])  # (2)
        assert (out[counts == m] == m).all()  # (3)


def test_projection_of_codes_keeps_n_rows_and_only_input_rows() -> None:
    rng = np.random.default_rng(5)
    codes = np.column_stack([rng.zipf(1.6, 3000) % 40, rng.integers(0, 3, 3000)])
    for m in (2, 3):
        out = project_min_count(codes, m, np.random.default_rng(m))
        assert out.shape == codes.shape
        cells, counts, _ = distinct_rows(out)
        assert (counts >= m).all()
        before = {tuple(r) for r in codes.tolist()}
        assert {tuple(r) for r in cells.tolist()} <= before
        # rows that already occurred at least m times are untouched
        in_cells, in_counts, _ = distinct_rows(codes)
        kept = {
            tuple(c): k for c, k in zip(in_cells.tolist(), in_counts.tolist(), strict=True) if k > m
        }
        after = dict(zip(map(tuple, cells.tolist()), counts.tolist(), strict=True))
        assert all(after[c] == k for c, k in kept.items())


def test_projection_is_the_identity_for_min_count_one() -> None:
    counts = np.array([1, 1, 2, 5])
    np.testing.assert_array_equal(project_counts(counts, 1, np.random.default_rng(0)), counts)


def test_projection_rejects_bad_min_count() -> None:
    with pytest.raises(ValueError, match="min_count"):
        project_counts(np.array([1, 2]), 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="min_count"):
        project_counts(np.array([1, 2]), 2.0, np.random.default_rng(0))  # type: ignore[arg-type]


def test_distinct_rows_counts_and_inverse() -> None:
    codes = np.array([[1, 2], [0, 0], [1, 2], [3, 1]])
    cells, counts, inverse = distinct_rows(codes)
    np.testing.assert_array_equal(cells[inverse], codes)
    assert sorted(counts.tolist()) == [1, 1, 2]


# --- constraint sampling --------------------------------------------------------------------


@pytest.fixture(scope="module")
def us_setup(example_spec):
    frame = read_us_sample(shared_csv("us_births_2019_singleton_sample10k.csv"))
    config = next(example_spec.configurations())
    table = example_spec.table_codec(config)
    codes = table.encode(clean(frame, example_spec))
    return example_spec, config, table, codes


def test_semantics_follow_the_codecs(example_spec) -> None:
    config = next(example_spec.configurations())
    sem = semantics_for(example_spec.table_codec(config))
    assert list(sem) == list(example_spec.table_codec(config).names)
    assert sem["birth_sex"].is_categorical
    age_low, age_high = sem["mother_age"].bounds()
    assert age_low[0] == -np.inf and age_high[0] == 17  # '<18'
    assert sem["mother_age"].integer


def test_sample_valid_meets_n_exactly_on_the_us_sample(us_setup) -> None:
    spec, config, table, codes = us_setup
    gen = IndependentMarginals().fit(codes, table.domain, 50.0, PrivacyContext.simulation(11))
    sem = semantics_for(table)
    raw = gen.sample(len(codes), np.random.default_rng(1))
    invalid, _ = reject_counts(raw, spec.constraints.synthetic, sem, spec.constraints.partial_bins)
    assert invalid.any()  # independent columns do produce implausible rows
    n = len(codes)
    out = sample_valid_for(spec, spec.table_codec(config), gen, n, np.random.default_rng(2))
    assert out.shape == (n, codes.shape[1])
    again, _ = reject_counts(out, spec.constraints.synthetic, sem, spec.constraints.partial_bins)
    assert not again.any()


class _Counting:
    """Wrap a generator and remember how many rows each round asked for."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, []

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        self.calls.append(n)
        return self.inner.sample(n, rng)


class _HalfInvalid:
    """Every other row breaks 'a > 2' (code 3); a known 50% acceptance rate."""

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.zeros((n, 2), dtype=np.int64)
        out[rng.random(n) < 0.5, 0] = 3
        return out


def _toy_semantics():
    from workbench.constraints import BinSemantics

    return {
        "a": BinSemantics.numeric([0, 1, 2, 3], [0, 1, 2, 3], integer=True),
        "b": BinSemantics.categorical([{"x"}, {"y"}]),
    }


def test_oversampling_follows_the_measured_acceptance_rate() -> None:
    gen = _Counting(_HalfInvalid())
    out = sample_valid(gen, 10_000, np.random.default_rng(0), [parse("a > 2")], _toy_semantics(), 5)
    assert out.shape == (10_000, 2)
    assert (out[:, 0] != 3).all()
    assert gen.calls[0] == 10_000
    assert len(gen.calls) <= 3  # the second round is sized from the ~50% rate
    if len(gen.calls) > 1:
        assert gen.calls[1] >= 2 * (10_000 - 5_200)


class _AlwaysInvalid:
    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.full((n, 2), 3, dtype=np.int64)


def test_a_generator_of_invalid_rows_fails_clearly() -> None:
    gen = _Counting(_AlwaysInvalid())
    rules = [parse("a > 2")]
    with pytest.raises(SamplingError) as info:
        sample_valid(gen, 100, np.random.default_rng(0), rules, _toy_semantics(), 4, max_batch=500)
    err = info.value
    assert err.acceptance_rate == 0.0
    assert err.rounds == 4 and len(gen.calls) == 4
    assert max(gen.calls) <= 500  # the batch cap holds
    message = str(err)
    assert "acceptance rate 0.0000%" in message
    assert "4 round(s)" in message
    assert "0 of 100 valid rows" in message
    assert "'a > 2'" in message  # names the rule that rejects most


def test_partial_bins_policy(example_spec) -> None:
    config = next(example_spec.configurations())
    table = example_spec.table_codec(config)
    sem = semantics_for(table)
    # mother_age 20-24 straddles 23: the young_high_parity_6 rule is undecided there
    row = np.zeros((1, len(table.names)), dtype=np.int64)
    row[0, table.names.index("mother_age")] = int(table.codec("mother_age").encode([21])[0])
    row[0, table.names.index("parity")] = int(table.codec("parity").encode([8])[0])
    rule = [r for r in example_spec.constraints.synthetic if r.name == "young_high_parity_6"]
    keep, _ = reject_counts(row, rule, sem, "keep")
    reject, tallies = reject_counts(row, rule, sem, "reject")
    assert not keep[0] and reject[0]
    assert tallies == {"young_high_parity_6": 1}


def test_sample_valid_checks_its_arguments() -> None:
    gen = _HalfInvalid()
    sem = _toy_semantics()
    with pytest.raises(ValueError, match="max_rounds"):
        sample_valid(gen, 10, np.random.default_rng(0), [], sem, 0)
    with pytest.raises(ValueError, match="partial"):
        sample_valid(gen, 10, np.random.default_rng(0), [], sem, 3, partial="maybe")
    assert sample_valid(gen, 0, np.random.default_rng(0), [], sem, 3).shape == (0, 2)
