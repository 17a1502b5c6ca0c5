"""The recorded forecast (``selection.forecast``): the one record of a dry run's P(all pass).

Written by narrowing and by the design assistant's rehearsal
(:func:`workbench.dryrun.forecast.forecast_record`), read by the validator, ``workbench run``
(γ = 0, T = ∞ needs one) and ``verify``: the same type both ways, and its document form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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
        return cls(p=float(raw["p"]), repetitions=int(raw["repetitions"]),
                   min_pass=float(raw["min_pass"]), n=raw.get("n"), proxy=raw.get("proxy"),
                   n_max=raw.get("n_max"), spec_sha256=raw.get("spec_sha256"),
                   interval=None if raw.get("interval") is None else tuple(raw["interval"]),
                   low=span.get("low"), high=span.get("high"), seed=raw.get("seed"),
                   noise=raw.get("noise"),
                   scenarios=tuple((str(k), float(v))
                                   for k, v in (span.get("scenarios") or {}).items()))

    def to_document(self) -> dict[str, Any]:
        """The ``selection.forecast`` object (keys in the order the spec files keep)."""
        out: dict[str, Any] = {"p": self.p, "repetitions": self.repetitions,
                               "min_pass": self.min_pass}
        if self.interval is not None:
            out["interval"] = list(self.interval)
        for key in ("n", "n_max", "proxy", "seed", "noise"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.scenarios or self.low is not None or self.high is not None:
            out["range"] = {"low": self.low, "high": self.high}
            if self.scenarios:
                out["range"]["scenarios"] = dict(self.scenarios)
        if self.spec_sha256 is not None:
            out["spec_sha256"] = self.spec_sha256
        return out
