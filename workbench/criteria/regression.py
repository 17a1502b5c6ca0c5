"""Linear-regression criteria (Hod & Canetti §4.5.4): DP coefficients of R, and TSTR MAE.

**Design.** Bins become numbers by the bin-to-number rule; a categorical feature without
numbers (e.g. sex) becomes 0/1 indicators of its codes after the first. The target keeps its
bin numbers (grams for birth weight). All of it comes from the public codecs.

**DP coefficients of R: sufficient-statistics perturbation.** Each feature x_j is mapped onto
[−½, ½] with its *public* range (min and max of its per-code values), z_j = (x_j − c_j)/ρ_j
with c_j the range's midpoint, and so is the target, t = (y − c_t)/ρ_t. With z̃ = (1, z), the
OLS normal equations need only

    A = Σ_records z̃ z̃ᵀ  and  b = Σ_records z̃ t.

A[0, 0] = n is public. The other upper-triangular entries of A and all of b form the vector s
released with one Laplace call. Each entry is a sum over records of a per-record product
φ_e(x) that lies in a public interval of width ρ_e (features of one source column are taken
jointly over its codes; features of different columns, or a feature and the target, over the
product of their ranges — a bilinear map's extremes sit at the box's corners). Replacing one
record moves entry e by at most ρ_e. Centring at the midpoint makes these widths small
(½ for a cross product, ¼ or less for a square, 0 for the square of a 0/1 indicator).
Entry e is released as c_e·s_e with public weights c_e, so the L1 sensitivity is
Δ = Σ_e c_e·ρ_e (:func:`workbench.criteria.sensitivity.sufficient_statistics`) and entry e gets
Laplace noise of scale (Δ/ε)/c_e. An entry with ρ_e = 0 (the square of a 0/1 indicator) has
the same value φ_e for every record, so its sum n·φ_e is public and it is not released at all.
The weights default to one constant per kind of entry (``STATISTIC_WEIGHTS``); a criterion may
set them per entry (``params.statistic_weights``, entry names from :func:`statistic_names`),
and :func:`~workbench.criteria.regression_fit.tuned_statistic_weights` computes such weights
on *public* data: to first order the variance of the standardised coefficients is Σ_e
g_e²·2(Δ/(ε c_e))², with g_e the norm of their derivative in entry e, which for Δ = Σ c_e ρ_e
is smallest at c_e ∝ (g_e²/ρ_e)^⅓. On the public proxy that cuts the noise σ of the
coefficient criterion by a third against the per-kind constants (σ·ε 2.5 → 1.7 at n ≈ 160k, on
the proxy and on the US 2019 sample alike). The weights are written in the spec, so they never
look at R. The noisy A is symmetrised, its eigenvalues floored at the noise scale Δ/ε, and w =
A⁻¹b; everything after the Laplace call is post-processing. The coefficients are then mapped
back to raw units. (The paper used diffprivlib's functional mechanism, whose sensitivity has a
known issue; this mechanism is simpler and its Δ is checked in ``tests/test_criteria.py``.)
``params.sensitivity: joint`` (issue 37) replaces Σ_e c_e·ρ_e by the exact L1 diameter of the
weighted per-record vectors over the public record universe, which is smaller because the
per-entry extremes need different records (:mod:`workbench.criteria.regression_joint`).

Because this uses R alone, with a fixed transformation it can be computed **once**, outside
the selection loop (§4.14.1): :func:`dp_regression_coefficients` is that computation, and its
:class:`RegressionRelease` is then reused by every iteration.

**Coefficient criterion.** Features are standardised with the mean and standard deviation of S
(public, no budget), so coefficient j becomes β_j·sd_S(x_j) for both models; the error is the
L1 distance between w^ε(R) and the OLS w(S) over the feature coefficients (the intercept is
not compared). It is post-processing of the DP coefficients, so it costs no further ε.

**MAE criterion** (TSTR, Prop. 9): |MAE_R(w^ε_R) − MAE_R(w_S)|, predictions clipped to
[L, U], with w^ε_R the DP coefficients released above (public, as in the paper) and w_S the
OLS fit on S; Δ = 2(U − L)/n.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.criteria import sensitivity
from workbench.criteria.regression_joint import joint_delta
from workbench.privacy import MeasurementRecord, PrivacyContext
from workbench.specification.model import Criterion, Spec
from workbench.specification.space import Configuration
from workbench.transform import TableCodec
from workbench.transform.cells import distinct_cells

MECHANISM = "laplace_sufficient_statistics"
#: The two sensitivity rules of the release (``params.sensitivity``).
ENTRYWISE, JOINT = "entrywise", "joint"
#: Budget weights of the released entries: entry e is released as c_e·s_e, so its noise is
#: (Δ/ε)/c_e with Δ = Σ c_e ρ_e. Coefficients depend most on Σz̃t and least on the feature
#: sums (already precise to 1/n); these public constants were chosen on the public proxy
#: (they roughly minimise the coefficient error there) and never look at R.
STATISTIC_WEIGHTS: dict[str, float] = {
    "feature_sum": 1.0,
    "feature_product": 2.0,
    "target_sum": 2.0,
    "target_product": 4.0,
}


def regression_columns(spec: Spec, criterion: Criterion) -> tuple[str, tuple[str, ...]]:
    """Target and feature source columns of a regression criterion ('all_other' resolved)."""
    params: Mapping[str, Any] = criterion.params
    target = str(params["target"])
    features = params.get("features", "all_other")
    if features == "all_other":
        return target, tuple(c for c in spec.column_names if c != target)
    return target, tuple(str(f) for f in features)


def _code_features(table: TableCodec, column: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Per-code feature values of a column: its numbers, or indicators of codes after the first."""
    codec = table.codec(column)
    try:
        return codec.numbers().reshape(-1, 1), (column,)
    except ValueError:
        size = codec.size
        names = tuple(f"{column}={label}" for label in codec.labels[1:])
        return np.eye(size, dtype=np.float64)[:, 1:], names


