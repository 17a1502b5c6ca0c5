"""The run object every DP computation goes through: mode, randomness, records, accounting.

A :class:`PrivacyContext` is in one of two explicit modes:

* ``SIMULATION`` — public proxy data only. Its numpy ``rng`` (for post-DP sampling and the
  selection coin) may be seeded for reproducible dry runs. Noise comes from OpenDP unless a
  seeded :class:`~workbench.privacy.noise.SeededNoise` (or another public test source) is
  passed as ``noise``.
* ``CONFIDENTIAL`` — the one real run. ``rng`` is seeded from the OS CSPRNG (``secrets``),
  the selection coin is ``random.SystemRandom``, an accountant and a ledger are mandatory,
  and the noise source is always :class:`~workbench.privacy.noise.OpenDPNoise`: any other
  source is refused when the context is built.

Every noise sample of every mechanism is drawn by ``ctx.noise`` (the one noise seam); nothing
swaps samplers at run time.

Order of every measurement: validate the arguments, build its record, let the accountant
charge it (which may refuse), append the record to the fsynced ledger, and only then draw
the noise and hand back :class:`Noisy`. A refused measurement draws nothing.
"""

from __future__ import annotations

import enum
import random
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from workbench.privacy import _checks, lattice, mechanisms, sensitivity, smooth
from workbench.privacy.accountant import Accountant
from workbench.privacy.ledger import Ledger
from workbench.privacy.noise import NoiseSource, OpenDPNoise, SamplerStream
from workbench.privacy.records import (
    MeasurementRecord,
    Noisy,
    charged_epsilon,
    discrete_laplace_sigma,
    laplace_sigma,
    noisy_max_sigma,
    utc_now,
)

T = TypeVar("T")
#: Mechanism names of posterior draws in records: a strict one and a pseudo-posterior (aDP).
POSTERIOR_DRAW = "posterior_draw"
PSEUDO_POSTERIOR_ADP = "pseudo_posterior_adp"


class PrivacyMode(enum.Enum):
    """Whether a run may touch confidential data (and so must be unseeded and accounted)."""

    SIMULATION = "simulation"
    CONFIDENTIAL = "confidential"


def _noise_source(mode: PrivacyMode, noise: NoiseSource | None) -> NoiseSource:
    """OpenDP unless a simulation asks for another source; a confidential run takes only OpenDP.

    The check is on the exact type: a subclass of :class:`OpenDPNoise` could override a sampler.
    """
    if noise is None:
        return OpenDPNoise()
    if mode is PrivacyMode.CONFIDENTIAL and type(noise) is not OpenDPNoise:
        raise ValueError("noise: a confidential context draws its noise from OpenDP only")
    if not isinstance(noise, NoiseSource):
        raise ValueError("noise must provide laplace_vector, discrete_laplace_vector and "
                         "noisy_max_index")
    return noise


