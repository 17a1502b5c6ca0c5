"""Export: freeze the draft into a hashed spec file and write the Markdown sign-off next to it."""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as widgets

from workbench.report import describe_spec
from workbench.spec import SpecError
from workbench.validation import load_spec, save_spec
from workbench.widgets.editors.base import EditorBase, heading, note
from workbench.widgets.editors.fields import error_html
from workbench.widgets.model.lab import ProxyLab
from workbench.widgets.model.sampling import PreviewError
from workbench.widgets.model.session import Change, Session
from workbench.widgets.model.signoff import signoff_markdown


def signoff_path(spec_path: Path) -> Path:
    """``design.frozen.json`` → ``design.frozen.signoff.md``."""
    return spec_path.with_name(spec_path.stem + ".signoff.md")


class ExportPanel(EditorBase):
    """A file name, the "Freeze and export" button, the status, and a summary preview."""

    title = "Export"

    def __init__(self, session: Session, lab: ProxyLab | None = None,
                 path: str = "release_spec.frozen.json") -> None:
        super().__init__(session, lab)
        self.path = widgets.Text(value=path, description="spec file",
                                 layout=widgets.Layout(width="520px"))
        self.freeze = widgets.Button(description="Freeze and export",
                                     layout=widgets.Layout(width="200px"))
        self.status = widgets.HTML()
        self.summary = widgets.Textarea(disabled=True,
                                        layout=widgets.Layout(width="100%", height="360px"))
        self.written: tuple[Path, Path] | None = None
        self.sha256: str | None = None
        self.freeze.on_click(lambda _b: self.export())
        self.widget = widgets.VBox([
            widgets.HTML(note("Freezing validates the draft, records its SHA-256 and writes the "
                              "spec file; a Markdown sign-off summary is written next to it.")),
            self.path,
            self.freeze,
            self.status,
            heading("Summary of the current draft"),
            self.summary,
        ])
        self.refresh()

    def refresh(self, change: Change | None = None) -> None:
        """Summary of the draft when valid (else of the last valid design, marked so)."""
        spec = self.session.spec
        if spec is None:
            self.summary.value = "(no valid design yet)"
            return
        head = "" if self.session.valid else (
            "THE DRAFT IS INVALID; this is the last valid design. Fix the errors to export.\n\n")
        self.summary.value = head + describe_spec(spec)

    def export(self) -> Path | None:
        """Freeze and write the spec and the sign-off; returns the spec path or None."""
        if not self.session.valid:
            problems = [f"{p or '(root)'}: {m}" for p, ms in self.session.errors.items()
                        for m in ms]
            self.status.value = error_html(["the draft is invalid; fix these first:", *problems])
            return None
        target = Path(self.path.value).expanduser()
        try:
            digest = save_spec(self.session.draft, target)
            frozen = load_spec(target, require_frozen=True)
        except (SpecError, OSError) as exc:
            self.status.value = error_html([f"export failed: {exc}"])
            return None
        readouts, proxy_note = None, ""
        if self.lab is not None:
            try:
                readouts = self.lab.readouts(frozen)
                config = self.lab.configuration(frozen)
                proxy_note = (f"R = cleaned public proxy, S = one quick DP sample of "
                              f"configuration {config.key} (simulation mode, seed "
                              f"{self.lab.preview.seed}).")
            except (PreviewError, ValueError, KeyError, ArithmeticError):
                readouts = None
        md_path = signoff_path(target)
        md_path.write_text(signoff_markdown(frozen, target.name, readouts, proxy_note),
                           encoding="utf-8")
        self.written = (target, md_path)
        self.sha256 = digest
        self.status.value = (
            f"Frozen: <code>{html.escape(str(target))}</code> "
            f"(SHA-256 <code>{digest}</code>)<br>Sign-off: <code>{html.escape(str(md_path))}</code>"
        )
        return target
