"""``workbench verify``'s check of n against the spec's ``metadata.n_policy``: under ``dp`` the
ledger holds exactly one n̂ measurement (discrete Laplace, Δ = 1, the declared ε_n) and the
release has n̂ records; under ``public`` no such line exists (n is published, free)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.specification import Spec
from workbench.specification.n_policy import PURPOSE, verify_words

_TOL = 1e-9


def is_n_estimate(entry: Mapping[str, Any]) -> bool:
    """A ledger measurement of the DP estimate n̂."""
    return entry.get("event") == "measurement" and entry.get("purpose") == PURPOSE


def n_problem(spec: Spec, ledger: Sequence[Mapping[str, Any]] | None) -> str:
    """What is wrong with the bundle's n under its spec's relation ('' when it holds)."""
    lines = [e for e in ledger or () if is_n_estimate(e)]
    policy = spec.n_policy
    if not policy.dp:
        return "" if not lines else "n_policy public publishes n exactly and spends no ε on it"
    if len(lines) != 1:
        return f"the ledger holds {len(lines)} '{PURPOSE}' measurements, not 1 (n_policy dp)"
    line = lines[0]
    if abs(float(line.get("epsilon", -1)) - policy.epsilon) > _TOL or \
            float(line.get("sensitivity", -1)) != 1.0 or \
            line.get("mechanism") != "discrete_laplace":
        return "the ledger's n̂ measurement is not discrete Laplace, Δ = 1 at the spec's n_epsilon"
    return ""


def n_words(spec: Spec, rows: int) -> str:
    """What a passing check says (from :mod:`workbench.specification.n_policy`)."""
    return verify_words(spec.n_policy, rows)
