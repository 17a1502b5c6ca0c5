"""Budget planner: sliders for ε_gen and every criterion's ε, ε_total, and a locked-total mode.

ε_total = f·(ε_gen + Σ in-loop ε) + ε₀ + Σ once ε (f = 2 for private selection, 1 for a single
attempt), by the one budget plan — the header shows the plan's own formula
(``BudgetPlan.formula_symbols``) and the total line its numbers — which also states what
retrying after ⊥ honestly costs (once-statistics charged once). "Use this budget" records that
the designer chose the ε's as they are (the guided checklist needs a choice). With the
total locked, moving one slider rescales every other ε by one common factor so that ε_total
stays where it was locked (:func:`workbench.widgets.model.budget.rebalance`); the lock acts on the
planner's sliders only. Plots: a stacked bar of the parts of ε_total, and σ against ε per
criterion (Δ from the proxy readouts); inside the app they are drawn while the Budget tab
is shown (and brought up to date when it is opened).
"""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as widgets

from workbench.specification.derived import GENERATOR_KEY, BudgetItem, budget_items, document_plan
from workbench.widgets.editors.base import EditorBase, heading, note, png_image
from workbench.widgets.editors.design_panel import DesignPanel
from workbench.widgets.editors.fields import error_html, message_widget
from workbench.widgets.editors.plots import BudgetBarFigure, SigmaFigure
from workbench.widgets.model.budget import nice_epsilon, rebalance, segments
from workbench.widgets.model.lab import ProxyLab, digest
from workbench.widgets.model.model_size import model_size_html
from workbench.widgets.model.readouts import Readout
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session

LOG_MIN, LOG_MAX = -3.0, 1.5


def _slider(description: str) -> widgets.FloatLogSlider:
    """A log-scale ε slider (10⁻³ … 10^1.5) that applies on release."""
    return widgets.FloatLogSlider(base=10, min=LOG_MIN, max=LOG_MAX, step=0.01,
                                  description=description, continuous_update=False,
                                  readout_format=".4g", style={"description_width": "180px"},
                                  layout=widgets.Layout(width="560px"))


