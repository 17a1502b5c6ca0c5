"""A rehearsal is the run (issue 26): ``workbench run --rehearse SEED`` on PUBLIC data.

The same code path as a confidential run — guards, before-loop releases, private selection,
bundle — in a SIMULATION context whose noise, post-DP Generator and configuration draws are
all seeded by SEED, exactly as a seeded dry-run task of that seed is
(``tests/test_rehearsal.py`` checks they make the same first iteration, bit for bit).
"""

from __future__ import annotations

import hashlib
from typing import Any

from workbench.engine.rundir import RunRefused
from workbench.privacy import Accountant, Ledger, PrivacyContext
from workbench.privacy.noise import rehearsal_noise
from workbench.specification import Spec


def rehearsal_seed(seed: Any) -> int:
    """A rehearsal's seed: a whole number ≥ 0 (never None: a rehearsal is reproducible)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise RunRefused("--rehearse takes a seed, a whole number >= 0")
    return int(seed)


def rehearsal_context(seed: int, spec: Spec, accountant: Accountant,
                      ledger: Ledger) -> PrivacyContext:
    """The SIMULATION context of a rehearsal: accounted and logged like a run, its noise
    (:func:`workbench.privacy.noise.rehearsal_noise`), post-DP Generator and configuration
    draws all seeded by ``seed`` — exactly the context of a seeded dry-run task of that seed."""
    return PrivacyContext.simulation(seed, neighbour=spec.budget.neighbour,
                                     accountant=accountant, ledger=ledger,
                                     noise=rehearsal_noise(seed))


def rehearsal_run_id(seed: int, spec: Spec, earlier_runs: int) -> str:
    """A rehearsal's run id, a function of its seed, the spec and how many runs its store
    already holds: two rehearsals of one spec with one seed into fresh stores write the same
    ledger byte for byte, whatever source the data came from, and no two runs in one store
    share an id (a confidential run's id stays a fresh uuid4)."""
    text = f"rehearsal {seed} {spec.sha256} {earlier_runs}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]
