"""Live readouts per criterion: Δ, σ, T′, the proxy's value, and false-pass/false-fail odds.

Δ, σ and T′ come from the code the engine uses (:mod:`workbench.criteria.sensitivity`, the
criteria modules' public layouts, :func:`workbench.privacy.laplace_sigma`), evaluated with the
public proxy as R and a quick synthetic sample as S. What differs by kind (T′, clipping, where
the noise goes) is asked of the criterion's kind (:mod:`workbench.criteria.kinds`), the same
objects that make the engine's releases.

Pass odds: the engine passes a criterion when its DP value v + Lap(b), b = Δ/ε, is below the
effective threshold T_eff (min(T, T′) for the relative 1-way error; the value is clipped to
[0, 1] first for share-valued kinds). Taking the proxy's exact value v on a quick sample as the
"true value":

* P(pass) = F_Lap(T_eff − v; b), with F the Laplace CDF;
* P(false pass) has ONE definition, the same on every page
  (:mod:`workbench.criteria.false_pass`): a true value 10% above T, whatever the proxy says;
* if v < T (truly passing), P(false fail) = 1 − P(pass).

One quick sample is noisy, so the lab makes several (:data:`DEFAULT_SAMPLES`) and
:func:`average_readouts` averages the value and P(pass) over them and keeps their range.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.criteria import kinds
from workbench.criteria.dispatch import criterion_sensitivity
from workbench.privacy import laplace_sigma
from workbench.specification.model import Criterion, Spec
from workbench.transform import TableCodec
from workbench.transform.cells import PairedCells


@dataclass(frozen=True)
class Readout:
    """What the criteria editor shows for one criterion (None where a quantity does not apply)."""

    id: str
    kind: str
    threshold: float
    epsilon: float
    n: int
    sensitivity: float | None = None
    sigma: float | None = None
    #: T′ as the kind derives it (None when it derives none)
    adjusted_threshold: float | None = None
    #: the threshold the engine's decision uses, as the kind computes it (T when None)
    effective_threshold: float | None = None
    value: float | None = None
    probability_pass: float | None = None
    false_pass: float | None = None
    false_fail: float | None = None
    note: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    samples: int = 1
    value_range: tuple[float, float] | None = None
    pass_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.effective_threshold is None:
            object.__setattr__(self, "effective_threshold", float(self.threshold))

    @property
    def scale(self) -> float | None:
        """Laplace scale b = Δ/ε."""
        if self.sensitivity is None or self.epsilon <= 0:
            return None
        return self.sensitivity / self.epsilon


def criterion_readout(
    spec: Spec,
    table: TableCodec,
    criterion: Criterion,
    pc: PairedCells,
    value: float | None,
) -> Readout:
    """Every readout of one criterion at the draft's current threshold and ε."""
    base = {"id": criterion.id, "kind": criterion.kind, "threshold": criterion.threshold,
            "epsilon": criterion.epsilon, "n": pc.n, "value": value}
    kind = kinds.get(criterion.kind)
    if criterion.epsilon <= 0:  # no noise: the decision itself, by the kind's own test
        p_pass = None if value is None else kind.pass_probability(
            criterion, value, None, criterion.threshold)
        return Readout(**base, probability_pass=p_pass,
                       note="computed on the release alone, without noise")
    delta, details = criterion_sensitivity(spec, table, criterion, pc)
    if delta is None:
        return Readout(**base, note="no sensitivity for this kind", details=details)
    sigma = laplace_sigma(delta, criterion.epsilon)
    t_prime = kind.adjusted_threshold(criterion, delta, details)
    out = Readout(**base, sensitivity=delta, sigma=sigma, adjusted_threshold=t_prime,
                  effective_threshold=kind.effective_threshold(criterion, delta, details),
                  details=details)
    if not kind.tags.closed_form_pass:
        where = kind.tags.noise_note or "the noised value is not the exact one"
        return _replace(out, note=f"{where}: the pass odds are not a single Laplace tail")
    if value is None:
        return out
    p_pass = kind.pass_probability(criterion, value, delta, out.effective_threshold)
    truly_passes = kind.passes(value, criterion.threshold)
    return _replace(
        out,
        probability_pass=p_pass,
        false_pass=kind.false_pass_probability(criterion, delta, details),
        false_fail=1.0 - p_pass if truly_passes and p_pass is not None else None,
    )


#: How many quick samples of the proxy the preview readouts average by default.
DEFAULT_SAMPLES = 5


def _mean(values: list[float | None]) -> float | None:
    """Mean of the values present (None if none is)."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _range(values: list[float | None]) -> tuple[float, float] | None:
    """(min, max) of the values present."""
    present = [v for v in values if v is not None]
    return (min(present), max(present)) if present else None


def average_readouts(runs: list[Mapping[str, Readout]]) -> dict[str, Readout]:
    """One readout per criterion from several quick samples: value, P(pass) and P(false fail)
    averaged, with the range of the first two; Δ, σ, T′ (which may read S) of the first sample.

    >>> a = Readout("m", "k", 1.0, 0.1, 10, value=0.2, probability_pass=0.9)
    >>> b = Readout("m", "k", 1.0, 0.1, 10, value=0.4, probability_pass=0.7)
    >>> r = average_readouts([{"m": a}, {"m": b}])["m"]
    >>> round(r.value, 6), r.value_range, r.samples
    (0.3, (0.2, 0.4), 2)
    """
    out = {}
    for cid, first in runs[0].items():
        rows = [run[cid] for run in runs if cid in run]
        values = [r.value for r in rows]
        passes = [r.probability_pass for r in rows]
        p_pass = _mean(passes)
        fails = [r.false_fail for r in rows]
        out[cid] = _replace(  # Δ, σ, T′ and P(false pass): those of the first sample
            first, value=_mean(values), probability_pass=p_pass,
            false_fail=_mean(fails) if any(f is not None for f in fails) else None,
            samples=len(rows), value_range=_range(values), pass_range=_range(passes))
    return out


def samples_label(n: int) -> str:
    """What the readouts are, in the words every page uses."""
    return f"from {n} quick sample{'s' if n != 1 else ''} of the proxy"


def _replace(readout: Readout, **changes: Any) -> Readout:
    """A copy with some fields changed (dataclasses.replace, kept local for brevity)."""
    from dataclasses import replace

    return replace(readout, **changes)
