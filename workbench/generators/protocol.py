"""The contract every generator family honours: sklearn-style fit on encoded codes, then sample."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.transform import Domain


@runtime_checkable
class Generator(Protocol):
    """A DP generative model: ``fit`` is the only step that touches the data."""

    def fit(
        self, codes: np.ndarray, domain: Domain, epsilon: float, privacy: PrivacyContext
    ) -> Generator:
        """Spend exactly ``epsilon`` through ``privacy`` to learn a model of ``codes``."""
        ...

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` synthetic rows of codes from the fitted model (post-processing only)."""
        ...
