"""Float support of every noise primitive: no output under D may be impossible under D′.

Why: a statistical audit (:mod:`workbench.audits.harness`) compares event frequencies and
cannot see a float lattice. A release computed as the raw float f + s·z(u) reaches a set of
floats that depends on f and s, so an output drawn under D can be impossible, bit for bit,
under a neighbour D′: an unbounded privacy loss that no ε covers (Mironov 2012; issue 24).
Where the primitive is OpenDP's (Laplace, discrete Laplace, noisy max), drawing outputs and
checking their dtype proves nothing: the evidence is OpenDP's own documented construction and
proof, cited in :data:`OPENDP` (the installed package's docstring is read and must still say
what is quoted, :func:`opendp_citations`), and its privacy map, which
``privacy.mechanisms._checked`` evaluates at Δ before every draw (ε above the request: no
noise). The bit-for-bit check below is kept where it is real evidence, the workbench's own
samplers: the snapped generalized Cauchy and, as the negative control, the raw float.

* generalized Cauchy (:mod:`workbench.privacy.lattice`): every point of the public grid has
  probability ≥ 2^{-12}/(M + 1) under every input; an output is reachable iff it is a grid
  point (and the check also finds it through the main branch, bit for bit);
* the raw float f + s·z(u) of the generalized Cauchy before issue 24 (kept here, as the audit's
  negative control only): reachability under D′ is searched bit for bit, a binary search for
  the crossing within ±20,000 steps of the exact inverse and the 7 integers around it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from workbench.audits.smooth import SmoothScenario, primitive_scenario
from workbench.privacy import lattice, smooth
from workbench.privacy.noise import NoiseSource, OpenDPNoise

DRAWS = 2000
SEARCH = 20_000  # raw-float search: ± this many 53-bit grid steps


@dataclass(frozen=True)
class SupportCheck:
    """How many of ``draws`` outputs under D have probability 0 under D′."""

    name: str
    support: str
    draws: int
    unreachable: int

    @property
    def ok(self) -> bool:
        """Every output under D is possible under D′."""
        return self.unreachable == 0

    def cell(self) -> str:
        """The benchmark's float-support column."""
        verdict = "ok" if self.ok else "FAILS"
        return f"{verdict} {self.unreachable}/{self.draws}"


#: The output set of the workbench's own samplers, the same for every input.
SUPPORT = {
    "smooth_cauchy": "every point of the public grid",
    "raw_float_cauchy": "f + s·z(u) floats: depends on f, s",
}

_PROOFS = "https://docs.opendp.org/en/v0.16.0/proofs/rust/src/measurements/noise/distribution/"


@dataclass(frozen=True)
class OpenDPCitation:
    """Where an OpenDP primitive's float safety and ε come from: its documented construction."""

    name: str
    function: str
    quote: str
    reference: str
    #: OpenDP's version the quote was read from; the installed one must match
    version: str = "0.16.0"
    #: whether the installed package's docstring still says ``quote`` (set by the check)
    verified: bool = False

    @property
    def ok(self) -> bool:
        """The installed OpenDP still documents what is cited."""
        return self.verified

    def cell(self) -> str:
        """The benchmark's float-support column: a citation, not a count."""
        return "OpenDP, cited" if self.verified else "CITE STALE"

    def support(self) -> str:
        """One line for the support table."""
        return f"opendp {self.version} {self.function}: “{self.quote}” ({self.reference})"


