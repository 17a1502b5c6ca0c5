"""Argument validation for the privacy layer.

Every message names the offending argument and never echoes its value: a value handed to a
mechanism may be a statistic of the confidential data, and an error message or log line is
a release channel that no noise protects.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

STAGES = ("loop", "once")
NEIGHBOURS = ("replace_one", "add_remove")


def positive_finite(name: str, x: object) -> float:
    """Return ``x`` as a float; ε and Δ must be finite and > 0 so that Δ/ε is a real scale."""
    if isinstance(x, bool) or not isinstance(x, Real):
        raise ValueError(f"{name} must be a finite number > 0")
    value = float(x)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0")
    return value


def positive_integer(name: str, x: object) -> int:
    """Return ``x`` as an int ≥ 1 (integral floats such as 2.0 allowed); NaN and ∞ are refused."""
    if isinstance(x, bool) or not isinstance(x, Real):
        raise ValueError(f"{name} must be an integer >= 1")
    value = float(x)
    if not (math.isfinite(value) and value >= 1 and value == int(value)):
        raise ValueError(f"{name} must be an integer >= 1")
    return int(value)


def probability(name: str, x: object) -> float:
    """Return ``x`` as a float in [0, 1]; γ and pass rates are probabilities."""
    if isinstance(x, bool) or not isinstance(x, Real):
        raise ValueError(f"{name} must be a number in [0, 1]")
    value = float(x)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1]")
    return value


def purpose(text: object) -> str:
    """Return the purpose; the ledger needs a non-empty human label for every measurement."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("purpose must be a non-empty string")
    return text


def stage(text: object) -> str:
    """Return the stage; the accountant charges 'loop' and 'once' measurements differently."""
    if text not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}")
    return str(text)


def neighbour(text: object) -> str:
    """Return the neighbour relation; sensitivities are derived for one of two relations."""
    if text not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {NEIGHBOURS}")
    return str(text)


def bounds(pair: object) -> tuple[float, float] | None:
    """Return (L, U) as floats with L < U, both finite; bounds come from the spec, not data."""
    if pair is None:
        return None
    try:
        lo, hi = (float(v) for v in pair)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ValueError("bounds must be a pair (L, U) of finite numbers with L < U") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError("bounds must be a pair (L, U) of finite numbers with L < U")
    return lo, hi


def finite_floats(name: str, value: object) -> np.ndarray:
    """Return ``value`` as a float64 array; noise cannot be calibrated to NaN or infinity."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric (contents withheld)") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite everywhere (contents withheld)")
    return arr


def integers(name: str, value: object) -> np.ndarray:
    """Return ``value`` as an int64 array; the discrete Laplace sampler works on integers only."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must be an array of integers")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    return arr.astype(np.int64, copy=False)
