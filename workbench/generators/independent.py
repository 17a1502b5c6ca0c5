"""Independent-marginals baseline: one noisy 1-way histogram per column, columns sampled
independently. The quality floor every other family must beat."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.generators.arguments import check_epsilon, check_n
from workbench.generators.conditional import ConditionalTable
from workbench.generators.family import GeneratorFamily
from workbench.generators.measurement import noisy_marginal
from workbench.transform import Domain
from workbench.transform.cells import CellCounts

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext


class IndependentMarginals(GeneratorFamily):
    """Noisy 1-way marginals, ε/d each; no hyperparameters."""

    name = "independent"
    description = "every column on its own, from its noisy 1-way histogram (a baseline)"
    dp_n_bound = ("each 1-way histogram has L1 Δ = 2 under replace-one (one cell −1, one +1) "
                  "and Δ = 1 under add/remove-one (one cell ±1), so the replace-one Δ = 2 "
                  "covers both; no step reads n, and sampling n̂ rows is post-processing")

    @classmethod
    def models_jointly(cls, params: Mapping[str, Any], clique: Sequence[str]) -> bool | None:
        """Each column on its own: no two columns are tied together."""
        return len(clique) <= 1

    def fit(
        self, codes: np.ndarray, domain: Domain, epsilon: float, privacy: PrivacyContext
    ) -> IndependentMarginals:
        """Release d histograms, ε/d each (sequential composition, total ε).

        Sensitivity of each histogram: Δ = privacy.histogram_sensitivity() (a record sits in
        one cell: 2 for replace-one, 1 for add/remove); per-cell scale d·Δ/ε.
        """
        eps = check_epsilon(epsilon)
        data = CellCounts.from_codes(codes, domain)
        d = len(domain)
        if d == 0:
            raise ValueError("independent: the domain has no columns")
        self.marginals_: dict[str, np.ndarray] = {}
        self._tables: list[ConditionalTable] = []
        for name in domain.names:
            noisy = noisy_marginal(
                data, (name,), privacy, eps / d, purpose=f"independent marginal: {name}"
            )
            table = ConditionalTable.from_noisy_counts(noisy)
            self.marginals_[name] = table.probs[0]
            self._tables.append(table)
        self.domain_ = domain
        self.marginal_epsilon_ = eps / d
        self.marginal_noise_scale_ = d * privacy.histogram_sensitivity() / eps
        return self

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw each column on its own from its noisy marginal."""
        if not hasattr(self, "_tables"):
            raise RuntimeError("independent: call fit before sample")
        n = check_n(n)
        zeros = np.zeros(n, dtype=np.int64)
        out = np.empty((n, len(self._tables)), dtype=np.int64)
        for j, table in enumerate(self._tables):
            out[:, j] = table.sample(zeros, rng)
        return out
