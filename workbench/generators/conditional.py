"""Conditional tables P(child | parents) built from noisy counts and sampled by inverse CDF."""

from __future__ import annotations

import numpy as np

from workbench.specification.params import Param, one_of

#: How rows are drawn along a sampling plan (post-processing either way).
SAMPLING = ("iid", "rounded")
#: The one declaration of the ``sampling`` hyperparameter, shared by PrivBayes and workload.
SAMPLING_PARAM = Param("iid", one_of(*SAMPLING), "'iid' draws, or 'rounded' counts per parent "
                       "group (less sampling noise: better faithfulness)",
                       control="choice", choices=SAMPLING)


def norm_sub(counts: np.ndarray) -> np.ndarray:
    """Non-negative table with the same total: max(x − τ, 0), Σ = max(Σx, 0).

    >>> norm_sub(np.array([[5.0, -1.0], [2.0, -2.0]])).tolist()
    [[3.5, 0.0], [0.5, 0.0]]
    """
    flat = np.asarray(counts, dtype=np.float64).ravel()
    total = float(flat.sum())
    if total <= 0.0:
        return np.zeros_like(np.asarray(counts, dtype=np.float64))
    desc = np.sort(flat)[::-1]
    cums = np.cumsum(desc)
    idx = np.arange(1, desc.size + 1)
    feasible = desc - (cums - total) / idx > 0
    rho = int(np.flatnonzero(feasible)[-1])
    tau = (cums[rho] - total) / (rho + 1)
    return np.clip(np.asarray(counts, dtype=np.float64) - tau, 0.0, None)


