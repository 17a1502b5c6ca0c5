"""Small matplotlib figures as PNG bytes for ``ipywidgets.Image`` (works without a kernel).

Figures are built with the object API (no pyplot state), so editors can draw them in any
process, and tests can assert that an image was drawn.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from workbench.transform.display import shown_label

DPI = 96


def to_png(fig: Figure, *, tight: bool = False) -> bytes:
    """Render a figure to PNG bytes (one draw: fixed margins; ``tight`` grows the image to
    every label, e.g. a heat map's long configuration names)."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    return buf.getvalue()


def histogram_png(labels: Sequence[str], counts: np.ndarray, title: str) -> bytes:
    """Bar chart of proxy counts per bin."""
    width = min(10.0, max(4.0, 0.25 * len(labels)))
    fig = Figure(figsize=(width, 2.8))
    fig.subplots_adjust(left=0.17, right=0.98, top=0.88, bottom=0.3)
    ax = fig.add_subplot()
    x = np.arange(len(labels))
    ax.bar(x, counts, color="#4c72b0")
    ax.set_xticks(x, [shown_label(lab) for lab in labels], rotation=90 if len(labels) > 8 else 0,
                  fontsize=7)
    ax.yaxis.set_major_formatter(_thousands)
    ax.set_ylabel("proxy rows")
    ax.set_title(title, fontsize=9)
    return to_png(fig)


class BudgetBarFigure:
    """One horizontal stacked bar of what each ε contributes to ε_total, kept between draws:
    when only the values change, the artists are updated instead of rebuilt (≈ 2× faster)."""

    def __init__(self) -> None:
        self.labels: tuple[str, ...] | None = None
        self.fig: Figure | None = None

    def _build(self, labels: tuple[str, ...]) -> None:
        """Figure, one bar segment per label, and the legend."""
        rows = (len(labels) + 2) // 3
        height = 1.3 + 0.2 * rows  # inches: title, bar, axis label, 0.2 per legend row
        fig = Figure(figsize=(7.0, height))
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.03, right=0.97, top=1 - 0.3 / height,
                            bottom=(0.5 + 0.2 * rows) / height)
        ax = fig.add_subplot()
        self.patches = [ax.barh([0], [1.0], left=0.0, color=f"C{i % 10}", label=label)[0]
                        for i, label in enumerate(labels)]
        ax.set_yticks([])
        ax.set_xlabel("ε")
        self.title = ax.set_title("", fontsize=9)
        self.legend = ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.9),
                                ncol=3, frameon=False) if labels else None
        self.fig, self.ax, self.labels = fig, ax, labels

    def png(self, segments: Sequence[tuple[str, float]], total: float | None) -> bytes:
        """Draw the segments (label, weighted ε) and the total."""
        labels = tuple(label for label, _ in segments)
        if labels != self.labels:
            self._build(labels)
        left = 0.0
        for i, (label, value) in enumerate(segments):
            self.patches[i].set_x(left)
            self.patches[i].set_width(value)
            if self.legend is not None:
                self.legend.get_texts()[i].set_text(f"{label}: {value:.4g}")
            left += value
        self.ax.set_xlim(0, max(left, 1e-9) * 1.02)
        self.title.set_text(f"ε_total = {'invalid' if total is None else f'{total:.4g}'}")
        return to_png(self.fig)  # type: ignore[arg-type]


class SigmaFigure:
    """σ = √2·Δ/ε against ε per criterion on log axes, a dot at the current ε; kept between
    draws like :class:`BudgetBarFigure`."""

    def __init__(self) -> None:
        self.labels: tuple[str, ...] | None = None

    def _build(self, labels: tuple[str, ...]) -> None:
        """Figure, one line and one dot per criterion, and the legend."""
        fig = Figure(figsize=(7.0, 3.2))
        FigureCanvasAgg(fig)
        fig.subplots_adjust(left=0.1, right=0.7, bottom=0.16, top=0.95)
        ax = fig.add_subplot()
        self.lines, self.dots = [], []
        for i, label in enumerate(labels):
            colour = f"C{i % 10}"
            self.lines.append(ax.plot(LOG_EPS, [0.0, 0.0], color=colour, lw=1, label=label)[0])
            self.dots.append(ax.plot([0.0], [0.0], "o", color=colour, ms=4)[0])
        ax.xaxis.set_major_formatter(_power_of_ten)
        ax.yaxis.set_major_formatter(_power_of_ten)
        ax.set_xlabel("ε (log scale)")
        ax.set_ylabel("σ of the Laplace noise (log scale)")
        ax.set_xlim(*LOG_EPS)
        if labels:
            ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        self.fig, self.ax, self.labels = fig, ax, labels

    def png(self, curves: Sequence[tuple[str, float, float]]) -> bytes:
        """Draw (label, Δ, current ε) per criterion; log σ is linear in log ε."""
        labels = tuple(label for label, _, _ in curves)
        if labels != self.labels:
            self._build(labels)
        low, high = np.inf, -np.inf
        for (_, delta, current), line, dot in zip(curves, self.lines, self.dots, strict=True):
            base = float(np.log10(np.sqrt(2.0) * delta))
            line.set_ydata([base - LOG_EPS[0], base - LOG_EPS[1]])
            dot.set_data([np.log10(current)], [base - np.log10(current)])
            low, high = min(low, base - LOG_EPS[1]), max(high, base - LOG_EPS[0])
        if curves:
            self.ax.set_ylim(low - 0.2, high + 0.2)
        return to_png(self.fig)


#: log10 of the ε range the σ plot spans.
LOG_EPS = (-3.0, 1.0)


def _thousands(value: float, _pos: int) -> str:
    """Counts as 0, 500, 12k, 1.5M."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:g}M"
    return f"{value / 1e3:g}k" if abs(value) >= 1e4 else f"{value:g}"


def _power_of_ten(value: float, _pos: int) -> str:
    """Tick label of a log10 axis drawn on a linear scale."""
    return f"{10 ** value:.3g}"


def cost_histogram_png(levels: Sequence[float], shares: Sequence[float], alpha: float) -> bytes:
    """Share of S rows first matched at each cost level; levels above α in grey."""
    fig = Figure(figsize=(5.0, 2.6))
    fig.subplots_adjust(left=0.14, right=0.97, top=0.88, bottom=0.2)
    ax = fig.add_subplot()
    x = np.arange(len(levels))
    colours = ["#4c72b0" if lv <= alpha + 1e-12 else "#bbbbbb" for lv in levels]
    ax.bar(x, shares, color=colours)
    ax.set_xticks(x, [f"≤{lv:g}" for lv in levels])
    ax.set_xlabel("match cost c(s, r)")
    ax.set_ylabel("share of S rows")
    ax.set_title(f"newly matched at each cost (α = {alpha:g})", fontsize=9)
    return to_png(fig)
