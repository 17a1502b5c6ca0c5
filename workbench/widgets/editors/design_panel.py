"""The design assistant's button in the Budget tab: derive every ε from the proxy at n.

It calls :func:`workbench.design.assistant.design` on the session's spec and the lab's proxy
(at the low end of ``schema.expected_n`` when declared), shows the derivation as two formatted
tables — the (ε_gen, K) alternatives, cheapest first, and each criterion's margin and ε for the
chosen ε_gen — with every "∞" explained beneath, and "apply" replaces the draft by the designed
one (undoable like any edit). A path to the registry's published tables
(:mod:`workbench.evidence.published`), when given, anchors the rehearsal of every draft on the
proxy raked to them, as ``workbench design --published-tables`` does; a file that does not fit
is reported naming its column, and nothing is designed. Kept apart from the budget planner so
the planner's layout can change freely.
"""

from __future__ import annotations

import html
import math
from typing import Any

import ipywidgets as widgets

from workbench.widgets.editors.base import heading, note
from workbench.widgets.model.forecast import percent
from workbench.widgets.model.session import Session

INFINITE = "∞"
#: What each "∞" means, shown under the tables when one appears.
WHY_INFINITE = {
    "criteria": ("∞ in Σ ε criteria or ε: a criterion has no margin on the proxy at this ε_gen "
                 "— the candidates' median exact error is at or above its threshold — so no ε "
                 "makes it pass; loosen its threshold or change the generator (its ε in the "
                 "draft is kept)."),
    "expected": ("∞ in E[ε] until release: P(all pass) is 0, so retrying never releases in "
                 "expectation."),
}
CELL = "padding:2px 10px;text-align:right;border-bottom:1px solid #eee"


def _num(x: float, digits: int = 4) -> str:
    """A number, ∞ when infinite."""
    return INFINITE if math.isinf(x) else f"{x:.{digits}g}"


def _table(head: list[str], rows: list[list[str]], marked: int | None = None) -> str:
    """An HTML table (cells already escaped); row ``marked`` in bold."""
    th = "".join(f"<th style='{CELL};text-align:center'>{h}</th>" for h in head)
    body = []
    for i, row in enumerate(rows):
        style = "font-weight:600;background:#eef6ff" if i == marked else ""
        body.append(f"<tr style='{style}'>" + "".join(f"<td style='{CELL}'>{c}</td>"
                                                       for c in row) + "</tr>")
    return (f"<table style='border-collapse:collapse;font-size:90%;margin:4px 0'><tr>{th}</tr>"
            + "".join(body) + "</table>")


def alternatives_html(result: Any) -> tuple[str, set[str]]:
    """The alternatives, cheapest first, the chosen one marked; and which ∞ appeared."""
    seen: set[str] = set()
    rows, marked = [], None
    ordered = sorted(result.alternatives, key=lambda a: (a.epsilon_total, -a.p))
    for i, a in enumerate(ordered):
        crit = math.fsum(a.epsilons.values())
        expected = a.expected_epsilon
        seen |= {"criteria"} if math.isinf(crit) else set()
        seen |= {"expected"} if math.isinf(expected) else set()
        if a is result.chosen:
            marked = i
        rows.append([f"{a.epsilon_generator:g}", f"{a.divisor:g}", _num(crit), percent(a.p),
                     html.escape(a.mode), _num(a.epsilon_total), _num(expected)
                     + (" ← chosen" if a is result.chosen else "")])
    head = ["ε_gen", "K (σ ≤ margin/K)", "Σ ε criteria", "P(all pass)", "mode", "ε_total",
            "E[ε] until release"]
    return _table(head, rows, marked), seen


def criteria_html(result: Any, spec: Any) -> tuple[str, set[str]]:
    """Per criterion at the chosen ε_gen: threshold, median exact error, margin, ε."""
    margins = result.margins.get(result.chosen.epsilon_generator, {})
    rows, seen = [], set()
    for c in spec.criteria:
        median = margins.get(c.id, math.nan)
        eps = result.chosen.epsilons.get(c.id, c.epsilon)
        if math.isinf(eps):
            seen.add("criteria")
            shown = f"{INFINITE} (kept {c.epsilon:g})"
        else:
            shown = f"{eps:.4g}"
        rows.append([html.escape(c.id), f"{c.threshold:g}", f"{median:.4g}",
                     f"{c.threshold - median:.4g}", shown])
    return _table(["criterion", "threshold", "median exact on the proxy", "margin", "ε"],
                  rows), seen


