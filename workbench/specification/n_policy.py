"""``metadata.n_policy``: the one declared privacy relation for the number of records n, and
every sentence the workbench says about n, removed rows or the pilot (issue 34).

Two relations, declared in the spec (absent: ``public``, so older specs keep their hash):

* ``public`` (the paper's, §4.4.2): the privacy unit is one record of the CLEANED table and
  two cleaned tables are neighbours when one record's values differ (replace-one), so the
  cleaned n — the rows of ``release.csv`` — is public, and with it the raw file's size minus
  the cleaned n, i.e. the total of rows the domain policies and raw rules removed. DP
  cleaning counts (``cleaning_counts: {release: dp}``) then protect only how that public
  total splits across the rules and policies. Their replace-one Δ₁ = min(K, 2m) is derived
  for a replaced RAW row (``engine.cleaning_counts``); a raw row moving across a rule
  changes the cleaned n, which this relation publishes, so the counts' noise hides the split,
  not the total.
* ``dp``: the privacy unit is one row of the RAW file; replacing it leaves the cleaned table
  replace-one or add/remove-one (the row enters or leaves by crossing a rule). The run
  releases n̂ = n + discrete Laplace(1/ε_n) (Δ = 1 under both moves; ``metadata.n_epsilon``,
  charged once per run through the budget plan), samples n̂ records and normalises every
  share by n̂; every criterion kind and generator family must state its bound for that
  relation (``CriterionKind.dp_n_bound``, ``GeneratorFamily.dp_n_bound``) or the validator
  refuses it by name. Nothing exact about n leaves such a run.

Any other text in ``metadata.n_policy`` (older specs describe the public relation in a
sentence) reads as ``public``; a single word other than the two is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext

PUBLIC = "public"
DP = "dp"
RELATIONS = (PUBLIC, DP)
#: the ledger purpose of the n̂ measurement (one line per run under ``dp``)
PURPOSE = "n_records"
#: the key under which every iteration finds n̂ in its once-results (the engine puts it there)
N_HAT_KEY = "__n_hat__"
#: the fewest records n̂ is clipped to (a release of one record has no marginal to compare)
MIN_N_HAT = 2


@dataclass(frozen=True)
class NPolicy:
    """The declared relation for n, and ε_n of its DP estimate (``dp`` only)."""

    relation: str = PUBLIC
    epsilon: float = 0.0

    @property
    def dp(self) -> bool:
        """Whether the run releases a DP n̂ instead of the exact cleaned n."""
        return self.relation == DP


def parse(value: object) -> tuple[str, str]:
    """(relation, problem) of a ``metadata.n_policy`` value: a keyword, or a legacy sentence
    (read as ``public``), or a problem in words ('' when it is fine)."""
    if value is None or value == "":
        return PUBLIC, ""
    text = str(value)
    if text in RELATIONS:
        return text, ""
    if len(text.split()) > 1:
        return PUBLIC, ""
    return PUBLIC, (f"n_policy {text!r} is neither 'public' (the cleaned n is published) nor "
                    "'dp' (a DP estimate n̂ is published instead)")


def noisy_n(n: int, epsilon: float, ctx: PrivacyContext) -> int:
    """n̂ = max(2, n + discrete Laplace(1/ε_n)): the one DP release of n under ``dp``.

    Sensitivity: the cleaned n is a count of rows; replacing one raw row changes it by 0 (the
    row stays on one side of the rules) or by ±1 (it crosses one), so Δ = 1 (audited by
    ``workbench.audits.n_policy`` on n vs n − 1). The clip at :data:`MIN_N_HAT` is
    post-processing. One ledger line, purpose :data:`PURPOSE`.
    """
    noisy = ctx.discrete_laplace(np.asarray([int(n)], dtype=np.int64), sensitivity=1,
                                 epsilon=epsilon, purpose=PURPOSE)
    return max(MIN_N_HAT, int(np.asarray(noisy.value).ravel()[0]))


def _num(x: float) -> str:
    return f"{x:.6g}"


# --- the words: every text about n, removals and the pilot is made here -----------------------
def relation_words(policy: NPolicy) -> str:
    """The neighbour relation with what it says about n (datasheet, report, describe)."""
    if policy.dp:
        return ("replace-one on the raw file (one row's values differ); the cleaned table then "
                "differs by one record replaced, added or removed, so the number of records is "
                f"NOT public: the release states a DP estimate n̂ (ε_n = {_num(policy.epsilon)})")
    return ("replace-one (two datasets are neighbours when one record's values differ; the "
            "number of records is the same and public)")


def unit_clause(policy: NPolicy) -> str:
    """What stays fixed between neighbours, for the plain-language reading of ε."""
    if policy.dp:
        return ("(the other raw rows being the same; the number of records may then differ "
                "by one, and only its DP estimate n̂ is released)")
    return "(the other records and the number of records being the same)"


def n_statement(policy: NPolicy) -> str:
    """The one sentence on n and on removed rows (datasheet, README, report, ``verify``)."""
    if policy.dp:
        return ("n_policy dp: the number of records is a DP estimate n̂ (discrete Laplace, "
                f"Δ = 1, ε_n = {_num(policy.epsilon)}, charged once and part of ε_total); the "
                "release has n̂ records and every criterion's share is normalised by n̂, so "
                "neither the cleaned n nor the total of removed rows is released exactly.")
    return ("n_policy public: the privacy unit is a record of the cleaned table, so the "
            "cleaned n (the rows of release.csv) is public, and with it the raw file's size "
            "minus n, i.e. the total of rows removed by cleaning; differentially private "
            "cleaning counts protect only how that removed total splits across rules and "
            "policies.")


def removed_words(policy: NPolicy, declared: str | None) -> str:
    """What the bundle says about removed rows given how ``cleaning_counts`` is declared
    (None: not declared, 'dp' or 'public')."""
    if policy.dp:
        total = ("The removed total is not released exactly: n̂ is a DP estimate of the "
                 "cleaned n.")
    else:
        total = ("The removed total is public (raw size minus the cleaned n, which "
                 "n_policy public publishes as the rows of release.csv).")
    if declared is None:
        split = "How the removals split across the rules and policies is not released."
    elif declared == "dp":
        split = ("The DP counts protect how the removals split across the rules and policies"
                 + ("." if policy.dp else ", not their total."))
    else:
        split = "The split is stated exactly, declared public by the spec (not DP)."
    return f"{total} {split}"


def pilot_words() -> str:
    """What the pilot promises about n, for both relations (the pilot runs before any spec
    decides one: its help and its FACTS header say this)."""
    return ("The pilot's FACTS file holds no exact n, but what a later run publishes about n "
            "follows the spec's metadata.n_policy: under 'public' (the default) every run "
            "publishes the cleaned n exactly (the rows of release.csv) and so the total of "
            "removed rows; under 'dp' only a DP estimate n̂ leaves.")


def verify_words(policy: NPolicy, rows: int) -> str:
    """``workbench verify``'s passing line on n."""
    if policy.dp:
        return (f"release.csv has n̂ = {rows:,} records, the ledger's one '{PURPOSE}' "
                f"measurement (discrete Laplace, Δ = 1, ε_n = {_num(policy.epsilon)})")
    return f"n public: release.csv has the cleaned n = {rows:,} records (no ε)"