#: OpenDP's primitives and the documented claim each rests on (``help(dp.m.make_laplace)``).
OPENDP = {
    "laplace": OpenDPCitation(
        "laplace", "make_laplace(vector_domain(atom_domain(T=float)), l1_distance(T=float))",
        "Internally, all sampling is done using the discrete Laplace distribution.",
        "float outputs on the 2^k lattice (param k, 'noise granularity'), exact sampler of "
        f"CKS20 §5.2; proof {_PROOFS}laplace/make_laplace.pdf"),
    "discrete_laplace": OpenDPCitation(
        "discrete_laplace", "make_laplace(vector_domain(atom_domain(T=int)), l1_distance(T=int))",
        "Internally, all sampling is done using the discrete Laplace distribution.",
        f"every integer reachable; GRS12, CKS20 §5.2; proof {_PROOFS}laplace/make_laplace.pdf"),
    "noisy_max": OpenDPCitation(
        "noisy_max", "make_noisy_max(…, linf_distance, max_divergence())",
        "Make a Measurement that takes a vector of scores and privately selects the index of "
        "the highest score.",
        "permute-and-flip (MS20), every index reachable; ε from its privacy map"),
    "laplace_threshold": OpenDPCitation(
        "laplace_threshold", "make_laplace_threshold(map_domain(…, atom_domain(T=i64)), "
        "l01inf_distance(…))",
        "Make a Measurement that uses propose-test-release to release a hashmap of counts.",
        "integer counts + discrete Laplace (CKS20), kept at or above τ (Rogers23); proof "
        f"{_PROOFS.replace('/noise/', '/noise_threshold/')}laplace/"
        "make_laplace_threshold.pdf"),
}


def opendp_citations() -> dict[str, OpenDPCitation]:
    """Each citation checked against the installed OpenDP: same version, quote still there."""
    import importlib.metadata
    import inspect

    import opendp.measurements as measurements

    installed = importlib.metadata.version("opendp")
    out = {}
    for key, cite in OPENDP.items():
        name = cite.function.split("(", 1)[0]
        doc = " ".join((inspect.getdoc(getattr(measurements, name, None)) or "").split())
        ok = installed == cite.version and cite.quote in doc
        out[key] = OpenDPCitation(cite.name, cite.function, cite.quote, cite.reference,
                                  cite.version, ok)
    return out


def check_smooth(scn: SmoothScenario, draws: int = DRAWS,
                 source: NoiseSource | None = None) -> SupportCheck:
    """The snapped generalized Cauchy: outputs under D on D′'s grid, and found bit for bit
    through the main branch from D′'s centre and scale."""
    src = source or OpenDPNoise()
    call, other = scn.d, scn.d_prime
    out = src.generalized_cauchy_vector(np.full(draws, call.value), call.scale, call.gamma,
                                        call.grid)
    grid = other.grid
    on_grid = np.isin(out, grid.points())
    cells = np.rint((out - grid.low) / grid.step).astype(np.int64)
    centre = float(grid.centre(np.array([other.value]))[0])
    main = snapped_reachable(cells, centre, lattice.grid_sigma(other.scale, grid),
                             other.gamma, grid)
    return SupportCheck("smooth_cauchy", SUPPORT["smooth_cauchy"], draws,
                        int(np.sum(~(on_grid & main))))


def abs_cdf(z: np.ndarray, gamma: float) -> np.ndarray:
    """P(|Z| ≤ |z|), mirrored in the tail so that 1 − u keeps its precision."""
    a = 1.0 / gamma
    w = np.abs(z) ** gamma
    return np.where(w < 1, special.betainc(a, 1 - a, w / (1 + w)),
                    1 - special.betainc(1 - a, a, 1 / (1 + w)))


def snapped_reachable(cells: np.ndarray, centre: float, sigma: float, gamma: float,
                      grid: lattice.SnapGrid) -> np.ndarray:
    """Whether the main (non-floor) branch gives each cell bit for bit from (centre, σ̃): the
    52-bit k at the middle of the cell's u-interval, ±3, through the real transform."""
    z = (cells - centre) / sigma
    positive = z >= 0
    k0 = np.floor(abs_cdf(z, gamma) * 2.0 ** 52).astype(np.int64)
    none = np.zeros(cells.size, dtype=bool)
    hit = np.zeros(cells.size, dtype=bool)
    for d in range(-3, 4):
        k = np.clip(k0 + d, 0, 2 ** 52 - 1)
        hit |= lattice.snapped_cells(np.full(cells.size, centre), sigma, gamma, grid.cells, k,
                                     positive, none, np.zeros(cells.size, np.int64)) == cells
    return hit