@dataclass(frozen=True)
class RegressionDesign:
    """How cells become a design matrix and a target, from the public codecs only."""

    target: str
    sources: tuple[str, ...]
    names: tuple[str, ...]
    owner: np.ndarray
    code_features: tuple[np.ndarray, ...]
    target_values: np.ndarray
    columns: tuple[str, ...]
    weight_overrides: tuple[tuple[str, float], ...] = ()
    threshold: float = 0.0
    #: "entrywise" (Δ = Σ_e c_e·ρ_e) or "joint" (the exact L1 diameter, ``regression_joint``)
    sensitivity_rule: str = ENTRYWISE

    @classmethod
    def build(cls, spec: Spec, table: TableCodec, criterion: Criterion) -> RegressionDesign:
        """The design of a regression criterion under one configuration's codecs."""
        target, sources = regression_columns(spec, criterion)
        blocks, names, owner = [], [], []
        for j, column in enumerate(sources):
            values, labels = _code_features(table, column)
            blocks.append(values)
            names.extend(labels)
            owner.extend([j] * values.shape[1])
        y = table.codec(target).numbers()
        if criterion.bounds is not None:
            y = np.clip(y, *criterion.bounds)
        overrides = criterion.params.get("statistic_weights") or {}
        return cls(
            target,
            sources,
            tuple(names),
            np.asarray(owner, dtype=np.int64),
            tuple(blocks),
            y.astype(np.float64),
            table.names,
            tuple((str(k), float(v)) for k, v in overrides.items()),
            float(criterion.threshold),
            str(criterion.params.get("sensitivity") or ENTRYWISE),
        )

    @property
    def p(self) -> int:
        """Number of features (indicator columns counted one by one)."""
        return len(self.names)

    def features(self, cells: np.ndarray) -> np.ndarray:
        """Raw feature matrix (k, p) of code cells."""
        parts = [
            block[cells[:, self.columns.index(col)]]
            for col, block in zip(self.sources, self.code_features, strict=True)
        ]
        return np.hstack(parts) if parts else np.zeros((cells.shape[0], 0))

    def target_of(self, cells: np.ndarray) -> np.ndarray:
        """Target numbers (k,) of code cells."""
        return self.target_values[cells[:, self.columns.index(self.target)]]

    def feature_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Public lower end and width of every feature over its column's codes."""
        lo = np.concatenate([b.min(axis=0) for b in self.code_features]) if self.p else np.zeros(0)
        hi = np.concatenate([b.max(axis=0) for b in self.code_features]) if self.p else np.zeros(0)
        return lo, hi - lo


def _feature_scaling(design: RegressionDesign) -> tuple[np.ndarray, np.ndarray]:
    """Public centre (midpoint) and width of every feature; z = (x − centre)/width ∈ [−½, ½]."""
    lo, width = design.feature_ranges()
    return lo + width / 2.0, np.where(width > 0, width, 1.0)


def _scaled_blocks(design: RegressionDesign) -> list[np.ndarray]:
    """Per source column, its features mapped onto [−½, ½] per code (constant features → 0)."""
    centre, safe = _feature_scaling(design)
    out, start = [], 0
    for block in design.code_features:
        q = block.shape[1]
        out.append((block - centre[start : start + q]) / safe[start : start + q])
        start += q
    return out


