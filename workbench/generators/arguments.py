"""Arguments every generator checks before it reads any data: ε and the number of rows."""

from __future__ import annotations

import math

import numpy as np


def check_epsilon(epsilon: float) -> float:
    """Reject a budget that no mechanism can spend, before any data is read."""
    eps = float(epsilon)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return eps


def check_n(n: int) -> int:
    """Accept only a non-negative integer row count for sampling."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return int(n)
