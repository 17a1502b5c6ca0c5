"""Float-safe generalized Cauchy releases: snapped to a public grid, with an exact ε allowance.

**Why.** A float computation f + s·z(u) of a smooth-sensitivity release (u on a grid of
2^{-53}, f and the scale s both data-dependent) has a lattice of reachable outputs that depends
on (f, s): an output reachable under D may be unreachable under a neighbour D′, an unbounded
privacy loss (Mironov 2012 on textbook Laplace; issue 24 reproduced it here: at ε = 1, γ = 4,
f = 123.456, S = 2 vs (f − 2, S·e^β), 2.3% of the draws under D are impossible bit for bit
under D′, ``tests/test_smooth.py::test_lattice_attack``). So a release is never the raw float.

**The release.** Every value is first clamped into a PUBLIC range [L, U] (from public bounds
of the released quantity, e.g. a target's bounds, a population total) and released as a point
of the public grid L + j·g, j = 0..M, g = (U − L)/M, M ≤ :data:`CELLS`:

1. centre x̃ = fl((clamp(f, L, U) − L)/g) and scale σ̃ = max(fl(S⁺/(α·g)), 1) in grid steps,
   with S⁺ = S + :meth:`SnapGrid.shift_pad` (clamping is 1-Lipschitz, so S still bounds the
   local sensitivity of clamp∘f; adding a public constant and taking a max with one keep
   S⁺ β-smooth and ≥ S);
2. with probability q = :data:`FLOOR` (12 CSPRNG bits all zero) the cell j is uniform on
   0..M; otherwise j = clip(rint(x̃ + σ̃·Z̃), 0, M), Z̃ = ±|Z̃| (a sign bit), |Z̃| the inverse
   CDF (:func:`cauchy_from_uniform`) at u = (k + ½)/2^52, k a 52-bit integer (u and 1 − u
   are exact in binary64);
3. the value is L + j·g (post-processing of j).

**The ideal mechanism** draws x̃ + σ̃·Z with Z exactly generalized Cauchy and the same
mixture and snapping: post-processing of the continuous NRS release centred at x̃ with scale
σ̃, so it is ε_ideal-DP with ε_ideal = L_γ·(sliding shift)/(α-units) + dilation, as in
:mod:`workbench.privacy.smooth`. The float errors of x̃ (≤ 2^{-51}·M grid steps) are absorbed
by the pad in S⁺, those of σ̃ (relative ≤ 2^{-52}) cost at most d·max(1, γ−1)·2^{-51} of
dilation and ε·2^{-52} of sliding: :func:`workbench.privacy.smooth.calibrate` sets α from
ε/2 − d·:data:`ALLOWANCE` − that tiny term, so ε_ideal ≤ ε − d·ALLOWANCE.

**Per cell, float vs ideal** (one coordinate; P_I the ideal cell probability before mixing):

* grid of u: each sign's preimage of a cell (or of any interval of Z) is one u-interval,
  holding 2^52·ℓ ± 1 grid points: |P_grid − P_I| ≤ 2·½·2^{-52} = 2^{-52};
* computed noise y = fl(σ̃·Z̃): |y − σ̃Z| ≤ ρ₁·σ̃|Z| with ρ₁ = :data:`RHO` + 2^{-52}, where RHO
  bounds the relative error of :func:`cauchy_from_uniform` for |Z| ≤ 2(M + 1) (an assumption
  about scipy's ``betaincinv``, checked against 40-digit mpmath inverses in
  ``tests/test_lattice.py`` on a grid of γ over the whole of :data:`GAMMA_RANGE` and of
  quantiles out to both tails: ≤ 1.1e-14 observed; where the exact |Z| > 2(M + 1) the test
  checks that the computed one exceeds M + 1, so both values lie beyond the outer boundaries
  ½ and M − ½, in the same end cell, since 0 ≤ x̃ ≤ M and σ̃ ≥ 1). The bound is NOT true near
  γ = 1 (issue 34: 8.2e-11 at γ = 1 + 1e-6, 2e-10 at 1 + 1e-7, where the beta law's second
  parameter 1 − 1/γ vanishes), so every release refuses γ outside :data:`GAMMA_RANGE`
  (:func:`check_gamma`; ``survey.gamma`` is validated against the same constant);
* the sum fl(x̃ + y): rounding to nearest is monotone and keeps the representable cell
  boundaries b = j ± ½, so it crosses one only by a tie at b, i.e. within r₀ = 2^{-53}(M + 1);
* a cell changes only if the exact x̃ + σ̃Z lies within ρ₁σ̃|Z| + r₀ of one of its boundaries b:
  with t = (b − x̃)/σ̃ that forces |Z − t| ≤ w = (ρ₁|t| + r₀/σ̃)/(1 − ρ₁). If w ≤ |t|/2, the
  density there is ≤ h(|t|/2) and |t|·h(|t|/2) ≤ 2c (s·h(s) ≤ c·s/(1 + s^γ) ≤ c); else
  w < r₀/(σ̃(1 − 3ρ₁)). Either way P ≤ b₁ = 2c(2ρ₁ + r₀/σ̃)/(1 − 3ρ₁), c ≤ ½, σ̃ ≥ 1 — plus
  2^{-52} for the u-grid (that set is one Z-interval, so one u-interval per sign);
* so |P_float(j) − P_I(j)| ≤ η = 2(b₁ + 2^{-52}) + 2^{-52} (:func:`cell_error`).

**Mixing turns additive into relative error.** With the uniform floor, the ideal-with-mixing
cell probability is I(j) = (1 − q)P_I(j) + q/(M + 1) ≥ q/(M + 1), and the released one is
within (1 − q)η ≤ η of it, so P(j) ∈ I(j)·[1 − κ, 1 + κ], κ = η(M + 1)/q. For any neighbours
and any output cell (d coordinates, independent):
P_D(j) ≤ ((1 + κ)/(1 − κ))^d·e^{ε_ideal}·P_D′(j), i.e. the released mechanism is
(ε_ideal + d·a)-DP with a = ln((1 + κ)/(1 − κ)) = :data:`ALLOWANCE` ≈ 1.65e-4 at M = 4096,
q = 2^{-12}: ε exactly, the ε charged. The floor costs accuracy with probability q = 0.024%
(a uniform value on [L, U]); the grid costs at most g/2; σ̃ ≥ 1 costs nothing measurable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

#: M: the most grid intervals a public range may be cut into (κ grows with M).
CELLS = 4096
#: q = 2^{-FLOOR_BITS}: the probability of a uniform cell (the floor under every cell).
FLOOR_BITS = 12
FLOOR = 2.0 ** -FLOOR_BITS
#: Bits of the uniform behind |Z|: u = (k + ½)/2^52 is exact, and so is 1 − u.
UNIFORM_BITS = 52
#: Assumed bound on the relative error of :func:`cauchy_from_uniform` for |Z| ≤ 2(M + 1).
RHO = 1e-12
#: [γ_min, γ_max]: the γ over which RHO is verified (tests/test_lattice.py); nothing outside.
GAMMA_RANGE = (1.05, 16.0)
#: σ̃ ≥ this many grid steps (keeps the rounding term r₀/σ̃ small).
MIN_SCALE = 1.0
#: Relative pad of S, in units of the range (absorbs the float error of the centre x̃).
PAD = 2.0 ** -48


def check_gamma(gamma: float) -> float:
    """γ as a float if it lies in :data:`GAMMA_RANGE` (where RHO is proven), else ValueError."""
    g = float(gamma)
    low, high = GAMMA_RANGE
    if not (math.isfinite(g) and low <= g <= high):
        raise ValueError(f"gamma must lie in [{low:g}, {high:g}]: the range over which the "
                         "float-safe sampler's accuracy (lattice.RHO) is verified")
    return g


def cell_error(cells: int = CELLS) -> float:
    """η: the bound on |P_float(j) − P_ideal(j)| per cell derived in the module docstring."""
    rho1 = RHO + 2.0 ** -52
    r0 = 2.0 ** -53 * (cells + 1)
    b1 = 2 * 0.5 * (2 * rho1 + r0 / MIN_SCALE) / (1 - 3 * rho1)
    return 2 * (b1 + 2.0 ** -52) + 2.0 ** -52


def allowance(cells: int = CELLS) -> float:
    """a = ln((1 + κ)/(1 − κ)), κ = η(M + 1)/q: the ε per coordinate set aside for floats."""
    kappa = cell_error(cells) * (cells + 1) / FLOOR
    return math.log1p(kappa) - math.log1p(-kappa)


#: The ε per released coordinate that the float lattice may cost (≈ 1.65e-4).
ALLOWANCE = allowance()


def rounding_slack(epsilon: float, gamma: float, dimension: int) -> float:
    """The float error of σ̃ (relative 2^{-52}): ε·2^{-52} of sliding, d·max(1, γ−1)·2^{-51} of
    dilation, taken generously."""
    return 2.0 ** -40 * (1.0 + epsilon + dimension * max(1.0, gamma))


@dataclass(frozen=True)
class SnapGrid:
    """The public grid L + j·g, j = 0..M, a smooth release is snapped to (public numbers only).

    >>> SnapGrid(0.0, 10.0, 4).points().tolist()
    [0.0, 2.5, 5.0, 7.5, 10.0]
    """

    low: float
    high: float
    cells: int = CELLS

    def __post_init__(self) -> None:
        """Finite low < high, 1 ≤ cells ≤ CELLS, a positive finite step."""
        lo, hi = float(self.low), float(self.high)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError("bounds: a smooth release needs a public range low < high, "
                             "both finite")
        if isinstance(self.cells, bool) or not isinstance(self.cells, int) or not (
                1 <= self.cells <= CELLS):
            raise ValueError(f"cells must be an integer in 1..{CELLS}")
        if not (math.isfinite(hi - lo) and (hi - lo) / self.cells > 0):
            raise ValueError("bounds: the range is too wide or too narrow for a float grid")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)

    @property
    def step(self) -> float:
        """g = (U − L)/M."""
        return (self.high - self.low) / self.cells

    def shift_pad(self, dimension: int = 1) -> float:
        """What S⁺ adds to S (value units): d·2^{-48}·M·g ≥ twice the centre's float error."""
        return dimension * PAD * self.cells * self.step

    def centre(self, values: np.ndarray) -> np.ndarray:
        """x̃ = (clamp(f, L, U) − L)/g in grid steps."""
        arr = np.clip(np.asarray(values, dtype=np.float64), self.low, self.high)
        return (arr - self.low) / self.step

    def points(self, cells: np.ndarray | None = None) -> np.ndarray:
        """L + j·g (the top point is exactly U)."""
        j = np.arange(self.cells + 1) if cells is None else np.asarray(cells)
        return np.where(j >= self.cells, self.high, self.low + j * self.step)


