"""Two optional spec sections for data the project has no proxy for (issue 27).

* ``pilot``: the DP pilot that measured this dataset before the design (``workbench pilot``):
  its FACTS file, that file's SHA-256 and the ε it spent on the dataset. The pilot's ε is not
  part of the run's ε_total (it was spent before, and the budget store counts it as earlier
  spend); ``describe`` shows it beside ε_total and the datasheet names it.
* ``cleaning_counts``: how the rows each domain policy (drop, to_missing, clip) and each raw
  cleaning rule removed or recoded are stated in the bundle — with DP (``release: dp`` and its
  ε, charged through the budget plan) or exactly, because the spec's authors declare these
  counts public (``release: public``). Absent, they never leave the run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PilotRef:
    """The DP pilot behind this design: its FACTS file, the file's SHA-256, its ε and δ."""

    facts: str
    sha256: str
    epsilon: float
    #: δ of the pilot's label discovery (issue 36); 0 when the pilot was pure ε-DP
    delta: float = 0.0


@dataclass(frozen=True)
class CleaningCounts:
    """How the bundle states the rows each policy and rule removed or recoded."""

    release: str
    epsilon: float = 0.0

    @property
    def private(self) -> bool:
        """Released with DP (charged), rather than declared public."""
        return self.release == "dp"
