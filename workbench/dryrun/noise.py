"""Seeded stand-in noise for public dry runs, so two executors can be compared draw for draw.

OpenDP's samplers read the OS CSPRNG and cannot be seeded, which makes "same seeds, same
records" meaningless. Inside :func:`seeded_noise`, and only for a context in SIMULATION mode,
the three primitives of :mod:`workbench.privacy.mechanisms` are swapped for numpy draws of the
same distributions at the same scales:

* ``laplace_vector``: Laplace(Δ/ε);
* ``discrete_laplace_vector``: the difference of two geometric variables with
  p = 1 − exp(−ε/Δ), which is discrete Laplace(Δ/ε);
* ``noisy_max_index``: argmax of the scores plus Exponential(2Δ/ε) noise (permute-and-flip).

The swap is per thread: a thread with no seeded generator active still gets OpenDP, so a
confidential run sharing the process can never pick it up. The privacy layer itself is not
changed; the context still validates, records and accounts every measurement.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from workbench.privacy import PrivacyContext, PrivacyMode
from workbench.privacy import mechanisms as _mech

_NAMES = ("laplace_vector", "discrete_laplace_vector", "noisy_max_index")
_NOISE_STREAM = 0x6E6F697365  # "noise": keeps the noise stream apart from ctx.rng's stream
_local = threading.local()
_lock = threading.Lock()
_installed: dict[str, Callable[..., Any]] = {}
_users = 0


def noise_generator(seed: int) -> np.random.Generator:
    """The numpy Generator a seeded dry-run task draws its noise from."""
    return np.random.default_rng([int(seed), _NOISE_STREAM])


def _active() -> np.random.Generator | None:
    """This thread's seeded generator, or None (then the real OpenDP sampler runs)."""
    return getattr(_local, "rng", None)


def _laplace(values: np.ndarray, sensitivity: float, epsilon: float) -> np.ndarray:
    """Stand-in for ``laplace_vector``: Laplace(Δ/ε) from the thread's seeded generator."""
    rng = _active()
    if rng is None:
        return _installed["laplace_vector"](values, sensitivity, epsilon)
    arr = np.asarray(values, dtype=np.float64)
    return arr + rng.laplace(0.0, sensitivity / epsilon, size=arr.shape)


def _discrete_laplace(values: np.ndarray, sensitivity: int, epsilon: float) -> np.ndarray:
    """Stand-in for ``discrete_laplace_vector``: G₁ − G₂, geometric with p = 1 − e^(−ε/Δ)."""
    rng = _active()
    if rng is None:
        return _installed["discrete_laplace_vector"](values, sensitivity, epsilon)
    arr = np.asarray(values, dtype=np.int64)
    p = -math.expm1(-epsilon / sensitivity)
    noise = rng.geometric(p, size=arr.shape) - rng.geometric(p, size=arr.shape)
    return arr + noise.astype(np.int64)


def _noisy_max(scores: np.ndarray, sensitivity: float, epsilon: float) -> int:
    """Stand-in for ``noisy_max_index``: argmax of scores + Exponential(2Δ/ε) noise."""
    rng = _active()
    if rng is None:
        return _installed["noisy_max_index"](scores, sensitivity, epsilon)
    flat = np.asarray(scores, dtype=np.float64).ravel()
    if flat.size == 1:
        return 0
    noisy = flat + rng.exponential(2.0 * sensitivity / epsilon, size=flat.size)
    return int(np.argmax(noisy))


_SEEDED: dict[str, Callable[..., Any]] = {
    "laplace_vector": _laplace,
    "discrete_laplace_vector": _discrete_laplace,
    "noisy_max_index": _noisy_max,
}


def _install() -> None:
    """Put the stand-ins in place (once, however many threads use them)."""
    global _users
    with _lock:
        if _users == 0:
            for name in _NAMES:
                _installed[name] = getattr(_mech, name)
                setattr(_mech, name, _SEEDED[name])
        _users += 1


def _uninstall() -> None:
    """Restore the real samplers when the last user leaves."""
    global _users
    with _lock:
        _users -= 1
        if _users == 0:
            for name in _NAMES:
                setattr(_mech, name, _installed[name])  # kept: a racing caller still finds it


@contextmanager
def seeded_noise(ctx: PrivacyContext, seed: int) -> Iterator[np.random.Generator]:
    """Within the block, this thread's DP noise comes from ``noise_generator(seed)``.

    Refused unless ``ctx`` is a SIMULATION context: seeded noise is not differentially
    private and exists only to make public rehearsals reproducible.
    """
    if ctx.mode is not PrivacyMode.SIMULATION:
        raise ValueError("seeded noise is for public simulation runs only")
    if _active() is not None:
        raise RuntimeError("seeded_noise is already active in this thread")
    rng = noise_generator(seed)
    _install()
    _local.rng = rng
    try:
        yield rng
    finally:
        _local.rng = None
        _uninstall()
