"""Missing values in the generators: the strategy hyperparameter, observed counts, the pattern.

Declared once here and included by every family that handles ``allow`` columns:

* ``missing_strategy`` — ``complete_rows`` (fit on the rows complete on every ``allow``
  column), ``partial`` (PrivBayesE, Mohapatra et al.: every marginal from the rows complete on
  *its own* attributes) or ``impute`` (column-wise, KaminoI: each column's DP model imputes
  that column's missing values before the next column is fitted; no non-DP imputation ever)
  or ``as_value`` (the missing code is one more value of its column in every marginal the model
  measures: each 1-way carries the column's missing rate, each measured pair the columns'
  co-missingness and its dependence on values; no pattern table, so ``missingness_share`` is
  unused and there is no limit on the number of ``allow`` columns — issue 36: a 2^14-cell
  pattern at ``missingness_share``·ε_gen was noise, and every column's rate came out near ½);
* ``missingness_share`` — the share of ε_gen spent on the missingness pattern, a noisy
  histogram of which ``allow`` columns are missing together, so the release's missing rates
  and co-missingness follow the data's within DP noise (all strategies but ``as_value``).

An ``allow`` column's codec has one extra code, the last (``transform.missing``); the value
model works on the value domain without it. Sensitivities (derivations in the docstrings):

* a count table over the rows complete on A: replacing one record removes it from at most one
  cell and adds the new one to at most one cell (either may be incomplete on A and absent), so
  Δ₁ ≤ 2 replace-one and 1 add/remove: ``privacy.histogram_sensitivity()``, as for full rows;
* a normalised statistic over those rows (PrivBayes' mutual information) needs the row count,
  which is data: its sensitivity is taken at the public lower bound n_c ≥ n·(1 − Σ_A φ̄_a)
  from the declared ``max_missing_rate`` φ̄ (refused when the data exceeds it, before noise);
* the pattern histogram: one record sits in one pattern cell, Δ₁ = histogram_sensitivity().
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.generators.conditional import norm_sub
from workbench.generators.mutual_information import mutual_information_sensitivity
from workbench.specification.params import Param, one_of, open_interval
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Spec

#: The strategy under which missing is a value of its column (no separate pattern).
AS_VALUE = "as_value"
STRATEGIES = ("complete_rows", "partial", "impute", AS_VALUE)


def missing_params(strategy: str = "partial") -> dict[str, Param]:
    """The hyperparameters every missing-aware family declares, with its default strategy."""
    return {
        "missing_strategy": Param(strategy, one_of(*STRATEGIES),
                                  "how 'allow' columns' missing values are used",
                                  control="choice", choices=STRATEGIES),
        "missingness_share": Param(0.05, open_interval(0, 1),
                                   "share of ε for the missingness pattern ('allow' columns; "
                                   f"unused under {AS_VALUE!r})", control="number"),
    }


#: The hyperparameters every missing-aware family declares (the same objects, declared once).
MISSING_PARAMS = missing_params()
#: At most this many ``allow`` columns (2^k pattern cells) for the strategies with a pattern.
MAX_ALLOW_COLUMNS = 16


@dataclass(frozen=True)
class MissingLayout:
    """Which columns of a domain carry a reserved missing code (their last), and their φ̄."""

    domain: Domain
    allow: tuple[int, ...]
    max_rates: tuple[float, ...]

    @classmethod
    def of(cls, domain: Domain, allow: Sequence[str], max_rates: Sequence[float],
           pattern: bool = True) -> MissingLayout | None:
        """The layout of ``domain``, or None when it has no ``allow`` column; ``pattern``:
        a 2^k pattern table will be measured, so k is capped."""
        rates = dict(zip(allow, max_rates, strict=True))
        idx = tuple(i for i, name in enumerate(domain.names) if name in rates)
        if not idx:
            return None
        if pattern and len(idx) > MAX_ALLOW_COLUMNS:
            raise ValueError(f"at most {MAX_ALLOW_COLUMNS} 'allow' columns are supported by "
                             f"a missingness pattern; missing_strategy {AS_VALUE!r} has no limit")
        return cls(domain, idx, tuple(rates[domain.names[i]] for i in idx))

    @property
    def values(self) -> Domain:
        """The value domain: every ``allow`` column without its missing code."""
        sizes = list(self.domain.sizes)
        for i in self.allow:
            sizes[i] -= 1
        return Domain(self.domain.names, tuple(sizes))

    @property
    def allow_names(self) -> tuple[str, ...]:
        return tuple(self.domain.names[i] for i in self.allow)

    def missing(self, codes: np.ndarray) -> np.ndarray:
        """(n, k) booleans: row r misses allow column j."""
        codes = np.asarray(codes)
        return np.stack([codes[:, i] == self.domain.sizes[i] - 1 for i in self.allow], axis=1)

    def check_rates(self, codes: np.ndarray) -> None:
        """Refuse (before noise) a column missing more often than its declared φ̄."""
        if len(codes) == 0:
            return
        shares = self.missing(codes).mean(axis=0)
        for name, share, bound in zip(self.allow_names, shares, self.max_rates, strict=True):
            if share > bound:
                raise ValueError(f"column {name!r} has more missing values than its declared "
                                 "max_missing_rate")

    def rows_bound(self, n: int, names: Sequence[str]) -> int:
        """Public lower bound on the rows complete on ``names``: n·(1 − Σ φ̄), at least 2."""
        lost = sum(r for name, r in zip(self.allow_names, self.max_rates, strict=True)
                   if name in names)
        return max(2, int(np.floor(n * max(0.0, 1.0 - lost) + 1e-9)))

    def with_missing(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Value codes with the missing code written where ``mask`` (n, k) says."""
        out = np.array(values, dtype=np.int64, copy=True)
        for j, i in enumerate(self.allow):
            out[mask[:, j], i] = self.domain.sizes[i] - 1
        return out


