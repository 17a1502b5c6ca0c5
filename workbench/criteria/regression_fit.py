"""Exact least squares on cells, the regression criteria's error measures, and tuned weights.

Nothing here adds noise. The OLS fit is of S (public) or, inside a criterion's exact error and
for public co-design, of R; the coefficient gap and the clipped MAE are the two regression
criteria's measures (:mod:`workbench.criteria.kinds.regression_coefficients`,
:mod:`workbench.criteria.kinds.regression_mae`); :func:`tuned_statistic_weights` sets the DP
release's per-entry weights from *public* data (see :mod:`workbench.criteria.regression`).
"""

from __future__ import annotations

import numpy as np

from workbench.criteria.regression import (
    JOINT,
    RegressionDesign,
    _feature_scaling,
    _normal_equations,
    _scale_target,
    _scaled_blocks,
    _statistics,
    statistic_names,
    statistic_ranges,
)
from workbench.criteria.regression_joint import record_universe, tuned_joint_weights


def ols_from_cells(
    design: RegressionDesign, cells: np.ndarray, counts: np.ndarray
) -> tuple[float, np.ndarray]:
    """Exact weighted OLS (intercept, coefficients) in raw units; for S, or R in public tests."""
    x = design.features(cells)
    y = design.target_of(cells)
    sw = np.sqrt(counts.astype(np.float64))
    xt = np.hstack([np.ones((x.shape[0], 1)), x]) * sw[:, None]
    w, *_ = np.linalg.lstsq(xt, y * sw, rcond=None)
    return float(w[0]), w[1:]


def feature_sd(design: RegressionDesign, cells: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Standard deviation of every feature in S (public); constant features get 1."""
    x = design.features(cells)
    w = counts.astype(np.float64) / counts.sum()
    mean = w @ x
    sd = np.sqrt(np.maximum(w @ (x - mean) ** 2, 0.0))
    return np.where(sd > 0, sd, 1.0)


def coefficient_error(coef_r: np.ndarray, coef_s: np.ndarray, sd_s: np.ndarray) -> float:
    """‖w_R − w_S‖₁ of the coefficients standardised with S's standard deviations."""
    return float(np.abs((np.asarray(coef_r) - np.asarray(coef_s)) * sd_s).sum())


def clipped_mae(
    design: RegressionDesign,
    cells: np.ndarray,
    counts: np.ndarray,
    intercept: float,
    coef: np.ndarray,
    bounds: tuple[float, float],
) -> float:
    """MAE_D(w) = (1/n)·Σ |y − clip(w·x, L, U)| over the cells of D with their counts."""
    pred = np.clip(intercept + design.features(cells) @ coef, *bounds)
    err = np.abs(design.target_of(cells) - pred)
    return float(counts @ err) / float(counts.sum())


def noise_gradients(design: RegressionDesign, cells: np.ndarray, counts: np.ndarray,
                    floor: float | None = None) -> np.ndarray:
    """g_e² per released entry (order of ``statistic_names``), from PUBLIC data: how much
    noise on entry e moves the standardised coefficients (:func:`tuned_statistic_weights`)."""
    floor = design.threshold / design.p if floor is None else floor
    a, b = _normal_equations(design, _statistics(design, cells, counts), int(counts.sum()))
    a_inv = np.linalg.inv(a)
    _, width = _feature_scaling(design)
    scale = _scale_target(design)[2] * feature_sd(design, cells, counts) / width
    w = np.abs(a_inv @ b)
    w[1:] = np.maximum(w[1:], floor / scale)

    def sq(column: np.ndarray) -> float:
        return float(((column[1:] * scale) ** 2).sum())

    q = design.p + 1
    g2 = [
        sq(a_inv[:, i]) * w[j] ** 2 + (sq(a_inv[:, j]) * w[i] ** 2 if i != j else 0.0)
        for i, j in zip(*np.triu_indices(q), strict=True)
        if (i, j) != (0, 0)
    ]
    g2.extend(sq(a_inv[:, k]) for k in range(q))
    return np.asarray(g2, dtype=np.float64)


def tuned_statistic_weights(
    design: RegressionDesign, cells: np.ndarray, counts: np.ndarray, floor: float | None = None
) -> dict[str, float]:
    """Per-entry weights c_e ∝ (g_e²/ρ_e)^⅓ from PUBLIC data (see the module docstring).

    g_e² is the expected squared norm of ∂(standardised coefficients)/∂s_e at the public data's
    statistics, taking each coefficient's sign as unknown and its size as at least ``floor``
    (standardised units; default: the criterion's L1 threshold shared over the p coefficients,
    the size of error that matters): the public data fixes the design's second moments well but
    may get the coefficients wrong (the proxy's mother-age coefficient is −2 g/sd, the US
    sample's +27), and an A-entry's effect is proportional to them. Under ``sensitivity:
    joint`` the weights minimise the same noise at the exact joint Δ instead
    (:func:`~workbench.criteria.regression_joint.tuned_joint_weights`). Scaled to a largest
    weight of 4, rounded to 3 significant digits.
    """
    g2 = noise_gradients(design, cells, counts, floor)
    rho = statistic_ranges(design)
    live = rho > 0
    c = np.where(live, np.cbrt(g2 / np.where(live, rho, 1.0)), 0.0)
    points = (record_universe(_scaled_blocks(design), _scale_target(design)[0])
              if design.sensitivity_rule == JOINT else None)
    if points is not None:  # under the joint Δ the optimum has another shape (issue 37)
        c[live] = tuned_joint_weights(points[:, live], g2[live])
    c = 4.0 * c / c[live].max()
    return {
        name: float(f"{max(value, 1e-3):.3g}")
        for name, value, keep in zip(statistic_names(design), c, live, strict=True)
        if keep
    }




def prediction_gap(
    design: RegressionDesign,
    fit_a: tuple[float, np.ndarray],
    fit_b: tuple[float, np.ndarray],
) -> float:
    """An upper bound on max_x |clip(w_a·x) − clip(w_b·x)| over EVERY record of the public domain.

    Clipping to [L, U] is 1-Lipschitz, so the gap is ≤ |δ₀ + Σ_j δ_j·x_j| with δ = w_a − w_b;
    over a product of per-column code sets a linear function's maximum (and minimum) is the
    sum of per-column maxima (minima) of its block δ_B·x_B. Reads the codecs and the two
    (public) models only.
    """
    delta = np.asarray(fit_a[1], dtype=np.float64) - np.asarray(fit_b[1], dtype=np.float64)
    top = bottom = float(fit_a[0]) - float(fit_b[0])
    start = 0
    for block in design.code_features:
        q = block.shape[1]
        values = block @ delta[start : start + q]
        top += float(values.max())
        bottom += float(values.min())
        start += q
    return max(abs(top), abs(bottom))