def raw_float_release(f: float, scale: float, gamma: float, k: np.ndarray,
                      positive: np.ndarray) -> np.ndarray:
    """The release before issue 24, f + scale·z((k + ½)/2^53) published as a raw float (the
    negative control of this check; never used for a release)."""
    u = (np.asarray(k).astype(np.float64) + 0.5) / float(2 ** 53)
    return f + scale * lattice.cauchy_from_uniform(u, positive, gamma)


def raw_float_reachable(out: np.ndarray, f: float, scale: float, gamma: float) -> np.ndarray:
    """Whether some 53-bit k (and sign) gives each output bit for bit under (f, scale)."""
    z = (out - f) / scale
    positive = z >= 0
    sign = np.where(positive, 1.0, -1.0)
    k0 = np.floor(abs_cdf(z, gamma) * 2.0 ** 53 - 0.5).astype(np.int64)
    lo, hi = np.maximum(k0 - SEARCH, 0), np.minimum(k0 + SEARCH, 2 ** 53 - 1)
    for _ in range(math.ceil(math.log2(2 * SEARCH + 1))):
        mid = (lo + hi) // 2
        ahead = sign * (raw_float_release(f, scale, gamma, mid, positive) - out) >= 0
        hi, lo = np.where(ahead, mid, hi), np.where(ahead, lo, mid + 1)
    hit = np.zeros(out.size, dtype=bool)
    for d in range(-3, 4):
        k = np.clip(lo + d, 0, 2 ** 53 - 1)
        hit |= raw_float_release(f, scale, gamma, k, positive) == out
    return hit


def check_raw_float(scn: SmoothScenario, draws: int = DRAWS, seed: int = 0) -> SupportCheck:
    """The raw-float release on the scenario's (f, scale) pairs (seeded 53-bit uniforms)."""
    rng = np.random.default_rng([seed, 0x726177])
    k = rng.integers(0, 2 ** 53, size=draws, dtype=np.int64)
    positive = rng.integers(0, 2, size=draws).astype(bool)
    d, other = scn.d, scn.d_prime
    out = raw_float_release(d.value, d.scale, d.gamma, k, positive)
    ok = raw_float_reachable(out, other.value, other.scale, other.gamma)
    return SupportCheck("raw_float_cauchy", SUPPORT["raw_float_cauchy"], draws,
                        int(np.sum(~ok)))


def attack_scenario() -> SmoothScenario:
    """Issue 24's pair: ε = 1, γ = 4, f = 123.456, S = 2 vs (f − 2, S·e^β), range [0, 256]."""
    from workbench.audits.smooth import SmoothCall

    cal = smooth.calibrate(1.0)
    grid = lattice.SnapGrid(0.0, 256.0)
    scale = (2.0 + grid.shift_pad()) / cal.alpha
    return SmoothScenario("generalized Cauchy, issue 24's pair", "f − 2, S·e^β", 1.0,
                          SmoothCall(123.456, scale, 4.0, grid),
                          SmoothCall(121.456, scale * math.exp(cal.beta), 4.0, grid))


def support_checks(draws: int = DRAWS, source: Callable[[], NoiseSource] = OpenDPNoise
                   ) -> dict[str, SupportCheck | OpenDPCitation]:
    """OpenDP's primitives by citation; the smooth one bit for bit on NRS's worst case and
    issue 24's pair, plus the raw-float negative control on issue 24's pair."""
    out: dict[str, SupportCheck | OpenDPCitation] = dict(opendp_citations())
    smooth_checks = [check_smooth(s, draws, source()) for s in (primitive_scenario(),
                                                                attack_scenario())]
    out["smooth_cauchy"] = SupportCheck("smooth_cauchy", SUPPORT["smooth_cauchy"],
                                        sum(c.draws for c in smooth_checks),
                                        sum(c.unreachable for c in smooth_checks))
    out["raw_float_cauchy"] = check_raw_float(attack_scenario(), draws)
    return out