class DesignPanel:
    """A "design ε" button, a target-p field, the derivation tables and an apply button."""

    def __init__(self, session: Session, lab: Any = None, **design_options: Any) -> None:
        self.session, self.lab = session, lab
        self.options = design_options
        self.target = widgets.BoundedFloatText(0.6, min=0.05, max=0.99, step=0.05,
                                               description="target p",
                                               style={"description_width": "initial"},
                                               layout=widgets.Layout(width="170px")).add_class(
                                                   "wb-design-target")
        self.button = widgets.Button(description="design ε from the proxy",
                                     layout=widgets.Layout(width="auto")).add_class(
                                         "wb-design-button")
        self.apply_button = widgets.Button(description="apply the designed draft",
                                           disabled=True, layout=widgets.Layout(width="auto")
                                           ).add_class("wb-design-apply")
        self.tables = widgets.Text(placeholder="optional: published tables (JSON path)",
                                   description="published tables",
                                   style={"description_width": "initial"},
                                   layout=widgets.Layout(width="420px")).add_class(
                                       "wb-design-published")
        self.output = widgets.HTML().add_class("wb-design-table")
        self.result: Any = None
        self.button.on_click(lambda _b: self.run())
        self.apply_button.on_click(lambda _b: self.apply())
        self.widget = widgets.VBox([
            heading("Design assistant"),
            widgets.HTML(note("smallest ε_total whose forecast P(all criteria pass) on the "
                              "proxy, at the registry's expected size, reaches the target; "
                              "the target is also the one the export checks")),
            widgets.HBox([self.target, self.button, self.apply_button]),
            self.tables,
            self.output,
        ])

    def run(self) -> Any:
        """Derive on the proxy (public); show the tables or what is missing."""
        spec = self.session.spec
        if spec is None or self.lab is None:
            self.output.value = "<i>needs a valid draft and a proxy</i>"
            return None
        if not spec.criteria:
            self.output.value = "<i>add a criterion first: there is nothing to design ε for</i>"
            return None
        from workbench.design.assistant import design
        from workbench.design.proposals import propose_associations
        from workbench.evidence.prepare import as_evidence
        from workbench.evidence.published import read_published_tables

        path = self.tables.value.strip()
        published = None
        if path:
            try:
                published = read_published_tables(spec, path)
            except ValueError as exc:
                self.result = None
                self.apply_button.disabled = True
                self.output.value = f"<b>not designed:</b> {html.escape(str(exc))}"
                return None
        evidence = as_evidence(spec, self.lab.proxy, published)
        proposals = propose_associations(spec, evidence)  # issue 36, as `workbench design`
        spec = proposals.spec
        self.result = design(spec, evidence, target_p=float(self.target.value), **self.options)
        c = self.result.chosen
        anchor = ("; rehearsed on the proxy raked to the published tables" if path else "")
        head = (f"n = {self.result.n:,}{anchor}; chosen: ε_gen {c.epsilon_generator:g}, {c.mode}, "
                f"forecast P(all pass) = {percent(c.p)}, ε_total {c.epsilon_total:.4g}"
                + ("" if self.result.reached else
                   f" — the target {percent(self.result.target_p)} is not reached, so the "
                   "draft cannot be applied"))
        table, seen = alternatives_html(self.result)
        per, more = criteria_html(self.result, spec)
        notes = "".join(f"<p style='font-size:85%;color:#555;margin:2px 0'>"
                        f"{html.escape(WHY_INFINITE[k])}</p>" for k in sorted(seen | more))
        why = ("" if self.result.reached else "".join(
            f"<p style='margin:2px 0'>{html.escape(line)}</p>"
            for line in self.result.shortfall(spec)))
        proposed = "".join(f"<p style='margin:2px 0'>{html.escape(line)}</p>"
                           for line in proposals.lines)
        self.output.value = (f"<b>{html.escape(head)}</b>{proposed}{why}{table}"
                             f"<div style='margin-top:6px'><b>Criteria at ε_gen "
                             f"{c.epsilon_generator:g}</b></div>{per}{notes}")
        # issue 36: only a draft whose recorded forecast reaches the target may be applied
        self.apply_button.disabled = not self.result.reached
        return self.result

    def apply(self) -> bool:
        """Replace the draft by the designed document (one undoable edit)."""
        if self.result is None:
            return False
        return self.session.replace(self.result.document, label="design assistant")
