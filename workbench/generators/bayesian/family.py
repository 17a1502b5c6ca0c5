"""``bayesian``: a continuous target drawn from one posterior draw of a Bayesian model.

The target column (released as a number, :class:`~workbench.transform.NumberCodec`) follows
a plug-in model (:mod:`.models`) given categorical predictors; the other columns (predictors
included) come from their noisy joint histogram. Budget: ``draw_share``·ε for the posterior
draw (the mechanism, :mod:`.sampler`), the rest for the joint (discrete Laplace, Δ =
``privacy.histogram_sensitivity()``); with no other column the draw gets all of ε.
The clamp follows the run's neighbour relation (:func:`.mechanisms.clamp_interval`).

**What the censored mechanisms promise** (issue 24). The ε = 2Δ proof covers an *exact* draw
from the clamped posterior. The release is the last state of a fixed-length adaptive
Metropolis chain started near a data-dependent mode (:mod:`.sampler`): its law approaches the
posterior but is not it, and no sampler known to us is exact for these models at n ≥ 10⁵ within
the time budget. So the label is not "strict ε-DP" but :data:`MCMC_LABEL`, kind
:data:`~workbench.generators.family.MCMC_KIND` (never ``PURE_KIND``), and ``guarantee.json``
says ``strict: false, proven_for_release: false`` (issue 34: the proof does not cover what
ran; ``verify`` fails a bundle that says otherwise): a spec must opt in with
``budget.allow_mcmc_draw: true`` (the validator refuses it otherwise, and ``fit`` in a
confidential context), ``verify`` flags it, and the bundle carries R̂ and ESS in
``diagnostics.json`` — of the same sampler re-run on the *released* records
(:meth:`BayesianPosterior.release_diagnostics`, post-processing, same model, mechanism, clamp
and counts). The confidential chain's own R̂ and ESS are statistics of the data, not covered
by ε: they go to the enclave ledger only (``posterior_diagnostics``), and cannot trigger a
rerun.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.arguments import check_epsilon, check_n
from workbench.generators.bayesian import mechanisms as mech
from workbench.generators.bayesian.models import MODELS, ModelData, one_hot_design
from workbench.generators.bayesian.posterior import PosteriorFit, draw
from workbench.generators.bayesian.sampler import CHAINS
from workbench.generators.conditional import ConditionalTable
from workbench.generators.family import MCMC_KIND, GeneratorFamily, Guarantee
from workbench.generators.measurement import noisy_marginal
from workbench.specification.params import Param, name_list, one_of, open_interval, whole_at_least
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Spec
    from workbench.transform import Codec, Domain, TableCodec

#: The censored mechanisms' label: the issue-24 words, shown everywhere through report.guarantee.
MCMC_LABEL = ("ε-DP for an exact posterior draw; released from MCMC (R̂, ESS of a re-run on the "
              "released records in the bundle)")
MCMC_CAVEAT = ("The ε-DP proof covers an exact draw from the clamped posterior; the released "
               "draw is the last state of a finite adaptive MCMC chain, which only approximates "
               "it. How close it came is judged by R̂ and ESS of the same sampler re-run on the "
               "released records (diagnostics.json); the confidential chain's own diagnostics "
               "are statistics of the data and stay in the enclave.")


def mcmc_guarantee(iterations: int, burn_in: int) -> Guarantee:
    """The censored mechanisms' guarantee at these public sampler counts."""
    return Guarantee(
        MCMC_LABEL, explanation="one draw from a posterior whose every log-likelihood term is "
        "clamped to an interval fixed by ε and the neighbour relation is ε-DP for every "
        "dataset; the release is an MCMC approximation of that draw, which the proof does not "
        "cover", strict=False, proven_for_release=False, kind=MCMC_KIND,
        parameters={"iterations": int(iterations), "burn_in": int(burn_in), "chains": CHAINS},
        caveat=MCMC_CAVEAT)
ADP = Guarantee(
    "aDP, not a guarantee", strict=False, proven_for_release=False,
    explanation="a risk-weighted pseudo-posterior: its ε is computed on the data itself "
    "(asymptotic DP), so the run's ε is a nominal figure, not a proven bound",
    kind="adp_pseudo_posterior")


