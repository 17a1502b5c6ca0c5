"""``workbench run``: execute a frozen spec once on confidential data and publish the bundle.

Steps: check the frozen spec → the dataset's budget guard (``engine.guard``, under the
dataset's lock in the budget store) → read and clean the data (what cleaning removed leaves
only as ``metadata.n_policy`` and ``cleaning_counts`` declare: under ``public`` the cleaned n
is the release's size, under ``dp`` a DP n̂ is released before the loop instead) →
statistics computed once, or reused from an earlier run of the spec → private selection over
configurations → bundle, published by one atomic rename. Every ledger line goes
to the run's enclave and to the dataset's ledger, fsynced before its noise. Only DP outputs
leave: the terminal shows step names and the iteration counter, never a true criterion value,
a count of removed rows or a data value.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.engine import cleaning_counts
from workbench.engine.before_loop import release_before_loop, release_once_statistics
from workbench.engine.blas import single_threaded_blas
from workbench.engine.bundle import release_ledger, write_bundle
from workbench.engine.cleaning_counts import CleaningTally
from workbench.engine.diagnosis import single_attempt_diagnosis
from workbench.engine.guard import check_budget, check_pilot, data_warnings, dataset_budget
from workbench.engine.iteration import (
    Candidate,
    run_iteration,
)
from workbench.engine.once import OnceStatistics, save_once
from workbench.engine.preflight import (
    check_model_fits,
    check_public_inputs,
    rehearse_before_budget,
)
from workbench.engine.progress import RunProgress
from workbench.engine.rehearsal import rehearsal_context, rehearsal_run_id, rehearsal_seed
from workbench.engine.rundir import RunDirectory, RunRefused
from workbench.engine.survey_step import (
    budget_lines,
    extra_columns,
    survey_document,
    weight_release,
)
from workbench.engine.unbounded import check_bounded, check_size
from workbench.generators import Guarantee, records_plan
from workbench.privacy import Accountant, Ledger, PrivacyContext, private_selection
from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.budget_store import BudgetStoreError, DatasetBudget
from workbench.sources import exists, public_name
from workbench.specification import Spec
from workbench.specification.forecast import forecast_problem
from workbench.survey.weight_check import WeightCheckFailed
from workbench.transform import EncodingError
from workbench.transform.raw import read_raw
from workbench.transform.stream import load_clean, return_freed_memory
from workbench.trial import Trial, bind
from workbench.validation import load_spec


@dataclass(frozen=True)
class RunOutcome:
    """What the operator learns: whether a release was published, where, and the ε spent."""

    status: str
    release_dir: Path | None
    epsilon_total: float
    epsilon_cumulative: float
    iterations: int
    dataset: str = ""
    epsilon_charged: float = 0.0
    budget_store: Path | None = None
    warnings: tuple[str, ...] = ()
    #: after ⊥ in a single attempt (T = 1) only: why its one candidate failed (DP values)
    diagnosis: tuple[str, ...] = ()


#: The fewest cleaned records a run accepts (a one-bit statement about n, made before any
#: budget; under ``metadata.n_policy: dp`` nothing else exact about n leaves the run).
MIN_RECORDS = 2


def load_confidential(spec: Spec, data_path: str | os.PathLike[str],
                      tally: CleaningTally | None = None):
    """Read only the spec's columns, apply the domain policies, check missing, clean.

    Read in chunks, each cleaned and compacted before the next (``transform.stream``: text
    categorical columns as Categoricals over the declared domain), so the peak holds one raw
    chunk and the compact table. An empty or header-only file, or one with fewer than
    :data:`MIN_RECORDS` records after cleaning, is refused here with an EncodingError, before
    the ledger opens. ``tally`` receives the confidential counts of what each policy and rule
    removed or recoded, summed over the chunks.
    """
    loaded = load_clean(data_path, spec, spec.file_format, extra=extra_columns(spec))
    if loaded.raw_rows == 0:
        raise EncodingError(f"the data {public_name(data_path)!r} has a header but no "
                            "records; nothing was run and no budget was spent")
    if tally is not None:
        tally.policies.update(loaded.policies)
        tally.rules.update(loaded.rules)
    if len(loaded.frame) < MIN_RECORDS:
        raise EncodingError(f"fewer than {MIN_RECORDS} records remain after cleaning; nothing "
                            "was run and no budget was spent")
    return loaded.frame


def run(
    spec_path: str | os.PathLike[str],
    data_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    quiet: bool = False,
    spend_again: bool = False,
    budget_store: str | os.PathLike[str] | None = None,
    allow_unbounded: bool = False,
    proxy: str | os.PathLike[str] | None = None,
    rehearsal: int | None = None,
) -> RunOutcome:
    """Run the frozen spec once; raise SpecError/RunRefused/EncodingError before spending.

    ``rehearsal``: a seed, for PUBLIC data only. The run is the same code path with a
    SIMULATION context whose noise, post-DP Generator and configuration draws are seeded by it
    (:func:`rehearsal_context`): a dry-run task of the same seed makes the same first
    iteration. Its budget store is a fresh temporary one unless ``budget_store`` is given, the
    bundle says it is a rehearsal, and its enclave ledger keeps every iteration's decisions.

    ``budget_store`` is the store's root (default: ``$WORKBENCH_BUDGET_STORE``, else the
    user's state directory; see :mod:`workbench.privacy.budget_store`). A γ = 0, T = ∞ spec
    without a forecast p ≥ 0.05, or whose cleaned data's n lies outside the sizes that
    forecast covers, is refused unless ``allow_unbounded`` (:mod:`workbench.engine.unbounded`;
    the data are then read before the budget store is opened, so nothing is written there).
    ``proxy``: PUBLIC proxy data the report overlays on the release (read here, before any
    budget, so a bad file fails early).
    """
    spec = load_spec(spec_path, require_frozen=True)
    if rehearsal is not None:
        rehearsal = rehearsal_seed(rehearsal)
        if budget_store is None:  # a rehearsal never touches a real dataset's store
            budget_store = tempfile.mkdtemp(prefix="workbench-rehearsal-budgets-")
        spend_again = True
    public = None if proxy is None else read_raw(proxy, spec.columns)
    problem = forecast_problem(spec.selection.forecast, spec.document)
    if problem:  # before any budget: the forecast must be this design's (issue 26)
        raise RunRefused(problem)
    check_bounded(spec, allow_unbounded)
    check_model_fits(spec)
    check_public_inputs(spec)
    if rehearsal is None:  # a rehearsal is itself on public data and spends no real budget
        rehearse_before_budget(spec, quiet)
    book = dataset_budget(spec, budget_store)
    if not exists(data_path):  # a database URL is checked when it is opened
        raise RunRefused(f"data file {os.fspath(data_path)!r} does not exist")
    frame, tally = None, CleaningTally()
    if spec.selection.unbounded and not allow_unbounded:
        frame = _load_refusing(spec, data_path, RunDirectory(out_dir), tally)
        # n_policy public: n is public; (dp refuses γ = 0, T = ∞); nothing opened or spent yet
        check_size(spec, len(frame))
    try:
        with book.locked():
            return _guarded(spec, data_path, RunDirectory(out_dir), book, quiet, spend_again,
                            public, frame, tally, rehearsal)
    except BudgetStoreError as exc:
        raise RunRefused(str(exc)) from None
    finally:  # the run's tables (some in reference cycles) freed and their pages handed back
        del frame  # before the caller's next step (the CLI's verify: 4M rows read again)
        gc.collect()
        return_freed_memory()


def _load_refusing(spec: Spec, data_path: str | os.PathLike[str], rd: RunDirectory,
                   tally: CleaningTally) -> Any:
    """The cleaned data (``tally`` counts what cleaning removed or recoded), or the run
    folder's status 'refused' with the one reason (before the ledger opens) and the
    EncodingError raised again."""
    try:
        return load_confidential(spec, data_path, tally)
    except EncodingError as exc:
        rd.prepare()
        rd.set_status("refused", reason=str(exc))
        raise


def _guarded(spec: Spec, data_path: str | os.PathLike[str], rd: RunDirectory,
             book: DatasetBudget, quiet: bool, spend_again: bool,
             public: Any = None, frame: Any = None,
             tally: CleaningTally | None = None, rehearsal: int | None = None) -> RunOutcome:
    """Under the dataset's lock: the budget guard, then the run with its two ledgers
    (``frame``: the cleaned data when the size guard has read them already, ``tally`` what
    their cleaning counted)."""
    plan, kept = check_budget(spec, book, spend_again)
    if rehearsal is None:  # a rehearsal runs on public data and spends no real budget
        check_pilot(spec, book)
    tally = tally if tally is not None else CleaningTally()
    frame = _load_refusing(spec, data_path, rd, tally) if frame is None else frame
    rd.prepare()
    earlier = len({e.get("run_id") for e in book.entries()}) if rehearsal is not None else 0
    run_id = uuid.uuid4().hex if rehearsal is None else rehearsal_run_id(rehearsal, spec, earlier)
    ledger = Ledger(rd.ledger_path, run_id=run_id, mirrors=[book.ledger_path])
    marks = {} if rehearsal is None else {"rehearsal": rehearsal}
    rd.set_status("incomplete", run_id=run_id, **marks)
    ledger.event("run_start", **marks, spec_sha256=spec.sha256, dataset=book.dataset,
                 epsilon_total_planned=plan.epsilon_total,
                 epsilon_charged_planned=plan.epsilon_charged, epsilon_prior=plan.epsilon_prior,
                 once_reused=plan.once_reused)
    try:
        # a rehearsal sums floats as a dry-run task does (engine.blas)
        with single_threaded_blas() if rehearsal is not None else nullcontext():
            outcome = _run(spec, frame, rd, book, ledger, plan, kept, quiet, public, tally,
                           rehearsal)
    except RunRefused as exc:  # a check before the loop said no (its message says what it spent)
        ledger.event("run_end", status="refused")
        rd.set_status("refused", run_id=run_id, reason=str(exc))
        raise
    except BaseException as exc:
        ledger.event("run_end", status="failed", error=type(exc).__name__)
        rd.set_status("failed", run_id=run_id, error=type(exc).__name__)
        raise
    finally:
        ledger.close()
    return outcome


def _warn(message: str) -> str:
    """Tell the operator now (stderr) and keep the message for the outcome."""
    print(f"warning: {message}", file=sys.stderr, flush=True)
    return message


def _once_statistics(trial: Trial, frame: Any, ctx: PrivacyContext, book: DatasetBudget,
                     kept: OnceStatistics | None, run_id: str,
                     fingerprint: str) -> dict[str, Any]:
    """Reuse the kept once-statistics (free), or release them now and keep them (charged)."""
    spec = trial.spec
    if kept is not None:
        ctx.log_event("once_reused", criteria=sorted(kept.releases),
                      epsilon=spec.epsilon_once, released_by=kept.run_id)
        return dict(kept.releases)
    if not spec.epsilon_once:
        return {}
    once = release_once_statistics(trial, frame, ctx)  # what every rehearsal releases too
    save_once(book.once_path(spec.sha256), OnceStatistics(once, run_id, fingerprint))
    return once


def _run(spec: Spec, frame: Any, rd: RunDirectory, book: DatasetBudget,
         ledger: Ledger, plan: BudgetPlan, kept: OnceStatistics | None,
         quiet: bool, public: Any = None, tally: CleaningTally | None = None,
         rehearsal: int | None = None) -> RunOutcome:
    """The steps after the guards; every ε goes through one accountant and one ledger."""
    run_id = ledger.run_id
    fingerprint = book.fingerprint(frame)
    warnings = tuple(_warn(w) for w in data_warnings(spec, book, fingerprint, kept))
    ledger.event("data_loaded", data_fingerprint=fingerprint)
    accountant = Accountant.for_plan(plan)
    ctx = (PrivacyContext.confidential(accountant=accountant, ledger=ledger,
                                       neighbour=spec.budget.neighbour) if rehearsal is None
           else rehearsal_context(rehearsal, spec, accountant, ledger))
    configurations = list(spec.configurations())
    # each drawn configuration is bound once; the before-loop releases read any of them
    trials: dict[int, Trial] = {0: bind(spec, configurations[0])}
    # the before-loop releases, by the function every rehearsal calls (same steps and order);
    # the survey weight check comes first, so its refusal has spent only its own ε
    try:
        inputs = release_before_loop(trials[0], frame, ctx, once_step=lambda: _once_statistics(
            trials[0], frame, ctx, book, kept, run_id, fingerprint))
    except WeightCheckFailed as exc:  # its message holds DP and public numbers only
        raise RunRefused(str(exc)) from None
    once, raking = inputs.once, inputs.raking
    sel = spec.selection
    accountant.plan_selection(plan)
    progress = RunProgress(quiet, sel.max_iterations)
    last: list[Candidate] = []  # the latest candidate, read only for a single attempt's ⊥

    def step(_iteration: int) -> tuple[bool, Candidate]:
        index = ctx.randbelow(len(configurations))
        trial = trials.setdefault(index, bind(spec, configurations[index]))
        candidate = run_iteration(trial, frame, ctx, once_results=once, progress=progress.step)
        progress.iteration_done()
        last[:] = [candidate]
        if rehearsal is not None:  # public data: every iteration's decisions stay on record
            ctx.log_event("rehearsal_iteration", iteration=_iteration,
                          configuration=trial.configuration.key, passed=candidate.passed,
                          failure=candidate.failure,
                          criteria=[r.id for r in candidate.results],
                          passes=[r.passed for r in candidate.results],
                          values=[r.value for r in candidate.results])
        return candidate.passed, candidate

    try:
        result = private_selection(step, gamma=sel.gamma, max_iterations=sel.max_iterations,
                                   ctx=ctx, epsilon_0=sel.epsilon_0)
    finally:
        progress.close()
    # released after the loop (charged either way), so the loop's noise is a rehearsal's
    cleaned = cleaning_counts.release(spec, tally or CleaningTally(), ctx)
    budget = _budget(spec, plan, book.dataset)

    def outcome(status: str, published: Path | None,
                diagnosis: tuple[str, ...] = ()) -> RunOutcome:
        return RunOutcome(status, published, plan.epsilon_total, accountant.epsilon_spent(),
                          result.iterations, book.dataset, plan.epsilon_charged, book.root,
                          warnings, diagnosis)

    if not result.succeeded or result.output is None:
        diagnosis = single_attempt_diagnosis(spec, last, ctx)
        ledger.event("run_end", status="no_release", **_scalars(budget))
        rd.set_status("no_release", run_id=run_id,
                      **({} if rehearsal is None else {"rehearsal": rehearsal}))
        return outcome("no_release", None, diagnosis)
    candidate = result.output
    chosen = bind(spec, candidate.configuration)
    promise = chosen.guarantee
    budget = _budget(spec, plan, book.dataset, promise)
    release = weight_release(spec, chosen.table.decode(candidate.codes, categorical=True), raking)
    # the family's public diagnostics of the RELEASED codes (post-processing: an MCMC's R̂, ESS)
    diagnostics = chosen.generator().release_diagnostics(candidate.codes, chosen.domain,
                                                         chosen.epsilon_generator, ctx.rng)
    results = [r.as_dict() for r in candidate.results]
    staging = rd.staging(run_id)
    reused = [r.as_dict() for r in kept.records] if kept is not None else []
    write_bundle(
        staging,
        spec=spec,
        release=release,
        label_order=chosen.label_order(),
        configuration=candidate.configuration.to_dict(),
        results=results,
        budget=budget,
        ledger_lines=release_ledger(rd.ledger_path, run_id, result.iterations,
                                    {**budget, "n_records": len(release)}, reused),
        guarantee=promise.as_dict(),
        survey=survey_document(spec, raking),
        proxy_labels=_public_labels(public, spec, candidate.configuration),
        cleaning=cleaned,
        diagnostics=diagnostics,
        rehearsal=rehearsal,
    )
    ledger.event("run_end", status="complete", **_scalars(budget))
    published = rd.publish(staging, run_id)
    rd.set_status("complete", run_id=run_id, release="release",
                  **({} if rehearsal is None else {"rehearsal": rehearsal}))
    return outcome("complete", published)


def _public_labels(public: Any, spec: Spec, configuration: Any) -> Any:
    """The PUBLIC proxy binned like the release, for the report's overlays (None if absent
    or if it cannot be binned: the report then says so; the release is not held back)."""
    if public is None:
        return None
    from workbench.report.overview import binned_like_release

    try:
        return binned_like_release(public, spec, configuration.to_dict())
    except (EncodingError, ValueError, KeyError):
        _warn("the public proxy could not be binned like the release: no overlays in the report")
        return None


def _budget(spec: Spec, plan: BudgetPlan, dataset: str,
            promise: Guarantee | None = None) -> dict[str, Any]:
    """The budget breakdown printed in the report and the datasheet (no times, no counts).

    When the chosen configuration's records carry a per-record (ε, δ) (``promise``), the
    formula states ε_total in two parts through the budget plan (:meth:`BudgetPlan.with_records`).
    """
    records = promise is not None and not promise.dataset_level and {
        "epsilon", "delta"} <= set(promise.parameters)
    if records:
        plan = records_plan(plan, promise)
    out: dict[str, Any] = {
        "dataset": dataset,
        "epsilon_generator": plan.epsilon_generator,
        "epsilon_criteria_in_loop": round(plan.epsilon_criteria_loop, 12),
        "epsilon_per_iteration": plan.epsilon_per_iteration,
        "private_selection": plan.selection_text(),
        "epsilon_once": plan.epsilon_once,
        "epsilon_total": plan.epsilon_total,
        "epsilon_total_formula": plan.formula(),
        "neighbour": spec.budget.neighbour,
        **budget_lines(spec, plan),
    }
    if promise is not None and not promise.is_pure:
        out["guarantee"] = promise.label
    if records:
        out["records_epsilon"] = plan.record_epsilon_total
        out["records_delta"] = plan.record_delta
    if plan.once_reused:
        out["once_statistics"] = ("reused: released and charged by an earlier run of this "
                                  "spec on the dataset")
    out["epsilon_charged"] = plan.epsilon_charged
    if plan.epsilon_prior:
        out["epsilon_earlier_runs"] = plan.epsilon_prior
        out["epsilon_cumulative"] = plan.epsilon_cumulative
    if spec.budget.epsilon_lifetime_max is not None:
        out["epsilon_lifetime_max"] = spec.budget.epsilon_lifetime_max
    return out


def _scalars(budget: dict[str, Any]) -> dict[str, Any]:
    """Budget fields that fit a ledger line (JSON scalars)."""
    return {k: v for k, v in budget.items() if isinstance(v, str | int | float)}
