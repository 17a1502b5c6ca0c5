"""The ``workload`` family: measure the criteria's marginals with pure-ε noise, fit Private-PGM.

Algorithm "fixed" (Private-PGM's Fixed workload, McKenna et al. 2019/2022): every marginal of
the spec-derived :class:`~workbench.generators.workload.Workload` is released once with
``ctx.discrete_laplace`` at its allocated ε (Σ = ε_gen exactly, sequential composition), then a
graphical model consistent with all of them is fitted by mirror descent and sampled. The data
is never handed to OpenDP's own mbi pipeline: that would bypass the accountant and ledger and
use zCDP Gaussian noise, which a pure-ε budget cannot charge.

Algorithm "aim": a pure-ε port of AIM (McKenna et al., "AIM: an adaptive and iterative
mechanism", VLDB 2022). OpenDP's AIM is zCDP with Gaussian noise, which this pure-ε budget cannot
charge, so the rounds are rebuilt from pure-ε parts: the 1-way marginals get ``one_way_share`` of
ε_gen as in "fixed"; the rest is split evenly over ``rounds`` rounds, each spending 10% on
selecting one multi-way workload clique with the exponential mechanism (OpenDP's noisy max via
``ctx.exponential``) and 90% on measuring it with discrete Laplace, and the model is refitted
(warm-started) after every measurement. The score of clique c is AIM's
w_c·(‖M_c(D) − M_c(p̂)‖₁ − E‖noise_c‖₁), with E‖noise_c‖₁ = |c|·σ/√2 for Laplace noise of std σ;
replacing one record moves ‖M_c(D) − ·‖₁ by at most Δ (2 replace-one, 1 add/remove), so the
scores' sensitivity is Δ·max_c w_c. Σ ε = ε_gen exactly. It costs ``rounds`` + 1 model fits
(JAX), so it is several times slower than "fixed".

The model's domain is the spec's ``Domain``: there is no extra unknown-value category (OpenDP's
own mbi pipeline adds one; it is not used), so ``sample(n)`` draws exactly n rows in the spec's
codes. ``iters`` matters: on the US 2019 sample at ε_gen = 1.5, 500 mirror-descent steps left
the regression-coefficient error at 51–56 (limit 30), 2000–4000 steps brought it to 11–19.

Option ``public_measurements: joint`` (issue 26, :mod:`workbench.generators.workload_public`):
a PUBLIC proxy named and pinned by the spec gives free measurements where a DP test finds its
(raked) tables closer to the data than a private measurement would be; the 1-way tables stay
private. A dry run whose proxy is also this public file rehearses with a proxy that agrees with
itself, so its forecast is optimistic; rehearse on another public sample. The same pinned counts
size the needs of the rate and ratio criteria (``generators.workload``: the proxy's cell sizes),
re-deriving the workload at fit, when the proxy is read and checked before anything is spent.

ε_gen is not one of this family's own hyperparameters but the common ``epsilon`` one (every
family takes it): the dry run ranks ε_gen alternatives on the proxy, and private selection is
charged for the largest selectable one, so narrowing to the chosen ε is what saves budget.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.arguments import check_epsilon, check_n
from workbench.generators.conditional import SAMPLING_PARAM
from workbench.generators.family import GeneratorFamily, Guarantee
from workbench.generators.mbi_model import (
    GraphicalModel,
    NoisyMarginal,
    estimate,
    model_marginal,
    sampling_plan,
)
from workbench.generators.measurement import measure_marginal
from workbench.generators.missing import AS_VALUE, missing_params, separate_layout
from workbench.generators.model_limit import ModelLimit
from workbench.generators.public_proxy import check_proxy, proxy_counts
from workbench.generators.structure_selection import STRUCTURE_PARAMS, structure_epsilon
from workbench.generators.workload import Workload, all_pairs_workload, derive_workload
from workbench.generators.workload_public import (
    PUBLIC_PARAMS,
    fit_joint,
    joint_guarantee,
    joint_problems,
)
from workbench.generators.workload_structure import structure_note, structure_rounds
from workbench.privacy.records import discrete_laplace_sigma
from workbench.specification.params import Param, non_negative, one_of, whole_at_least
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification import Spec
    from workbench.transform import TableCodec

ALGORITHMS = ("fixed", "aim")


def _share(value: object) -> str | None:
    """A share in [0, 1): 0 leaves the 1-way marginals to the multi-way cliques."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1
    return None if ok else "must be a number in [0, 1)"
