"""The reversal check (issue 36): would the spec's criteria pass a release in which a declared
exposure–outcome association is reversed?

A maximum share error cannot see a relation inside rare cells: a registry's release passed
every criterion while smokers had less low birth weight than non-smokers. For every pair the
spec declares (``metadata.associations`` and the params of its relative-risk, odds-ratio and
risk-difference criteria), this builds the release that keeps everything of the proxy but that
pair's direction: a bootstrap of the proxy population at n in which the exposure is handed out
again so that the relative risk becomes its inverse (1/RR) while the exposure's and the
outcome's shares stay exactly as they are, then run through the synthetic rules and the
min_count projection like every floor draw. When every criterion passes it (their exact
values, averaged over the draws, against their effective thresholds), ``describe --proxy``
prints a warning naming the pair. Criteria see the release in a configuration's cells, so the
check runs in every distinct set of transforms (``trial.cells.transform_sets``) and warns when
the criteria all pass in any of them (a release can come from any), naming that set when the
spec has more than one. Public proxy data only, in a simulation context.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.criteria.associations import declared_pairs, measure, yes_codes
from workbench.criteria.dispatch import kind_of
from workbench.dryrun.floors import Bootstrap, floor_draw
from workbench.dryrun.size import SizeSpec, size_ends
from workbench.dryrun.tasks import task_seed
from workbench.engine.before_loop import release_before_loop
from workbench.evidence.core import Evidence
from workbench.evidence.prepare import as_evidence
from workbench.privacy import PrivacyContext
from workbench.specification import Spec
from workbench.transform import TableCodec
from workbench.trial import Trial, bind
from workbench.trial.cells import transform_sets, transforms_words


def _flags(codes: np.ndarray, table: TableCodec, pair: Mapping[str, Any]
           ) -> tuple[np.ndarray, np.ndarray, int]:
    """(exposure flags, outcome flags, the exposure's column index): 1/0/−1 per row."""
    ie = table.names.index(str(pair["exposure"]))
    io = table.names.index(str(pair["outcome"]))
    e = yes_codes(table, str(pair["exposure"]), pair["exposed"])[codes[:, ie]]
    o = yes_codes(table, str(pair["outcome"]), pair["positive"])[codes[:, io]]
    return e, o, ie


def log_rr(codes: np.ndarray, table: TableCodec, pair: Mapping[str, Any]) -> float:
    """log RR of the pair in ``codes`` (smoothed by ½; public rows only)."""
    e, o, _ = _flags(codes, table, pair)
    keep = (e >= 0) & (o >= 0)
    t = np.bincount((1 - e[keep]) * 2 + (1 - o[keep]), minlength=4).reshape(2, 2)
    return measure(t, "relative_risk", 0.5)


def reverse(codes: np.ndarray, table: TableCodec, pair: Mapping[str, Any],
            rng: np.random.Generator) -> np.ndarray:
    """``codes`` with the exposure handed out again so that RR becomes 1/RR, the numbers of
    exposed rows and of outcome rows unchanged (rows with either value missing untouched)."""
    e, o, ie = _flags(codes, table, pair)
    rows = np.flatnonzero((e >= 0) & (o >= 0))
    n_e, n_pos = int((e[rows] == 1).sum()), int((o[rows] == 1).sum())
    if not 0 < n_e < len(rows) or not 0 < n_pos < len(rows):
        return codes  # no association to reverse
    r1 = ((e[rows] == 1) & (o[rows] == 1)).sum() / n_e
    r0 = ((e[rows] == 0) & (o[rows] == 1)).sum() / (len(rows) - n_e)
    p_e, p_o = n_e / len(rows), n_pos / len(rows)
    ratio = r0 / r1 if r1 > 0 else math.inf  # the reversed RR, r1'/r0'
    if math.isinf(ratio):
        k1 = n_e if n_pos >= n_e else n_pos  # every exposed row gets the outcome
    else:
        r0_new = p_o / (p_e * ratio + 1 - p_e)
        k1 = round(n_e * r0_new * ratio)
    k1 = min(max(k1, n_e - (len(rows) - n_pos)), n_pos, n_e)
    pos, neg = rows[o[rows] == 1], rows[o[rows] == 0]
    exposed = np.concatenate([rng.choice(pos, k1, replace=False),
                              rng.choice(neg, n_e - k1, replace=False)])
    out = codes.copy()
    was = rows[e[rows] == 1]
    unexposed = np.setdiff1d(rows, exposed)
    out[exposed, ie] = rng.permutation(codes[was, ie])
    out[unexposed, ie] = rng.permutation(codes[np.setdiff1d(rows, was), ie])
    return out


class _Reversed:
    """The floors' bootstrap of R with the pair's association reversed in its rows (a sampler
    for rejection): the ideal generator's draw, then :func:`reverse`."""

    def __init__(self, codes: np.ndarray, table: TableCodec, pair: Mapping[str, Any]) -> None:
        self.bootstrap, self.table, self.pair = Bootstrap(codes), table, pair

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return reverse(self.bootstrap.sample(n, rng), self.table, self.pair, rng)


@dataclass(frozen=True)
class Reversal:
    """One declared pair: its log RR on the proxy and in the reversed release, and whether
    every criterion passes that release (then no criterion sees its direction)."""

    exposure: str
    outcome: str
    source: str
    log_rr: float
    reversed_log_rr: float
    all_pass: bool
    n: int
    #: the transform set the verdict is for ('' when the spec has only one): the first in which
    #: every criterion passes, else the first checked
    transforms: str = ""

    def words(self) -> str:
        """The warning (or the all-clear) in one line."""
        cells = f" in the cells ({self.transforms})" if self.transforms else ""
        what = (f"{self.exposure} → {self.outcome} (declared in {self.source}): a release with "
                f"this association reversed{cells} (RR {math.exp(self.log_rr):.2f} on the "
                f"proxy → {math.exp(self.reversed_log_rr):.2f})")
        if self.all_pass:
            return (f"WARNING: {what} passes every criterion at n = {self.n:,}: no criterion "
                    "sees its direction; add a relative_risk, odds_ratio or risk_difference "
                    "criterion on it")
        return f"reversal check: {what} fails at least one criterion at n = {self.n:,}"


def reversal_check(spec: Spec, proxy: Evidence | Any, n: SizeSpec = None, draws: int = 3,
                   seed: int = 0) -> list[Reversal]:
    """For every declared pair, whether the spec's criteria all pass the reversed release at
    the low end of ``n`` (None: the proxy's size), averaged over ``draws`` draws, in each
    distinct set of transforms (module doc): the first set where they all pass, else the
    first set's verdict."""
    pairs = declared_pairs(spec)
    if not pairs or not spec.criteria:
        return []
    evidence = as_evidence(spec, proxy)
    ends = size_ends(n)
    size = ends[0] if ends else None
    sets = transform_sets(spec)
    out = []
    for pair in pairs:
        checked = [_check(spec, evidence, bind(spec, config), pair, size, draws, seed, k)
                   for k, config in enumerate(sets)]
        k = next((k for k, r in enumerate(checked) if r.all_pass), 0)
        words = transforms_words(sets[k]) if len(sets) > 1 else ""
        out.append(dataclasses.replace(checked[k], transforms=words))
    return out


def _check(spec: Spec, evidence: Evidence, trial: Trial, pair: Mapping[str, Any],
           size: int | None, draws: int, seed: int, k: int) -> Reversal:
    """One pair in one transform set (the k-th; set 0 keeps the seeds of a one-set spec)."""
    values: dict[str, list[float]] = {c.id: [] for c in spec.criteria}
    limits: dict[str, list[float]] = {c.id: [] for c in spec.criteria}
    real_rr, rev_rr, rows = [], [], 0
    key = f"reversal:{pair['exposure']}:{pair['outcome']}" + (f":{k}" if k else "")
    for d in range(draws):
        ctx = PrivacyContext.simulation(task_seed(seed, key, d),
                                        neighbour=spec.budget.neighbour)
        real = evidence.population(size, ctx.rng)
        once = release_before_loop(trial, real, ctx).once if spec.survey else None
        codes = trial.encode(real)
        rows = codes.shape[0]
        sampler = _Reversed(codes, trial.table, pair)
        exact, eff = floor_draw(trial, codes, ctx, once, sampler=sampler)
        for cid in values:
            values[cid].append(exact[cid])
            limits[cid].append(eff[cid])
        real_rr.append(log_rr(codes, trial.table, pair))
        rev_rr.append(log_rr(sampler.sample(rows, ctx.rng), trial.table, pair))
    passes = all(kind_of(c).passes(float(np.mean(values[c.id])),
                                   float(np.mean(limits[c.id]))) for c in spec.criteria)
    return Reversal(str(pair["exposure"]), str(pair["outcome"]), str(pair["source"]),
                    float(np.mean(real_rr)), float(np.mean(rev_rr)), passes, rows)


__all__ = ["Reversal", "log_rr", "reversal_check", "reverse"]
