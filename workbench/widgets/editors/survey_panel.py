"""The co-design Survey panel: ε₁/ε₂/ε₃ of the DP raking, and what they buy on the proxy.

Fields edit ``survey.epsilon.{binning,table,counts}`` and the weight bounds; readouts show
ε_total with the survey term, the labelled secondary (amplified, never charged) figure, the
binning what-if (selection probability, weighted-count noise SD) and each weighted criterion's
ε beside its crossover ε (:mod:`workbench.widgets.model.survey`). Registered by the app only
when the draft has a survey section.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.widgets.editors.base import EditorBase, heading, note
from workbench.widgets.editors.fields import number
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.session import Change, Session
from workbench.widgets.model.survey import survey_readouts

EPSILONS = (("binning", "ε₁ binning choice"), ("table", "ε₂ joint table"),
            ("counts", "ε₃ weighted counts"))


def _table(rows: list[dict[str, Any]], css: str) -> str:
    """A small HTML table of dict rows (numbers to 4 significant digits)."""
    if not rows:
        return note("(nothing to show on this proxy)")
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(
        f"<td>{v:.4g}</td>" if isinstance(v, float) else f"<td>{html.escape(str(v))}</td>"
        for v in r.values()) + "</tr>" for r in rows)
    return f'<table class="{css}"><tr>{head}</tr>{body}</table>'


class SurveyPanel(EditorBase):
    """The survey's ε fields and readouts."""

    title = "Survey"

    def __init__(self, session: Session, lab: ProxyLab | None = None) -> None:
        super().__init__(session, lab)
        self.inputs = {}
        for key, label in EPSILONS:
            w = widgets.FloatText(description=label, style={"description_width": "160px"})
            self.inputs[key] = self.bind(f"survey.epsilon.{key}", w.add_class(f"wb-survey-{key}"),
                                         parse=number)
        self.total = widgets.HTML().add_class("wb-survey-total")
        self.secondary = widgets.HTML().add_class("wb-survey-secondary")
        self.binnings = widgets.HTML().add_class("wb-survey-binnings")
        self.crossover = widgets.HTML().add_class("wb-survey-crossover")
        self.widget = widgets.VBox([
            widgets.HTML(note("DP raking (Merrill ch. 7): ε₁ chooses the bins, ε₂ releases "
                              "the joint sample table, ε₃ the weighted counts; before them ε_w "
                              "(survey.weight_check_epsilon) checks the weights' total against "
                              "N; all in ε_total.")),
            *[f.box for f in self.inputs.values()], self.total, self.secondary,
            heading("Binning what-if on the proxy"), self.binnings,
            heading("Crossover ε: above it, sampling error dominates DP noise"),
            self.crossover,
        ]).add_class("wb-survey-panel")
        self.refresh()

    def refresh(self, change: Change | None = None) -> None:
        """Re-read the draft and recompute the readouts from the last valid spec."""
        super().refresh(change)
        spec = self.session.spec
        proxy = self.lab.cleaned(spec) if (self.lab is not None and spec is not None) else None
        out = survey_readouts(spec, proxy) if spec is not None else None
        if out is None:
            self.total.value = note("the draft has no valid survey section")
            return
        self.total.value = f"<b>{html.escape(out.formula)}</b> (survey ε = {out.epsilon_survey:g})"
        self.secondary.value = note("secondary, not charged: " + out.secondary)
        self.binnings.value = _table(out.rows, "wb-survey-binning-table")
        self.crossover.value = _table(out.crossover, "wb-survey-crossover-table")