def statistic_ranges(design: RegressionDesign) -> np.ndarray:
    """Public width ρ_e of every released entry's per-record value (see the module docstring)."""
    blocks = _scaled_blocks(design)
    zmin = np.concatenate([b.min(axis=0) for b in blocks]) if blocks else np.zeros(0)
    zmax = np.concatenate([b.max(axis=0) for b in blocks]) if blocks else np.zeros(0)
    t = _scale_target(design)[0]
    tmin, tmax = float(t.min()), float(t.max())
    p = design.p
    iu = np.triu_indices(p + 1)
    ranges = []
    for i, j in zip(*iu, strict=True):
        if i == 0 and j == 0:
            continue
        if i == 0:
            ranges.append(zmax[j - 1] - zmin[j - 1])
        elif design.owner[i - 1] == design.owner[j - 1]:
            block = blocks[design.owner[i - 1]]
            first = int(np.flatnonzero(design.owner == design.owner[i - 1])[0])
            prod = block[:, i - 1 - first] * block[:, j - 1 - first]
            ranges.append(prod.max() - prod.min())
        else:
            ranges.append(_corner_range(zmin[i - 1], zmax[i - 1], zmin[j - 1], zmax[j - 1]))
    ranges.append(tmax - tmin)
    for i in range(p):
        ranges.append(_corner_range(zmin[i], zmax[i], tmin, tmax))
    return np.asarray(ranges, dtype=np.float64)


def _corner_range(a0: float, a1: float, b0: float, b1: float) -> float:
    """Width of {a·b : a ∈ [a0, a1], b ∈ [b0, b1]}; a bilinear map's extremes sit at corners."""
    corners = np.array([a0 * b0, a0 * b1, a1 * b0, a1 * b1])
    return float(corners.max() - corners.min())


def _scale_target(design: RegressionDesign) -> tuple[np.ndarray, float, float]:
    """Target per code mapped onto [−½, ½] with its public range: (t, centre, width)."""
    y = design.target_values
    lo, width = float(y.min()), float(y.max() - y.min())
    width = width if width > 0 else 1.0
    centre = lo + width / 2.0
    return (y - centre) / width, centre, width


def statistic_names(design: RegressionDesign) -> tuple[str, ...]:
    """Readable name of every entry, in release order: 'x', 'x^2', 'x*y', 'target', 'target*x'."""
    names = design.names
    out = []
    for i, j in zip(*np.triu_indices(design.p + 1), strict=True):
        if i == 0 and j == 0:
            continue
        if i == 0:
            out.append(names[j - 1])
        elif i == j:
            out.append(f"{names[i - 1]}^2")
        else:
            out.append(f"{names[i - 1]}*{names[j - 1]}")
    out.append(design.target)
    out.extend(f"{design.target}*{name}" for name in names)
    return tuple(out)


def _statistic_kinds(design: RegressionDesign) -> list[str]:
    """Kind of every entry, for the per-kind default weights."""
    iu = np.triu_indices(design.p + 1)
    kinds = ["feature_sum" if i == 0 else "feature_product" for i, _ in zip(*iu, strict=True)]
    return kinds[1:] + ["target_sum"] + ["target_product"] * design.p


def statistic_weights(design: RegressionDesign) -> np.ndarray:
    """Public weight c_e of every entry: the criterion's per-entry weights, else the kind's."""
    weights = np.array([STATISTIC_WEIGHTS[k] for k in _statistic_kinds(design)])
    if design.weight_overrides:
        index = {name: e for e, name in enumerate(statistic_names(design))}
        for name, value in design.weight_overrides:
            if name not in index:
                raise ValueError(
                    f"params.statistic_weights: unknown entry {name!r}; the entries of this "
                    f"regression are {', '.join(index)}"
                )
            weights[index[name]] = value
    return weights


def _constant_entries(design: RegressionDesign) -> tuple[np.ndarray, np.ndarray]:
    """Mask of entries that are the same for every record (ρ_e = 0), and their per-record value."""
    constant = statistic_ranges(design) == 0
    any_cell = np.zeros((1, len(design.columns)), dtype=np.int64)
    return constant, _statistics(design, any_cell, np.ones(1))


def regression_sensitivity(design: RegressionDesign) -> float:
    """L1 Δ of the released weighted statistics c ⊙ s under replace-one: Σ_e c_e·ρ_e, or the
    exact diameter (``regression_joint.joint_delta``) under the "joint" rule."""
    entrywise = sensitivity.sufficient_statistics(
        statistic_weights(design) * statistic_ranges(design))
    if design.sensitivity_rule != JOINT:
        return entrywise
    return joint_delta(_scaled_blocks(design), _scale_target(design)[0],
                       statistic_weights(design), entrywise)


