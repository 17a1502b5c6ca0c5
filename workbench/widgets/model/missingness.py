"""What the co-design missingness panel shows, computed on the PUBLIC proxy (no ipywidgets).

The profile of :mod:`workbench.report.missing_profile` on the proxy as read (before cleaning:
missing values are what cleaning may remove), optionally after a simulated MCAR mask on every
column that may be missing (``proxy.missingness``), so a designer sees what a registry with more
holes than the proxy does to the complete rows behind each marginal.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pandas as pd

from workbench.evidence.missingness import Mask, apply_masks
from workbench.report.missing_profile import MissingProfile, missing_profile, upset_figure

if TYPE_CHECKING:
    from workbench.specification.model import Spec


def proxy_profile(proxy: pd.DataFrame, spec: Spec, mcar: float = 0.0,
                  seed: int = 0) -> MissingProfile:
    """The missingness profile of the proxy, with an extra MCAR mask of rate ``mcar``."""
    frame = proxy[list(spec.column_names)]
    if mcar > 0:
        forbid = [c.name for c in spec.columns if c.missing == "forbid"]
        frame = apply_masks(frame, [Mask("MCAR", mcar)], seed=seed, exclude=forbid)
    return missing_profile(frame, spec)


def upset_png(profile: MissingProfile) -> bytes:
    """The UpSet-style plot as PNG bytes."""
    buf = io.BytesIO()
    upset_figure(profile).savefig(buf, format="png", dpi=80, bbox_inches="tight")
    return buf.getvalue()
