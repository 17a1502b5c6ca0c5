"""No budget without a rehearsal of the same code (issue 36): one whole iteration of the spec on
PUBLIC stand-in rows drawn from its own domains, before anything is charged.

A spec can validate and freeze and still fail in a step only the data reach (a group-by's
coarse bins meeting a missing code, a generator that cannot fit a column): after the budget
store has recorded ε. :func:`rehearse_on_stand_in` runs the run's own steps
(:func:`workbench.engine.before_loop.release_before_loop`, then
:func:`workbench.engine.run_iteration`) for every configuration of the spec (a seeded choice
of :data:`MAX_CONFIGURATIONS` when there are more) in a seeded SIMULATION context on
:func:`stand_in_rows`: every declared category and every whole number of a bounded column
equally likely, each column that may be missing missing in :data:`MISSING_SHARE` of the rows
(half its declared ``max_missing_rate`` when that is lower, so the run's φ̄ check passes),
then the run's own cleaning. Nothing of the confidential data is read, so an exception's real
message is shown: ``workbench run`` refuses before the store is touched, ``validate`` and
``freeze`` refuse the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.engine.before_loop import release_before_loop
from workbench.engine.iteration import run_iteration
from workbench.privacy import PrivacyContext
from workbench.privacy.noise import rehearsal_noise
from workbench.specification import Spec
from workbench.specification.space import Configuration
from workbench.survey.weight_check import WeightCheckFailed
from workbench.transform import ColumnSpec
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy
from workbench.trial import bind

#: rows of the stand-in (before cleaning): enough for every group of a small design
STAND_IN_ROWS = 2_000
#: the fewest cleaned stand-in rows rehearsed on
MIN_ROWS = 200
#: share of rows missing in each column whose policy lets it be missing
MISSING_SHARE = 0.1
#: configurations rehearsed at most (a seeded choice beyond; the paper's space has thousands)
MAX_CONFIGURATIONS = 8
#: the stand-in's seed: the rehearsal is the same on every machine
SEED = 20_141_231


class StandInFailure(ValueError):
    """A step of the spec failed on public stand-in rows: the message is the step's own."""


@dataclass(frozen=True)
class StandInReport:
    """What the rehearsal covered: configurations run, of how many, and the stand-in's rows."""

    configurations: int
    of: int
    rows: int

    def words(self) -> str:
        """One line for the operator."""
        part = "every" if self.configurations == self.of else f"{self.configurations} of"
        return (f"rehearsed one whole iteration of {part} {self.of} configuration(s) on "
                f"{self.rows:,} public stand-in rows drawn from the spec's domains")


