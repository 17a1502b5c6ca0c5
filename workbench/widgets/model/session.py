"""The co-design session: one draft spec, validated after every edit, with undo and observers.

Stakeholders edit a *draft*; every edit is re-validated with
:func:`workbench.specification.build_spec`.
A valid draft becomes :attr:`Session.spec`; an invalid one keeps the last valid Spec and
records the problems per JSON path (:attr:`Session.errors`), so an editor can show each
message next to its field. Pure Python: the editors in this package observe a session, but
a session never imports ipywidgets.

The session also holds the public proxy DataFrame (raw values). It must never be given
confidential data: everything computed from it is shown on screen without noise.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.specification import Spec, SpecError, content_of, read_document
from workbench.validation import build_spec
from workbench.widgets.model.paths import MISSING, delete_at, get_at, is_within, set_at

Observer = Callable[["Change"], None]
Editor = Callable[[dict[str, Any]], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Change:
    """What an observer is told: how the draft changed, which paths, and whether it is valid."""

    kind: str  # "edit", "undo", "redo" or "replace"
    paths: tuple[str, ...]
    valid: bool
    version: int
    label: str = ""

    @property
    def reset(self) -> bool:
        """Whether widgets must drop half-typed input and show the draft as it now is."""
        return self.kind != "edit"


class Session:
    """Holds the draft document, the last valid Spec, the problems per path, history, observers.

    Typical use: ``s = Session(document, proxy)``; ``s.apply("criteria[0].threshold", -1)``
    returns False, ``s.errors["criteria[0].threshold"] == ("must be > 0",)`` and
    ``s.spec`` is still the design with the old threshold; ``s.undo()`` goes back.
    """

    def __init__(
        self,
        document: Mapping[str, Any],
        proxy: pd.DataFrame | None = None,
        *,
        max_history: int = 500,
        sync_epsilon_criteria: bool = True,
    ) -> None:
        """Start from ``document`` (its freeze record, if any, is dropped: this is a draft)."""
        self.proxy = proxy
        #: the spec file the draft came from (set by :meth:`from_files`; None when built here)
        self.source: Path | None = None
        self.max_history = int(max_history)
        self.sync_epsilon_criteria = bool(sync_epsilon_criteria)
        self._draft: dict[str, Any] = content_of(document)
        self._spec: Spec | None = None
        self._errors: dict[str, tuple[str, ...]] = {}
        self._undo: list[dict[str, Any]] = []
        self._redo: list[dict[str, Any]] = []
        self._observers: list[Observer] = []
        self._version = 0
        self._hashes: dict[tuple[int, tuple[str, ...]], str] = {}
        self._validate()

    @classmethod
    def from_files(
        cls, spec_path: str | os.PathLike[str], proxy_path: str | os.PathLike[str] | None = None
    ) -> Session:
        """A session on a spec file and a PUBLIC proxy CSV (only the spec's columns are read)."""
        from workbench.transform.raw import read_raw

        document = read_document(spec_path)
        session = cls(document)
        session.source = Path(spec_path)
        if proxy_path is not None:
            if session.spec is None:
                raise SpecError([*_problems_of(session.errors)])
            session.proxy = read_raw(proxy_path, session.spec.columns, session.spec.file_format)
        return session

    # --- state -----------------------------------------------------------------------------
    @property
    def draft(self) -> dict[str, Any]:
        """A copy of the current document (possibly invalid); edit through the session."""
        return copy.deepcopy(self._draft)

    @property
    def spec(self) -> Spec | None:
        """The last valid Spec (None only if the session never had a valid draft)."""
        return self._spec

    @property
    def errors(self) -> dict[str, tuple[str, ...]]:
        """Problems of the current draft: JSON path → messages ("" is the whole document)."""
        return dict(self._errors)

    @property
    def valid(self) -> bool:
        """Whether the current draft is a valid spec (then ``spec`` is built from it)."""
        return not self._errors

    @property
    def version(self) -> int:
        """Increases with every change of the draft (edits, undo, redo)."""
        return self._version

    @property
    def can_undo(self) -> bool:
        """Whether there is an edit to undo (drives the undo button)."""
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        """Whether there is an undone edit to redo."""
        return bool(self._redo)

    def get(self, path: str, default: Any = MISSING) -> Any:
        """The draft's value at a JSON path (not a copy: do not mutate it)."""
        return get_at(self._draft, path, default)

    def column_names(self) -> list[str]:
        """The draft's column names (the options of every column picker)."""
        return [c.get("name") for c in self.get("schema.columns", [])
                if isinstance(c, dict) and isinstance(c.get("name"), str)]

    def errors_for(self, path: str, *, below: bool = True) -> list[str]:
        """Messages for ``path`` (and, with ``below``, for everything under it)."""
        out: list[str] = []
        for where, messages in self._errors.items():
            if where == path or (below and is_within(where, path)):
                prefix = "" if where == path else f"{where[len(path):].lstrip('.')}: "
                out.extend(prefix + m for m in messages)
        return out

    def section_hash(self, *sections: str) -> str:
        """SHA-256 of the draft's values at the given paths; editors refresh when it changes."""
        key = (self._version, sections)
        if key not in self._hashes:
            values = [get_at(self._draft, s, None) for s in sections]
            text = json.dumps(values, sort_keys=True, default=str, separators=(",", ":"))
            self._hashes[key] = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if len(self._hashes) > 256:
                self._hashes = {k: v for k, v in self._hashes.items() if k[0] == self._version}
        return self._hashes[key]

    # --- edits -----------------------------------------------------------------------------
    def apply(self, path: str, value: Any, *, label: str = "") -> bool:
        """Set one value; returns whether the draft is valid afterwards."""
        return self.edit(lambda doc: set_at(doc, path, copy.deepcopy(value)), label=label or path,
                         paths=(path,))

    def apply_many(self, values: Mapping[str, Any], *, label: str = "") -> bool:
        """Set several values as one undoable edit."""

        def fn(doc: dict[str, Any]) -> None:
            for path, value in values.items():
                set_at(doc, path, copy.deepcopy(value))

        return self.edit(fn, label=label or ", ".join(values), paths=tuple(values))

    def delete(self, path: str, *, label: str = "") -> bool:
        """Remove a key or a list item (e.g. a criterion or an optional parameter)."""
        return self.edit(lambda doc: delete_at(doc, path), label=label or f"delete {path}",
                         paths=(path,))

    def edit(self, fn: Editor, *, label: str = "", paths: tuple[str, ...] = ()) -> bool:
        """Apply ``fn`` to a copy of the draft (in place, or return a new document) as one edit.

        An edit that changes nothing is ignored (no history entry, no notification).
        """
        before = self._draft
        work = copy.deepcopy(before)
        result = fn(work)
        after = content_of(result if isinstance(result, Mapping) else work)
        if after == before:
            return self.valid
        self._sync_budget(before, after)
        self._undo.append(before)
        del self._undo[: -self.max_history]
        self._redo.clear()
        self._set(after, Change("edit", paths, False, 0, label))
        return self.valid

    def replace(self, document: Mapping[str, Any], *, label: str = "replace") -> bool:
        """Load a whole new document as one undoable edit."""
        return self.edit(lambda _doc: content_of(document), label=label, paths=("",))

    def undo(self) -> bool:
        """Go back one edit; False when there is nothing to undo."""
        if not self._undo:
            return False
        self._redo.append(self._draft)
        self._set(self._undo.pop(), Change("undo", ("",), False, 0, "undo"))
        return True

    def redo(self) -> bool:
        """Re-apply the last undone edit; False when there is nothing to redo."""
        if not self._redo:
            return False
        self._undo.append(self._draft)
        self._set(self._redo.pop(), Change("redo", ("",), False, 0, "redo"))
        return True

    # --- observers -------------------------------------------------------------------------
    def observe(self, callback: Observer) -> None:
        """Call ``callback(change)`` after every change of the draft."""
        if callback not in self._observers:
            self._observers.append(callback)

    def unobserve(self, callback: Observer) -> None:
        """Stop calling ``callback`` (e.g. when an editor is closed)."""
        if callback in self._observers:
            self._observers.remove(callback)

    # --- internals -------------------------------------------------------------------------
    def _set(self, document: dict[str, Any], change: Change) -> None:
        """Install a new draft, validate it and tell every observer (all of them, then raise)."""
        self._draft = document
        self._version += 1
        self._validate()
        event = Change(change.kind, change.paths, self.valid, self._version, change.label)
        failures: list[BaseException] = []
        for callback in list(self._observers):
            try:
                callback(event)
            except Exception as exc:  # one broken view must not stop the others refreshing
                failures.append(exc)
        if failures:
            raise failures[0]

    def _validate(self) -> None:
        """Build the draft; keep the Spec when valid, else the problems per path."""
        try:
            self._spec = build_spec(self._draft)
            self._errors = {}
        except SpecError as exc:
            grouped: dict[str, list[str]] = {}
            for problem in exc.problems:
                grouped.setdefault(problem.path, []).append(problem.message)
            self._errors = {k: tuple(v) for k, v in grouped.items()}

    def _sync_budget(self, before: Mapping[str, Any], after: dict[str, Any]) -> None:
        """Keep budget.epsilon_criteria equal to Σ criterion ε, unless it was edited itself."""
        if not self.sync_epsilon_criteria:
            return
        old_total, old_sum = _declared_and_sum(before)
        new_total, new_sum = _declared_and_sum(after)
        if None in (old_total, old_sum, new_sum) or new_total != old_total:
            return
        if math.isclose(old_total, old_sum, rel_tol=1e-9, abs_tol=1e-12):  # type: ignore[arg-type]
            after["budget"]["epsilon_criteria"] = round(new_sum, 12)  # type: ignore[arg-type]


def _declared_and_sum(doc: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """budget.epsilon_criteria and Σ criteria ε of a document, None where malformed."""
    declared = get_at(doc, "budget.epsilon_criteria", None)
    declared = float(declared) if _is_number(declared) else None
    criteria = doc.get("criteria")
    if not isinstance(criteria, list):
        return declared, None
    eps = [c.get("epsilon", 0) if isinstance(c, Mapping) else None for c in criteria]
    if not all(_is_number(e) for e in eps):
        return declared, None
    return declared, math.fsum(float(e) for e in eps)


def _is_number(value: Any) -> bool:
    """A finite JSON number (bools excluded), as the budget check needs."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _problems_of(errors: Mapping[str, tuple[str, ...]]) -> list[Any]:
    """Problems back from the per-path map (for raising a SpecError)."""
    from workbench.specification import Problem

    return [Problem(path, m) for path, messages in errors.items() for m in messages]
