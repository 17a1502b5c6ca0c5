"""Print the empirical privacy audit of every mechanism and of the selection loop (issue 13).

Each mechanism runs on worst-case replace-one neighbours D, D′ (``workbench.audits``) at the
documented Δ and at Δ/2 (half the noise scale); the table shows the 99.9% Clopper–Pearson
lower bound on the privacy loss for both. A mechanism passes when the bound at Δ is ≤ ε and
the Δ/2 run is flagged (bound > ε). The primitives are audited with OpenDP's own samplers, the
mechanisms above them with the seeded source (same distributions, checked in test_privacy).

Issue 34 adds every other mechanism that touches confidential data: the pilot's tables and the
cleaning counts (read from raw files through the engine), the perturbed histogram and the
workload measurements (composed tables, ``audits.harness.joint_scenario``), the missing-value
partial marginal, the survey pipeline (binning choice ε₁, joint table ε₂, weighted count ε₃),
plausible deniability (Test 2, and Theorem 1's per-record (ε, δ) through the family's own
sampling), the pilot's label selection (OpenDP's thresholded partition selection, audited for
(ε, δ): P̲ − δ in every bound), and the exact posterior draw (Censor_uw on the beta model and on
the normal model's fast clamped path). Where a pair cannot reach the bound, the row says why and
shows the power at a smaller scale.

The "float support" column (``workbench.audits.floats``, issue 24) is the check a frequency
audit cannot make. For OpenDP's primitives it is a citation (the installed docstring must still
say what is quoted; the table at the end shows it), for the workbench's own snapped generalized
Cauchy a bit-for-bit count of outputs drawn under D that are impossible under D′. A mechanism
is post-processing of its primitive, so its row shows its primitive's entry. The raw float
f + s·z(u) that smooth releases published before issue 24 is the check's negative control.

Run: python benchmarks/audit_mechanisms.py [--trials 20000] [--loop-trials 4000]
[--support-draws 2000] [--pd-trials 20000] [--posterior-trials 300000]
"""

from __future__ import annotations

import argparse
import time

from workbench.audits import (
    CRITERION_KINDS,
    NOISELESS_KINDS,
    VARIANTS,
    AuditRow,
    aim_score_scenario,
    audit_loop,
    audit_scenario,
    criterion_scenario,
    exact_loss,
    junction_score_scenario,
    noiseless_check,
    primitive_scenarios,
    privbayes_mi_scenario,
    public_choice_scenario,
    tree_score_scenario,
    variant_cases,
    variant_scenario,
)
from workbench.audits.floats import OpenDPCitation, SupportCheck, support_checks
from workbench.privacy.noise import OpenDPNoise

HEADER = (f"{'mechanism':<30} {'noise':<7} {'Δ':>7} {'ε':>5} {'shift/Δ':>8} "
          f"{'LB at Δ':>8} {'LB at Δ/2':>10} {'float support':>14}  verdict")


def verdict(at_delta_violates: bool, at_half_violates: bool) -> str:
    """'pass, Δ/2 flagged' when both hold; otherwise say what failed."""
    first = "VIOLATES at Δ" if at_delta_violates else "pass"
    second = "Δ/2 flagged" if at_half_violates else "Δ/2 NOT flagged"
    return f"{first}, {second}"


Support = dict[str, SupportCheck | OpenDPCitation]


def line(row: AuditRow, noise: str, support: Support) -> str:
    """One table row; the float support is that of the row's primitive."""
    s = row.scenario
    return (f"{s.name:<30} {noise:<7} {s.d.sensitivity:>7.4g} {s.d.epsilon:>5.3g} "
            f"{s.tightness:>8.2f} {row.at_delta.epsilon_lower_bound:>8.3f} "
            f"{row.at_half.epsilon_lower_bound:>10.3f} "
            f"{support[s.d.primitive].cell():>14}  "
            f"{verdict(row.at_delta.violates, row.at_half.violates)}")


