"""``schema.expected_n``: a public size estimate, a number or a [low, high] range."""

from __future__ import annotations

import copy

import pytest

from workbench.specification import SpecError
from workbench.validation import build_spec
from workbench.validation.sections import BuildContext, expected_n


@pytest.mark.parametrize("value, low, high", [(95_000, 95_000, 95_000),
                                              ([95_000, 160_000], 95_000, 160_000)])
def test_expected_n_number_or_range(example_doc: dict, value, low: int, high: int) -> None:
    example_doc["schema"]["expected_n"] = value
    spec = build_spec(example_doc)
    assert (spec.expected_n.low, spec.expected_n.high) == (low, high)
    assert spec.expected_n.is_range == (low != high)
    assert spec.expected_n.label() == ("95,000" if low == high else "95,000–160,000")


def test_without_expected_n_the_spec_has_none_and_keeps_its_hash(example_doc: dict) -> None:
    before = build_spec(example_doc)
    assert before.expected_n is None
    doc = copy.deepcopy(example_doc)
    doc["schema"]["expected_n"] = 1000
    assert build_spec(doc).sha256 != before.sha256  # it is part of the design


@pytest.mark.parametrize("value", [0, -5, [10], [1, 2, 3], "95000", 95_000.5, [200, 100]])
def test_bad_expected_n_is_reported_with_its_path(example_doc: dict, value) -> None:
    example_doc["schema"]["expected_n"] = value
    with pytest.raises(SpecError) as err:
        build_spec(example_doc)
    assert "schema.expected_n" in str(err.value)


def test_the_section_checks_the_order_of_a_range_on_its_own(example_document: dict) -> None:
    doc = copy.deepcopy(example_document)
    doc["schema"]["expected_n"] = [200, 100]
    ctx = BuildContext(doc)
    built = expected_n.build(ctx)
    assert (built.low, built.high) == (100, 200)
    assert [str(p) for p in ctx.problems] == [
        "schema.expected_n: a range must be [low, high] with low <= high"]


def test_describe_prints_the_estimate(example_doc: dict) -> None:
    from workbench.report import describe_spec

    example_doc["schema"]["expected_n"] = [95_000, 160_000]
    assert ("Expected n after cleaning (public estimate): 95,000–160,000 (dry runs rehearse "
            "at the low end)") in describe_spec(build_spec(example_doc))


def test_dry_runs_and_floors_default_to_expected_n() -> None:
    """Without --n, a dry run rehearses at both ends of schema.expected_n (low end counts)."""
    from test_dryrun import _cheap_document

    from workbench.dryrun import InlineExecutor
    from workbench.dryrun.floors import floors_at
    from workbench.dryrun.sized import dry_run_at
    from workbench.evidence.sampler import sample_proxy

    doc = _cheap_document()
    doc["schema"]["expected_n"] = [1500, 2500]
    spec = build_spec(doc)
    proxy = sample_proxy(2000, seed=2)
    config = next(spec.configurations())
    sized = dry_run_at(spec, proxy, [config], repetitions=1, executor=InlineExecutor(),
                       progress=False, noise="seeded")
    assert sorted(sized.results) == [1500, 2500] and sized.result.n == 1500
    assert sorted(floors_at(spec, proxy, [config], draws=2)) == [1500, 2500]
