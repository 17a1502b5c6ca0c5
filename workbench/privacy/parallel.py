"""Parallel composition: mechanisms on disjoint parts of the data cost the max, not the sum.

Theorem (McSherry 2009, "Privacy integrated queries", Thm 4): if the data is partitioned into
disjoint parts D_1, …, D_p by a rule that does not depend on the other records, and an
ε_j-DP mechanism reads only D_j, the whole is max_j ε_j-DP. Under replace-one neighbours the
changed record sits in exactly one part (a random split of record positions, drawn
independently of the values, is such a rule), so only that part's mechanism sees a change.

Use :func:`parallel_composition` around the measurements, with one :meth:`ParallelGroup.part`
block per part; every measurement inside carries the group and part in its record, the
accountant charges max over parts of Σ ε per part (:class:`ParallelTracker`), and the ledger
gets one ``parallel_composition`` line with the parts, the charge and the reason.
``workbench verify`` prices a ledger's measurements with
:func:`~workbench.privacy.records.charged_epsilon`. This module sits above the context.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from workbench.privacy.context import PrivacyContext


class ParallelGroup:
    """Disjoint parts of the data inside one :func:`parallel_composition` block."""

    def __init__(self, ctx: PrivacyContext, group: str, parts: Mapping[str, float]) -> None:
        self.ctx = ctx
        self.group = group
        self.parts = dict(parts)

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Measurements made inside read only the part ``name`` of the data."""
        if name not in self.parts:
            raise ValueError(f"parallel composition: unknown part {name!r}; "
                             f"declared {sorted(self.parts)}")
        previous = self.ctx.parallel_part
        self.ctx.parallel_part = (self.group, name)
        try:
            yield
        finally:
            self.ctx.parallel_part = previous


@contextmanager
def parallel_composition(ctx: PrivacyContext, purpose: str, parts: Mapping[str, float],
                         reason: str) -> Iterator[ParallelGroup]:
    """Run measurements on disjoint parts, charged max(ε of each part) (logged with ``reason``).

    ``parts`` maps each part's name to the ε its measurements will spend (for the ledger line;
    the accountant charges what they actually spend, grouped).
    """
    if ctx.parallel_part is not None:
        raise ValueError("parallel composition blocks do not nest")
    if not parts or any(not (isinstance(e, int | float) and e > 0) for e in parts.values()):
        raise ValueError("parallel composition needs parts with ε > 0")
    ctx.parallel_groups += 1
    group = f"{purpose}#{ctx.parallel_groups}"
    ctx.log_event("parallel_composition", group=group, purpose=purpose,
                  parts=", ".join(f"{k}: ε = {v:g}" for k, v in parts.items()),
                  epsilon_charged=max(parts.values()), reason=reason,
                  iteration=ctx.iteration)
    yield ParallelGroup(ctx, group, parts)
