"""The recorded forecast (``selection.forecast``): the one record of a dry run's P(all pass).

Written by narrowing and by the design assistant's rehearsal
(:func:`workbench.dryrun.forecast.forecast_record`), read by the validator, ``workbench run``
(γ = 0, T = ∞ needs one) and ``verify``: the same type both ways, and its document form.

It belongs to its design (issue 26): ``spec_sha256`` is the hash of the design it was made
for (``spec.document.forecast_hash``: the spec without its forecast). A spec edited after its
dry run keeps a forecast of something else, and a γ = 0, T = ∞ run licensed by it would loop
on a promise made for another design; so ``run`` refuses such a spec before any budget and
``verify`` fails a bundle whose spec carries one (:func:`forecast_problem`). A forecast
recorded before issue 26 has no hash: it is accepted and flagged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.specification.document import forecast_hash


@dataclass(frozen=True)
class RecordedForecast:
    """The dry run's forecast that narrowing wrote into the spec (public: proxy data only)."""

    #: mean P(all criteria pass) per iteration over the narrowed configurations
    p: float
    repetitions: int
    min_pass: float
    #: records the proxy was rehearsed at (the low end of a range), and the proxy's file name
    n: int | None = None
    proxy: str | None = None
    #: the high end when the forecast was made over a range of n (both ends rehearsed)
    n_max: int | None = None
    #: the design it was made for: ``spec.document.forecast_hash`` of the spec (issue 26)
    spec_sha256: str | None = None
    #: 95% Wilson interval of p over the rehearsed iterations
    interval: tuple[float, float] | None = None
    #: the lowest and highest p over the proxy scenarios rehearsed (``dryrun.robust``)
    low: float | None = None
    high: float | None = None
    #: the dry run's seed and noise mode, and p per proxy scenario
    seed: int | None = None
    noise: str | None = None
    scenarios: tuple[tuple[str, float], ...] = ()

    @classmethod
    def from_document(cls, raw: Mapping[str, Any]) -> RecordedForecast:
        """The record of a (schema-valid) ``selection.forecast`` object."""
        span = raw.get("range") or {}
        plain = {k: raw.get(k) for k in ("n", "proxy", "n_max", "spec_sha256", "seed", "noise")}
        return cls(float(raw["p"]), int(raw["repetitions"]), float(raw["min_pass"]), **plain,
                   interval=None if raw.get("interval") is None else tuple(raw["interval"]),
                   low=span.get("low"), high=span.get("high"),
                   scenarios=tuple((str(k), float(v))
                                   for k, v in (span.get("scenarios") or {}).items()))

    def to_document(self) -> dict[str, Any]:
        """The ``selection.forecast`` object (keys in the order the spec files keep)."""
        out: dict[str, Any] = {"p": self.p, "repetitions": self.repetitions,
                               "min_pass": self.min_pass}
        if self.interval is not None:
            out["interval"] = list(self.interval)
        out |= {k: getattr(self, k) for k in ("n", "n_max", "proxy", "seed", "noise")
                if getattr(self, k) is not None}
        if self.scenarios or self.low is not None or self.high is not None:
            out["range"] = {"low": self.low, "high": self.high} | (
                {"scenarios": dict(self.scenarios)} if self.scenarios else {})
        if self.spec_sha256 is not None:
            out["spec_sha256"] = self.spec_sha256
        return out

    def words(self) -> str:
        """What ``verify`` prints about it (made for this design, or carrying no hash)."""
        at = "" if self.n is None else f" at n = {self.n:,}" + (
            "" if not self.n_max else f"–{self.n_max:,}")
        interval = ("" if self.interval is None
                    else f" [{self.interval[0]:.2f}, {self.interval[1]:.2f}]")
        spread = ("" if self.low is None
                  else f", range over proxy scenarios {self.low:.2f}–{self.high:.2f}")
        owner = ("made for this design" if self.spec_sha256 is not None
                 else "recorded without the hash of its design (before issue 26)")
        return f"p = {self.p:.3f}{interval}{at}{spread}; {owner}"


def forecast_problem(forecast: RecordedForecast | None, document: Mapping[str, Any]) -> str | None:
    """Why a spec document's recorded ``forecast`` does not belong to it, or None."""
    if forecast is None or forecast.spec_sha256 is None:
        return None
    actual = forecast_hash(document)
    if forecast.spec_sha256 != actual:
        return (f"selection.forecast was made for another design (spec_sha256 "
                f"{forecast.spec_sha256[:12]}…, this design is {actual[:12]}…): the spec "
                "changed after its dry run; rehearse the frozen file again (`workbench "
                "dryrun … --write-narrowed` or `workbench design`)")
    return None
