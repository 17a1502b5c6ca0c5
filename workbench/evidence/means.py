"""A published mean as evidence: the proxy's rows tilted so a column's mean is the office's.

Statistics offices publish means (mean birth weight, mean age of mothers) beside their tables.
The anchor population is re-weighted to each ``mean`` fact of the published file (the FACTS
list form, :mod:`workbench.evidence.published`) by exponential tilting, w_i·exp(λ·z_i) with z
the column standardised on the proxy, λ solved so the weighted mean over the rows where the
column is stated is the published value: among the weights that meet the mean, the closest to
the given ones in Kullback–Leibler divergence. A mean outside the proxy's range of the column
cannot be met by re-weighting and is refused naming the fact. Written from the recipe in
docs/architecture.md ("Adding a kind of evidence"). Public data only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.evidence.kinds import EvidenceKind, register

if TYPE_CHECKING:
    from workbench.evidence.core import Evidence
    from workbench.evidence.published import PublishedTables


class PublishedMean(EvidenceKind):
    """Every published ``mean`` fact met by tilting the rows' weights."""

    name = "mean"

    def applies(self, published: PublishedTables) -> bool:
        return any(f.kind == "mean" for f in published.facts)

    def reweight(self, evidence: Evidence, weights: np.ndarray | None) -> np.ndarray:
        assert evidence.published is not None
        w = np.ones(len(evidence.frame)) if weights is None else np.asarray(weights, float)
        for fact in (f for f in evidence.published.facts if f.kind == "mean"):
            if fact.column not in evidence.frame.columns:
                raise ValueError(f"published mean {fact.where}: column {fact.column!r} is not "
                                 "in the spec")
            x = pd.to_numeric(evidence.frame[fact.column], errors="coerce").to_numpy(float)
            stated = np.isfinite(x)
            w = w.copy()
            w[stated] = tilted(x[stated], w[stated], float(fact.value or 0.0), fact.where)
        return w


def tilted(x: np.ndarray, w: np.ndarray, mean: float, where: str) -> np.ndarray:
    """``w``·exp(λ·z), λ bisected so the weighted mean of ``x`` is ``mean``, scaled to keep
    Σw (the rows where the column is missing keep their share)."""
    lo, hi = float(x[w > 0].min()), float(x[w > 0].max())
    if not lo < mean < hi:
        raise ValueError(f"published mean {where}: {mean:g} lies outside the proxy's values "
                         f"[{lo:g}, {hi:g}], so no re-weighting meets it")
    z = (x - x.mean()) / (x.std() or 1.0)
    a, b = -50.0, 50.0
    for _ in range(100):
        lam = (a + b) / 2
        t = w * np.exp(lam * z - np.max(lam * z))
        a, b = (lam, b) if np.dot(t, x) / t.sum() < mean else (a, lam)
    t = w * np.exp(lam * z - np.max(lam * z))
    return t * (w.sum() / t.sum())


register(PublishedMean())
