"""Print the empirical privacy audit of every mechanism and of the selection loop (issue 13).

Each mechanism runs on worst-case replace-one neighbours D, D′ (``workbench.audits``) at the
documented Δ and at Δ/2 (half the noise scale); the table shows the 99.9% Clopper–Pearson
lower bound on the privacy loss for both. A mechanism passes when the bound at Δ is ≤ ε and
the Δ/2 run is flagged (bound > ε). The primitives are audited with OpenDP's own samplers, the
mechanisms above them with the seeded source (same distributions, checked in test_privacy).

The "float support" column (``workbench.audits.floats``, issue 24) is the check a frequency
audit cannot make: outputs of the row's noise primitive drawn under D (OpenDP's samplers, the
confidential path) that are impossible, bit for bit, under D′. A mechanism is post-processing
of its primitive, so its row shows its primitive's count. The last table adds the raw float
f + s·z(u) that smooth releases published before issue 24, as the check's negative control.

Run: python benchmarks/audit_mechanisms.py [--trials 20000] [--loop-trials 4000]
[--support-draws 2000]
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
    noiseless_check,
    primitive_scenarios,
    privbayes_mi_scenario,
    public_choice_scenario,
)
from workbench.audits.floats import SupportCheck, support_checks
from workbench.privacy.noise import OpenDPNoise

HEADER = (f"{'mechanism':<30} {'noise':<7} {'Δ':>7} {'ε':>5} {'shift/Δ':>8} "
          f"{'LB at Δ':>8} {'LB at Δ/2':>10} {'float support':>14}  verdict")


def verdict(at_delta_violates: bool, at_half_violates: bool) -> str:
    """'pass, Δ/2 flagged' when both hold; otherwise say what failed."""
    first = "VIOLATES at Δ" if at_delta_violates else "pass"
    second = "Δ/2 flagged" if at_half_violates else "Δ/2 NOT flagged"
    return f"{first}, {second}"


def line(row: AuditRow, noise: str, support: dict[str, SupportCheck]) -> str:
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
    for seed, build in enumerate((privbayes_mi_scenario, aim_score_scenario,
                                  public_choice_scenario), start=100):
        print(line(audit_scenario(build(), trials=args.trials, seed=seed), "seeded", support))
    from workbench.audits.n_policy import n_policy_scenarios  # issue 34: n_policy dp rows

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


def support_table(support: dict[str, SupportCheck]) -> None:
    """Each primitive's output set and the outputs under D impossible under D′."""
    print()
    print("Float support: outputs drawn under D (OpenDP's samplers) that are impossible, bit for "
          "bit, under D′")
    print(f"{'primitive':<18} {'output set (the same for every input)':<42} {'float support':>14}")
    for check in support.values():
        print(f"{check.name:<18} {check.support:<42} {check.cell():>14}")


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