def _column_values(column: ColumnSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """Raw values of one column: its domain, or its bounds (whole numbers for integers)."""
    if column.domain is not None:
        domain = np.asarray(list(column.domain), dtype=object)
        return domain[rng.integers(0, len(domain), n)]
    if column.bounds is None:
        raise StandInFailure(f"column {column.name!r} declares neither a domain nor bounds")
    low, high = column.bounds
    if column.type == "integer":
        return rng.integers(int(np.ceil(low)), int(np.floor(high)) + 1, n).astype(np.float64)
    return rng.uniform(low, high, n)


def _missing_share(column: ColumnSpec) -> float:
    """The stand-in's missing share: MISSING_SHARE, kept well under a declared φ̄."""
    bound = column.max_missing_rate
    return MISSING_SHARE if bound is None else min(MISSING_SHARE, bound / 2)


def stand_in_rows(spec: Spec, n: int = STAND_IN_ROWS, seed: int = SEED) -> pd.DataFrame:
    """Public rows in the spec's domains, cleaned as the run cleans (module doc)."""
    rng = np.random.default_rng(seed)
    data: dict[str, np.ndarray] = {}
    for column in spec.columns:
        values = _column_values(column, n, rng).astype(object)
        if column.missing != "forbid":
            values[rng.random(n) < _missing_share(column)] = None
        data[column.name] = values
    if spec.survey is not None:
        data[spec.survey.weight_column] = _weights(spec, n)
    frame = pd.DataFrame(data)
    frame = apply_domain_policy(frame, spec.columns)
    return clean(frame, spec).reset_index(drop=True)


def _weights(spec: Spec, n: int) -> np.ndarray:
    """Base weights summing to the first margin's population N (inside the declared bounds)."""
    assert spec.survey is not None
    low, high = spec.survey.weight_bounds
    margins = spec.survey.margins
    total = float(sum(margins[0].totals)) if margins else float(n)
    return np.full(n, float(np.clip(total / n, low, high)))


def _configurations(spec: Spec) -> tuple[list[Configuration], int]:
    """Every configuration, or a seeded choice of MAX_CONFIGURATIONS; and how many there are."""
    count = spec.configuration_count()
    if count <= MAX_CONFIGURATIONS:
        return list(spec.configurations()), count
    chosen = set(np.random.default_rng(SEED).choice(count, MAX_CONFIGURATIONS, replace=False)
                 .tolist())
    picked = [c for i, c in enumerate(spec.configurations()) if i in chosen]
    return picked, count


#: spec sha256 → the report of its passed rehearsal in this process (the stand-in, its seeds and
#: the code are fixed, so a spec that passed once passes again: validate then run pay once)
_PASSED: dict[str, StandInReport] = {}


def rehearse_on_stand_in(spec: Spec, progress: Callable[[str], None] | None = None
                         ) -> StandInReport:
    """One whole iteration per configuration on the stand-in; StandInFailure names the step.
    ``progress`` hears which configuration is being rehearsed (an MCMC fit takes seconds)."""
    if spec.sha256 in _PASSED:
        return _PASSED[spec.sha256]
    report = _rehearse(spec, progress or (lambda _message: None))
    _PASSED[spec.sha256] = report
    return report


def _rehearse(spec: Spec, progress: Callable[[str], None]) -> StandInReport:
    """:func:`rehearse_on_stand_in` without the memory of passed specs."""
    try:
        frame = stand_in_rows(spec)
        for more in (4, 16):  # strict cleaning rules: draw more until enough rows remain
            if len(frame) >= MIN_ROWS:
                break
            frame = stand_in_rows(spec, more * STAND_IN_ROWS)
    except (ValueError, KeyError) as exc:
        raise StandInFailure(f"the public stand-in rows could not be made: {exc}") from None
    if len(frame) < MIN_ROWS:
        raise StandInFailure(f"the spec's cleaning rules leave {len(frame)} of "
                             f"{16 * STAND_IN_ROWS:,} rows drawn from its domains: a run would "
                             "have next to nothing to release; check schema.constraints.raw")
    configurations, total = _configurations(spec)
    for index, configuration in enumerate(configurations):
        progress(f"rehearsing configuration {index + 1} of {len(configurations)} on "
                 f"{len(frame):,} public stand-in rows")
        ctx = PrivacyContext.simulation(SEED + index, neighbour=spec.budget.neighbour,
                                        noise=rehearsal_noise(SEED + index))
        step = "binding the configuration"
        try:
            trial = bind(spec, configuration)
            step = "the before-loop releases"
            inputs = release_before_loop(trial, frame, ctx)
            step = "one iteration (fit, sample, project, evaluate)"
            run_iteration(trial, frame, ctx, once_results=inputs.once)
        except WeightCheckFailed:
            continue  # the stand-in's weights are not the sample's: that check is the data's
        except Exception as exc:  # public rows: the real message is safe to show
            raise StandInFailure(
                f"configuration {index + 1} of {len(configurations)} rehearsed: {step} failed "
                f"on public stand-in rows: {type(exc).__name__}: {exc}") from exc
    return StandInReport(len(configurations), total, len(frame))
