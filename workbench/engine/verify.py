"""``workbench verify``: check a release bundle's internal consistency from public files only.

Each check is independent, so one tampering shows up under its own name (and usually also in
the manifest check). No confidential data is needed: anyone can run it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.engine import cleaning_counts
from workbench.engine.bundle import (
    BUNDLE_FILES,
    CLEANING_FILE,
    DIAGNOSTICS_FILE,
    MANIFEST,
    OPTIONAL_FILES,
    file_sha256,
)
from workbench.engine.n_check import is_n_estimate, n_problem, n_words
from workbench.engine.release_csv import read_release_labels
from workbench.engine.release_parquet import RELEASE_PARQUET, parquet_problem
from workbench.engine.verify_criteria import criteria_problem
from workbench.engine.verify_survey import is_survey, survey_verdict
from workbench.generators import MCMC_KIND, Guarantee, guarantee_problems
from workbench.postprocess import reject_counts, semantics_for
from workbench.postprocess.projection import distinct_cells
from workbench.privacy import Ledger
from workbench.privacy.budget_plan import BudgetPlan
from workbench.privacy.records import charged_epsilon
from workbench.specification import Configuration, Spec, SpecError
from workbench.specification.forecast import forecast_problem
from workbench.transform import EncodingError
from workbench.trial import Trial, bind
from workbench.validation import build_spec

_TOL = 1e-9


@dataclass
class Verification:
    """Outcome of every check; ``ok`` only if none failed."""

    checks: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: Facts a reader must see even when every check passes (a guarantee other than ε-DP).
    flags: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def passed(self, name: str, detail: str = "ok") -> None:
        self.checks[name] = detail

    def failed(self, name: str, reason: str) -> None:
        self.checks[name] = f"FAILED: {reason}"
        self.problems.append(f"{name}: {reason}")

    def summary(self) -> str:
        lines = [f"{'PASS' if self.ok else 'FAIL'}: release bundle verification"]
        lines += [f"  {name:<14} {detail}" for name, detail in self.checks.items()]
        lines += [f"NOTE: {flag}" for flag in self.flags]
        return "\n".join(lines)


def bundle_dir(path: str | os.PathLike[str]) -> Path:
    """Accept the run directory or its release/ folder."""
    p = Path(path)
    return p / "release" if (p / "release" / "release.csv").exists() else p


def verify_bundle(path: str | os.PathLike[str]) -> Verification:
    """Run every check on the bundle at ``path``."""
    root = bundle_dir(path)
    v = Verification()
    missing = [f for f in (*BUNDLE_FILES, MANIFEST) if not (root / f).is_file()]
    if missing:
        v.failed("files", f"missing {', '.join(missing)}")
        return v
    v.passed("files", f"{len(BUNDLE_FILES) + 1} files present")
    _check_manifest(root, v)
    spec = _check_spec(root, v)
    ledger = _check_ledger(root, v, spec)
    if spec is None:
        return v
    trial = _check_configuration(root, v, spec)
    if trial is not None:
        _check_release(root, v, trial, ledger)
        _check_guarantee(root, v, trial)
    problem = criteria_problem(root, spec, ledger)
    if problem:
        v.failed("criteria", problem)
    else:
        v.passed("criteria", f"{len(spec.criteria)} criteria, all passed, ε as in the spec")
    problem = forecast_problem(spec.selection.forecast, spec.document)
    if problem:
        v.failed("forecast", problem)
    elif spec.selection.forecast is not None:
        v.passed("forecast", spec.selection.forecast.words())
        if spec.selection.forecast.spec_sha256 is None:
            v.flags.append("the recorded forecast carries no hash of the design it was made "
                           "for (recorded before issue 26): it cannot be checked")
    if (root / RELEASE_PARQUET).exists() and trial is not None:
        _check_parquet(root, v, trial)
    if spec.survey is not None:
        passed, text = survey_verdict(root, spec, ledger, trial)
        (v.passed if passed else v.failed)("survey", text)
    if spec.cleaning_counts is not None or (root / CLEANING_FILE).exists():
        problem = cleaning_counts.verify(root / CLEANING_FILE, spec, ledger)
        if problem:
            v.failed("cleaning", problem)
        else:
            v.passed("cleaning", cleaning_counts.verified_words(spec))
    return v


def _check_manifest(root: Path, v: Verification) -> None:
    """Every file's SHA-256 matches MANIFEST.json."""
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        v.failed("manifest", "MANIFEST.json is not readable JSON")
        return
    names = [*BUNDLE_FILES, *(f for f in OPTIONAL_FILES if f in manifest)]
    changed = [f for f in names if not (root / f).is_file()
               or manifest.get(f) != file_sha256(root / f)]
    if changed:
        v.failed("manifest", f"content differs from the manifest: {', '.join(changed)}")
    else:
        v.passed("manifest", "every file matches its SHA-256")


