"""JSON paths as the spec's problems name them (``criteria[3].threshold``), to read and edit drafts.

The same notation is used by :class:`workbench.specification.Problem`, so an editor field bound to a
path can show exactly the validation messages that belong to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


class _Missing:
    """Sentinel for "no value at this path" (distinct from JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def parse_path(path: str) -> tuple[str | int, ...]:
    """Split ``a.b[2].c`` into ``('a', 'b', 2, 'c')``; reject text that is not a path.

    >>> parse_path("criteria[3].params.lambda")
    ('criteria', 3, 'params', 'lambda')
    """
    if path == "":
        return ()
    keys: list[str | int] = []
    pos = 0
    for match in _TOKEN.finditer(path):
        gap = path[pos : match.start()]
        if gap not in ("", "."):
            raise ValueError(f"not a JSON path: {path!r}")
        index, name = match.groups()
        keys.append(int(index) if index is not None else name)
        pos = match.end()
    if pos != len(path) or path.startswith(".") or path.endswith("."):
        raise ValueError(f"not a JSON path: {path!r}")
    return tuple(keys)


def join_keys(keys: tuple[str | int, ...]) -> str:
    """The inverse of :func:`parse_path`.

    >>> join_keys(("criteria", 3, "threshold"))
    'criteria[3].threshold'
    """
    out = ""
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            out = f"{out}.{key}" if out else key
    return out


def get_at(document: Any, path: str, default: Any = MISSING) -> Any:
    """The value at ``path``, or ``default`` when any step is absent."""
    node = document
    for key in parse_path(path):
        if isinstance(key, int):
            if not isinstance(node, list) or not -len(node) <= key < len(node):
                return default
            node = node[key]
        else:
            if not isinstance(node, Mapping) or key not in node:
                return default
            node = node[key]
    return node


def set_at(document: Any, path: str, value: Any) -> None:
    """Set ``path`` in place, creating missing objects on the way (lists must exist)."""
    keys = parse_path(path)
    if not keys:
        raise ValueError("cannot replace the whole document through a path")
    parent = _parent(document, keys, create=True)
    last = keys[-1]
    if isinstance(last, int):
        if not isinstance(parent, list) or not -len(parent) <= last <= len(parent):
            raise KeyError(f"no list item at {path!r}")
        if last == len(parent):
            parent.append(value)
        else:
            parent[last] = value
    else:
        if not isinstance(parent, dict):
            raise KeyError(f"no object at {join_keys(keys[:-1])!r}")
        parent[last] = value


def delete_at(document: Any, path: str) -> bool:
    """Remove the key or list item at ``path``; False when there was nothing to remove."""
    keys = parse_path(path)
    if not keys:
        raise ValueError("cannot delete the whole document")
    try:
        parent = _parent(document, keys, create=False)
    except KeyError:
        return False
    last = keys[-1]
    if isinstance(last, int):
        if isinstance(parent, list) and -len(parent) <= last < len(parent):
            del parent[last]
            return True
        return False
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    return False


def _parent(document: Any, keys: tuple[str | int, ...], *, create: bool) -> Any:
    """The container holding the last key of ``keys``."""
    node = document
    for i, key in enumerate(keys[:-1]):
        if isinstance(key, int):
            if not isinstance(node, list) or not -len(node) <= key < len(node):
                raise KeyError(f"no list item at {join_keys(keys[: i + 1])!r}")
            node = node[key]
            continue
        if not isinstance(node, dict):
            raise KeyError(f"no object at {join_keys(keys[:i])!r}")
        if key not in node:
            if not create:
                raise KeyError(f"nothing at {join_keys(keys[: i + 1])!r}")
            node[key] = [] if isinstance(keys[i + 1], int) else {}
        node = node[key]
    return node


def is_within(path: str, prefix: str) -> bool:
    """Whether ``path`` is ``prefix`` itself or lies below it.

    >>> is_within("criteria[3].threshold", "criteria[3]"), is_within("criteria[30]", "criteria[3]")
    (True, False)
    """
    if not prefix:
        return True
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")