def _column_name(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "must be a column name"


def _working(bounds: tuple[float, float], model: str) -> tuple[float, float]:
    """(offset, scale) of the public working scale: (x − offset)/scale."""
    lo, hi = bounds
    if model.startswith("beta"):
        return lo, hi - lo
    return (lo + hi) / 2, (hi - lo) / 6


class BayesianPosterior(GeneratorFamily):
    """Posterior-draw synthesiser of one numeric target; the rest from a noisy joint."""

    name = "bayesian"
    description = ("a Bayesian model of one numeric column given categorical predictors, "
                   "released through one draw of a censored (ε-DP for an exact draw, released "
                   "from MCMC) or weighted (aDP) posterior")
    hyperparameters = MappingProxyType({
        "target": Param(None, _column_name, "the numeric column the model synthesises",
                        control="column"),
        "model": Param("normal_linear", one_of(*MODELS), "the Bayesian model",
                       control="choice", choices=tuple(MODELS)),
        "predictors": Param(None, name_list, "categorical predictors of the target",
                            control="columns"),
        "mechanism": Param("censor_uw", one_of(*mech.MECHANISMS), "the posterior mechanism",
                           control="choice", choices=tuple(mech.MECHANISMS)),
        "weight_function": Param(None, mech.check_weight_function,
                                 "censor_w: public weights {knots, alpha} fitted on proxy data",
                                 control="json"),
        "draw_share": Param(0.8, open_interval(0.0, 1.0), "share of ε for the posterior draw",
                            control="number"),
        "iterations": Param(20000, whole_at_least(10), "kept sampler iterations per chain",
                            control="whole_number"),
        "burn_in": Param(5000, whole_at_least(100), "adaptive burn-in iterations per chain",
                         control="whole_number"),
        "max_cells": Param(1_000_000, whole_at_least(1), "cap on the other columns' joint",
                           control="whole_number"),
    })
    exactly_one_of = (("target",),)

    def check_combination(self) -> None:
        """censor_w needs its public weights; the target is not its own predictor."""
        if self.mechanism == "censor_w" and self.weight_function is None:
            raise ValueError("bayesian: mechanism 'censor_w' needs a public weight_function")
        if self.target in (self.predictors or ()):
            raise ValueError("bayesian: the target cannot be one of its predictors")
        if MODELS[self.model].regression != bool(self.predictors):
            raise ValueError(f"bayesian: model {self.model!r} "
                             + ("needs predictors" if MODELS[self.model].regression
                                else "takes no predictors"))

    @classmethod
    def spec_problems(cls, grid: Mapping[str, Sequence[Any]],
                      column_names: Sequence[str]) -> list[tuple[str, str]]:
        """The target and predictors are columns of the spec."""
        out = [(f"target[{j}]", f"unknown column {v!r}")
               for j, v in enumerate(grid.get("target", ()))
               if isinstance(v, str) and v not in column_names]
        for j, value in enumerate(grid.get("predictors", ())):
            if isinstance(value, list | tuple):
                out += [(f"predictors[{j}]", f"unknown column {c!r}")
                        for c in value if c not in column_names]
        return out

    def guarantee(self) -> Guarantee:
        """ε-DP for an exact draw, released from MCMC, for the censored mechanisms; aDP for the
        pseudo-posteriors."""
        if self.mechanism in mech.STRICT:
            return mcmc_guarantee(self.iterations, self.burn_in)
        return ADP

    def bind_spec(self, spec: Spec, table: TableCodec | None = None) -> None:
        """The target's codec (the caller's ``table``: without it, ``describe`` and
        ``guarantee`` only) and public bounds, and whether aDP is allowed."""
        super().bind_spec(spec, table)
        column = spec.column(self.target)
        if column.bounds is None:
            raise ValueError(f"bayesian: target {self.target!r} needs public bounds")
        if table is None:
            return
        self.bind_target(table.codec(self.target), column.bounds,
                         allow_asymptotic_dp=spec.budget.allow_asymptotic_dp,
                         allow_mcmc_draw=spec.budget.allow_mcmc_draw,
                         neighbour=spec.budget.neighbour)

    def bind_target(self, codec: Codec, bounds: tuple[float, float], *,
                    allow_asymptotic_dp: bool = False, allow_mcmc_draw: bool = False,
                    neighbour: str = "replace_one") -> None:
        """Bind the target's codec and bounds directly (tests, benchmarks)."""
        self._codec, self._bounds, self._allow_adp = codec, tuple(bounds), allow_asymptotic_dp
        self._allow_mcmc, self._neighbour = allow_mcmc_draw, neighbour

    def describe(self, label: str, epsilon: float) -> list[str]:
        """The mechanism, its clamp and guarantee at this ε."""
        share = epsilon * self.draw_share
        words = f"Posterior draw {label}: {self.model}, {self.mechanism} ({self.guarantee().label})"
        if self.mechanism in mech.STRICT:
            lo, hi = mech.clamp_interval(share, "replace_one")
            words += (f"; each log-likelihood term clamped to [{lo:.4g}, {hi:.4g}] "
                      f"(replace-one), draw ε ≤ {share:.4g}")
        return [words]

    # --- fit and sample ----------------------------------------------------------------------
    def fit(self, codes: np.ndarray, domain: Domain, epsilon: float,
            privacy: PrivacyContext) -> BayesianPosterior:
        """Release the other columns' joint, then one posterior draw of θ."""
        from workbench.privacy import PrivacyMode

        self.check_params()
        eps = check_epsilon(epsilon)
        if not hasattr(self, "_codec"):
            raise RuntimeError("bayesian: bind the spec (generator_for) before fit")
        if (self.mechanism in mech.ASYMPTOTIC and privacy.mode is PrivacyMode.CONFIDENTIAL
                and not self._allow_adp):
            raise ValueError(f"bayesian: mechanism {self.mechanism!r} is aDP, not a guarantee; "
                             "a confidential run needs budget.allow_asymptotic_dp: true")
        if (self.mechanism in mech.STRICT and privacy.mode is PrivacyMode.CONFIDENTIAL
                and not self._allow_mcmc):
            raise ValueError(f"bayesian: mechanism {self.mechanism!r} is ε-DP for an exact "
                             "posterior draw, released from MCMC; a confidential run needs "
                             "budget.allow_mcmc_draw: true")
        data_cells = CellCounts.from_codes(codes, domain)
        rest = tuple(c for c in domain.names if c != self.target)
        if domain.size(rest) > self.max_cells:
            raise ValueError(f"bayesian: the joint of {rest} exceeds max_cells")
        eps_draw = eps * self.draw_share if rest else eps
        self.rest_ = rest
        self.domain_ = domain
        if rest:
            joint = noisy_marginal(data_cells, rest, privacy, eps - eps_draw,
                                   purpose=f"bayesian joint: {', '.join(rest)}")
            self._joint = (joint.shape, ConditionalTable.from_noisy_counts(joint.ravel()))
        data = self._model_data(codes, domain)
        model = MODELS[self.model]
        noisy = privacy.posterior_draw(
            lambda stream: draw(model, data, self.mechanism, eps_draw, privacy.neighbour, stream,
                                iterations=self.iterations, burn_in=self.burn_in,
                                weight_function=self.weight_function, count_censored=False),
            sensitivity=eps_draw / 2, epsilon=eps_draw, strict=self.mechanism in mech.STRICT,
            purpose=f"bayesian posterior draw: {self.target} ({self.mechanism})")
        self.posterior_: PosteriorFit = noisy.value  # confidential facts stay in this object
        self.theta_ = self.posterior_.theta
        self.draw_epsilon_ = eps_draw
        # statistics of the data, not covered by ε: the enclave ledger only (never published)
        privacy.log_event("posterior_diagnostics", enclave_only=True,
                          **self.posterior_.chains.diagnostics())
        return self

    def release_diagnostics(self, codes: np.ndarray, domain: Domain, epsilon: float,
                            rng: np.random.Generator) -> dict[str, Any] | None:
        """R̂, ESS and acceptance of the same sampler (model, mechanism, clamp, counts) re-run
        on the RELEASED codes: post-processing of the release, the bundle's evidence that the
        chain converges at this n for data like these (module docstring)."""
        if self.mechanism not in mech.STRICT:
            return None
        from workbench.privacy.noise import SamplerStream

        rest = tuple(c for c in domain.names if c != self.target)
        eps = check_epsilon(epsilon)
        eps_draw = eps * self.draw_share if rest else eps
        fit = draw(MODELS[self.model], self._model_data(codes, domain), self.mechanism,
                   eps_draw, self._neighbour, SamplerStream(int(rng.integers(2 ** 63))),
                   iterations=self.iterations, burn_in=self.burn_in,
                   weight_function=self.weight_function, count_censored=False)
        return {"kind": "mcmc", **fit.chains.diagnostics(), "burn_in": int(self.burn_in),
                "model": self.model, "mechanism": self.mechanism,
                "computed_on": "the released records (release.csv): the same sampler, model, "
                "mechanism, clamp and iteration counts re-run on them, post-processing of the "
                "release; the confidential chain's R̂ and ESS stay in the enclave"}

    def proxy_weight_function(self, codes: np.ndarray, domain: Domain, *, rows: int = 20_000,
                              seed: int = 0) -> dict[str, list[float]]:
        """Censor_w's weight function fitted on PUBLIC codes (a proxy's first ``rows``): the
        risk view's weights of the plain posterior, smoothed by ``fit_weight_function``, so
        the mechanism stays strict. Never call it on confidential codes: it goes into the spec.
        """
        from workbench.generators.bayesian.risk import risk_view

        if not hasattr(self, "_codec"):
            raise RuntimeError("bayesian: bind the spec (generator_for) before fitting weights")
        data = self._model_data(np.asarray(codes)[:rows], domain)
        view = risk_view(MODELS[self.model], data, [], self._neighbour, seed)
        return mech.fit_weight_function(data.y, view.weights)

    def _predictor_index(self, domain: Domain) -> tuple[list[int], tuple[int, ...]]:
        preds = list(self.predictors or ())
        return [domain.index(p) for p in preds], tuple(domain.size_of(p) for p in preds)

    def _model_data(self, codes: np.ndarray, domain: Domain) -> ModelData:
        """The target on the working scale and each record's predictor cell."""
        offset, scale = _working(self._bounds, self.model)
        x = np.asarray(self._codec.numbers(), dtype=np.float64)[codes[:, domain.index(self.target)]]
        idx, sizes = self._predictor_index(domain)
        cells = (np.ravel_multi_index(tuple(codes[:, idx].T), sizes) if idx
                 else np.zeros(len(codes), dtype=np.int64))
        return ModelData((x - offset) / scale, np.asarray(cells, np.int64), one_hot_design(sizes))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Other columns from the noisy joint, then the target given θ by inverse CDF."""
        if not hasattr(self, "theta_"):
            raise RuntimeError("bayesian: call fit before sample")
        n = check_n(n)
        domain = self.domain_
        out = np.zeros((n, len(domain)), dtype=np.int64)
        if self.rest_:
            shape, table = self._joint
            flat = table.sample(np.zeros(n, dtype=np.int64), rng)
            out[:, [domain.index(c) for c in self.rest_]] = np.stack(
                np.unravel_index(flat, shape), axis=1)
        idx, sizes = self._predictor_index(domain)
        cells = np.ravel_multi_index(tuple(out[:, idx].T), sizes) if idx else np.zeros(n, int)
        stub = ModelData(np.zeros(0), np.zeros(0, np.int64), one_hot_design(sizes))
        u = np.clip(rng.random(n), 1e-12, 1 - 1e-12)
        y = MODELS[self.model].synthesise(self.theta_, cells, stub, u)
        offset, scale = _working(self._bounds, self.model)
        x = np.clip(np.nan_to_num(y * scale + offset, nan=offset), *self._bounds)
        out[:, domain.index(self.target)] = self._codec.encode(x)
        return out
