"""Rehearse at the registry's size: the sizes n a dry run draws its populations at.

Criteria such as faithfulness have a floor that depends on n (an ideal generator leaves more
records unmatched in a smaller table), so a dry run at the proxy's own size is optimistic for
a smaller registry (issue 15). ``n`` is public: an estimate of the registry's size after
cleaning, one number or a range (low, high); with a range, the low end is the one that counts.
A population at n is drawn by :func:`workbench.evidence.population.population_rows`.
"""

from __future__ import annotations

import re

import numpy as np

#: Bootstrap draws per feasibility floor unless told otherwise (the SD needs two or more).
DEFAULT_DRAWS = 5

#: What a size may be: one number, a (low, high) range, or None (the proxy's own size).
SizeSpec = int | tuple[int, int] | None

_RANGE = re.compile(r"^\s*([0-9][0-9_,]*)\s*(?::\s*([0-9][0-9_,]*)\s*)?$")


def parse_n(text: str) -> int | tuple[int, int]:
    """``"95000"`` → 95000, ``"95000:160000"`` → (95000, 160000); ``_``/``,`` group digits.

    >>> parse_n("95_000"), parse_n("95000:158,500")
    (95000, (95000, 158500))
    """
    m = _RANGE.match(str(text))
    if m is None:
        raise ValueError(f"expected a record count N or a range LOW:HIGH, not {text!r}")
    low = int(m.group(1).replace("_", "").replace(",", ""))
    if m.group(2) is None:
        return check_n(low)
    return check_n((low, int(m.group(2).replace("_", "").replace(",", ""))))


def check_n(n: SizeSpec, name: str = "n") -> SizeSpec:
    """``n`` as given, or a ValueError naming ``name`` (counts ≥ 2, a range with low ≤ high)."""
    if n is None:
        return None
    values = n if isinstance(n, tuple) else (n,)
    if len(values) != 2 and isinstance(n, tuple):
        raise ValueError(f"{name} must be a number or a (low, high) pair, not {n!r}")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 2:
            raise ValueError(f"{name} must be whole record counts of at least 2, not {n!r}")
    if isinstance(n, tuple) and n[0] > n[1]:
        raise ValueError(f"{name}: the range's low end {n[0]} is above its high end {n[1]}")
    return (int(n[0]), int(n[1])) if isinstance(n, tuple) else int(n)


def spec_n(spec: object, n: SizeSpec = None) -> SizeSpec:
    """``n`` if given, else the spec's ``schema.expected_n`` (a number or (low, high)), else
    None (the proxy's own size)."""
    if n is not None:
        return check_n(n)
    expected = getattr(spec, "expected_n", None)
    if expected is None:
        return None
    return check_n(expected.low if expected.low == expected.high
                   else (expected.low, expected.high))


def size_ends(n: SizeSpec) -> tuple[int, ...]:
    """The sizes to rehearse at: () for the proxy's own size, (n,), or (low, high).

    >>> size_ends(None), size_ends(95000), size_ends((95000, 95000)), size_ends((9, 12))
    ((), (95000,), (95000,), (9, 12))
    """
    n = check_n(n)
    if n is None:
        return ()
    if isinstance(n, tuple):
        return (n[0],) if n[0] == n[1] else n
    return (n,)


def low_end(n: SizeSpec) -> int | None:
    """The size that counts: the number, or the low end of a range (None: the proxy's size)."""
    ends = size_ends(n)
    return ends[0] if ends else None
