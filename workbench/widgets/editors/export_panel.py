"""Export: freeze the draft into a hashed spec file and write the Markdown sign-off next to it.

The sign-off records the forecast signed off on (:mod:`workbench.widgets.model.forecast`: the
Feasibility tab's dry run of this design, else the quick samples of the proxy) against the
target. Below the target, or with no forecast at all, "Freeze and export" needs the explicit
acknowledgement box ticked, and the sign-off says it was. A draft without ``metadata.dataset``
is refused: ``workbench run`` could not run it.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from workbench.report import describe_spec
from workbench.specification import SpecError
from workbench.validation import load_spec, save_spec
from workbench.widgets.editors.base import EditorBase, heading, hidden, note
from workbench.widgets.editors.fields import error_html, warning_html
from workbench.widgets.model.forecast import DEFAULT_TARGET, Forecast, percent
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.metadata import NO_DATASET
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session
from workbench.widgets.model.signoff import signoff_markdown

#: () -> (the forecast of the last valid design or None, the target)
ForecastSource = Callable[[], "tuple[Forecast | None, float]"]


def signoff_path(spec_path: Path) -> Path:
    """``design.frozen.json`` → ``design.frozen.signoff.md``."""
    return spec_path.with_name(spec_path.stem + ".signoff.md")


class ExportPanel(EditorBase):
    """A file name, the forecast and its acknowledgement, "Freeze and export", the status, and
    a summary preview."""

    title = "Export"

    def __init__(self, session: Session, lab: ProxyLab | None = None,
                 path: str = "release_spec.frozen.json",
                 forecast: ForecastSource | None = None) -> None:
        super().__init__(session, lab)
        self.forecast_source = forecast or (lambda: (None, DEFAULT_TARGET))
        self.path = widgets.Text(value=path, description="spec file",
                                 layout=widgets.Layout(width="640px")).add_class("wb-export-path")
        self.forecast = widgets.HTML().add_class("wb-export-forecast")
        self.acknowledge = widgets.Checkbox(
            value=False, indent=False, layout=widgets.Layout(width="auto"),
            description="I acknowledge the forecast is below the target (or unknown) and export "
                        "anyway; the sign-off records this").add_class("wb-export-acknowledge")
        self.freeze = widgets.Button(description="Freeze and export",
                                     layout=widgets.Layout(width="max-content"))
        self.status = widgets.HTML()
        self.summary = widgets.Textarea(disabled=True,
                                        layout=widgets.Layout(width="100%", height="360px"))
        self.written: tuple[Path, Path] | None = None
        self.sha256: str | None = None
        self.acknowledged = False
        self.record: dict[str, Any] = {}  # the last export, for the autosave
        self.freeze.on_click(lambda _b: self.export())
        self.widget = widgets.VBox([
            widgets.HTML(note("Freezing validates the draft, records its SHA-256 and writes the "
                              "spec file; a Markdown sign-off summary, with the forecast, is "
                              "written next to it.")),
            self.path,
            self.forecast,
            self.acknowledge,
            self.freeze,
            self.status,
            heading("Summary of the current draft"),
            self.summary,
        ])
        self.refresh()

    def refresh(self, change: Change | None = None) -> None:
        """Summary of the draft when valid (else of the last valid design, marked so)."""
        self.show_forecast()
        spec = self.session.spec
        if spec is None:
            self.summary.value = "(no valid design yet)"
            return
        head = "" if self.session.valid else (
            "THE DRAFT IS INVALID; this is the last valid design. Fix the errors to export.\n\n")
        self.summary.value = head + describe_spec(spec)

    def on_show(self) -> None:
        """The tab is shown: the forecast may have changed (a dry run, a preview setting)."""
        self.show_forecast()

    def needs_acknowledgement(self) -> tuple[Forecast | None, float, bool]:
        """(forecast, target, whether exporting needs the box ticked)."""
        forecast, target = self.forecast_source()
        low = forecast is None or (forecast.criteria > 0 and forecast.below(target))
        return forecast, target, low

    def show_forecast(self) -> None:
        """The forecast and the target; the acknowledgement box only when it is needed."""
        forecast, target, low = self.needs_acknowledgement()
        words = ("no forecast (no proxy readouts)" if forecast is None
                 else forecast.words(target))
        text = f"Forecast signed off on: {words}. Target {percent(target)}."
        self.forecast.value = (warning_html([text + " Below the target: tick the box to export."])
                               if low else note(text))
        hidden(self.acknowledge, not low)

    def export(self) -> Path | None:
        """Freeze and write the spec and the sign-off; returns the spec path or None."""
        if not self.session.valid:
            problems = [f"{p or '(root)'}: {m}" for p, ms in self.session.errors.items()
                        for m in ms]
            self.status.value = error_html(["the draft is invalid; fix these first:", *problems])
            return None
        if not self.session.get("metadata.dataset", None):
            self.status.value = error_html([f"not exported: {NO_DATASET} (Metadata tab)"])
            return None
        forecast, target, low = self.needs_acknowledgement()
        self.show_forecast()
        if low and not self.acknowledge.value:
            self.status.value = error_html([
                "not exported: the forecast is below the target (or unknown); tick the "
                "acknowledgement above to export anyway, or improve the design first"])
            return None
        target_path = Path(self.path.value).expanduser()
        try:
            digest = save_spec(self.session.draft, target_path)
            frozen = load_spec(target_path, require_frozen=True)
        except (SpecError, OSError) as exc:
            self.status.value = error_html([f"export failed: {exc}"])
            return None
        readouts, proxy_note = self._readouts(frozen)
        md_path = signoff_path(target_path)
        md_path.write_text(signoff_markdown(frozen, target_path.name, readouts, proxy_note,
                                            forecast=forecast, target=target,
                                            acknowledged=low and self.acknowledge.value),
                           encoding="utf-8")
        self.written = (target_path, md_path)
        self.sha256 = digest
        self.acknowledged = bool(low and self.acknowledge.value)
        self.record = {"path": str(target_path), "sha256": digest, "acknowledged":
                       self.acknowledged, "forecast": None if forecast is None else forecast.p}
        self.status.value = (
            f"Frozen: <code>{html.escape(str(target_path))}</code> "
            f"(SHA-256 <code>{digest}</code>)<br>Sign-off: <code>{html.escape(str(md_path))}"
            "</code>")
        return target_path

    def restore(self, record: dict[str, Any]) -> None:
        """The last export of an earlier page load (from the autosave)."""
        if record.get("sha256"):
            self.record = dict(record)
            self.sha256 = str(record["sha256"])
            self.acknowledged = bool(record.get("acknowledged"))
            self.status.value = note(f"Last exported to {record.get('path')} (SHA-256 "
                                     f"{self.sha256}) in an earlier session.")

    def _readouts(self, frozen: Any) -> tuple[Any, str]:
        """The proxy readouts of the frozen spec for the sign-off (None without a proxy)."""
        if self.lab is None:
            return None, ""
        try:
            readouts = self.lab.readouts(frozen)
            config = self.lab.configuration(frozen)
        except (PreviewError, ValueError, KeyError, ArithmeticError):
            return None, ""
        return readouts, (f"R = cleaned public proxy, S = one quick DP sample of configuration "
                          f"{config.key} (simulation mode, seed {self.lab.preview.seed}).")
