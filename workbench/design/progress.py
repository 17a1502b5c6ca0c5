"""What a long step of ``design`` prints: which unit it is on, how many are left and an ETA.

Issue 36: the assistant sat at "candidate 1 of 4" for 12 minutes with no estimate. Every unit
of a long step (a candidate fit, a pricing, a draft's rehearsal) is announced as
"<unit> k of K (…) … ETA ~Ns", the ETA being the units still to do (this one included) times
the mean time of the finished ones, or a caller's guess before any has finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def duration(seconds: float) -> str:
    """'~40 s', '~3 min' or '~1.5 h': an estimate, so rounded."""
    if seconds < 90:
        return f"~{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"~{round(seconds / 60)} min"
    return f"~{seconds / 3600:.1f} h"


class Eta:
    """Announces the units of one long step with what is left and an estimate of the time."""

    def __init__(self, say: Callable[[str], None], total: int, unit: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.say, self.total, self.unit, self.clock = say, max(int(total), 1), unit, clock
        self.done, self.spent, self.started = 0, 0.0, None  # type: ignore[assignment]

    def step(self, detail: str = "", guess: float | None = None) -> None:
        """Close the previous unit (if any) and announce the next; ``guess``: seconds per unit
        to quote before any unit has finished."""
        self.finish()
        k = self.done + 1
        per = self.spent / self.done if self.done else guess
        eta = ("ETA: timing the first" if per is None
               else f"ETA {duration(per * (self.total - self.done))}")
        self.say(f"{self.unit} {k} of {self.total}{f' ({detail})' if detail else ''} … {eta}")
        self.started = self.clock()

    def finish(self) -> None:
        """Count the running unit as done (idempotent)."""
        if self.started is not None:
            self.spent += self.clock() - self.started
            self.done += 1
            self.started = None

    @property
    def seconds_per_unit(self) -> float | None:
        """Mean seconds of the finished units (None before the first finishes)."""
        return self.spent / self.done if self.done else None


class Countdown:
    """Announces a batch of units that run in parallel (candidate fits, pricing draws): what
    is left after each one finishes and an ETA from the wall time per finished unit (which
    counts the workers' parallelism): after the first, the time between the first and the
    last finish per unit since (the workers' start-up, their JAX import and compile, is
    paid once), before it the mean, or a caller's guess before any has finished."""

    def __init__(self, say: Callable[[str], None], total: int, unit: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.say, self.total, self.unit, self.clock = say, max(int(total), 1), unit, clock
        self.done, self.started, self.elapsed, self.first = 0, clock(), 0.0, 0.0

    def start(self, detail: str = "", guess: float | None = None) -> None:
        """Announce the batch; ``guess``: seconds per unit to quote before one finishes."""
        self.started = self.clock()
        eta = ("ETA: timing the first" if guess is None
               else f"ETA {duration(guess * self.total)}")
        self.say(f"{self.unit}: {self.total} to run{f' ({detail})' if detail else ''} … {eta}")

    def finished(self, detail: str = "") -> None:
        """One more unit finished: say so, with what is left and when it should end."""
        self.done = min(self.done + 1, self.total)
        left = self.total - self.done
        self.elapsed = self.clock() - self.started
        if self.done == 1:
            self.first = self.elapsed
        per = self.seconds_per_unit or 0.0
        eta = f"{left} left, ETA {duration(per * left)}" if left else "all done"
        self.say(f"{self.unit} {self.done} of {self.total} done"
                 f"{f' ({detail})' if detail else ''} … {eta}")

    @property
    def seconds_per_unit(self) -> float | None:
        """Wall seconds per finished unit (None before the first finishes)."""
        if self.done > 1 and self.elapsed > self.first:
            return (self.elapsed - self.first) / (self.done - 1)
        return self.elapsed / self.done if self.done else None