def _statistics(design: RegressionDesign, cells: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Exact Σ z̃z̃ᵀ (upper triangle without [0, 0]) and Σ z̃t of R (confidential)."""
    centre, width = _feature_scaling(design)
    z = (design.features(cells) - centre) / width
    t_codes, _, _ = _scale_target(design)
    t = t_codes[cells[:, design.columns.index(design.target)]]
    zt = np.hstack([np.ones((cells.shape[0], 1)), z])
    w = counts.astype(np.float64)
    a = (zt * w[:, None]).T @ zt
    b = (zt * w[:, None]).T @ t
    iu = np.triu_indices(design.p + 1)
    return np.concatenate([a[iu][1:], b])


def _normal_equations(
    design: RegressionDesign, stats: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The symmetric A (with A[0, 0] = n) and b of the normal equations from the statistics."""
    q = design.p + 1
    iu = np.triu_indices(q)
    a = np.zeros((q, q))
    a[iu] = np.concatenate([[float(n)], stats[: iu[0].size - 1]])
    return a + np.triu(a, 1).T, stats[iu[0].size - 1 :]


def _solve(design: RegressionDesign, stats: np.ndarray, n: int, floor: float) -> np.ndarray:
    """w = A⁻¹b from released statistics, A symmetrised and its eigenvalues floored."""
    a, b = _normal_equations(design, stats, n)
    vals, vecs = np.linalg.eigh(a)
    vals = np.maximum(vals, floor)
    return vecs @ ((vecs.T @ b) / vals)


@dataclass(frozen=True)
class RegressionRelease:
    """DP OLS coefficients of R in raw units: public once released, reused by MAE and loops."""

    criterion_id: str
    target: str
    sources: tuple[str, ...]
    names: tuple[str, ...]
    intercept: float
    coef: np.ndarray
    record: MeasurementRecord | None


def _to_raw(design: RegressionDesign, w: np.ndarray) -> tuple[float, np.ndarray]:
    """Coefficients of t ~ (1, z) mapped back to y ~ (1, x)."""
    centre, width = _feature_scaling(design)
    constant = design.feature_ranges()[1] == 0
    slope = np.where(constant, 0.0, w[1:] / width)
    _, tc, tw = _scale_target(design)
    coef = tw * slope
    intercept = tc + tw * (w[0] - float(slope @ centre))
    return float(intercept), coef


def dp_coefficients_from_cells(
    design: RegressionDesign,
    cells: np.ndarray,
    counts: np.ndarray,
    n: int,
    criterion: Criterion,
    ctx: PrivacyContext,
) -> RegressionRelease:
    """ε-DP coefficients of R from its distinct cells: one Laplace call on the statistics."""
    delta = regression_sensitivity(design)
    weights = statistic_weights(design)
    constant, per_record = _constant_entries(design)
    _, tc, tw = _scale_target(design)
    noisy = ctx.laplace(
        (weights * _statistics(design, cells, counts))[~constant],
        sensitivity=delta,
        epsilon=criterion.epsilon,
        purpose=f"criterion {criterion.id} (regression sufficient statistics)",
        bounds=(tc - tw / 2.0, tc + tw / 2.0),
    )
    stats = n * per_record
    stats[~constant] = np.asarray(noisy.value, dtype=np.float64) / weights[~constant]
    w = _solve(design, stats, n, noisy.record.scale)
    intercept, coef = _to_raw(design, w)
    return RegressionRelease(
        criterion.id, design.target, design.sources, design.names, intercept, coef, noisy.record
    )


def dp_regression_coefficients(
    spec: Spec,
    config: Configuration,
    criterion: Criterion,
    real_codes: np.ndarray,
    ctx: PrivacyContext,
) -> RegressionRelease:
    """The once-computation: ε-DP coefficients of R alone, for the engine to call before the loop.

    It does not look at any candidate, so with a fixed transformation it is charged once
    (§4.14.1); pass the result to ``evaluate_all(..., once_results={criterion.id: release})``.
    """
    if criterion.kind != "regression_coefficients":
        raise ValueError(f"criterion {criterion.id!r} is not a regression_coefficients criterion")
    table = spec.table_codec(config)
    design = RegressionDesign.build(spec, table, criterion)
    cells, counts = distinct_cells(real_codes, table.domain)
    return dp_coefficients_from_cells(design, cells, counts, int(counts.sum()), criterion, ctx)
