"""The guided flow over the co-design tabs: a step bar, a checklist, Back/Next, and the summary.

The steps (:data:`workbench.widgets.model.steps.STEPS`) walk the tabs in order: each step
button opens the first tab of its step, Back/Next walk the tabs, and the checklist lists what
each step still lacks. A step is ticked only once the user has done it (:attr:`GuidedFlow.did`:
an edit in its sections, its buttons, or — review steps — opening one of its tabs). The summary
above everything shows ε_total (from the one budget plan), the forecast P(all pass) against the
target and the criteria at risk, for the last valid design. The tabs stay clickable for
experts: the guide only selects them.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.widgets.model import forecast as forecasts
from workbench.widgets.model.forecast import DEFAULT_TARGET
from workbench.widgets.model.forecast import percent as _pct
from workbench.widgets.model.readouts import samples_label
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change
from workbench.widgets.model.steps import (
    REVIEW_STEPS,
    STEPS,
    FlowState,
    Summary,
    steps_of_edit,
    summarize,
)


def summary_html(s: Summary) -> str:
    """ε_total, forecast P(all pass) with its range against the target, and the criteria at
    risk; with no criteria, no forecast at all."""
    total = "—" if s.epsilon_total is None else f"{s.epsilon_total:.4g}"
    parts = [f"<span class='wb-summary-total'><b>ε_total = {total}</b></span>"]
    if s.criteria == 0:
        parts.append("<span class='wb-summary-forecast'>no criteria yet: nothing to forecast"
                     "</span>")
    elif s.all_pass is None:
        parts.append("forecast P(all pass): — (no proxy readouts)")
    else:
        f = s.all_pass
        below = f.probability < s.target
        target = (f" <span style='color:{'#b00020' if below else '#1b7f3b'}'>"
                  f"({'below' if below else 'meets'} the target {_pct(s.target)})</span>")
        parts.append(f"<span class='wb-summary-forecast'>forecast P(all pass) = "
                     f"<b>{_pct(f.probability, s.target)}</b> (range {_pct(f.low)} – "
                     f"{_pct(f.high)}), {samples_label(f.samples)}{target}</span>")
    if s.at_risk:
        risky = ", ".join(f"{html.escape(cid)} ({_pct(p)})" for cid, p in s.at_risk)
        parts.append(f"<span class='wb-summary-risk' style='color:#9a6700'>at risk: "
                     f"{risky}</span>")
    elif s.all_pass is not None and s.criteria:
        parts.append("<span class='wb-summary-risk'>no criterion at risk</span>")
    stale = ("<br><span style='color:#b00020'>the draft is invalid: the summary is for the "
             "last valid design</span>" if s.stale else "")
    return ("<div style='padding:6px 10px;background:#f6f8fa;border:1px solid #d0d7de;"
            "border-radius:6px'>" + " · ".join(parts) + stale + "</div>")


class GuidedFlow:
    """Steps, checklist and Back/Next over ``app.tabs``; ``summary_widget`` sits on top."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.summary_widget = widgets.HTML().add_class("wb-summary")
        self.buttons = {}
        for i, step in enumerate(STEPS, 1):
            button = widgets.Button(description=f"{i}. {step.title}",
                                    layout=widgets.Layout(width="auto"))
            button.add_class(f"wb-step-{step.key}")
            button.on_click(lambda _b, k=step.key: self.go(k))
            self.buttons[step.key] = button
        self.checklist = widgets.HTML().add_class("wb-checklist")
        self.back = widgets.Button(description="◀ Back", layout=widgets.Layout(width="90px"))
        self.next = widgets.Button(description="Next ▶", layout=widgets.Layout(width="90px"))
        self.back.add_class("wb-back")
        self.next.add_class("wb-next")
        self.back.on_click(lambda _b: self.move(-1))
        self.next.on_click(lambda _b: self.move(1))
        self.lacking: dict[str, list[str]] = {}
        self.summary: Summary | None = None
        self.forecast: forecasts.Forecast | None = None
        #: steps the user has done (restored from the autosave by the dashboard)
        self.did: set[str] = set()
        self.notes: dict[str, str] = {}
        self.widget = widgets.VBox([
            widgets.HBox([*self.buttons.values(), self.back, self.next],
                         layout=widgets.Layout(flex_flow="row wrap")),
            self.checklist,
        ]).add_class("wb-guide")
        app.session.observe(self._edited)
        app.tabs.observe(lambda _c: self._opened(), names="selected_index")
        if app.preview is not None:
            app.preview.on_change(self.refresh)
        for attribute, button, key in (("export", "freeze", "signoff"),
                                       ("feasibility", "run_button", "feasibility"),
                                       ("budget", "accept", "budget")):
            editor = getattr(app, attribute, None)
            if editor is not None and hasattr(editor, button):
                getattr(editor, button).on_click(lambda _b, k=key: self.mark(k))
        budget = getattr(app, "budget", None)
        if budget is not None:
            budget.design.apply_button.on_click(lambda _b: self.mark("budget"))
        self.refresh()

    # --- what the user did -----------------------------------------------------------------
    def _edited(self, change: Change) -> None:
        """An edit counts for the steps owning its paths (not undo/redo, not a whole document)."""
        if change.kind == "edit":
            for path in change.paths:
                self.did |= steps_of_edit(path)
        self.refresh()

    def _opened(self) -> None:
        """Opening a tab of a review step counts as reviewing it (the first tab at start-up
        does not: only a tab the user opens)."""
        if self.current_step in REVIEW_STEPS:
            self.did.add(self.current_step)
        self.refresh()

    def mark(self, key: str) -> None:
        """The user did step ``key`` with one of its buttons."""
        self.did.add(key)
        self.refresh()

    def restore(self, did: set[str] | tuple[str, ...]) -> None:
        """Steps done in an earlier page load (from the autosave)."""
        self.did |= {k for k in did if k in {s.key for s in STEPS}}
        self.refresh()

    # --- navigation ------------------------------------------------------------------------
    @property
    def current_step(self) -> str:
        """The step of the tab shown."""
        return self.app.steps_of[self.app.tabs.selected_index or 0]

    def go(self, key: str) -> None:
        """Open the first tab of a step."""
        self.app.tabs.selected_index = self.app.steps_of.index(key)

    def move(self, delta: int) -> None:
        """The previous or next tab (tabs are in step order)."""
        i = (self.app.tabs.selected_index or 0) + delta
        self.app.tabs.selected_index = min(max(i, 0), len(self.app.editors) - 1)

    # --- state -----------------------------------------------------------------------------
    def state(self) -> tuple[FlowState, Any]:
        """What the checks read, and the forecast P(all pass)."""
        app, spec = self.app, self.app.session.spec
        readouts, all_pass, samples = {}, None, 0
        if app.lab is not None and spec is not None:
            try:
                readouts = app.lab.readouts(spec)
                all_pass = app.lab.all_pass(spec)
                samples = app.lab.sample_count
            except (PreviewError, ValueError, KeyError, ArithmeticError):
                readouts = {}
        export = getattr(app, "export", None)
        exported = (export is not None and spec is not None and app.session.valid
                    and getattr(export, "sha256", None) == spec.sha256)
        feasibility = getattr(app, "feasibility", None)
        dry = None if feasibility is None else feasibility.result_for(spec)
        self.forecast = forecasts.current(spec, all_pass, dry)
        state = FlowState(app.session, readouts, samples, has_proxy=app.lab is not None,
                          dry_run_done=dry is not None, exported=exported,
                          did=frozenset(self.did), forecast=self.forecast,
                          target=app.target() if hasattr(app, "target") else DEFAULT_TARGET,
                          acknowledged=exported and bool(getattr(export, "acknowledged", False)),
                          spec_path=app.session.source)
        return state, all_pass

    def refresh(self) -> None:
        """Recompute the checklist and the summary."""
        state, all_pass = self.state()
        self.lacking = {s.key: s.lacks(state) for s in STEPS}
        f = state.forecast
        low = f is None or (f.criteria > 0 and f.below(state.target))
        self.notes = {"signoff": " (exported below the target forecast, acknowledged)"} if (
            state.acknowledged and low) else {}
        self.summary = summarize(state, all_pass)
        self.summary_widget.value = summary_html(self.summary)
        self._highlight()

    def _highlight(self) -> None:
        """Mark done steps, the current one, and list what each still lacks."""
        current = self.current_step
        items = []
        for i, s in enumerate(STEPS, 1):
            lacks = self.lacking.get(s.key, [])
            mark = "✓" if not lacks else f"{len(lacks)} to do"
            button = self.buttons[s.key]
            button.button_style = "info" if s.key == current else (
                "success" if not lacks else "")
            button.tooltip = "; ".join(lacks) or "done"
            detail = "".join(f"<li>{html.escape(x)}</li>" for x in lacks[:6])
            more = f"<li>… and {len(lacks) - 6} more</li>" if len(lacks) > 6 else ""
            style = "font-weight:600" if s.key == current else ""
            items.append(f"<li style='{style}' class='wb-check-{s.key}'>{i}. "
                         f"{html.escape(s.title)}: {'done ✓' if not lacks else mark}"
                         f"{html.escape(self.notes.get(s.key, '')) if not lacks else ''}"
                         + (f"<ul>{detail}{more}</ul>" if lacks else "") + "</li>")
        self.checklist.value = ("<div style='font-size:90%'><b>Checklist</b><ul "
                                "style='margin:2px 0'>" + "".join(items) + "</ul></div>")