def main() -> None:
    """Audit everything and print the two tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=20_000, help="draws per dataset and scale")
    parser.add_argument("--loop-trials", type=int, default=4_000, help="loops per dataset")
    parser.add_argument("--support-draws", type=int, default=2_000,
                        help="draws per primitive for the float-support check")
    parser.add_argument("--pd-trials", type=int, default=20_000,
                        help="single PD attempts per dataset and scale (Theorem 1)")
    parser.add_argument("--posterior-trials", type=int, default=300_000,
                        help="exact posterior draws per dataset and width")
    args = parser.parse_args()
    start = time.perf_counter()
    support = support_checks(args.support_draws)
    print(f"Mechanisms: replace-one worst-case neighbours, {args.trials} draws per dataset and "
          "scale, 99.9% Clopper–Pearson (Bonferroni over events)")
    print(HEADER)
    for scn in primitive_scenarios():
        row = audit_scenario(scn, trials=args.trials, noise=lambda _: OpenDPNoise())
        print(line(row, "opendp", support))
    for seed, kind in enumerate(CRITERION_KINDS):
        if kind in NOISELESS_KINDS:
            on_r, on_r_prime, measured = noiseless_check(kind)
            print(f"{kind:<30} {'none':<7} {'—':>7} {'0':>5} {'—':>8} {'—':>8} {'—':>10} "
                  f"{'—':>14}  "
                  f"S only, noiseless: value {on_r:g} on R and {on_r_prime:g} on R′, "
                  f"{measured} measurements")
            continue
        row = audit_scenario(criterion_scenario(kind), trials=args.trials, seed=seed)
        print(line(row, "seeded", support))
    for seed, name in enumerate(variant_cases(), start=200):  # issue 37: release options
        row = audit_scenario(variant_scenario(name), trials=args.trials, seed=seed)
        print(line(row, "seeded", support))
    for seed, build in enumerate((privbayes_mi_scenario, aim_score_scenario,
                                  public_choice_scenario, tree_score_scenario,
                                  junction_score_scenario), start=100):
        print(line(audit_scenario(build(), trials=args.trials, seed=seed), "seeded", support))
    release_rows(args.trials, support)
    plausible_table(args.pd_trials, support)
    posterior_table(args.posterior_trials)
    from workbench.audits.n_policy import n_policy_scenarios  # issue 34: n_policy dp rows

    print()
    print(f"n_policy dp (issue 34): n̂ on n vs n − 1, and each kind with a dp bound on add- and "
          f"remove-one neighbours at fixed S and n̂, {args.trials} draws per dataset and scale")
    print(HEADER)
    for seed, scn in enumerate(n_policy_scenarios(), start=200):
        loose = ("  (loose by design: add/remove moves it by Δ/2; replace-one reaches Δ, the "
                 "kind's own row)" if scn.tightness < 0.99 else "")
        print(line(audit_scenario(scn, trials=args.trials, seed=seed), "seeded", support)
              + loose)
    smooth_table(support["smooth_cauchy"])
    support_table(support)
    mid = time.perf_counter()
    print()
    print(f"Selection loop: toy count generator, ε₁ = 0.5, {args.loop_trials} loops per dataset "
          "and scale, outputs (candidate or ⊥) on D vs D′")
    print(f"{'variant':<9} {'T':>4} {'γ':>4} {'ε₀':>4} {'claimed ε':>9} {'exact at Δ':>10} "
          f"{'LB at Δ':>8} {'exact at Δ/2':>12} {'LB at Δ/2':>10}  verdict")
    for seed, variant in enumerate(VARIANTS):
        audit = audit_loop(variant, trials=args.loop_trials, seed=seed)
        cap = "∞" if variant.max_iterations is None else str(variant.max_iterations)
        print(f"{variant.name:<9} {cap:>4} {variant.gamma:>4g} {variant.epsilon_0:>4g} "
              f"{variant.claimed:>9.3g} {exact_loss(variant):>10.3f} "
              f"{audit.at_delta.epsilon_lower_bound:>8.3f} {exact_loss(variant, 0.5):>12.3f} "
              f"{audit.at_half.epsilon_lower_bound:>10.3f}  "
              f"{verdict(audit.at_delta.violates, audit.at_half.violates)}")
    end = time.perf_counter()
    print(f"\ntime: mechanisms {mid - start:.1f} s, loop {end - mid:.1f} s "
          "(shared 2-core machine; re-measure on a quiet one)")


def support_table(support: Support) -> None:
    """OpenDP's primitives by citation; the own samplers' outputs under D impossible under D′."""
    print()
    print("Float support: OpenDP's primitives by their documented construction (the installed "
          "docstring must say what is quoted); the workbench's own samplers bit for bit "
          "(outputs drawn under D with CSPRNG bits that are impossible under D′)")
    print(f"{'primitive':<18} {'float support':>14}  evidence")
    for check in support.values():
        evidence = check.support() if isinstance(check, OpenDPCitation) else (
            f"output set: {check.support}")
        print(f"{check.name:<18} {check.cell():>14}  {evidence}")


def custom(name: str, noise: str, delta: str, eps: float, tight: str, at_delta: float,
           at_half: float, support: str, words: str) -> str:
    """A row whose statistics do not come from one harness scenario."""
    return (f"{name:<30} {noise:<7} {delta:>7} {eps:>5.3g} {tight:>8} {at_delta:>8.3f} "
            f"{at_half:>10.3f} {support:>14}  {words}")


def release_rows(trials: int, support: Support) -> None:
    """Releases made before or around the loop: pilot, cleaning, histograms, workload,
    partial marginal, survey pipeline."""
    from workbench.audits.missing import partial_marginal_scenario
    from workbench.audits.pilot import (
        cleaning_scenario,
        discovery_scenario,
        label_selection_scenario,
        pilot_scenario,
    )
    from workbench.audits.release_mechanisms import (
        perturbed_histogram_scenario,
        workload_scenario,
    )
    from workbench.audits.survey import (
        audit_binning,
        audit_weighted_count,
        binning_exact_loss,
        binning_scenario,
        sliding_epsilon,
        table_scenario,
        weighted_count_calls,
        weighted_count_reach,
    )

    print()
    print(f"Releases around the loop (issue 34): replace-one worst cases, {trials} draws per "
          "dataset and scale; Δ of a composed row = ΣΔ of its tables at Σε")
    print(HEADER)
    builds = (pilot_scenario, cleaning_scenario, perturbed_histogram_scenario, workload_scenario,
              partial_marginal_scenario, table_scenario, discovery_scenario,
              label_selection_scenario)
    for seed, build in enumerate(builds, start=200):
        row = audit_scenario(build(), trials=trials, seed=seed)
        at = f" at δ = {row.at_delta.delta:g}" if row.at_delta.delta else ""
        print(line(row, "seeded", support) + at)
    scn = binning_scenario()
    full, half, quarter = audit_binning(trials=trials, seed=210)
    first = "VIOLATES at Δ" if full.violates else "pass"
    second = "Δ/2 flagged" if half.violates else (
        "Δ/2 not flaggable (each score moves by the add/remove Δ = Δ/2; exact "
        f"{binning_exact_loss(0.5):.3g} = ε at Δ/2)")
    fourth = "flagged" if quarter.violates else "NOT flagged"
    words = f"{first}, {second}, Δ/4 {fourth} (LB {quarter.epsilon_lower_bound:.3f})"
    print(custom(scn.name, "seeded", f"{scn.d.sensitivity:g}", scn.d.epsilon,
                 f"{scn.tightness:.2f}", full.epsilon_lower_bound, half.epsilon_lower_bound,
                 support["noisy_max"].cell(), words))
    at_ss, at_half = audit_weighted_count(trials=trials, seed=211)
    calls = weighted_count_calls()
    eps = sliding_epsilon(calls)
    print(custom("survey weighted count (ε₃)", "seeded", "SS_β", eps,
                 f"{weighted_count_reach(calls):.2f}",
                 at_ss.epsilon_lower_bound, at_half.epsilon_lower_bound,
                 support["smooth_cauchy"].cell(),
                 verdict(at_ss.violates, at_half.violates) + " (ε: the shift's part, "
                 "audits.survey.sliding_epsilon)"))


def plausible_table(trials: int, support: Support) -> None:
    """Test 2 on k′ vs k′ − 1, and Theorem 1's per-record (ε, δ) through ``sample``."""
    from workbench.audits import plausible as pd_audit

    print()
    print(f"Plausible deniability (k {pd_audit.K}, t {pd_audit.T}, γ {pd_audit.GAMMA:g}, "
          f"ε₀ {pd_audit.EPSILON_0:g}, ω 1; one seed of D_S replaced): Test 2 on "
          f"{trials} candidates, Theorem 1 on {trials} single attempts per dataset and scale")
    print(HEADER)
    counts = pd_audit.plausible_counts()
    full, half = (pd_audit.test2_audit(f, trials=trials) for f in (1.0, 0.5))
    print(custom("PD Test 2 (k′ ≥ k + L)", "seeded", "1", pd_audit.EPSILON_0, "1.00",
                 full.epsilon_lower_bound, half.epsilon_lower_bound,
                 support["discrete_laplace"].cell(),
                 verdict(full.violates, half.violates) + f" (k′ = {counts[0]} vs {counts[1]})"))
    rec, rec_half = (pd_audit.theorem1_audit(f, trials=trials) for f in (1.0, 0.5))
    seed_factor = pd_audit.K / (pd_audit.K - 1)
    print(custom("PD Theorem 1 (per record)", "seeded", "—", rec.epsilon, "—",
                 rec.epsilon_lower_bound, rec_half.epsilon_lower_bound,
                 support["discrete_laplace"].cell(),
                 verdict(rec.violates, rec_half.violates) + f" at δ = {rec.delta:.2g}; exact "
                 f"{rec.exact:.3f} < claim: seed factor k/(k−1) = {seed_factor:.3g} vs "
                 f"1 + γ/t = {1 + pd_audit.GAMMA / pd_audit.T:.3g} (equal generation "
                 "probabilities at fixed ω)"))


