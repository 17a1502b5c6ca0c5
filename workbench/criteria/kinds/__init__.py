"""The registry of criterion kinds: one module per kind, found and registered on import.

Every module of this package that defines ``KIND`` (an instance of a
:class:`~workbench.criteria.kinds.base.CriterionKind` subclass) is registered here, so a new
kind is one new module plus its tests. The spec validator, the JSON schema's ``kind`` enum,
``evaluate_all`` and friends, the workload generator, the editors and the reviews all read
:func:`registered` / :func:`get`. A test may :func:`register` a toy kind and
:func:`unregister` it afterwards.

>>> [k.name for k in registered()][:3]
['max_marginal_error', 'relative_one_way', 'conditional_mean']
>>> get("max_ecdf").tags.clip
(0.0, 1.0)
"""

from __future__ import annotations

import importlib
import pkgutil

from workbench.criteria.kinds.base import (
    WORKLOAD_GROUPS,
    CheckContext,
    CriterionKind,
    ShareKind,
)
from workbench.criteria.kinds.tags import KindTags, Reads

_KINDS: dict[str, CriterionKind] = {}
_ORDER: list[str] = []


def register(kind: CriterionKind) -> CriterionKind:
    """Add a kind (a new name only); returns it, so a module can write ``KIND = register(...)``."""
    if not isinstance(kind, CriterionKind):
        raise TypeError("a criterion kind must be an instance of a CriterionKind subclass")
    if not kind.name or not kind.name.isidentifier():
        raise ValueError(f"criterion kind name {kind.name!r} must be a non-empty identifier")
    if kind.name in _KINDS:
        raise ValueError(f"criterion kind {kind.name!r} is already registered")
    if kind.tags.workload_group not in WORKLOAD_GROUPS:
        raise ValueError(f"criterion kind {kind.name!r}: workload_group must be one of "
                         f"{list(WORKLOAD_GROUPS)}")
    _KINDS[kind.name] = kind
    _ORDER.append(kind.name)
    return kind


def unregister(name: str) -> None:
    """Remove a kind (tests that registered a toy kind clean up with this)."""
    _KINDS.pop(name, None)
    if name in _ORDER:
        _ORDER.remove(name)


def registered() -> tuple[CriterionKind, ...]:
    """Every registered kind, by ``position`` then registration order."""
    return tuple(sorted((_KINDS[n] for n in _ORDER),
                        key=lambda k: (k.position, _ORDER.index(k.name))))


def names() -> tuple[str, ...]:
    """Names of the registered kinds, in list order (the spec's enum, the editor's menu)."""
    return tuple(k.name for k in registered())


def dp_bound() -> tuple[str, ...]:
    """Kinds that read R and state a bound under ``n_policy: dp`` (S-only kinds need none)."""
    return tuple(k.name for k in registered()
                 if k.tags.reads is not Reads.S_ONLY and k.tags.dp_n_bound)


def get(name: str) -> CriterionKind:
    """The kind called ``name``; an unknown name fails naming the known ones."""
    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown criterion kind {name!r}; known: {', '.join(names())}") from None


def _register_built_in() -> None:
    """Import every module of this package and register the ``KIND`` it defines."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        kind = getattr(module, "KIND", None)
        if kind is not None:
            found.append(kind)
    for kind in sorted(found, key=lambda k: (k.position, k.name)):
        register(kind)


_register_built_in()

__all__ = ["CheckContext", "CriterionKind", "KindTags", "Reads", "ShareKind", "dp_bound", "get",
           "names", "register", "registered", "unregister"]