class BudgetPlanner(EditorBase):
    """ε sliders, the total, the lock, and the two plots."""

    title = "Budget"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.eps_generator = _slider("ε generator").add_class("wb-eps-generator")
        self.sliders: dict[str, widgets.FloatLogSlider] = {}
        self.lock = widgets.Checkbox(description="lock ε_total and rebalance the rest",
                                     indent=False)
        self.locked_total = widgets.FloatText(description="locked at", disabled=True,
                                              layout=widgets.Layout(width="200px"))
        self.total = widgets.HTML().add_class("wb-budget-total")
        self.model_size = widgets.HTML().add_class("wb-model-size")
        self._size_key: str | None = None
        self.header = widgets.HTML().add_class("wb-budget-formula")
        self.accept = widgets.Button(description="use this budget",
                                     tooltip="the ε's as they are are my choice",
                                     layout=widgets.Layout(width="auto")
                                     ).add_class("wb-budget-accept")
        self.message = message_widget()
        self.bar = png_image()
        self.parts = widgets.HTML().add_class("wb-budget-parts")
        self.sigma_plot = png_image()
        self.slider_box = widgets.VBox()
        self._syncing = False
        self._structure: Any = None
        self._bar_key = ""
        self._sigma_key = ""
        self._bar_figure = BudgetBarFigure()
        self._sigma_figure = SigmaFigure()
        self.design = DesignPanel(session, lab)  # the design assistant's button
        self.lock.observe(self._on_lock, names="value")
        self.eps_generator.observe(lambda c: self._moved(GENERATOR_KEY, c["new"]), names="value")
        self.widget = widgets.VBox([
            self.header,
            self.slider_box,
            widgets.HBox([self.lock, self.locked_total]),
            widgets.HBox([self.total, self.accept]),
            self.model_size,
            self.message,
            heading("Parts of ε_total"),
            self.bar,
            self.parts,
            heading("Noise σ against ε per criterion"),
            self.sigma_plot,
            self.design.widget,
        ])
        self.refresh()

    # --- state -----------------------------------------------------------------------------
    @property
    def total_value(self) -> float | None:
        """ε_total of the current draft (None when its ε's are not usable numbers)."""
        plan = document_plan(self.session.draft)
        return None if plan is None else plan.epsilon_total

    def _on_lock(self, change: dict[str, Any]) -> None:
        """Locking remembers the current total."""
        if change["new"]:
            total = self.total_value
            if total is None:
                self.message.value = error_html(["the draft's ε's are not valid numbers"])
                self.lock.value = False
                return
            self.locked_total.value = total
        self.message.value = ""

    def _moved(self, key: str, value: float) -> None:
        """A slider moved: apply it wherever the ε is declared, rebalancing the others when
        the total is locked."""
        if self._syncing:
            return
        self.message.value = ""
        doc = self.session.draft
        items = budget_items(doc)
        item = next((it for it in items if it.key == key), None)
        if item is None:
            return
        value = nice_epsilon(float(value), item.epsilon)
        if not self.lock.value:
            self.session.apply_many(item.assign(value), label=f"ε of {key}")
            self._sync_sliders(budget_items(self.session.draft))  # show the snapped ε
            return
        plan = document_plan(doc)
        try:
            new = rebalance(items, key, float(value), self.locked_total.value,
                            0.0 if plan is None else plan.epsilon_0)
        except ValueError as exc:
            self.message.value = error_html([str(exc)])
            self._sync_sliders(items)
            return
        self.session.apply_many(new, label=f"ε of {key} (total locked)")

    # --- refresh ---------------------------------------------------------------------------
    def refresh(self, change: Change | None = None) -> None:
        """Sliders, total and plots from the draft."""
        doc = self.session.draft
        items = budget_items(doc)
        structure = tuple((it.key, tuple(path for path, _ in it.declared)) for it in items)
        if structure != self._structure:
            self._structure = structure
            self._build_sliders(items)
        self._sync_sliders(items)
        self._show_total(doc)
        self._show_parts(doc)
        self._show_model_size()
        self.draw_plots()

    def refresh_preview(self) -> None:
        """Δ per criterion depends on the preview sample."""
        self.draw_plots()

    def on_show(self) -> None:
        """Draw the plots skipped while the tab was hidden."""
        self.draw_plots()

    def draw_plots(self) -> None:
        """Redraw the bar and the σ plot if their inputs changed (only while visible)."""
        if not self.visible:
            return
        self._draw_bar(self.session.draft)
        self._draw_sigma()

    def _build_sliders(self, items: list[BudgetItem]) -> None:
        """One slider per ε that enters ε_total (ε_gen's edits it wherever it is declared)."""
        self.sliders = {}
        for it in items:
            slider = self.eps_generator if it.key == GENERATOR_KEY else _slider(f"ε {it.label}")
            if it.key != GENERATOR_KEY:
                slider.observe(lambda c, k=it.key: self._moved(k, c["new"]), names="value")
            slider.tooltip = "declared at " + ", ".join(path for path, _ in it.declared)
            self.sliders[it.key] = slider
        self.slider_box.children = list(self.sliders.values())

    def _sync_sliders(self, items: list[BudgetItem]) -> None:
        """Show the draft's ε's on the sliders without applying them back."""
        self._syncing = True
        try:
            for it in items:
                slider = self.sliders.get(it.key)
                if slider is None:
                    continue
                exponent = math.log10(it.epsilon)
                slider.min = min(LOG_MIN, math.floor(exponent))
                slider.max = max(LOG_MAX, math.ceil(exponent))
                if slider.value != it.epsilon:
                    slider.value = it.epsilon
        finally:
            self._syncing = False

    def _show_total(self, doc: dict[str, Any]) -> None:
        """The formula with the numbers of the last valid design (as the criteria readouts),
        and the cap if the spec sets one."""
        stale = not self.session.valid and self.session.spec is not None
        if stale:
            doc = dict(self.session.spec.document)  # type: ignore[union-attr]
        plan = document_plan(doc)
        total = None if plan is None else plan.epsilon_total
        if plan is not None:
            single = " (a single attempt: each ε counts once)" if plan.loop_factor == 1 else (
                " (private selection, Liu & Talwar; paper Thm. 3)")
            self.header.value = note(plan.formula_symbols() + single)
        text = ("ε_total = <b>invalid</b>" if plan is None
                else f"{plan.formula_terms()} = <b>{total:.6g}</b>")
        cap = doc.get("budget", {}).get("epsilon_total_max")
        if cap is not None and total is not None:
            over = total > cap
            text += f" (cap {cap:g}{': EXCEEDED' if over else ''})"
        if self.lock.value:
            text += f" — locked at {self.locked_total.value:.6g}"
        if plan is not None:
            text += f"<br><span class='wb-muted'>{html.escape(plan.retry_text())}</span>"
        if stale:
            text += ("<br><span style='color:#b00020'>the draft is invalid: this is ε_total of "
                     "the last valid design</span>")
        self.total.value = text

    def _show_model_size(self) -> None:
        """The model-size estimate of the last valid design, with a warning above its limit
        (recomputed only when the design's hash changes)."""
        spec = self.session.spec
        key = None if spec is None else spec.sha256
        if key != self._size_key:
            self._size_key = key
            self.model_size.value = model_size_html(spec)

    def _show_parts(self, doc: dict[str, Any]) -> None:
        """The bar's parts in words, each with its value (they sum to ε_total)."""
        self.parts.value = " + ".join(
            f"<span class='wb-budget-part' data-value='{value!r}'>{html.escape(label)} "
            f"{value:.4g}</span>" for label, value in segments(doc))

    def _draw_bar(self, doc: dict[str, Any]) -> None:
        """Stacked bar of ε_total's parts (redrawn only when they change)."""
        parts = segments(doc)
        key = digest(parts)
        if key != self._bar_key:
            self._bar_key = key
            plan = document_plan(doc)
            self.bar.value = self._bar_figure.png(parts, plan and plan.epsilon_total)

    def _readouts(self) -> dict[str, Readout]:
        """Proxy readouts of the last valid design (empty when unavailable)."""
        spec = self.session.spec
        if self.lab is None or spec is None:
            return {}
        try:
            return self.lab.readouts(spec)
        except (PreviewError, ValueError, KeyError, ArithmeticError):
            return {}

    def _draw_sigma(self) -> None:
        """σ = √2·Δ/ε curves with the current ε marked (redrawn only when Δ or ε change)."""
        curves = [(html.unescape(r.id), r.sensitivity, r.epsilon)
                  for r in self._readouts().values()
                  if r.sensitivity is not None and r.epsilon > 0]
        key = digest(curves)
        if key != self._sigma_key:
            self._sigma_key = key
            self.sigma_plot.value = self._sigma_figure.png(curves)