class ConditionalTable:
    """One categorical distribution per parent configuration, sampled for all rows at once.

    Built only from already-noisy counts, so everything here is post-processing.

    >>> table = ConditionalTable.from_noisy_counts(np.array([[5, -2, 1], [0, 0, 0]]))
    >>> table.probs.tolist()
    [[1.0, 0.0, 0.0], [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]]
    >>> table.n_codes
    3
    """

    def __init__(self, probs: np.ndarray) -> None:
        probs = np.asarray(probs, dtype=np.float64)
        if probs.ndim != 2 or probs.shape[1] == 0:
            raise ValueError(f"probs must be a (configs, codes) matrix, got shape {probs.shape}")
        self.probs = probs
        configs, k = probs.shape
        cdf = np.cumsum(probs, axis=1)
        cdf /= cdf[:, -1:]
        cdf[:, -1] = 1.0
        # Row r's CDF shifted by r makes one increasing array: one searchsorted serves every row.
        self._shifted = (cdf + np.arange(configs, dtype=np.float64)[:, None]).ravel()
        # Rounding can push a draw past the last code with mass; clamp it back there.
        self._last = (k - 1 - np.argmax(probs[:, ::-1] > 0, axis=1)).astype(np.int64)

    @classmethod
    def from_noisy_counts(cls, counts: np.ndarray) -> ConditionalTable:
        """Make the noisy table consistent (Norm-Sub), normalise rows; empty rows become uniform.

        Plain clipping of negative cells adds the noise's positive part to every empty cell,
        which inflates rare values (a parity-11+ bin doubled on the proxy). Norm-Sub subtracts
        one common amount τ from all cells and clips, with τ chosen so the table keeps its noisy
        total: the Euclidean projection onto {x ≥ 0, Σx = Σ noisy} (Wang et al. 2020,
        "Locally differentially private frequency estimation with consistency").
        """
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim == 1:
            counts = counts[None, :]
        clipped = norm_sub(counts)
        totals = clipped.sum(axis=1, keepdims=True)
        k = clipped.shape[1]
        probs = np.divide(clipped, totals, out=np.full_like(clipped, 1.0 / k), where=totals > 0)
        return cls(probs)

    @property
    def n_codes(self) -> int:
        """Number of child codes: the domain size, whatever codes the data happened to use."""
        return int(self.probs.shape[1])

    def sample(self, config: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Draw one child code per row given each row's parent-configuration index."""
        config = np.asarray(config, dtype=np.int64)
        k = self.n_codes
        u = rng.random(config.shape[0])
        u += config  # config + u, in place (one n-float array fewer at 4,000,000 rows)
        codes = np.searchsorted(self._shifted, u, side="right")
        del u
        codes -= config * k
        return np.minimum(codes, self._last[config], out=codes)


Plan = list[tuple[int, tuple[int, ...], tuple[int, ...], ConditionalTable]]


def ancestral_sample(plan: Plan, n: int, d: int, rng: np.random.Generator,
                     rounded: bool = False, dtype: np.dtype | type = np.int64) -> np.ndarray:
    """n rows of d codes, one vectorised draw per (column, parents, sizes, table).

    ``rounded``: each column's counts per parent group are rounded (:func:`rounded_draw`)
    instead of drawn i.i.d. An i.i.d. sample of n rows from even the true distribution is a
    bootstrap: it misses rare records and doubles others, which is exactly the faithfulness
    floor. Rounding every conditional (Private-PGM's ``synthetic_data(method="round")``) removes
    most of that sampling noise while keeping every conditional's expectation. ``dtype``: the
    output's (narrow unsigned codes hold the same values in an eighth of the memory).
    """
    out = np.zeros((n, d), dtype=dtype)
    for col, parents, parent_sizes, table in plan:
        config = parent_configurations(out, parents, parent_sizes)
        out[:, col] = (rounded_draw(table, config, int(np.prod(parent_sizes)), rng) if rounded
                       else table.sample(config, rng))
    return out


def parent_configurations(rows: np.ndarray, parents: tuple[int, ...],
                          parent_sizes: tuple[int, ...]) -> np.ndarray:
    """Each row's parent-configuration index, ``np.ravel_multi_index`` of its parent codes (C
    order), built one parent column at a time in place: at 4,000,000 rows the
    ``rows[:, parents]`` copy it replaces was up to 5 × 32 MB (issue 38)."""
    config = np.zeros(rows.shape[0], dtype=np.int64)
    for parent, size in zip(parents, parent_sizes, strict=True):
        config *= size
        config += rows[:, parent]
    return config


def rounded_draw(table: ConditionalTable, config: np.ndarray, n_configs: int,
                 rng: np.random.Generator) -> np.ndarray:
    """Child codes whose count in every parent group is n_g·p rounded at random (unbiased).

    Each group gets ⌊n_g·p_c⌋ rows of code c, and the remaining rows go to codes by systematic
    sampling on the fractional parts (one uniform per group), so every count is n_g·p_c rounded
    up or down with E[count] = n_g·p_c. Rows keep a random order within their group.
    """
    config = np.asarray(config, dtype=np.int64)
    n_g = np.bincount(config, minlength=n_configs).astype(np.float64)
    expected = n_g[:, None] * table.probs
    integ = np.floor(expected)
    cum = np.cumsum(expected - integ, axis=1)
    u = rng.random(n_configs)[:, None]
    # Systematic sampling: cell i gets one extra row when the frac staircase crosses u + j.
    edges = np.floor(cum - u + 1e-9) + 1.0
    extra = np.diff(np.concatenate([np.zeros((n_configs, 1)), edges], axis=1), axis=1)
    counts = (integ + np.clip(extra, 0, 1)).astype(np.int64)
    short = n_g.astype(np.int64) - counts.sum(axis=1)
    if short.any():  # floating-point edge: give the leftover rows to the most likely code
        counts[np.arange(n_configs), np.argmax(table.probs, axis=1)] += short
    k = table.n_codes
    vals = np.repeat(np.tile(np.arange(k, dtype=np.int64), n_configs), counts.ravel())
    order = np.lexsort((rng.random(config.shape[0]), config))
    out = np.empty(config.shape[0], dtype=np.int64)
    out[order] = vals
    return out


def sample_plan(plan: Plan, n: int, d: int, rng: np.random.Generator,
                sampling: str = "iid", dtype: np.dtype | type = np.int64) -> np.ndarray:
    """Rows along ``plan`` by the family's ``sampling`` hyperparameter (codes of ``dtype``)."""
    return ancestral_sample(plan, n, d, rng, rounded=sampling == "rounded", dtype=dtype)