def _check_spec(root: Path, v: Verification) -> Spec | None:
    """spec.json is a valid frozen spec whose hash matches its content."""
    try:
        doc = json.loads((root / "spec.json").read_text(encoding="utf-8"))
        spec = build_spec(doc, require_frozen=True)
    except json.JSONDecodeError:
        v.failed("spec", "spec.json is not valid JSON")
        return None
    except SpecError as exc:
        v.failed("spec", "; ".join(f"{p.path}: {p.message}" for p in exc.problems))
        return None
    v.passed("spec", f"frozen, SHA-256 {spec.sha256[:16]}… matches")
    return spec


def _check_configuration(root: Path, v: Verification, spec: Spec) -> Trial | None:
    """configuration.json names a point of the spec's search space: its Trial."""
    try:
        config = Configuration.from_dict(
            json.loads((root / "configuration.json").read_text(encoding="utf-8"))
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        v.failed("configuration", "configuration.json is not a configuration")
        return None
    if config.key not in {c.key for c in spec.configurations()}:
        v.failed("configuration", "not in the spec's configuration space")
        return None
    v.passed("configuration", "in the spec's space")
    return bind(spec, config)


def _check_parquet(root: Path, v: Verification, trial: Trial) -> None:
    """release.parquet (``--format parquet``) holds release.csv's records, typed."""
    labels = {name: tuple(c.labels) for name, c in trial.table.codecs}
    problem = parquet_problem(root, labels)
    if problem:
        v.failed("parquet", problem)
    else:
        v.passed("parquet", "release.parquet holds release.csv's records, labels as categories")


def _summary(ledger: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The release ledger's summary line (empty if absent)."""
    for entry in ledger or []:
        if entry.get("event") == "summary":
            return entry
    return {}


def _check_release(root: Path, v: Verification, trial: Trial,
                   ledger: list[dict[str, Any]] | None) -> None:
    """Row count, labels, synthetic constraints and min_count of release.csv."""
    spec, config, table = trial.spec, trial.configuration, trial.table
    frame = read_release_labels(root / "release.csv", table)  # labels as categories
    n = _summary(ledger).get("n_records")
    if n is None or len(frame) != int(n):
        v.failed("rows", "release.csv does not have the n records the ledger states")
    else:
        v.passed("rows", f"{len(frame):,} records")
    problem = n_problem(spec, ledger)
    if problem:
        v.failed("n", problem)
    else:
        v.passed("n", n_words(spec, len(frame)))
    try:
        codes = table.encode_labels(frame, narrow=True)
    except EncodingError as exc:
        v.failed("labels", str(exc))
        return
    v.passed("labels", "every label is in its column's bin set")
    rejected, by_rule = reject_counts(codes, spec.constraints.synthetic, semantics_for(table),
                                      spec.constraints.partial_bins)
    if rejected.any():
        rules = ", ".join(name for name, k in by_rule.items() if k)
        v.failed("constraints", f"{int(rejected.sum())} records break synthetic rule(s) {rules}")
    else:
        v.passed("constraints", f"all {len(spec.constraints.synthetic)} synthetic rules hold")
    if len(codes):
        _, counts = distinct_cells(codes)  # counts only: one sorted key array (4M rows)
        small = int(np.sum(counts < config.min_count))
    else:
        small = 0
    if small:
        v.failed("min_count", f"{small} distinct records appear fewer than "
                              f"{config.min_count} times")
    else:
        v.passed("min_count", f"every distinct record appears ≥ {config.min_count} times")


def _check_guarantee(root: Path, v: Verification, trial: Trial) -> None:
    """guarantee.json states what the configuration's family declares, and the datasheet and
    report show its label; a guarantee other than pure ε-DP over the dataset is flagged."""
    try:
        stated = json.loads((root / "guarantee.json").read_text(encoding="utf-8"))
        Guarantee.from_dict(stated)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
        v.failed("guarantee", "guarantee.json is not a guarantee")
        return
    from workbench.report.guarantee import record_loss_text

    declared = trial.guarantee
    problems = guarantee_problems(stated)  # fields vs kind vs label, naming the field
    expected = json.loads(json.dumps(declared.as_dict()))
    if stated != expected:
        problems.append(f"the bundle states {stated.get('label')!r} "
                        f"({stated.get('kind')}), its family declares {declared.label!r} "
                        f"({declared.kind}): {_differences(stated, expected)}")
    records = record_loss_text(declared)
    for name in ("README.md", "report.html"):
        text = (root / name).read_text(encoding="utf-8")
        if declared.label not in text and declared.label.replace("&", "&amp;") not in text:
            problems.append(f"{name} does not show the guarantee {declared.label!r}")
        if records and records not in text:
            problems.append(f"{name} does not state the per-record figure ({records})")
    numbers = _mcmc_diagnostics(root, problems) if declared.kind == MCMC_KIND else ""
    if problems:
        v.failed("guarantee", "; ".join(problems))
        return
    v.passed("guarantee", declared.label)
    if declared.kind == MCMC_KIND:
        v.flags.append(f"{declared.label}: the ε-DP proof covers an exact posterior draw, and "
                       f"this draw comes from a finite MCMC chain (strict false, "
                       f"proven_for_release false); {numbers} ({DIAGNOSTICS_FILE})")
    elif not declared.is_pure:
        v.flags.append(f"the released records are NOT ε-DP over the dataset: {declared.label}"
                       + ("" if declared.strict else " (not a worst-case guarantee)")
                       + (f"; {records}" if records else ""))


def _differences(stated: dict[str, Any], expected: dict[str, Any]) -> str:
    """The fields (and parameters) whose values differ, by name: 'field strict: …'."""
    out = []
    for key in sorted(set(stated) | set(expected)):
        a, b = stated.get(key), expected.get(key)
        if key == "parameters" and isinstance(a, dict) and isinstance(b, dict):
            out += [f"field parameters.{k}: {a.get(k)!r} stated, {b.get(k)!r} declared"
                    for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif a != b and (key in ("kind", "label") or not isinstance(a, str)):
            out.append(f"field {key}: {json.dumps(a, ensure_ascii=False)} stated, "
                       f"{json.dumps(b, ensure_ascii=False)} declared")
        elif a != b:
            out.append(f"field {key}: the text differs from the family's")
    return "; ".join(out)


def _mcmc_diagnostics(root: Path, problems: list[str]) -> str:
    """R̂ and ESS of an MCMC release from diagnostics.json, in words (a problem if absent)."""
    from workbench.report.guarantee import diagnostics_text

    try:
        found = json.loads((root / DIAGNOSTICS_FILE).read_text(encoding="utf-8"))
        values = [float(found[k]) for k in ("rhat_max", "ess_min")]
        text = diagnostics_text(found)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        problems.append(f"an MCMC release must carry R̂ and ESS in {DIAGNOSTICS_FILE}")
        return ""
    if not all(math.isfinite(x) for x in values):
        problems.append(f"{DIAGNOSTICS_FILE} holds no finite R̂ and ESS")
    return text


def _check_ledger(root: Path, v: Verification, spec: Spec | None) -> list[dict[str, Any]] | None:
    """The ledger's once-measurements and selection plan add up to ε_total, within budget.

    The accepted iteration's measurements are priced with parallel groups at their max
    (:func:`~workbench.privacy.records.charged_epsilon`).

    Sums come from the one budget plan (:class:`~workbench.privacy.budget_plan.BudgetPlan`):
    ε_total = f·ε₁ + ε₀ + Σ once; the run's charge leaves out once-measurements marked
    ``reused``; the cumulative ε is the earlier runs' plus the charge.
    """
    try:
        ledger = Ledger.read(root / "ledger.jsonl")
    except (OSError, ValueError, json.JSONDecodeError):
        v.failed("ledger", "ledger.jsonl is not readable")
        return None
    plans = [e for e in ledger if e.get("event") == "selection_plan"]
    once_lines = [e for e in ledger if e.get("event") == "measurement" and e.get("stage") == "once"
                  and not is_survey(e) and not cleaning_counts.is_cleaning(e)
                  and not is_n_estimate(e)]
    n_lines = [float(e["epsilon"]) for e in ledger if is_n_estimate(e)]
    cleaning = [float(e["epsilon"]) for e in ledger
                if e.get("event") == "measurement" and cleaning_counts.is_cleaning(e)]
    survey = [float(e["epsilon"]) for e in ledger
              if e.get("event") == "measurement" and is_survey(e)]
    loop = [e for e in ledger if e.get("event") == "measurement" and e.get("stage") == "loop"]
    summary = _summary(ledger)
    if len(plans) != 1 or not summary:
        v.failed("ledger", "needs exactly one selection plan and a summary line")
        return ledger
    reused = bool(once_lines) and all(e.get("reused") for e in once_lines)
    if any(e.get("reused") for e in once_lines) and not reused:
        v.failed("ledger", "once-measurements are partly reused, partly new")
        return ledger
    prior = float(summary.get("epsilon_earlier_runs", 0.0))
    plan = BudgetPlan.of_selection_line(
        plans[0], [float(e["epsilon"]) for e in once_lines], once_reused=reused, survey=survey,
        cleaning=cleaning, n=n_lines).with_prior(prior)
    stated = float(summary.get("epsilon_total", math.nan))
    problems = []
    if not math.isclose(float(plans[0]["epsilon_selection"]), plan.epsilon_selection,
                        abs_tol=_TOL):
        problems.append(f"the selection plan's cost is not {plan.loop_factor}ε₁ + ε₀")
    if charged_epsilon(loop) > plan.epsilon_per_iteration + _TOL:
        problems.append("the accepted iteration spent more than ε₁")
    if not math.isclose(plan.epsilon_total, stated, abs_tol=_TOL):
        problems.append(f"measurements add up to ε = {plan.epsilon_total:g}, the summary "
                        f"states {stated:g}")
    if spec is not None and not math.isclose(stated, spec.epsilon_total, abs_tol=_TOL):
        problems.append(f"stated ε_total {stated:g} differs from the spec's {spec.epsilon_total:g}")
    charged = summary.get("epsilon_charged")
    if charged is not None and not math.isclose(float(charged), plan.epsilon_charged,
                                                abs_tol=_TOL):
        problems.append(f"the run charged {plan.epsilon_charged:g}, the summary states "
                        f"{float(charged):g}")
    cumulative = summary.get("epsilon_cumulative")
    if cumulative is not None and not math.isclose(float(cumulative), plan.epsilon_cumulative,
                                                   abs_tol=_TOL):
        problems.append(f"earlier runs plus this run's charge make {plan.epsilon_cumulative:g}, "
                        f"the summary states {float(cumulative):g}")
    budgets = [float(e["total_budget"]) for e in ledger if e.get("event") == "accountant"]
    if budgets and plan.epsilon_cumulative > budgets[0] + _TOL:
        problems.append("the ε spent exceeds the accountant's budget")
    if problems:
        v.failed("ledger", "; ".join(problems))
    else:
        v.passed("ledger", f"ε_total = {stated:g} adds up and is within budget")
    return ledger
