"""Maximal error of conditional means with the resize trick (Hod & Canetti §4.5.3, Alg. 2).

For an averaging column a with public bounds [L, U] and group-by columns C(a) (coarse bins),

    Ê(R, S) = max over b ∈ C(a) ∪ {⊥} and values v of |q^{m̂}_{a|b←v}(R) − q_{a|b←v}(S)|,

where q_{a|b←v}(S) is the plain mean over S's group (S is public), and q^{m̂}(R) is the
*resized* mean of Alg. 2: the group's values in R, clipped to [L, U], resized to the public size
m̂_{b←v} = max{1, ⌊n_{b←v}(S) − n·T_abs⌋} — a uniform subsample without replacement when the
group is larger, padded with the public constant w when smaller — then summed and divided by
m̂. Its sensitivity is (U − L)/m̂ (Prop. 7) and stays ε-DP with random subsampling (Prop. 8);
the max has Δ = (U − L)/min m̂ (Prop. 3). The overall mean (b = ⊥) uses m̂ = n: its group is
all of R, whose size n is public, so no resizing is needed.

Values are bin numbers (single value → itself, bounded bin → midpoint, open bin → edge).
Everything works on counts of distinct (group, target code) pairs; subsampling m̂ of a group's
records is a multivariate hypergeometric draw on its target-code counts, which has the same
distribution as sampling m̂ record indices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from workbench.criteria import sensitivity
from workbench.specification.model import Criterion, Spec
from workbench.transform import BinsCodec, Codec, TableCodec, coarse_lookup
from workbench.transform.cells import PairedCells
from workbench.transform.display import MISSING_WORDS
from workbench.transform.missing import MissingCodec


@dataclass(frozen=True)
class MeanGroups:
    """The public layout of one conditional-mean criterion: groups, sizes m̂, values, pad w."""

    target: str
    low: float
    high: float
    pad: float
    slack: float
    labels: tuple[str, ...]
    keys: np.ndarray
    n_groups: int
    values: np.ndarray
    synth_table: np.ndarray
    m_hat: np.ndarray
    synth_means: np.ndarray

    @property
    def sensitivity(self) -> float:
        """Δ = (U − L)/min m̂ (Props. 3 and 7)."""
        return sensitivity.conditional_mean(self.low, self.high, self.m_hat.tolist())


def resize_slack(spec: Spec, criterion: Criterion) -> float:
    """T_abs: a number, or the threshold of the named max_marginal_error criterion (§4.5.3)."""
    slack = criterion.params.get("resize_slack", 0.0)
    if isinstance(slack, str):
        return float(spec.criterion(slack).threshold)
    return float(slack)


@lru_cache(maxsize=256)
def _coarse_codes(codec: Codec, coarse: BinsCodec) -> np.ndarray:
    """Coarse bin of every fine code (public; cached because codecs are immutable); the missing
    code of a ``category``/``allow`` column is a group of its own, after the coarse bins."""
    if isinstance(codec, MissingCodec):
        return np.append(coarse_lookup(codec.base, coarse), coarse.size)
    return coarse_lookup(codec, coarse)


def _group_keys(
    spec: Spec, table: TableCodec, column: str, codes: np.ndarray
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Group index of every cell for one group-by column: its coarse bin when it has one."""
    codec = table.codec(column)
    coarse = spec.transform(column).coarse
    if coarse is None:
        return codes, tuple(f"{column}={label}" for label in codec.labels)
    lookup = _coarse_codes(codec, coarse)
    labels = list(coarse.labels)
    if isinstance(codec, MissingCodec):
        labels.append(codec.labels[codec.missing_code] or MISSING_WORDS)
    return lookup[codes], tuple(f"{column}={label}" for label in labels)