def widths(at_width: bool, at_double: bool) -> str:
    """The posterior rows' verdict: the clamp width plays the role of Δ."""
    first = "VIOLATES at the width" if at_width else "pass at the width"
    return f"{first}, 2×width {'flagged' if at_double else 'NOT flagged'}"


def posterior_table(trials: int) -> None:
    """One exact posterior draw (grid inverse CDF through ``posterior_draw``) at the clamp
    width and at twice it."""
    from workbench.audits.posterior import censor_uw_audit, normal_exact_loss, normal_fast_audit

    print()
    print(f"Posterior draw (Censor_uw, ε = 2Δ = 2, replace-one clamp), exact draws on a θ grid, "
          f"{trials} per dataset and width, 99% Clopper–Pearson")
    print(f"{'mechanism':<36} {'LB at width':>11} {'LB at 2×width':>13}  verdict")
    beta = [censor_uw_audit(f, trials=trials) for f in (1.0, 2.0)]
    print(f"{'censor_uw, beta model':<36} {beta[0].epsilon_lower_bound:>11.3f} "
          f"{beta[1].epsilon_lower_bound:>13.3f}  {widths(beta[0].violates, beta[1].violates)}")
    normal = [normal_fast_audit(f, trials=trials) for f in (1.0, 2.0)]
    print(f"{'censor_uw, normal model (fast path)':<36} {normal[0].epsilon_lower_bound:>11.3f} "
          f"{normal[1].epsilon_lower_bound:>13.3f}  "
          f"{widths(normal[0].violates, normal[1].violates)} (loose pair: exact "
          f"{normal_exact_loss(1.0):.3f} at the width, {normal_exact_loss(2.0):.3f} at 2×; the "
          "record's term tops the clamp only in a strip of μ ± a few σ)")


