"""One candidate's evaluation state, shared by every criterion kind: cells, codes, context, caches.

R and S are reduced once to counts on their combined distinct cells (:class:`PairedCells`);
every kind reads those counts (criterion 1 and faithfulness also read the code matrices, for
their own cell-level algorithms). ``cache`` lets kinds share intermediate results within one
evaluation (the regression kinds share one DP coefficient release).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.specification.n_policy import N_HAT_KEY
from workbench.transform.cells import PairedCells

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.specification.model import Criterion, Spec
    from workbench.specification.space import Configuration
    from workbench.transform import TableCodec


class Evaluation:
    """R and S of one candidate under one configuration, the privacy context and shared caches."""

    def __init__(
        self,
        spec: Spec,
        config: Configuration,
        real_codes: np.ndarray,
        synth_codes: np.ndarray,
        ctx: PrivacyContext,
        once_results: Mapping[str, Any] | None,
        table: TableCodec,
        cells: PairedCells | None = None,
    ) -> None:
        """Reduce R and S once to paired cell counts over the domain of ``table`` (the
        configuration's codec, which the caller's Trial holds); ``cells``: that reduction
        already made, of the same codes at the same n (the design's DP draws reuse it)."""
        self.spec = spec
        self.config = config
        self.table = table
        self.once = dict(once_results or {})
        # n_policy dp: shares are of the public n̂ = |S|, never of R's confidential size
        n = self.once.get(N_HAT_KEY)
        self.pc = cells if cells is not None and (n is None or cells.n == n) else \
            PairedCells.from_codes(real_codes, synth_codes, self.table.domain, n=n)
        # as given (narrow unsigned codes from the engine stay narrow, issue 38); the kinds that
        # compute on the rows read the int64 views below, made only when first asked for
        self.real_codes = np.asarray(real_codes)
        self.synth_codes = np.asarray(synth_codes)
        self.ctx = ctx
        self.cache: dict[Any, Any] = {}

    @cached_property
    def real(self) -> np.ndarray:
        """R's codes as int64, for kinds whose row arithmetic narrow codes would wrap."""
        return self.real_codes.astype(np.int64, copy=False)

    @cached_property
    def synth(self) -> np.ndarray:
        """S's codes as int64 (see :attr:`real`)."""
        return self.synth_codes.astype(np.int64, copy=False)

    @property
    def n(self) -> int:
        """The public number of records (n̂ under n_policy dp)."""
        return self.pc.n


def purpose(criterion: Criterion) -> str:
    """Ledger label of a criterion's measurement (public names only)."""
    return f"criterion {criterion.id} ({criterion.kind})"
