"""``workbench run``: execute a frozen spec once on confidential data and publish the bundle.

Steps: check the frozen spec → run-once guard → read and clean the data (the removed count
stays inside) → statistics computed once → private selection over configurations → bundle,
published by one atomic rename. Only DP outputs leave: the terminal shows step names and the
iteration counter, never a true criterion value, a count of removed rows or a data value.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.criteria import release_once
from workbench.engine.bundle import release_ledger, write_bundle
from workbench.engine.iteration import Candidate, label_order, run_iteration
from workbench.engine.rundir import RunDirectory, RunRefused
from workbench.privacy import (
    Accountant,
    Ledger,
    PrivacyContext,
    loop_factor,
    private_selection,
)
from workbench.spec import Spec, load_spec
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, check_missing, read_raw


@dataclass(frozen=True)
class RunOutcome:
    """What the operator learns: whether a release was published, where, and ε_total."""

    status: str
    release_dir: Path | None
    epsilon_total: float
    epsilon_cumulative: float
    iterations: int


class _Progress:
    """A tqdm bar over iterations whose postfix names the current step (or nothing if quiet)."""

    def __init__(self, quiet: bool, total: int | None) -> None:
        self.bar = None
        if not quiet:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="iteration", desc="private selection",
                            dynamic_ncols=True)

    def step(self, name: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(name)

    def iteration_done(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def load_confidential(spec: Spec, data_path: str | os.PathLike[str]):
    """Read only the spec's columns, apply the domain policies, check missing, clean."""
    frame = read_raw(data_path, spec.columns)
    frame = apply_domain_policy(frame, spec.columns)
    frame = clean(frame, spec)
    check_missing(frame, spec.columns)
    return frame


def run(
    spec_path: str | os.PathLike[str],
    data_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    quiet: bool = False,
    spend_again: bool = False,
) -> RunOutcome:
    """Run the frozen spec once; raise SpecError/RunRefused/EncodingError before spending."""
    spec = load_spec(spec_path, require_frozen=True)
    if not Path(data_path).is_file():
        raise RunRefused(f"data file {os.fspath(data_path)!r} does not exist")
    rd = RunDirectory(out_dir)
    rd.prepare()
    fingerprint = rd.fingerprint(data_path)
    earlier = rd.previous_runs(spec.sha256, fingerprint)
    if earlier and not spend_again:
        raise RunRefused(
            f"this frozen spec already ran on this data in {os.fspath(out_dir)!r} "
            f"({earlier} earlier run(s)); running it again spends ε again. Pass --spend-again "
            "to accept the cumulative privacy loss"
        )
    prior = Accountant.spent_in_ledger(rd.ledger_path) if rd.ledger_path.exists() else 0.0
    run_id = uuid.uuid4().hex
    ledger = Ledger(rd.ledger_path, run_id=run_id)
    rd.set_status("incomplete", run_id=run_id)
    ledger.event("run_start", spec_sha256=spec.sha256, data_fingerprint=fingerprint,
                 epsilon_total_planned=spec.epsilon_total, epsilon_prior=prior)
    try:
        outcome = _run(spec, data_path, rd, ledger, run_id, prior, quiet)
    except BaseException as exc:
        ledger.event("run_end", status="failed", error=type(exc).__name__)
        rd.set_status("failed", run_id=run_id, error=type(exc).__name__)
        raise
    finally:
        ledger.close()
    return outcome


def _run(spec: Spec, data_path: str | os.PathLike[str], rd: RunDirectory, ledger: Ledger,
         run_id: str, prior: float, quiet: bool) -> RunOutcome:
    """The steps after the guards; every ε goes through one accountant and one ledger."""
    frame = load_confidential(spec, data_path)
    accountant = Accountant(prior + spec.epsilon_total, prior_spent=prior)
    ctx = PrivacyContext.confidential(accountant=accountant, ledger=ledger,
                                      neighbour=spec.budget.neighbour)
    configurations = list(spec.configurations())
    # A once-criterion's columns have a single alternative (validated), so any configuration
    # encodes them identically.
    once = release_once(spec, configurations[0], spec.table_codec(configurations[0]).encode(frame),
                        ctx) if spec.epsilon_once else {}
    sel = spec.selection
    accountant.plan_selection(spec.epsilon_in_loop, sel.gamma, sel.max_iterations, sel.epsilon_0)
    progress = _Progress(quiet, sel.max_iterations)

    def step(_iteration: int) -> tuple[bool, Candidate]:
        config = configurations[ctx.randbelow(len(configurations))]
        candidate = run_iteration(spec, config, frame, ctx, once_results=once,
                                  progress=progress.step)
        progress.iteration_done()
        return candidate.passed, candidate

    try:
        result = private_selection(step, gamma=sel.gamma, max_iterations=sel.max_iterations,
                                   ctx=ctx, epsilon_0=sel.epsilon_0)
    finally:
        progress.close()
    budget = _budget(spec, accountant, prior)
    if not result.succeeded or result.output is None:
        ledger.event("run_end", status="no_release", **_scalars(budget))
        rd.set_status("no_release", run_id=run_id)
        return RunOutcome("no_release", None, spec.epsilon_total, accountant.epsilon_spent(),
                          result.iterations)
    candidate = result.output
    table = spec.table_codec(candidate.configuration)
    release = table.decode(candidate.codes)
    results = [r.as_dict() for r in candidate.results]
    staging = rd.staging(run_id)
    write_bundle(
        staging,
        spec=spec,
        release=release,
        label_order=label_order(spec, candidate.configuration),
        configuration=candidate.configuration.to_dict(),
        results=results,
        budget=budget,
        ledger_lines=release_ledger(rd.ledger_path, run_id, result.iterations,
                                    {**budget, "n_records": len(release)}),
    )
    ledger.event("run_end", status="complete", **_scalars(budget))
    published = rd.publish(staging, run_id)
    rd.set_status("complete", run_id=run_id, release="release")
    return RunOutcome("complete", published, spec.epsilon_total, accountant.epsilon_spent(),
                      result.iterations)


def _budget(spec: Spec, accountant: Accountant, prior: float) -> dict[str, Any]:
    """The budget breakdown printed in the report and the datasheet."""
    once = spec.epsilon_once
    out: dict[str, Any] = {
        "epsilon_generator": spec.budget.epsilon_generator,
        "epsilon_criteria_in_loop": round(spec.epsilon_in_loop - spec.budget.epsilon_generator,
                                          12),
        "epsilon_per_iteration": spec.epsilon_in_loop,
        "private_selection": f"{loop_factor(spec.selection.max_iterations)} × "
                             f"{spec.epsilon_in_loop:g} + ε₀ {spec.selection.epsilon_0:g}",
        "epsilon_once": once,
        "epsilon_total": spec.epsilon_total,
        "neighbour": spec.budget.neighbour,
    }
    if prior:
        out["epsilon_earlier_runs"] = prior
        out["epsilon_cumulative"] = round(prior + spec.epsilon_total, 12)
    return out


def _scalars(budget: dict[str, Any]) -> dict[str, Any]:
    """Budget fields that fit a ledger line (JSON scalars)."""
    return {k: v for k, v in budget.items() if isinstance(v, str | int | float)}
