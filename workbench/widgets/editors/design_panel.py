"""The design assistant's button in the Budget tab: derive every ε from the proxy at n.

It calls the public :func:`workbench.design.design` on the session's spec and the lab's proxy
(at the low end of ``schema.expected_n`` when declared), shows the derivation table, and
"apply" replaces the draft by the designed one (undoable like any edit). Kept apart from the
budget planner so the planner's layout can change freely.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.widgets.editors.base import heading, note
from workbench.widgets.model.session import Session


class DesignPanel:
    """A "design ε" button, a target-p field, the derivation table and an apply button."""

    def __init__(self, session: Session, lab: Any = None, **design_options: Any) -> None:
        self.session, self.lab = session, lab
        self.options = design_options
        self.target = widgets.BoundedFloatText(0.6, min=0.05, max=0.99, step=0.05,
                                               description="target p").add_class(
                                                   "wb-design-target")
        self.button = widgets.Button(description="design ε from the proxy",
                                     icon="magic").add_class("wb-design-button")
        self.apply_button = widgets.Button(description="apply the designed draft",
                                           disabled=True).add_class("wb-design-apply")
        self.output = widgets.HTML().add_class("wb-design-table")
        self.result: Any = None
        self.button.on_click(lambda _b: self.run())
        self.apply_button.on_click(lambda _b: self.apply())
        self.widget = widgets.VBox([
            heading("Design assistant"),
            widgets.HTML(note("smallest ε_total whose forecast P(all criteria pass) on the "
                              "proxy, at the registry's expected size, reaches the target")),
            widgets.HBox([self.target, self.button, self.apply_button]),
            self.output,
        ])

    def run(self) -> Any:
        """Derive on the proxy (public); show the table or what is missing."""
        spec = self.session.spec
        if spec is None or self.lab is None:
            self.output.value = "<i>needs a valid draft and a proxy</i>"
            return None
        from workbench.design import design

        self.result = design(spec, self.lab.proxy, target_p=float(self.target.value),
                             **self.options)
        c = self.result.chosen
        head = (f"n = {self.result.n:,}; chosen ε_gen {c.epsilon_generator:g}, {c.mode}, "
                f"forecast p = {c.p:.3f}, ε_total {c.epsilon_total:.4g}"
                + ("" if self.result.reached else " (target not reached)"))
        self.output.value = (f"<b>{html.escape(head)}</b><pre>"
                             f"{html.escape(self.result.table())}</pre>")
        self.apply_button.disabled = False
        return self.result

    def apply(self) -> bool:
        """Replace the draft by the designed document (one undoable edit)."""
        if self.result is None:
            return False
        return self.session.replace(self.result.document, label="design assistant")
