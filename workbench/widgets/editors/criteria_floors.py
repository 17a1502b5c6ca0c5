"""Feasibility floors in the criteria editor (issue 15): beside each threshold, the value an
ideal generator reaches at the registry's expected n, flagged "infeasible at n".

The numbers come from :meth:`ProxyLab.floors` (a few bootstrap draws of the PUBLIC proxy,
cached by the spec sections a floor reads); the flag is the FloorTable's own
(``Floor.infeasible``: threshold ≤ floor + SD), never re-derived here. The bar on top shows
and edits ``schema.expected_n``, the n the floors are computed at.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.dryrun.floors import Floor, FloorTable
from workbench.specification import Spec
from workbench.widgets.editors.base import note
from workbench.widgets.editors.fields import DELETE, Field, error_html, number_list, show_list
from workbench.widgets.model.floors import (
    FLOOR_DRAWS,
    INFEASIBLE,
    TRIVIAL_WHY,
    UNPROTECTIVE,
    floor_words,
    size_words,
    trivial_value,
)
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Session

FLAG_STYLE = "color:#fff;background:#b00020;padding:0 6px;border-radius:8px;font-size:85%"
WARN_STYLE = "color:#000;background:#f5c518;padding:0 6px;border-radius:8px;font-size:85%"
WHY = ("even an ideal generator (a bootstrap of the proxy at n) does not get this threshold "
       "plus one SD below it: no ε can make it pass reliably")


def floor_html(floor: Floor | None, n: int, *, share: bool, threshold: float | None,
               stale: bool = False) -> str:
    """One criterion's floor and, when the FloorTable flags it, the "infeasible at n" badge."""
    if floor is None:
        return ""
    text = floor_words(floor, n, share=share, threshold=threshold)
    if stale:
        text += " (last valid design)"
    flag = (f" <b class='wb-infeasible' style='{FLAG_STYLE}' title='{html.escape(WHY)}'>"
            f"{INFEASIBLE}</b>" if floor.infeasible else "")
    trivial = trivial_value(floor)
    trivial = f"; {html.escape(trivial)}" if trivial else ""
    warn = (f" <b class='wb-unprotective' style='{WARN_STYLE}' title='{html.escape(TRIVIAL_WHY)}'>"
            f"{UNPROTECTIVE}</b>" if floor.trivial_passes else "")
    return (f"<span style='color:#444;font-size:90%'>{html.escape(text)}{trivial}</span>"
            f"{flag}{warn}")


def parse_expected_n(text: Any) -> Any:
    """``95000`` → 95000, ``95000, 158500`` → a [low, high] range, blank → remove the key."""
    values = number_list(text)
    if not values:
        return DELETE
    if len(values) > 2 or not all(isinstance(v, int) and v >= 1 for v in values):
        raise ValueError("expected n: one whole number, or two (low, high)")
    return values[0] if len(values) == 1 else values


class FloorsBar:
    """The expected n (``schema.expected_n``, editable) and where the floors come from."""

    def __init__(self, session: Session) -> None:
        self.expected_n = widgets.Text(
            description="expected n", placeholder="the proxy's size", continuous_update=False,
            style={"description_width": "initial"}, layout=widgets.Layout(width="260px"),
        ).add_class("wb-expected-n")
        self.field = Field(session, "schema.expected_n", self.expected_n,
                           parse=parse_expected_n, format=show_list)
        self.info = widgets.HTML().add_class("wb-floors-info")
        self.table: FloorTable | None = None
        self.widget = widgets.VBox([self.field.box, self.info])

    def sync(self, reset: bool) -> None:
        """Re-read ``schema.expected_n`` from the draft."""
        self.field.sync(reset=reset)

    def update(self, spec: Spec | None, lab: ProxyLab | None) -> FloorTable | None:
        """The floors of ``spec`` on the lab's proxy (None, with the reason, when unavailable)."""
        self.table = None
        if lab is None or spec is None:
            self.info.value = note("No proxy or no valid design: feasibility floors are "
                                   "unavailable.")
            return None
        try:
            self.table = lab.floors(spec)
        except (PreviewError, ValueError, KeyError, ArithmeticError) as exc:
            self.info.value = error_html([f"feasibility floors unavailable: {exc}"])
            return None
        flagged = self.table.infeasible
        self.info.value = note(
            f"Feasibility floor beside each threshold: the value an ideal generator (a "
            f"bootstrap of the public proxy through the synthetic rules and the min_count "
            f"projection) reaches, mean ± SD of {FLOOR_DRAWS} draws, at "
            f"{size_words(spec, self.table.n)}. A threshold at or below floor + SD is "
            f"'{INFEASIBLE}', whatever ε. Beside it, the value of an independent-marginals "
            f"release (the trivial generator): a criterion it passes '{UNPROTECTIVE}'."
        ) + (error_html([f"{INFEASIBLE}: " + ", ".join(flagged)]) if flagged else "") + (
            error_html([f"{UNPROTECTIVE}: " + ", ".join(self.table.unprotective)
                        + f" ({TRIVIAL_WHY})"]) if self.table.unprotective else "")
        return self.table