def smooth_table(support: SupportCheck) -> None:
    """Smooth-sensitivity releases: data-dependent scales, audited at 1, ½ and ¼ of them."""
    from workbench.audits.smooth import (
        audit_smooth,
        knn_scenario,
        primitive_scenario,
    )
    from workbench.audits.smooth import exact_loss as smooth_loss

    print()
    print("Smooth-sensitivity releases (generalized Cauchy snapped to a public grid, scale S(D)/α "
          "differs on D and D′; exact = over the grid), "
          "seeded noise, 200000 draws per dataset and scale")
    print(f"{'mechanism':<36} {'ε':>6} " + " ".join(
        f"{'exact×' + f:>9} {'LB×' + f:>7}" for f in ("1", "½", "¼"))
          + f" {'float support':>14}  verdict")
    for scn in (primitive_scenario(), knn_scenario()):
        cells, flags = [], []
        for factor in (1.0, 0.5, 0.25):
            audit = audit_smooth(scn, factor)
            flags.append(audit.violates)
            cells.append(f"{smooth_loss(scn, factor):>9.3f} {audit.epsilon_lower_bound:>7.3f}")
        first = "VIOLATES at S" if flags[0] else "pass at S"
        caught = "S/2 flagged" if flags[1] else ("S/2 not flaggable (exact < ε), S/4 flagged"
                                                if flags[2] else "NOT flagged")
        print(f"{scn.name:<36} {scn.epsilon:>6.3g} {' '.join(cells)} {support.cell():>14}  "
              f"{first}, {caught}")


if __name__ == "__main__":
    main()
