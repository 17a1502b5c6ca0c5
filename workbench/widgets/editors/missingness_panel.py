"""The co-design panel for missing values: rates, patterns, complete rows per marginal.

Read-only readouts on the PUBLIC proxy (``widgets.model.missingness``) with one what-if
control: an extra MCAR rate applied to every column that may be missing.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from workbench.report.missing_profile import format_missing_profile
from workbench.widgets.editors.base import EditorBase, heading, note, png_image
from workbench.widgets.model.missingness import proxy_profile, upset_png


class MissingnessPanel(EditorBase):
    """Missing rates, an UpSet-style pattern plot and complete rows behind each marginal."""

    title = "Missing values"

    def __init__(self, session: Any, lab: Any = None) -> None:
        super().__init__(session, lab)
        self.mcar = widgets.FloatSlider(value=0.0, min=0.0, max=0.5, step=0.05,
                                        description="extra MCAR",
                                        readout_format=".0%").add_class("wb-missing-mcar")
        self.mcar.observe(lambda _c: self.refresh(), names="value")
        self.text = widgets.HTML().add_class("wb-missing-profile")
        self.plot = png_image().add_class("wb-missing-upset")
        self.widget = widgets.VBox([
            heading("Missing values on the public proxy"),
            widgets.HTML(note("Exact figures on PUBLIC data. 'allow' columns keep missing "
                              "values; the generator's missing_strategy decides how they are "
                              "used. The slider rehearses more holes than the proxy has.")),
            self.mcar, self.plot, self.text]).add_class("wb-missingness")
        self.profile = None
        self.refresh()

    def refresh(self, change: Any = None) -> None:
        """Recompute the profile of the proxy under the current spec and MCAR rate."""
        proxy = getattr(self.lab, "proxy", None) if self.lab is not None else None
        spec = self.session.spec
        if proxy is None or spec is None or not self.visible:
            self.text.value = note("no proxy loaded") if proxy is None else self.text.value
            return
        self.profile = proxy_profile(proxy, spec, mcar=float(self.mcar.value))
        self.text.value = f"<pre>{html.escape(format_missing_profile(self.profile))}</pre>"
        self.plot.value = upset_png(self.profile)

    def on_show(self) -> None:
        """Draw when the tab is first shown."""
        self.refresh()
