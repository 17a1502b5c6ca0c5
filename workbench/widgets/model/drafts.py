"""Where a co-design draft lives between page loads: an autosave file beside the spec.

Every edit of the draft is written to ``<folder>/<name>.autosave.json`` (``<name>``: the spec's
file name without its last suffix, so every spec file has its own; atomically: readers see the
old file or the new one, never half of it), and the co-design dashboard reopens it on the
next page load, so a reload in Voilà shows the edited draft. The same folder is the default
place of the frozen export (``<stem>.frozen.json`` and its sign-off; ``<stem>.edited.frozen.json``
when the opened file is itself that frozen spec, which is never overwritten by default). The
folder is, in order:

1. ``$WORKBENCH_DRAFTS`` when set (tests, a shared server);
2. the spec's own folder, when it is writable and not the repository's shipped ``examples/``;
3. ``$XDG_STATE_HOME/release-workbench/drafts`` (``~/.local/state/…``), where the file name
   also carries a short hash of the spec's path, so two specs with the same name stay apart.

The autosave holds the draft (valid or not), the spec file it started from, the guided steps
the user has done and the last export; never data. Plain Python, no ipywidgets.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from workbench.engine.rundir import write_json_atomic

ENV_VAR = "WORKBENCH_DRAFTS"
FORMAT = "workbench.autosave/1"
#: The shipped examples: a draft opened from here autosaves to the state folder instead.
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def state_folder() -> Path:
    """``$XDG_STATE_HOME/release-workbench/drafts`` (``~/.local/state/…`` by default)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(state) / "release-workbench" / "drafts"


def spec_stem(spec_path: Path) -> str:
    """``design.json`` → ``design``; ``design.frozen.json`` → ``design`` (the first dot part)."""
    return spec_path.name.split(".")[0] or "draft"


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def draft_folder(spec_path: Path) -> tuple[Path, bool]:
    """(folder, beside): where the autosave and the export go, and whether that is the spec's
    own folder (see the module docstring for the order)."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen:
        return Path(chosen).expanduser(), False
    folder = spec_path.resolve().parent
    if _writable(folder) and folder != EXAMPLES:
        return folder, True
    return state_folder(), False


@dataclass
class Autosave:
    """What is saved between page loads (see the module docstring)."""

    document: dict[str, Any]
    source: str
    saved_at: str = ""
    done: tuple[str, ...] = ()
    export: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The file's JSON form."""
        return {"format": FORMAT, "autosave_of": self.source, "saved_at": self.saved_at,
                "done_steps": list(self.done), "last_export": dict(self.export),
                "document": self.document}


class DraftStore:
    """The autosave file of one spec and the default export path beside it."""

    def __init__(self, spec_path: str | os.PathLike[str]) -> None:
        self.spec_path = Path(spec_path)
        self.folder, self.beside = draft_folder(self.spec_path)
        stem = self.spec_path.stem  # design.frozen.json → design.frozen: one autosave a file
        if not self.beside:  # a shared folder: keep two specs of the same name apart
            tag = hashlib.sha256(str(self.spec_path.resolve()).encode("utf-8")).hexdigest()[:8]
            stem = f"{stem}-{tag}"
        self.path = self.folder / f"{stem}.autosave.json"
        self.export_path = self.folder / f"{spec_stem(self.spec_path)}.frozen.json"
        if self.export_path.resolve() == self.spec_path.resolve():  # never over the opened file
            self.export_path = self.folder / f"{spec_stem(self.spec_path)}.edited.frozen.json"
        self.error: str | None = None

    def load(self) -> Autosave | None:
        """The saved draft of this spec, or None (no file, another spec's file, or unreadable:
        then ``error`` says why and the spec file is used)."""
        self.error = None
        if not self.path.exists():
            return None
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or not isinstance(data.get("document"), dict):
                raise ValueError("not a workbench autosave file")
        except (OSError, ValueError, AttributeError) as exc:
            self.error = f"the autosave {self.path.name} could not be read ({exc}); ignored"
            return None
        if data.get("autosave_of") != str(self.spec_path.resolve()):
            self.error = (f"the autosave {self.path.name} belongs to another spec "
                          f"({data.get('autosave_of')}); ignored")
            return None
        return Autosave(data["document"], data["autosave_of"], str(data.get("saved_at", "")),
                        tuple(str(s) for s in data.get("done_steps", ())),
                        dict(data.get("last_export") or {}))

    def save(self, document: Mapping[str, Any], done: Iterable[str] = (),
             export: Mapping[str, Any] | None = None) -> bool:
        """Write the draft (atomically); False, with ``error`` set, when it cannot be written."""
        record = Autosave(dict(document), str(self.spec_path.resolve()),
                          datetime.now(UTC).isoformat(timespec="seconds"),
                          tuple(sorted(set(done))), dict(export or {}))
        try:
            write_json_atomic(self.path, record.as_dict())
        except (OSError, ValueError, TypeError) as exc:
            self.error = f"the draft could not be autosaved to {self.path} ({exc})"
            return False
        self.error = None
        return True

    def discard(self) -> None:
        """Remove the autosave (the next page load starts from the spec file)."""
        self.path.unlink(missing_ok=True)

    def where(self) -> str:
        """Where the autosave goes, in words (shown under the dashboard's title)."""
        place = "beside the spec" if self.beside else (
            f"in ${ENV_VAR}" if os.environ.get(ENV_VAR, "").strip() else "in the state folder")
        return f"{self.path} ({place})"
