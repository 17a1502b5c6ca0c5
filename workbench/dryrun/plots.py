"""The dry run's heat map: which criteria fail for which configurations, at a glance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def pass_rate_heatmap(rates: pd.DataFrame, ax: Any = None, max_rows: int = 40) -> Any:
    """Configurations (rows, best first) × criteria (columns) pass rates in [0, 1]."""
    import matplotlib.pyplot as plt

    shown = rates.head(max_rows)
    values = shown.to_numpy(dtype=float)
    if ax is None:  # room for the rotated criterion names below and the row names beside
        longest = max((len(str(i)) for i in shown.index), default=0)
        height = 2.6 + 0.32 * len(shown)
        width = 1.2 + 0.75 * shown.shape[1] + max(3.5, 0.075 * longest)
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    else:
        fig = ax.figure
    image = ax.imshow(values, vmin=0.0, vmax=1.0, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(np.arange(shown.shape[1]), labels=[str(c) for c in shown.columns],
                  rotation=40, ha="right")
    ax.set_yticks(np.arange(len(shown)), labels=[str(i) for i in shown.index], fontsize=8)
    if values.size <= 600:
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=7)
    ax.axvline(shown.shape[1] - 1.5, color="black", linewidth=1.0)
    more = f" (top {len(shown)} of {len(rates)})" if len(rates) > len(shown) else ""
    ax.set_title(f"Pass rate on the proxy per configuration and criterion{more}")
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02, label="pass rate")
    return fig
