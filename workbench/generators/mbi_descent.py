"""Private-PGM's mirror descent, compiled once per model shape and stopped at convergence.

Post-processing only: it reads noisy marginals already released through ``workbench.privacy``.
It is ``mbi.estimation.mirror_descent`` (the same L2 loss Σ‖μ_c − y_c‖²/(2σ_c²), the same
Armijo line search, the same start) with three changes that make an iteration fast:

* the noisy counts and their σ are *arguments* of the compiled step, not constants baked into
  it, so one compiled function serves every fit of the same shape (domain sizes and cliques,
  all public) in a process — a dry run compiles once, not once per task; JAX's persistent
  compilation cache (``~/.cache/release-workbench/jax`` unless JAX is configured otherwise)
  keeps it across processes;
* steps run in blocks of :data:`BLOCK` inside one ``lax.fori_loop`` (no Python per step);
* it stops when a block lowers the loss by less than ``rtol`` of its value (measured
  convergence), or after ``max_iters`` steps; ``estimate_info`` reports how many it took.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.transform import Domain

Clique = tuple[str, ...]

#: Steps per compiled block; convergence is checked between blocks.
BLOCK = 50
#: Relative loss decrease per block below which the descent has converged.
RTOL = 1e-3


@dataclass(frozen=True)
class DescentInfo:
    """How the fit went: steps taken, final loss, whether it stopped by convergence."""

    steps: int
    loss: float
    converged: bool


def _persistent_cache() -> None:
    """Keep compiled steps on disk across processes, unless JAX already has a cache dir."""
    import jax

    if jax.config.jax_compilation_cache_dir:
        return
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    path = Path(base) / "release-workbench" / "jax"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile in memory only
        return
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)


@functools.lru_cache(maxsize=16)
def _compiled(names: tuple[str, ...], sizes: tuple[int, ...], loss_cliques: tuple[Clique, ...],
              measured: tuple[Clique, ...]):
    """The jitted block of steps and the loss for one model shape (public structure only)."""
    import jax
    import jax.numpy as jnp
    import mbi
    from mbi import marginal_oracles

    _persistent_cache()
    domain = mbi.Domain(names, sizes)
    oracle = marginal_oracles.message_passing_fast

    def loss_fn(mu, ys, sigmas):
        total = 0.0
        for clique, y, s in zip(measured, ys, sigmas, strict=True):
            diff = (mu.project(clique).datavector() - y) / jnp.maximum(s, 1e-12)
            total += 0.5 * jnp.vdot(diff, diff)
        return total

    @jax.jit
    def block(theta, alpha, ys, sigmas, known_total):
        def step(_i, carry):
            theta, alpha, _loss = carry
            mu = oracle(theta, known_total)
            loss, grad = jax.value_and_grad(loss_fn)(mu, ys, sigmas)
            theta2 = theta - alpha * grad
            mu2 = oracle(theta2, known_total)
            loss2 = loss_fn(mu2, ys, sigmas)
            ok = loss - loss2 >= 0.5 * alpha * grad.dot(mu - mu2)
            alpha = jax.lax.select(ok, 1.01 * alpha, 0.5 * alpha)
            theta = jax.lax.cond(ok, lambda: theta2, lambda: theta)
            return theta, alpha, jax.lax.select(ok, loss2, loss)

        return jax.lax.fori_loop(0, BLOCK, step, (theta, alpha, jnp.inf))

    def zeros():
        return mbi.CliqueVector.zeros(domain, list(loss_cliques))

    return block, zeros, domain


def mirror_descent(
    domain: Domain,
    measured: Sequence[tuple[Clique, np.ndarray, float]],
    loss_cliques: Sequence[Clique],
    lipschitz: float,
    total: float,
    max_iters: int,
    potentials: object | None = None,
    rtol: float = RTOL,
) -> tuple[object, DescentInfo]:
    """Fit potentials to noisy marginals ``(clique, counts, σ)``; (MarkovRandomField, info).

    ``potentials`` warm-starts the descent (over cliques that support ``loss_cliques``).
    """
    import jax.numpy as jnp
    from mbi import MarkovRandomField, marginal_oracles

    block, zeros, _mdomain = _compiled(
        tuple(domain.names), tuple(int(s) for s in domain.sizes), tuple(loss_cliques),
        tuple(c for c, _, _ in measured))
    theta = zeros() if potentials is None else potentials.expand(list(loss_cliques))
    ys = tuple(jnp.asarray(np.asarray(y, dtype=np.float64).ravel()) for _, y, _ in measured)
    sigmas = tuple(jnp.asarray(float(s)) for _, _, s in measured)
    alpha = jnp.asarray(2.0 / ((lipschitz or 1.0) * float(total)))
    known_total = jnp.asarray(float(total))
    steps, previous, converged = 0, float("inf"), False
    loss = float("inf")
    while steps < max_iters:
        theta, alpha, value = block(theta, alpha, ys, sigmas, known_total)
        steps += BLOCK
        loss = float(value)
        if previous - loss <= rtol * abs(loss):
            converged = True
            break
        previous = loss
    marginals = marginal_oracles.message_passing_fast(theta, float(total))
    model = MarkovRandomField(potentials=theta, marginals=marginals, total=float(total))
    return model, DescentInfo(steps, loss, converged)