#: Share of each AIM round's ε spent on selecting the clique (AIM uses 10%).
AIM_SELECT_SHARE = 0.1


class WorkloadGenerator(GeneratorFamily):
    """Criteria-aware marginal synthesis; bind a spec (or a workload) before ``fit``.

    Without a bound workload, every 2-way marginal is measured with equal weight.
    """

    name = "workload"
    #: ``fit`` only counts cells and ``sample`` only writes codes, so narrow unsigned codes are
    #: safe here (``engine.iteration.fit_generator`` widens them for the other families)
    narrow_codes = True
    description = ("the marginals the criteria depend on, measured with discrete Laplace and "
                   "fitted with Private-PGM (algorithm 'fixed', or a pure-ε AIM)")
    hyperparameters = MappingProxyType({
        "algorithm": Param("fixed", one_of(*ALGORITHMS), "'fixed' workload or adaptive 'aim'",
                           control="choice", choices=ALGORITHMS),
        "one_way_share": Param(0.25, _share, "share of ε for the 1-way marginals (may be 0)",
                               control="number"),
        "regression_weight": Param(1.0, non_negative, "multiplier of regression criteria",
                                   control="number"),
        "mean_weight": Param(1.0, non_negative, "multiplier of conditional-mean criteria",
                             control="number"),
        "marginal_weight": Param(1.0, non_negative, "multiplier of marginal criteria",
                                 control="number"),
        "faithfulness_weight": Param(1.0, non_negative, "multiplier of faithfulness",
                                     control="number"),
        "faithfulness_cliques": Param(0, one_of(0, 2, 3), "0: the kind's distance pairs; "
                                      "2 or 3: cliques of that order from the cost rule",
                                      control="choice", choices=(0, 2, 3)),
        "size_power": Param(0.0, non_negative, "clique weight × (cells / mean cells)^power",
                            control="number"),
        "iters": Param(3000, whole_at_least(1), "mirror-descent steps of the final fit",
                       control="whole_number"),
        "sampling": SAMPLING_PARAM,
        "rounds": Param(6, whole_at_least(1), "AIM rounds", control="whole_number"),
        **missing_params(AS_VALUE),
        **PUBLIC_PARAMS,
        **STRUCTURE_PARAMS,
    })

    def __init__(self, **hyperparameters: object) -> None:
        super().__init__(**hyperparameters)
        self.workload: Workload | None = None
        self.public_counts: CellCounts | None = None
        #: whether ``workload`` was derived from the bound spec (then 'joint' sizes it by the
        #: proxy's cells at fit, before anything is spent)
        self.derived_ = False

    def check_combination(self) -> None:
        """'joint' needs algorithm 'fixed' and 1-way candidates (and, to read the spec's proxy
        at fit, its file and hash; ``bind_public`` may give the counts instead)."""
        for key, message in joint_problems(self.get_params(), needs_file=False):
            raise ValueError(f"{self.name}: {key} {message}")
        if self.structure != "none" and self.public_measurements == "joint":
            raise ValueError(f"{self.name}: structure needs public_measurements 'none'")

    @classmethod
    def spec_problems(cls, grid: Mapping[str, Sequence[Any]],
                      column_names: Sequence[str]) -> list[tuple[str, str]]:
        """Every combination of the grid's values (defaults where it is silent) that 'joint'
        cannot run with, once per hyperparameter and message."""
        keys = ("public_measurements", "public_proxy", "public_proxy_sha256", "algorithm",
                "one_way_share")
        options = [list(grid.get(k, [cls.hyperparameters[k].default])) for k in keys]
        out: list[tuple[str, str]] = []
        for combo in itertools.product(*options):
            for problem in joint_problems(dict(zip(keys, combo, strict=True))):
                if problem not in out:
                    out.append(problem)
        return out

    def guarantee(self) -> Guarantee:
        """Pure ε-DP; with 'joint' it names the public proxy and its hash."""
        if self.public_measurements == "joint":
            return joint_guarantee(self.public_proxy, self.public_proxy_sha256)
        return super().guarantee()

    def preflight(self) -> None:
        """'joint': the proxy file exists, has the pinned hash and the bound spec's columns, and
        the spec has no 'allow' columns — before any budget."""
        spec = self.bound_spec_
        if self.public_measurements != "joint":
            return
        if spec is None:
            raise ValueError("workload: bind the spec (generators.generator_for) before preflight")
        if spec.allow_columns:
            raise ValueError("generator public_measurements: 'joint' does not support 'allow' "
                             "columns (missing values); use 'none'")
        check_proxy(spec, self.public_proxy, self.public_proxy_sha256)

    def bind_public(self, counts: CellCounts) -> None:
        """Use these PUBLIC counts as the proxy instead of the spec's file (tests, benchmarks)."""
        self.public_counts = counts

    def multipliers(self) -> dict[str, float]:
        """The per-kind weight multipliers, keyed by workload group."""
        return {
            "regression": self.regression_weight,
            "mean": self.mean_weight,
            "marginal": self.marginal_weight,
            "faithfulness": self.faithfulness_weight,
        }

    def bind_spec(self, spec: Spec, table: TableCodec | None = None) -> None:
        """Derive the workload from the spec's criteria, sized by the configuration's codec
        ``table`` when given (public)."""
        super().bind_spec(spec, table)
        self.bind_workload(self._derive(spec, table))
        self.derived_ = True

    def _derive(self, spec: Spec, table: TableCodec | None,
                public: CellCounts | None = None) -> Workload:
        """The spec's workload; with 'joint', ``public`` (the pinned proxy's counts) sizes the
        needs of the criteria that divide by cells (``generators.workload``)."""
        sizes = (None if table is None
                 else dict(zip(table.domain.names, table.domain.sizes, strict=True)))
        proxy = None if public is None or table is None else (table, public)
        workload = derive_workload(
            spec, one_way_share=self.one_way_share, multipliers=self.multipliers(),
            faithfulness_order=self.faithfulness_cliques, size_power=self.size_power,
            sizes=sizes, proxy=proxy)
        if self.missing_strategy != AS_VALUE or not spec.allow_columns:
            return workload
        from workbench.generators.workload_missing import co_missing_chains

        return co_missing_chains(spec, workload, self.multipliers())

    def describe(self, label: str, epsilon: float) -> list[str]:
        """The derived workload with each measurement's ε (AIM: its candidates and rounds)."""
        if self.workload is None:
            return []
        whole, epsilon = epsilon, epsilon * (1 - self.structure_share * (self.structure != "none"))
        if self.algorithm == "aim":
            rest = epsilon * (1 - self.one_way_share)
            head = (f"Derived workload {label}: AIM candidates; after the 1-way marginals, "
                    f"{self.rounds} rounds of ε {round(rest / self.rounds, 6):.6g}"
                    " (10% to select a clique, 90% to measure it):")
            lines = self.workload.describe(None)
            lines[0] += f" (ε {round(epsilon * self.one_way_share, 6):.6g} in all)"
        elif self.public_measurements == "joint":
            select = epsilon * self.public_selection_share
            head = (f"Derived workload {label}: public measurements 'joint' from "
                    f"{self.public_proxy!r} (SHA-256 {self.public_proxy_sha256}); ε "
                    f"{select:.6g} on one public-or-private test per multi-way marginal "
                    "(Laplace on its L1 distance to the raked proxy table, Δ = 2); 1-way "
                    "marginals always private; ε as below, shares freed by public choices going "
                    "to the private multi-way ones (rate and ratio criteria re-weighted by the "
                    "proxy's smallest cells when the fit reads it):")
            lines = self.workload.describe(epsilon - select)
        else:
            head = f"Derived workload {label}, ε at ε_gen = {whole:.6g}:"
            lines = self.workload.describe(epsilon)
        head += structure_note(self, whole - epsilon)
        from workbench.generators.workload_missing import missing_words

        return [head] + ["  " + line for line in lines] + missing_words(
            self.bound_spec_, self.missing_strategy)

    @classmethod
    def bound_problems(cls, spec: Spec, params: Mapping[str, Any]) -> list[str]:
        """``one_way_share`` 0 leaves the 1-way marginals to the criteria's cliques, so every
        column must lie in a weighted one (else nothing would measure it and the workload
        cannot be allocated)."""
        if params.get("one_way_share", cls.hyperparameters["one_way_share"].default) != 0:
            return []
        try:
            generator = cls(**params)
            generator.bind_spec(spec)
        except (TypeError, ValueError):
            return []  # the generator section reports bad hyperparameters
        items = [i for i in generator.workload.items if i.weight > 0]  # type: ignore[union-attr]
        covered = {c for i in items for c in i.clique}
        missing = [c for c in spec.column_names if c not in covered]
        if not items or not missing:
            return []
        return [f"one_way_share 0 leaves the 1-way marginals to the criteria's marginals, but "
                f"no criterion reads {', '.join(missing)} with another column, so nothing "
                "would measure them: use a share > 0 or add criteria that read them"]

    def bind_workload(self, workload: Workload) -> None:
        """Use an explicit workload (tests, benchmarks); the proxy does not re-weight it."""
        self.workload = workload
        self.derived_ = False

    def fit(
        self, codes: np.ndarray, domain: Domain, epsilon: float, privacy: PrivacyContext
    ) -> WorkloadGenerator:
        """Release every workload marginal (ε allocated by weight), then fit the model.

        Sensitivity of each count table: Δ = privacy.histogram_sensitivity() (a record sits
        in one cell: 2 replace-one, 1 add/remove); per-cell discrete-Laplace scale Δ/ε_i.
        The table shapes, and so the model's domain, come from ``domain`` (the spec) only.
        """
        self.check_params()
        eps = check_epsilon(epsilon)
        workload = self.workload or all_pairs_workload(domain.names, self.one_way_share)
        missing = sorted(set(workload.columns) ^ set(domain.names))
        if missing:
            raise ValueError(f"workload: columns {missing} differ between workload and domain")
        # under 'as_value' the missing codes are values like any other (issue 36)
        layout = separate_layout(self.bound_spec_, domain, self.missing_strategy, codes)
        self.pattern_ = None
        # the sample's codes take the data's narrow unsigned dtype (issue 38), else int64
        kind = np.asarray(codes).dtype
        self.code_dtype_ = kind if np.issubdtype(kind, np.unsignedinteger) else np.dtype(np.int64)
        self.structure_: list[tuple[str, ...]] = []
        joint = self.public_measurements == "joint"
        if joint and self.bound_spec_ is not None and self.bound_spec_.allow_columns:
            raise ValueError("workload: public_measurements 'joint' does not support 'allow' "
                             "columns; nothing was spent")
        model_domain = layout.values if layout is not None else domain
        eps_structure = structure_epsilon(self.structure, self.structure_share, model_domain,
                                          workload, eps, self._limit())
        if layout is not None:  # 'allow' columns: the missing strategy (workload_missing)
            from workbench.generators.workload_missing import fit_workload_missing

            if self.algorithm != "fixed":
                raise ValueError("workload: 'allow' columns need algorithm 'fixed'")
            self.pattern_, self.allocation_, self.model_ = fit_workload_missing(
                self.missing_strategy, self.missingness_share, self.iters, codes, layout,
                workload, eps - eps_structure, privacy,
                structure=self._structure_rounds(eps_structure, privacy) if eps_structure
                else None)
            self.domain_ = layout.domain
            return self
        data = CellCounts.from_codes(codes, domain)
        public = self._public(domain) if joint else None  # read and checked before spending
        if public is not None and self.derived_ and self.bound_spec_ is not None:
            workload = self.workload = self._derive(self.bound_spec_, self.bound_table_, public)
        base = eps - eps_structure
        self.allocation_ = workload.allocate(base)
        if public is not None:
            self.model_, self.choices_ = fit_joint(data, public, workload, eps,
                                                   self.public_selection_share, privacy,
                                                   self.iters)
            self.domain_ = domain
            return self
        # the tree joins its pairs to this fit in closed form: its steps are the final ones
        tree = self.structure in ("tree", "junction")
        refit = max(1, self.iters // 4) if eps_structure and not tree else self.iters
        if self.algorithm == "aim" and any(item.weight > 0 for item in workload.items):
            one_way = [(c, e) for c, e in self.allocation_ if len(c) == 1]
            measured = [measure_marginal(data, c, e, privacy) for c, e in one_way]
            model = self._aim(data, workload, base - sum(e for _, e in one_way), measured,
                              privacy, refit)
        else:
            measured = [measure_marginal(data, c, e, privacy) for c, e in self.allocation_]
            # n is public in this scheme (§4.4.2), so the model's total is n, not an estimate.
            model = estimate(domain, measured, data.n, refit)
        if eps_structure:
            model = self._structure_rounds(eps_structure, privacy)(
                domain, measured, data.n, data.marginal,
                lambda c, e: measure_marginal(data, c, e, privacy), model)
        self.model_ = sampling_plan(domain, model)
        self.domain_ = domain
        return self

    def _limit(self) -> ModelLimit:
        """The declared model budget: the bound spec's ``generator.model_limit``, or defaults."""
        return ModelLimit() if self.bound_spec_ is None else ModelLimit.of(self.bound_spec_)

    def _structure_rounds(self, eps: float, privacy: PrivacyContext) -> Callable[..., object]:
        """The structure option's rounds at ``eps`` (:func:`structure_rounds`)."""
        return structure_rounds(self, eps, privacy, self._limit())

    def _aim(
        self,
        data: CellCounts,
        workload: Workload,
        eps: float,
        measured: list[NoisyMarginal],
        privacy: PrivacyContext,
        last_iters: int,
    ) -> object:
        """AIM's rounds with pure-ε parts (module docstring): select, measure, refit; the
        estimate (``last_iters`` steps in the last refit)."""
        candidates = [item for item in workload.items if item.weight > 0]
        weights = np.array([item.weight for item in candidates], dtype=np.float64)
        weights = weights / weights.max()
        delta = privacy.histogram_sensitivity()
        eps_round = eps / self.rounds
        eps_select, eps_measure = AIM_SELECT_SHARE * eps_round, (1 - AIM_SELECT_SHARE) * eps_round
        expected_noise = discrete_laplace_sigma(delta, eps_measure) / math.sqrt(2.0)
        refit = max(1, self.iters // 4)
        truth = [data.marginal(item.clique) for item in candidates]  # confidential, read once
        model = estimate(data.domain, measured, data.n, refit)
        self.selected_: list[tuple[str, ...]] = []
        for r in range(self.rounds):
            scores = [
                w * (float(np.abs(true - model_marginal(model, item.clique)).sum())
                     - expected_noise * data.domain.size(item.clique))
                for w, true, item in zip(weights, truth, candidates, strict=True)
            ]
            choice = privacy.exponential(
                scores, sensitivity=delta * float(weights.max()), epsilon=eps_select,
                purpose=f"workload aim round {r + 1}: select a marginal",
            ).value
            clique = candidates[int(choice)].clique
            self.selected_.append(clique)
            measured.append(measure_marginal(data, clique, eps_measure, privacy))
            last = r == self.rounds - 1
            model = estimate(data.domain, measured, data.n, last_iters if last else refit,
                             warm=model)
        return model

    def _public(self, domain: Domain) -> CellCounts:
        """The proxy's counts in ``domain``: bound ones, else the spec's file (checked)."""
        public = self.public_counts
        if public is None:
            spec, table = self.bound_spec_, self.bound_table_
            if spec is None or table is None or self.public_proxy is None:
                raise ValueError("workload: public_measurements 'joint' reads its proxy named "
                                 "by public_proxy through the spec (bind_spec with the "
                                 "configuration's codec), or counts given by bind_public")
            if self.public_proxy_sha256 is None:
                raise ValueError("workload: public_proxy_sha256 must pin the proxy file's "
                                 "SHA-256 when public_measurements is 'joint'")
            public = proxy_counts(spec, table, self.public_proxy, self.public_proxy_sha256)
        if public.domain != domain:
            raise ValueError("workload: the public proxy's domain differs from the data's")
        return public

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw exactly n rows of codes in the spec's domain (post-processing only)."""
        if not hasattr(self, "model_"):
            raise RuntimeError("workload: call fit before sample")
        dtype = getattr(self, "code_dtype_", np.dtype(np.int64))
        if self.pattern_ is None and isinstance(self.model_, GraphicalModel):
            return self.model_.sample(check_n(n), rng, self.sampling, dtype)
        values = self.model_.sample(check_n(n), rng, self.sampling)
        return values if self.pattern_ is None else self.pattern_.apply(values, rng)