def layout_for(spec: Spec | None, domain: Domain, strategy: str | None = None
               ) -> MissingLayout | None:
    """The ``allow`` layout of a bound spec over ``domain`` (None without spec or columns)."""
    if spec is None:
        return None
    allow = spec.allow_columns
    rates = [float(spec.column(a).max_missing_rate or 0.5) for a in allow]
    return MissingLayout.of(domain, allow, rates, pattern=strategy != AS_VALUE)


def separate_layout(spec: Spec | None, domain: Domain, strategy: str, codes: np.ndarray
                    ) -> MissingLayout | None:
    """The layout a strategy fits apart from the values (refusing, before noise, a column
    missing more often than its φ̄), or None: no ``allow`` column, or ``as_value``, under
    which the family fits the whole domain, missing codes included, as it fits any table."""
    layout = layout_for(spec, domain, strategy)
    if layout is None or strategy != AS_VALUE:
        return layout
    layout.check_rates(np.asarray(codes))
    return None


class ObservedCounts:
    """What PrivBayes reads under a missing strategy: marginals over observed values only.

    ``complete_rows``: the rows complete on every ``allow`` column; ``partial``: for each
    marginal, the rows complete on its own attributes. ``domain`` is the value domain and ``n``
    the public number of records; ``rows_bound`` gives the public lower bound on the rows a
    marginal reads, used by every normalised statistic's sensitivity.
    """

    def __init__(self, codes: np.ndarray, layout: MissingLayout, complete_rows: bool) -> None:
        full = CellCounts.from_codes(codes, layout.domain)
        if complete_rows:
            keep = ~layout.missing(full.cells).any(axis=1) if len(full.cells) else np.zeros(0, bool)
            full = CellCounts(full.cells[keep], full.counts[keep], layout.domain,
                              int(full.counts[keep].sum()))
        self._full = full
        self.layout = layout
        self.complete_rows = complete_rows
        self.domain = layout.values
        self.n = int(np.asarray(codes).shape[0])

    def marginal(self, names: tuple[str, ...] | list[str]) -> np.ndarray:
        """Counts over the observed values of ``names`` (missing codes sliced off)."""
        names = tuple(names)
        table = self._full.marginal(names)
        if not names:
            return table
        allow = set(self.layout.allow_names)
        return table[tuple(slice(0, -1) if c in allow else slice(None) for c in names)]

    def rows_bound(self, names: Sequence[str]) -> int:
        """Public lower bound on the rows this view reads for a marginal over ``names``."""
        return self.layout.rows_bound(
            self.n, self.layout.allow_names if self.complete_rows else names)

    def mi_sensitivity(self, names: Sequence[str], child_size: int, parent_size: int,
                       neighbour: str) -> float:
        """Δ of I(X; Π) on the rows complete on ``names``: PrivBayes Lemma 1 at the public
        bound m; a replace-one neighbour of the whole table may add or remove a row of the
        subset instead of replacing one, so the larger of both relations' Δ at m is taken."""
        m = self.rows_bound(names)
        delta = mutual_information_sensitivity(m, child_size, parent_size, neighbour)
        if neighbour == "replace_one":
            delta = max(delta, mutual_information_sensitivity(
                m, child_size, parent_size, "add_remove"))
        return delta


class PatternModel:
    """The DP missingness pattern of the ``allow`` columns: a noisy 2^k histogram, sampled."""

    def __init__(self, layout: MissingLayout) -> None:
        self.layout = layout
        self.probs: np.ndarray | None = None

    def fit(self, codes: np.ndarray, privacy: PrivacyContext, epsilon: float) -> PatternModel:
        """Release the pattern counts with discrete Laplace (Δ₁ = histogram_sensitivity():
        one record sits in one pattern cell), then Norm-Sub and normalise (post-processing).

        Clipping alone added the noise's positive part to every empty pattern, each with
        about half the columns missing: every rate came out too high (issue 36: 0.5–0.9
        points on a 12-column registry, near ½ with 2^14 cells)."""
        k = len(self.layout.allow)
        bits = self.layout.missing(codes).astype(np.int64) << np.arange(k, dtype=np.int64)
        counts = np.bincount(bits.sum(axis=1), minlength=1 << k)
        noisy = privacy.discrete_laplace(
            counts, sensitivity=privacy.histogram_sensitivity(), epsilon=epsilon,
            purpose=f"missingness pattern of {', '.join(self.layout.allow_names)}")
        clipped = norm_sub(np.asarray(noisy.value, dtype=np.float64))
        if clipped.sum() <= 0:
            clipped[0] = 1.0
        self.probs = clipped / clipped.sum()
        return self

    def sample_mask(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """(n, k) booleans drawn from the noisy pattern (post-processing)."""
        assert self.probs is not None, "fit the pattern first"
        k = len(self.layout.allow)
        pattern = rng.choice(len(self.probs), size=n, p=self.probs)
        return ((pattern[:, None] >> np.arange(k)) & 1).astype(bool)

    def apply(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Value codes with missing codes placed by the pattern."""
        return self.layout.with_missing(values, self.sample_mask(len(values), rng))