class PrivacyContext:
    """Holds the mode, the randomness, the accountant, the ledger and the records of one run."""

    def __init__(
        self,
        mode: PrivacyMode,
        *,
        neighbour: str,
        rng: np.random.Generator,
        coin_source: random.Random,
        accountant: Accountant | None,
        ledger: Ledger | None,
        noise: NoiseSource | None = None,
    ) -> None:
        """Use :meth:`simulation` or :meth:`confidential`; they enforce each mode's rules."""
        self.mode = mode
        self.neighbour = _checks.neighbour(neighbour)
        self._noise = _noise_source(mode, noise)
        self.rng = rng
        self._coin = coin_source
        self.accountant = accountant
        self.ledger = ledger
        self.records: list[MeasurementRecord] = []
        self._iteration: int | None = None
        #: (group, part) while measurements read one disjoint part (``privacy.parallel``).
        self.parallel_part: tuple[str, str] | None = None
        #: parallel groups opened so far in this iteration (or stage): names them "#1", "#2"…
        #: within it, never across the process or the loop (a running count, published with
        #: the accepted iteration, would tell how many fits ran before it)
        self.parallel_groups = 0
        if accountant is not None and ledger is not None:
            accountant.bind_ledger(ledger)

    @classmethod
    def simulation(
        cls,
        seed: int | None = None,
        *,
        neighbour: str = "replace_one",
        accountant: Accountant | None = None,
        ledger: Ledger | None = None,
        noise: NoiseSource | None = None,
    ) -> PrivacyContext:
        """A context for public proxy data; ``seed`` makes post-DP sampling reproducible.

        ``noise`` defaults to OpenDP; pass ``SeededNoise(seed)`` to make the noise reproducible
        too (dry runs with ``--noise seeded``, tests, audits).
        """
        return cls(
            PrivacyMode.SIMULATION,
            neighbour=neighbour,
            rng=np.random.default_rng(seed),
            coin_source=random.Random(seed),
            accountant=accountant,
            ledger=ledger,
            noise=noise,
        )

    @classmethod
    def confidential(
        cls, *, accountant: Accountant, ledger: Ledger, neighbour: str = "replace_one"
    ) -> PrivacyContext:
        """The context of a real run: CSPRNG-seeded, accounted, logged, OpenDP noise; no seed."""
        if not isinstance(accountant, Accountant):
            raise ValueError("accountant: a confidential run needs an Accountant")
        if not isinstance(ledger, Ledger):
            raise ValueError("ledger: a confidential run needs a Ledger")
        return cls(
            PrivacyMode.CONFIDENTIAL,
            neighbour=neighbour,
            rng=np.random.default_rng(secrets.randbits(128)),
            coin_source=random.SystemRandom(),
            accountant=accountant,
            ledger=ledger,
            noise=OpenDPNoise(),
        )

    @property
    def noise(self) -> NoiseSource:
        """Where every noise sample comes from (read-only: fixed when the context is built)."""
        return self._noise

    # --- sensitivities the generators and criteria share -----------------------------------
    def histogram_sensitivity(self) -> int:
        """L1 sensitivity of a count table under this run's neighbour relation (2 or 1)."""
        return sensitivity.histogram(self.neighbour)

    # --- selection-loop bookkeeping --------------------------------------------------------
    @property
    def iteration(self) -> int | None:
        """The private-selection iteration in progress, or None outside the loop."""
        return self._iteration

    def begin_iteration(self, iteration: int) -> None:
        """Tag the following measurements as 'loop' measurements of ``iteration``."""
        if isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 1:
            raise ValueError("iteration must be an integer >= 1")
        self._iteration = iteration
        self.parallel_groups = 0

    def end_iteration(self) -> None:
        """Leave the loop; later measurements are 'once' measurements."""
        self._iteration = None
        self.parallel_groups = 0

    def coin(self, probability: float) -> bool:
        """True with ``probability``; the selection loop's γ-stop (CSPRNG when confidential)."""
        p = _checks.probability("probability", probability)
        return self._coin.random() < p

    def randbelow(self, n: int) -> int:
        """Uniform integer in [0, n): an iteration's configuration (CSPRNG if confidential)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError("n must be an integer >= 1")
        return self._coin.randrange(n)

    def log_event(self, event: str, **fields: Any) -> None:
        """Write a non-measurement event to the ledger, if there is one."""
        if self.ledger is not None:
            self.ledger.event(event, **fields)

    # --- mechanisms ------------------------------------------------------------------------
    def _release(self, record: MeasurementRecord, draw: Callable[[], T]) -> Noisy[T]:
        """Charge and log ``record``, and only then ``draw`` the noisy value."""
        if self.accountant is not None:
            self.accountant.charge(record)
        if self.ledger is not None:
            self.ledger.append(record)
        self.records.append(record)
        return Noisy(draw(), record)

    def _record(
        self,
        purpose: str,
        mechanism: str,
        epsilon: float,
        delta: float,
        scale: float,
        sigma: float,
        bounds: tuple[float, float] | None = None,
        **smoothness: float | int,
    ) -> MeasurementRecord:
        """A record stamped with this context's stage and iteration."""
        stage = "once" if self._iteration is None else "loop"
        group, part = self.parallel_part or (None, None)
        return MeasurementRecord(
            **smoothness,
            purpose=purpose,
            mechanism=mechanism,
            epsilon=epsilon,
            sensitivity=delta,
            scale=scale,
            sigma=sigma,
            bounds=bounds,
            stage=stage,
            iteration=self._iteration,
            timestamp=utc_now(),
            group=group,
            part=part,
        )

    def laplace(
        self,
        value: object,
        *,
        sensitivity: float,
        epsilon: float,
        purpose: str,
        bounds: tuple[float, float] | None = None,
    ) -> Noisy[np.ndarray]:
        """Laplace(Δ/ε) on a real vector whose L1 sensitivity is Δ; σ = √2·Δ/ε."""
        purpose = _checks.purpose(purpose)
        delta = _checks.positive_finite("sensitivity", sensitivity)
        eps = _checks.positive_finite("epsilon", epsilon)
        checked_bounds = _checks.bounds(bounds)
        arr = _checks.finite_floats("value", value)
        record = self._record(
            purpose, "laplace", eps, delta, delta / eps, laplace_sigma(delta, eps), checked_bounds
        )
        return self._release(record, lambda: self.noise.laplace_vector(arr, delta, eps))

    def discrete_laplace(
        self, value: object, *, sensitivity: int, epsilon: float, purpose: str
    ) -> Noisy[np.ndarray]:
        """Discrete Laplace(Δ/ε) on an integer vector (counts) whose L1 sensitivity is Δ."""
        purpose = _checks.purpose(purpose)
        delta = _checks.positive_integer("sensitivity", sensitivity)
        eps = _checks.positive_finite("epsilon", epsilon)
        arr = _checks.integers("value", value)
        record = self._record(
            purpose,
            "discrete_laplace",
            eps,
            float(delta),
            delta / eps,
            discrete_laplace_sigma(delta, eps),
        )
        return self._release(record,
                             lambda: self.noise.discrete_laplace_vector(arr, delta, eps))

    def partition_select(
        self, counts: dict[str, int], *, epsilon: float, delta: float, purpose: str
    ) -> Noisy[dict[str, int]]:
        """(ε, δ)-DP: the labels of a label → count map (one label per record) whose count +
        discrete Laplace(b) reaches τ, with those noisy counts (OpenDP, Rogers 2023); b and τ
        from the relation's (L0, L1, L∞) (``sensitivity.partition_distance``), ε and δ."""
        purpose = _checks.purpose(purpose)
        eps = _checks.positive_finite("epsilon", epsilon)
        dlt = _checks.probability("delta", delta)
        if not 0 < dlt < 1:
            raise ValueError("delta must be in (0, 1): a threshold cannot hide a label at δ = 0")
        draw = getattr(self.noise, "laplace_threshold", None)
        if draw is None:
            raise ValueError("noise: this source has no thresholded partition selection")
        if any(isinstance(v, bool) or int(v) != v or v < 0 for v in counts.values()):
            raise ValueError("counts must be integers >= 0")
        distance = sensitivity.partition_distance(self.neighbour)
        scale, tau = mechanisms.partition_threshold(distance, eps, dlt)
        record = self._record(purpose, "laplace_threshold", eps, float(distance[1]), scale,
                              discrete_laplace_sigma(distance[1], eps), dp_delta=dlt,
                              threshold=tau)
        clean = {str(k): int(v) for k, v in counts.items() if v > 0}
        return self._release(record, lambda: draw(clean, scale, tau, distance, eps, dlt))

    def exponential(
        self, scores: object, *, sensitivity: float, epsilon: float, purpose: str
    ) -> Noisy[int]:
        """ε-DP selection of a high-scoring index (permute-and-flip); Δ bounds each score's change.

        This is OpenDP's noisy max with Exponential(2Δ/ε) noise, not Gumbel noise: as private as
        the exponential mechanism at the same ε and at least as accurate, but P(i) is not
        ∝ exp(ε·score_i/(2Δ)) (see :mod:`workbench.privacy.mechanisms`).
        """
        purpose = _checks.purpose(purpose)
        delta = _checks.positive_finite("sensitivity", sensitivity)
        eps = _checks.positive_finite("epsilon", epsilon)
        arr = _checks.finite_floats("scores", scores)
        record = self._record(
            purpose,
            "exponential",
            eps,
            delta,
            mechanisms.noisy_max_scale(delta, eps),
            noisy_max_sigma(delta, eps),
        )
        return self._release(record, lambda: self.noise.noisy_max_index(arr, delta, eps))

    def smooth_cauchy(
        self,
        value: object,
        *,
        epsilon: float,
        purpose: str,
        bounds: tuple[float, float],
        smooth_sensitivity: float | None = None,
        beta: float | None = None,
        local_sensitivity: object = None,
        global_bound: float | None = None,
        gamma: float = smooth.DEFAULT_GAMMA,
        steps: int = 1,
        cells: int = lattice.CELLS,
    ) -> Noisy[np.ndarray]:
        """ε-DP release value + (S/α)·Z, Z generalized Cauchy(γ), S a β-smooth bound (NRS),
        clamped to the PUBLIC range ``bounds`` and snapped to its grid of ``cells`` intervals.

        Give either ``smooth_sensitivity`` S with the ``beta`` it is smooth for (it must not
        exceed the calibration's β, see :func:`workbench.privacy.smooth.calibrate`), or
        ``local_sensitivity`` A_k (vector or callable, see
        :func:`~workbench.privacy.smooth.smooth_sensitivity`), from which S = SS_β is computed
        at the calibration's β. A vector value is released with the d-coordinate calibration.
        S is data-dependent, so the record never holds it: its ``sensitivity`` is 1 and its
        ``scale`` and ``sigma`` are per unit of S (1/α and sd(Z)/α); ``beta``, ``gamma`` are
        recorded. σ is ∞ when γ ≤ 3.

        ``steps``: when S is smooth (and bounds the local sensitivity) for a finer relation of
        which one neighbour step of this run is ``steps`` steps (replace-one = remove + add:
        2), the noise is calibrated at ε/steps per step; by group privacy the release is
        ε-DP for the run's relation, and ε is what is charged.

        Floats (:mod:`workbench.privacy.lattice`): the value is clamped to ``bounds`` (from
        public bounds only: clamping cannot raise the local sensitivity), S gets a public pad
        and the noise scale is at least one grid step (both keep S β-smooth), and the release
        is the nearest point of the public grid, with a uniform point with probability 2^{-12}.
        α leaves d·ALLOWANCE of ε for the float lattice (:func:`~workbench.privacy.smooth.
        calibrate`), so the released float is exactly ε-DP; the record keeps the range, the
        grid and that allowance.
        """
        purpose = _checks.purpose(purpose)
        arr = _checks.finite_floats("value", value)
        checked = _checks.bounds(bounds)
        if checked is None:
            raise ValueError("bounds: a smooth release needs its public range (low, high)")
        grid = lattice.SnapGrid(checked[0], checked[1], cells)
        k = _checks.positive_integer("steps", steps)
        eps = _checks.positive_finite("epsilon", epsilon)
        cal = smooth.calibrate(eps / k, gamma, max(int(arr.size), 1))
        s_bound, used_beta = smooth.resolve_bound(cal, smooth_sensitivity, beta,
                                                  local_sensitivity, global_bound)
        d = cal.dimension
        record = self._record(purpose, "smooth_cauchy", eps, 1.0, 1.0 / cal.alpha,
                              cal.sigma_per_unit, (grid.low, grid.high), beta=used_beta,
                              gamma=cal.gamma, grid_cells=grid.cells,
                              lattice_allowance=d * lattice.ALLOWANCE)
        scale = (s_bound + grid.shift_pad(d)) / cal.alpha
        return self._release(
            record, lambda: self.noise.generalized_cauchy_vector(arr, scale, cal.gamma, grid))

    def epsilon_recorded(self) -> float:
        """ε over this context's records: basic composition, parallel groups at their max
        (before selection pricing)."""
        return charged_epsilon(r.as_dict() for r in self.records)

    def posterior_draw(
        self, sampler: Callable[[SamplerStream], T], *, sensitivity: float, epsilon: float,
        purpose: str, strict: bool = True,
    ) -> Noisy[T]:
        """One draw from a posterior ∝ exp(ℓ(θ; x))·prior whose log-likelihood ℓ moves by at
        most Δ = ``sensitivity`` between neighbours, for every θ: ε = 2Δ (the exponential
        mechanism with utility ℓ; Hu, Williams & Savitsky §2). ``sampler`` gets the stream
        of randomness (CSPRNG-seeded in a confidential run) only after the draw is charged.

        ``strict=False`` records a pseudo-posterior whose ε is computed on the data
        (asymptotic DP, "aDP, not a guarantee"): charged at the nominal ε, marked in the record.
        """
        purpose = _checks.purpose(purpose)
        delta = _checks.positive_finite("sensitivity", sensitivity)
        eps = _checks.positive_finite("epsilon", epsilon)
        if strict and 2.0 * delta > eps * (1 + 1e-9):
            raise ValueError("epsilon: a posterior draw with log-likelihood sensitivity Δ "
                             "is 2Δ-DP; epsilon is below 2·sensitivity")
        mechanism = POSTERIOR_DRAW if strict else PSEUDO_POSTERIOR_ADP
        # σ = 0: a posterior draw adds no noise to a value; its randomness is the draw itself
        record = self._record(purpose, mechanism, eps, delta, 2.0 * delta / eps, 0.0)
        make = getattr(self.noise, "sampler_stream", None)  # OpenDP's: from the OS CSPRNG
        return self._release(record, lambda: sampler(
            make() if make is not None else SamplerStream(secrets.randbits(128))))