def mean_groups(spec: Spec, table: TableCodec, criterion: Criterion, pc: PairedCells) -> MeanGroups:
    """Groups, public sizes m̂ and S's means, computed from n, S and the spec only."""
    params: Mapping[str, Any] = criterion.params
    target = str(params["target"])
    if criterion.bounds is None:
        raise ValueError(f"criterion {criterion.id!r}: a conditional mean needs bounds [L, U]")
    low, high = criterion.bounds
    pad_value = params.get("pad_value")
    pad = float((low + high) / 2.0 if pad_value is None else pad_value)
    slack = resize_slack(spec, criterion)
    values = np.clip(table.codec(target).numbers(), low, high)
    k = values.size
    tcode = pc.column(target)
    keys_list: list[np.ndarray] = []
    labels: list[str] = []
    offset = 0
    for column in params.get("group_by", []):
        keys, names = _group_keys(spec, table, str(column), pc.column(str(column)))
        keys_list.append(keys + offset)
        labels.extend(names)
        offset += len(names)
    n_groups = offset
    keys = np.stack(keys_list, axis=0) if keys_list else np.zeros((0, tcode.size), np.int64)
    synth = np.zeros((n_groups, k), dtype=np.int64)
    for row in keys:
        synth += pc.table(row * k + tcode, n_groups * k, "synth").reshape(n_groups, k)
    n_s = synth.sum(axis=1)
    m_hat = np.array([sensitivity.resize_size(int(c), pc.n, slack) for c in n_s], dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(n_s > 0, synth @ values / np.maximum(n_s, 1), pad)
    if params.get("include_overall", True):
        overall = pc.table(tcode, k, "synth")
        synth = np.vstack([synth, overall[None, :]])
        m_hat = np.append(m_hat, pc.n)
        means = np.append(means, overall @ values / pc.n)
        labels.append("overall")
    return MeanGroups(
        target=target,
        low=float(low),
        high=float(high),
        pad=pad,
        slack=slack,
        labels=tuple(labels),
        keys=keys,
        n_groups=n_groups,
        values=values,
        synth_table=synth,
        m_hat=m_hat,
        synth_means=means,
    )


def real_table(groups: MeanGroups, pc: PairedCells, include_overall: bool) -> np.ndarray:
    """R's counts per (group, target code), one row per group (confidential; never released)."""
    k = groups.values.size
    tcode = pc.column(groups.target)
    real = np.zeros((groups.n_groups, k), dtype=np.int64)
    for row in groups.keys:
        real += pc.table(row * k + tcode, groups.n_groups * k, "real").reshape(groups.n_groups, k)
    if include_overall:
        real = np.vstack([real, pc.table(tcode, k, "real")[None, :]])
    return real


def resized_means(
    counts: np.ndarray,
    values: np.ndarray,
    m_hat: np.ndarray,
    pad: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Alg. 2 per group on value counts: sum all, pad with w up to m̂, or subsample m̂; ÷ m̂.

    >>> rng = np.random.default_rng(0)
    >>> resized_means(np.array([[2, 0], [1, 1]]), np.array([1.0, 3.0]), np.array([4, 2]), 2.0, rng)
    array([1.5, 2. ])
    """
    counts = np.asarray(counts, dtype=np.int64)
    sizes = counts.sum(axis=1)
    sums = counts @ values + np.maximum(m_hat - sizes, 0) * pad
    for g in np.flatnonzero(sizes > m_hat):
        picked = rng.multivariate_hypergeometric(counts[g], int(m_hat[g]))
        sums[g] = picked @ values
    return sums / m_hat


def conditional_mean_error(
    groups: MeanGroups, pc: PairedCells, rng: np.random.Generator, include_overall: bool
) -> float:
    """Ê(R, S): max over groups of |resized mean of R − mean of S| (one draw of the subsample)."""
    real = real_table(groups, pc, include_overall)
    means_r = resized_means(real, groups.values, groups.m_hat, groups.pad, rng)
    return float(np.abs(means_r - groups.synth_means).max())


def exact_conditional_mean_error(
    groups: MeanGroups, pc: PairedCells, include_overall: bool
) -> float:
    """E(R, S) without resizing (plain group means of R), for public diagnostics and tests."""
    real = real_table(groups, pc, include_overall)
    size = real.sum(axis=1)
    means_r = np.where(size > 0, real @ groups.values / np.maximum(size, 1), groups.pad)
    return float(np.abs(means_r - groups.synth_means).max())
