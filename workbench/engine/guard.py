"""The run-once guard: the dataset's budget decides whether a run may start, before any noise.

* The spec must name its dataset (``metadata.dataset``): the budget is kept per dataset in
  the budget store, whatever ``--out`` folder a run writes to.
* A dataset that already has spend needs ``--spend-again``, whatever the folder and whatever
  the data file's bytes (the content fingerprint only warns; it never grants a fresh budget).
* ``budget.epsilon_lifetime_max`` caps the dataset's cumulative ε: a run that would pass it is
  refused.
* Once-statistics an earlier run of the same spec released are reused, so the run's charge
  leaves them out.
"""

from __future__ import annotations

import math
import os

from workbench.engine.once import OnceStatistics, load_once
from workbench.engine.rundir import RunRefused
from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.budget_store import BudgetStoreError, DatasetBudget, resolve_root
from workbench.specification import Problem, Spec, SpecError

_TOL = 1e-9


def dataset_budget(spec: Spec, store: str | os.PathLike[str] | None) -> DatasetBudget:
    """The spec's dataset in the budget store; a spec without ``metadata.dataset`` cannot run."""
    dataset = spec.metadata.dataset
    if not dataset:
        raise SpecError([Problem(
            "metadata.dataset",
            "a confidential run needs the dataset's stable identifier (e.g. 'il-births-2014'): "
            "its privacy budget is kept per dataset, across every run and --out folder",
        )])
    try:
        return DatasetBudget(resolve_root(store), dataset)
    except BudgetStoreError as exc:
        raise RunRefused(str(exc)) from None


def check_budget(spec: Spec, book: DatasetBudget,
                 spend_again: bool) -> tuple[BudgetPlan, OnceStatistics | None]:
    """This run's plan (earlier spend, reused once-statistics) or RunRefused; nothing is spent."""
    try:
        prior = book.spent()
    except BudgetStoreError as exc:
        raise RunRefused(str(exc)) from None
    once_ids = {c.id for c in spec.criteria if c.once}
    kept = load_once(book.once_path(spec.sha256), once_ids) if once_ids else None
    plan = spec.budget_plan(prior=prior, once_reused=kept is not None)
    where = f"budget store {str(book.root)!r}"
    cap = spec.budget.epsilon_lifetime_max
    if cap is not None and plan.epsilon_cumulative > cap + _TOL:
        raise RunRefused(
            f"dataset {book.dataset!r} already has ε = {prior:g} spent ({where}); this run "
            f"would charge {plan.epsilon_charged:g} more, {plan.epsilon_cumulative:g} in all, "
            f"over budget.epsilon_lifetime_max = {cap:g}. Nothing was run"
        )
    if prior > 0 and not spend_again:
        runs = book.runs_with_spend()
        raise RunRefused(
            f"dataset {book.dataset!r} already has ε = {prior:g} spent by {runs} earlier "
            f"run(s) or pilot(s) ({where}); this run would charge {plan.epsilon_charged:g} more "
            f"(cumulative {plan.epsilon_cumulative:g}). Pass --spend-again to accept the "
            "cumulative privacy loss"
        )
    return plan, kept


def check_pilot_budget(spec: Spec, book: DatasetBudget, epsilon: float,
                       spend_again: bool) -> float:
    """The earlier spend a DP pilot of ``epsilon`` adds to, or RunRefused exactly as a run is
    refused (earlier spend without --spend-again, the lifetime cap); nothing is spent."""
    try:
        prior = book.spent()
    except BudgetStoreError as exc:
        raise RunRefused(str(exc)) from None
    where = f"budget store {str(book.root)!r}"
    cap = spec.budget.epsilon_lifetime_max
    if cap is not None and prior + epsilon > cap + _TOL:
        raise RunRefused(
            f"dataset {book.dataset!r} already has ε = {prior:g} spent ({where}); this pilot "
            f"would charge {epsilon:g} more, {prior + epsilon:g} in all, over "
            f"budget.epsilon_lifetime_max = {cap:g}. Nothing was run")
    if prior > 0 and not spend_again:
        raise RunRefused(
            f"dataset {book.dataset!r} already has ε = {prior:g} spent by "
            f"{book.runs_with_spend()} earlier run(s) or pilot(s) ({where}); this pilot would "
            f"charge {epsilon:g} more (cumulative {prior + epsilon:g}). Pass --spend-again to "
            "accept the cumulative privacy loss")
    return prior


def check_pilot(spec: Spec, book: DatasetBudget) -> None:
    """A spec that names a DP pilot runs only on a dataset whose store holds that pilot (same
    FACTS SHA-256 and ε), so the datasheet's statement about it is true; before any noise."""
    if spec.pilot is None:
        return
    try:
        ends = [e for e in book.entries() if e.get("event") == "pilot_end"
                and e.get("facts_sha256") == spec.pilot.sha256]
    except (OSError, ValueError) as exc:
        raise RunRefused(f"dataset {book.dataset!r}: {exc}") from None
    if not ends:
        raise RunRefused(
            f"the spec names a pilot (FACTS sha256 {spec.pilot.sha256[:12]}…) that the budget "
            f"store {str(book.root)!r} of dataset {book.dataset!r} does not hold: run the pilot "
            "against this store, or remove the spec's pilot section. Nothing was run")
    if abs(float(ends[-1].get("epsilon", -1)) - spec.pilot.epsilon) > _TOL:
        raise RunRefused(
            f"the spec states the pilot spent ε = {spec.pilot.epsilon:g}, but the budget store "
            f"records ε = {float(ends[-1].get('epsilon', 0)):g} for it. Nothing was run")
    recorded = float(ends[-1].get("delta", 0.0))
    if not math.isclose(recorded, spec.pilot.delta, rel_tol=1e-9, abs_tol=1e-18):
        raise RunRefused(
            f"the spec states the pilot's δ = {spec.pilot.delta:g}, but the budget store "
            f"records δ = {recorded:g} for it (its label discovery). Nothing was run")


def data_warnings(spec: Spec, book: DatasetBudget, fingerprint: str,
                  kept: OnceStatistics | None) -> list[str]:
    """Warnings when the cleaned data differ from what earlier runs of this spec read."""
    last = book.last_fingerprint(spec.sha256)
    out = []
    if last is not None and last != fingerprint:
        out.append(
            f"the data differ from what the last run of this spec on dataset "
            f"{book.dataset!r} read (content fingerprint changed). They are still the "
            "same dataset: the ε already spent counts, and nothing is granted afresh"
        )
    if kept is not None and kept.fingerprint != fingerprint:
        out.append(
            "the once-statistics reused from an earlier run were computed on a different "
            "version of the data (they are not recomputed: that would charge their ε again)"
        )
    return out
