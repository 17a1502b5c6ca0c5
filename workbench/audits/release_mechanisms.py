"""Audits of the count-table releases of two generator families, run through ``fit``.

Both release every table with discrete Laplace at Δ₁ = ``histogram_sensitivity()`` = 2
(replace-one: a record leaves one cell and enters another) and split ε evenly over the tables,
so each is audited as the one release the tables compose to
(:func:`~workbench.audits.harness.joint_scenario`: Δ₁ = 2T at the family's ε for T tables).

* **Perturbed histogram** (``generators.perturbed_histogram``), columns a, b, c binary, the
  joint over (a, b) and c on its own (T = 2, ε/2 each). D is the 8 records of {0, 1}³; D′
  replaces (0, 0, 0) by (1, 1, 1): the joint moves by 2 and c's histogram by 2.
* **Workload measurements** (``generators.workload_generator``, algorithm "fixed", through
  ``measurement.measure_marginal``), columns a, b binary, workload {(a, b)} with weight 1 and
  ``one_way_share`` ⅔, so the three tables a, b, (a, b) get ε/3 each (T = 3). D is two copies
  of {0, 1}²; D′ replaces (0, 0) by (1, 1): every table moves by 2. The model fit after the
  measurements is post-processing (one mirror-descent step here, to keep the audit cheap).
"""

from __future__ import annotations

import numpy as np

from workbench.audits.harness import Scenario, capture, joint_scenario
from workbench.generators import Workload, WorkloadGenerator, make_generator
from workbench.generators.workload import WorkloadItem
from workbench.privacy import PrivacyContext
from workbench.transform import Domain

#: ε of each family's fit: 1 per table.
HISTOGRAM_EPSILON = 2.0
WORKLOAD_EPSILON = 3.0

_CUBE = np.array(list(np.ndindex(2, 2, 2)), dtype=np.int64)
HISTOGRAM_DATA = (_CUBE, np.vstack([[(1, 1, 1)], _CUBE[1:]]))
_SQUARE = np.vstack([np.array(list(np.ndindex(2, 2)), dtype=np.int64)] * 2)
WORKLOAD_DATA = (_SQUARE, np.vstack([[(1, 1)], _SQUARE[1:]]))


def _calls(run, data: tuple[np.ndarray, np.ndarray]) -> tuple[list, list]:
    """The captured calls of ``run(ctx, codes)`` on D and on D′."""
    d, d_prime = (capture(lambda ctx, x=x: run(ctx, x)) for x in data)
    return d, d_prime


def perturbed_histogram_scenario() -> Scenario:
    """The joint over (a, b) and c's histogram, composed, on D and D′."""
    domain = Domain(("a", "b", "c"), (2, 2, 2))

    def run(ctx: PrivacyContext, codes: np.ndarray) -> object:
        generator = make_generator("perturbed_histogram", columns=["a", "b"])
        return generator.fit(codes, domain, HISTOGRAM_EPSILON, ctx)

    return joint_scenario(
        "perturbed histogram (T = 2)", "discrete Laplace per table, Δ₁ = 2, ε/(1 + r) each",
        "n = 8, (0, 0, 0) → (1, 1, 1): the (a, b) joint and c's histogram each move by 2",
        2.0, _calls(run, HISTOGRAM_DATA))


def workload_scenario() -> Scenario:
    """The fixed workload's three marginal measurements, composed, on D and D′."""
    domain = Domain(("a", "b"), (2, 2))
    workload = Workload(domain.names, (WorkloadItem(("a", "b"), 1.0, ("audit",)),), 2.0 / 3.0)

    def run(ctx: PrivacyContext, codes: np.ndarray) -> object:
        generator = WorkloadGenerator(algorithm="fixed", iters=1)
        generator.bind_workload(workload)
        return generator.fit(codes, domain, WORKLOAD_EPSILON, ctx)

    return joint_scenario(
        "workload measurements (T = 3)", "discrete Laplace per workload marginal, Δ₁ = 2",
        "n = 8, (0, 0) → (1, 1): the a, b and (a, b) tables each move by 2", 2.0,
        _calls(run, WORKLOAD_DATA))