def cauchy_from_uniform(u: np.ndarray, positive: np.ndarray, gamma: float) -> np.ndarray:
    """Inverse-CDF sampler: |Z|^γ = X/(1 − X) with X ~ Beta(1/γ, 1 − 1/γ), sign from ``positive``.

    Why: substituting w = |z|^γ in c/(1 + |z|^γ) gives w^{1/γ−1}/(1 + w), the beta-prime law
    with parameters (1/γ, 1 − 1/γ). X = I⁻¹(u) and 1 − X = I⁻¹ of the mirrored law at 1 − u
    are both inverted directly, so the far tail keeps its precision. ``u`` in (0, 1).
    """
    a = 1.0 / float(gamma)
    x = special.betaincinv(a, 1.0 - a, u)
    one_minus_x = special.betaincinv(1.0 - a, a, 1.0 - u)
    with np.errstate(divide="ignore", over="ignore"):
        magnitude = (x / one_minus_x) ** a
    return np.where(positive, magnitude, -magnitude)


def snapped_cells(centre: np.ndarray, sigma: float, gamma: float, cells: int,
                  k: np.ndarray, positive: np.ndarray, floor: np.ndarray,
                  uniform: np.ndarray) -> np.ndarray:
    """Step 2 of the module docstring from the caller's random inputs: 52-bit integers ``k``,
    sign bits, floor flags (probability q each) and uniform cells in 0..M."""
    gamma = check_gamma(gamma)
    x = np.asarray(centre, dtype=np.float64)
    u = (np.asarray(k, dtype=np.int64).reshape(x.shape).astype(np.float64) + 0.5) \
        / float(2 ** UNIFORM_BITS)
    z = cauchy_from_uniform(u, np.asarray(positive, dtype=bool).reshape(x.shape), gamma)
    with np.errstate(invalid="ignore", over="ignore"):
        drawn = np.clip(np.rint(x + float(sigma) * z), 0, cells)
    out = np.where(np.asarray(floor, dtype=bool).reshape(x.shape),
                   np.asarray(uniform).reshape(x.shape), drawn)
    return out.astype(np.int64)


def grid_sigma(scale: float, grid: SnapGrid) -> float:
    """σ̃ = max(scale/g, 1): the noise scale in grid steps, never below one step."""
    return max(float(scale) / grid.step, MIN_SCALE)


def snapped_release(values: np.ndarray, scale: float, gamma: float, grid: SnapGrid,
                    k: np.ndarray, positive: np.ndarray, floor: np.ndarray,
                    uniform: np.ndarray) -> np.ndarray:
    """Steps 1–3: the released grid values, shaped like ``values`` (what every source returns)."""
    arr = np.asarray(values, dtype=np.float64)
    cells = snapped_cells(grid.centre(arr).ravel(), grid_sigma(scale, grid), gamma, grid.cells,
                          k, positive, floor, uniform)
    return grid.points(cells).reshape(arr.shape)
