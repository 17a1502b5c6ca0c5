"""Worst-case replace-one neighbours for the missing-value mechanisms, on a tiny public design.

Columns: g ∈ {a, b} (forbid), x ∈ {0, 1} and z ∈ {p, q}, both ``allow`` with declared
``max_missing_rate`` ¼, so with n = 4 the public bound on the rows complete on {x} is
m = ⌊4·(1 − ¼)⌋ = 3. Rows are code triples (g, x, z); code 2 of x and z is "missing".
Documented Δ written out by hand:

* ``missing_rate`` and ``co_missingness``: Δ = 1/n = ¼ (one record enters or leaves a
  missing count);
* ``observed_marginal_error`` (way 1 on x): Δ = 1/m = ⅓; R has x = (0, 0, 0, ∅) (n_c = 3),
  R′ replaces one x = 0 by 1: the share of x = 0 goes 1 → ⅔ with S = R;
* the generators' partial-observation marginal (``generators.workload_missing``,
  ``measure_observed``): the count table of x over the rows complete on x, Δ₁ = 2; R′ moves one
  observed record from x = 0 to x = 1.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from workbench.audits.harness import Scenario, scenario
from workbench.criteria import evaluate_criterion
from workbench.generators.missing import MissingLayout, ObservedCounts
from workbench.generators.workload_missing import measure_observed
from workbench.spec import Configuration, Spec
from workbench.validation import build_spec

_EPS = 1.0
_IDENTITY = {"alternatives": [{"name": "id", "kind": "identity"}]}
_CRITERIA: list[dict[str, Any]] = [
    {"id": "missing_rate", "kind": "missing_rate", "threshold": 0.5, "params": {}},
    {"id": "co_missingness", "kind": "co_missingness", "threshold": 0.5, "params": {}},
    {"id": "observed_marginal_error", "kind": "observed_marginal_error", "threshold": 0.5,
     "params": {"way": 1, "columns": ["x"]}},
]


def _allow(name: str, domain: list[Any]) -> dict[str, Any]:
    return {"name": name, "type": "categorical", "domain": domain, "missing": "allow",
            "max_missing_rate": 0.25}


@lru_cache(maxsize=1)
def audit_spec() -> tuple[Spec, Configuration]:
    """The tiny design with one criterion of each missing-value kind at ε = 1."""
    criteria = [{"epsilon": _EPS, "bounds": [0, 1], **c} for c in _CRITERIA]
    doc = {
        "spec_version": "1.0",
        "metadata": {"title": "Missing-value audit design", "owner": "workbench audits",
                     "description": "Worst cases for the missing-value sensitivities."},
        "schema": {"columns": [
            {"name": "g", "type": "categorical", "domain": ["a", "b"], "missing": "forbid"},
            _allow("x", ["0", "1"]), _allow("z", ["p", "q"])]},
        "transformations": {"columns": {c: _IDENTITY for c in ("g", "x", "z")}},
        "constraints": {"raw": [], "synthetic": []},
        "criteria": criteria,
        "faithfulness": {"exact": ["g", "x", "z"], "distance": {}, "alpha": 0},
        "face_privacy": {"min_count": [1]},
        "generator": {"family": "independent", "search_space": [{}]},
        "budget": {"epsilon_generator": 1.0, "epsilon_criteria": _EPS * len(criteria),
                   "neighbour": "replace_one"},
        "selection": {"gamma": 0, "max_iterations": None, "epsilon_0": 0},
    }
    spec = build_spec(doc)
    return spec, next(iter(spec.configurations()))


def _rows(*rows: tuple[int, int, int]) -> np.ndarray:
    return np.array(rows, dtype=np.int64)


_BASE = _rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 2, 1))
#: kind → (R, R′, S, documented Δ, how the neighbours differ). n = 4.
NEIGHBOURS: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, float, str]] = {
    "missing_rate": (
        _BASE, _rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 0, 1)), _BASE, 1 / 4,
        "S = R; R′ fills x's one missing value: its rate 1/4 → 0 (Δ = 1/n)"),
    "co_missingness": (
        _rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 2, 2)), _BASE,
        _rows((0, 0, 0), (1, 0, 1), (0, 0, 0), (1, 2, 2)), 1 / 4,
        "S = R; R has one row missing x and z, R′ fills its z: co-missing share 1/4 → 0"),
    "observed_marginal_error": (
        _BASE, _rows((0, 1, 0), (1, 0, 1), (0, 0, 0), (1, 2, 1)), _BASE, 1 / 3,
        "S = R (n_c = 3 = m); R′ moves one observed x from 0 to 1: share 1 → 2/3 (Δ = 1/m)"),
}
#: The generators' partial-observation count table (not a criterion kind).
PARTIAL_MARGINAL = "partial_observation_marginal"


def missing_criterion_scenario(kind: str) -> Scenario:
    """The captured release of one missing-value criterion kind on its worst case."""
    real, real_prime, synth, delta, how = NEIGHBOURS[kind]
    spec, config = audit_spec()
    datasets = (real, real_prime)
    return scenario(kind, "Laplace on the criterion value", how, delta,
                    lambda ctx, which: evaluate_criterion(spec, config, kind, datasets[which],
                                                          synth, ctx))


def partial_marginal_scenario() -> Scenario:
    """The generators' count table of x over the rows complete on x, on its worst case."""
    spec, config = audit_spec()
    domain = spec.table_codec(config).domain
    layout = MissingLayout.of(domain, ("x", "z"), (0.25, 0.25))
    assert layout is not None
    datasets = (_BASE, _rows((0, 1, 0), (1, 0, 1), (0, 0, 0), (1, 2, 1)))

    def run(ctx, which: int) -> object:
        view = ObservedCounts(datasets[which], layout, complete_rows=False)
        return measure_observed(view, ("x",), _EPS, ctx)

    return scenario(PARTIAL_MARGINAL, "discrete Laplace on the observed-value count table",
                    "R′ moves one record complete on x from x = 0 to x = 1 (Δ₁ = 2)", 2.0, run)
