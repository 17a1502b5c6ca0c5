"""Empirical privacy audits of every mechanism (issue 13, must-show 5).

Every criterion kind, PrivBayes' mutual-information score, AIM's selection score and the
private-selection loop are run on worst-case replace-one neighbours of a tiny public design
(``workbench.audits``). Each must stay consistent with its ε at the documented Δ and be
flagged when run with half the noise scale (Δ/2): the first shows the sensitivity is not too
small for these neighbours, the second that the audit has the power to see a calibration bug.

These mechanisms sit above the noise primitives, so their audits use the SEEDED noise source
(``SeededNoise``, OpenDP's distributions from an explicitly seeded numpy Generator): that makes
each verdict reproducible and lets the audits draw 20 000 outputs per side in milliseconds.
OpenDP's own samplers are audited in ``tests/test_privacy.py``, where the seeded source is also
checked against them. Audits run at 99.9% confidence (Clopper–Pearson, Bonferroni).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.audits import (
    CRITERION_KINDS,
    VARIANTS,
    Call,
    Capture,
    ScaledNoise,
    Scenario,
    aim_score_scenario,
    audit_loop,
    audit_scenario,
    capture,
    criterion_scenario,
    exact_loss,
    neighbour_events,
    noiseless_check,
    privbayes_mi_scenario,
    public_choice_scenario,
    tree_score_scenario,
)
from workbench.privacy.noise import SeededNoise


def assert_audit(scn: Scenario, tightness: float = 1.0) -> None:
    """Consistent with ε at Δ, flagged at Δ/2, with neighbours that move f by ``tightness``·Δ."""
    row = audit_scenario(scn)
    assert scn.tightness == pytest.approx(tightness), scn.neighbours
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()
    # the events see most of the loss at Δ: the neighbours are worst cases, not easy ones
    assert row.at_delta.point_estimate > 0.6 * tightness * scn.d.epsilon, row.at_delta.summary()


def test_every_registered_criterion_kind_has_an_audit_case() -> None:
    from workbench.audits.criteria import audit_case
    from workbench.criteria import kinds
    from workbench.criteria.audit_case import AuditCase

    assert sorted(CRITERION_KINDS) == sorted(kinds.names())
    assert all(isinstance(audit_case(k), AuditCase) for k in kinds.names())


@pytest.mark.parametrize("kind", CRITERION_KINDS)
def test_criterion_audit(kind: str) -> None:
    """Each kind's release on its declared R and worst-case R′ (S fixed): ε-DP at Δ, caught at
    Δ/2, unless the kind's case says why Δ/2 cannot be caught (then its pair's reach is checked
    against the tightness it states)."""
    from workbench.audits.criteria import audit_case

    case = audit_case(kind)
    if case.noiseless:
        # computed on S alone, without noise and without ε: its value cannot depend on R,
        # so there is no privacy loss to audit; check exactly that.
        on_r, on_r_prime, measurements = noiseless_check(kind)
        assert on_r == on_r_prime and measurements == 0
        with pytest.raises(ValueError, match="without noise"):
            criterion_scenario(kind)
        return
    scn = criterion_scenario(kind)
    if case.unflaggable:
        assert scn.tightness == pytest.approx(case.tightness)
        assert not audit_scenario(scn).at_delta.violates
        return
    assert_audit(scn, tightness=case.tightness)


def test_a_kind_without_an_audit_case_is_named() -> None:
    """The base class refuses to make one up: a kind that declares no audit case cannot be
    made, and the error names the missing method."""
    from workbench.criteria.kinds.base import ShareKind

    class NoCase(ShareKind):
        name = "no_audit_case_kind"

        def exact(self, ev, criterion):
            return 0.0

    with pytest.raises(TypeError, match="audit_case"):
        NoCase()


def test_privbayes_mutual_information_score_audit() -> None:
    """GreedyBayes' noisy max over I(X; Π) with Lemma 1's Δ = h(1/n) (1 bit at n = 2)."""
    scn = privbayes_mi_scenario()
    assert scn.d.primitive == "noisy_max" and scn.d.sensitivity == pytest.approx(1.0)
    assert scn.d.values.tolist() == [0.0, 1.0] and scn.d_prime.values.tolist() == [1.0, 0.0]
    # from (0, 1) to (1, 0) permute-and-flip's loss is ln(2e^{ε/2} − 1) ≈ 0.83ε, not ε
    row = audit_scenario(scn)
    assert not row.at_delta.violates, row.at_delta.summary()
    assert row.at_half.violates, row.at_half.summary()
    assert row.at_delta.point_estimate == pytest.approx(math.log(2 * math.exp(0.5) - 1), abs=0.1)


def test_aim_selection_score_audit() -> None:
    """AIM's round-1 noisy max over w·(‖M(D) − M(p̂)‖₁ − E‖noise‖₁), Δ = 2·max w."""
    scn = aim_score_scenario()
    assert scn.d.primitive == "noisy_max" and scn.d.epsilon == pytest.approx(1.0)
    gap = scn.d_prime.values - scn.d.values
    assert scn.d.values[0] == pytest.approx(scn.d.values[1])  # a tie on D ...
    assert gap.tolist() == pytest.approx([2.0, -2.0])  # ... split by the full Δ on D′
    assert_audit(scn)


def test_structure_tree_edge_score_audit() -> None:
    """The tree's edge noisy max over ‖M_c(D) − n·q_a⊗q_b‖₁ − E‖noise‖₁, Δ = 2: a tie on D
    split by the full Δ on D′; flagged at Δ/2."""
    scn = tree_score_scenario()
    assert scn.d.primitive == "noisy_max" and scn.d.epsilon == pytest.approx(1.0)
    assert scn.d.sensitivity == pytest.approx(2.0)
    assert scn.d.values[0] == pytest.approx(scn.d.values[1])
    assert (scn.d_prime.values - scn.d.values).tolist() == pytest.approx([-2.0, 2.0])
    assert_audit(scn)


def test_public_measurement_choice_audit() -> None:
    """The 'joint' option's Laplace release of a clique's L1 distance to the raked proxy table,
    Δ = 2: from 0 on D to 2 on D′ (one record moves between cells at their public counts)."""
    scn = public_choice_scenario()
    assert scn.d.primitive == "laplace" and scn.d.epsilon == pytest.approx(1.0)
    assert scn.d.values.tolist() == [0.0] and scn.d_prime.values.tolist() == [2.0]
    assert_audit(scn)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_selection_loop_audit(variant) -> None:
    """The whole loop on D vs D′: outputs (candidate or ⊥) within e^{ε₁} for T = 1 and within
    e^{2ε₁+ε₀} otherwise; the same loop with half the noise scale is flagged."""
    assert exact_loss(variant) <= variant.claimed + 1e-12  # Thm. 3 holds exactly for the toy
    assert exact_loss(variant, 0.5) > variant.claimed  # and the bug really breaks it
    audit = audit_loop(variant)
    assert not audit.at_delta.violates, audit.at_delta.summary()
    assert audit.at_half.violates, audit.at_half.summary()
    assert audit.at_delta.epsilon_lower_bound <= exact_loss(variant)


def test_uncapped_loop_loses_more_than_one_iteration() -> None:
    """Thm. 3's factor 2 is needed: the uncapped loop's exact loss exceeds ε₁ for the toy."""
    single, uncapped = VARIANTS[0], VARIANTS[1]
    assert exact_loss(uncapped) > 1.5 * single.claimed > exact_loss(single)


def test_scenario_refuses_a_sensitivity_read_from_the_data() -> None:
    a = Call("laplace", np.array([0.0]), 1.0, 1.0)
    with pytest.raises(ValueError, match="different"):
        Scenario("t", "m", "n", 1.0, a, Call("laplace", np.array([1.0]), 2.0, 1.0))
    with pytest.raises(ValueError, match="documented"):
        Scenario("t", "m", "n", 0.5, a, Call("laplace", np.array([1.0]), 1.0, 1.0))


def test_capture_and_scaled_noise() -> None:
    def run(ctx) -> None:
        ctx.laplace([3.0, 4.0], sensitivity=2.0, epsilon=0.5, purpose="a")
        counts = ctx.discrete_laplace([5, 0, 2], sensitivity=2, epsilon=1.0, purpose="b").value
        assert counts.tolist() == [3, 2, 2]  # the fixed public history: the total spread evenly
        assert ctx.exponential([0.0, 9.0], sensitivity=1, epsilon=1, purpose="c").value == 1

    calls = capture(run)
    assert [(c.primitive, c.sensitivity, c.epsilon) for c in calls] == [
        ("laplace", 2.0, 0.5), ("discrete_laplace", 2.0, 1.0), ("noisy_max", 1.0, 1.0)]
    assert calls[0].values.tolist() == [3.0, 4.0]
    half = ScaledNoise(SeededNoise(1), 0.5).laplace_vector(np.zeros(50_000), 2.0, 0.5)
    assert half.std() == pytest.approx(math.sqrt(2) * 2.0, rel=0.03)  # scale 4 → 2
    assert isinstance(Capture(), Capture)


def test_neighbour_events_point_away_from_each_dataset() -> None:
    d = Call("discrete_laplace", np.array([5.0, 2.0, 7.0]), 2.0, 1.0)
    d_prime = Call("discrete_laplace", np.array([4.0, 2.0, 8.0]), 2.0, 1.0)
    labels = [e.label for e in neighbour_events(d, d_prime, steps=2)]
    assert labels == ["x[0] <= 4 & x[2] >= 8", "x[0] >= 5 & x[2] <= 7",
                      "x[0] <= 3 & x[2] >= 9", "x[0] >= 6 & x[2] <= 6"]
    with pytest.raises(ValueError, match="same value"):
        neighbour_events(d, d)


# --- smooth-sensitivity releases (issue 16): data-dependent scales, audited in audits.smooth ---
def test_smooth_cauchy_primitive_audit() -> None:
    """NRS's worst case (f moves by S(D), S(D′) = e^β·S(D)) at ε = 1, γ = 4: within ε at the
    calibrated scale (exact loss 0.85ε), caught at half of it (exact loss 1.27ε)."""
    from workbench.audits.smooth import audit_smooth, exact_loss, primitive_scenario

    scn = primitive_scenario()
    assert scn.d_prime.scale / scn.d.scale == pytest.approx(math.exp(1 / 6))
    assert exact_loss(scn) <= scn.epsilon < exact_loss(scn, 0.5)
    full, half = audit_smooth(scn), audit_smooth(scn, 0.5)
    assert not full.violates, full.summary()
    assert half.violates, half.summary()
    assert full.point_estimate > 0.6 * scn.epsilon


def test_knn_imputed_mean_smooth_release_audit() -> None:
    """Removing a donor of 20 donees: the mean falls by exactly S(D) and N̂ doubles. Within ε at
    the calibrated scale; at half scale the exact loss is still < ε for this pair and for the
    NRS worst case at this ε (the calibration splits ε between shift and scale), so the power
    is shown at a quarter of the scale."""
    from workbench.audits.smooth import audit_smooth, exact_loss, knn_scenario
    from workbench.privacy import smooth

    scn = knn_scenario()
    cal = smooth.calibrate(scn.epsilon, scn.d.gamma)
    assert scn.d.value - scn.d_prime.value == pytest.approx(scn.d.scale * cal.alpha)  # = S(D)
    assert scn.d_prime.scale / scn.d.scale == pytest.approx((10 + 40 * 10) / (10 + 20 * 10))
    assert exact_loss(scn) <= exact_loss(scn, 0.5) < scn.epsilon < exact_loss(scn, 0.25)
    full, quarter = audit_smooth(scn), audit_smooth(scn, 0.25)
    assert not full.violates, full.summary()
    assert quarter.violates, quarter.summary()
    assert not audit_smooth(scn, 0.5).violates  # consistent with the exact loss above


def test_float_support_of_every_primitive() -> None:
    """OpenDP's primitives are cited from the installed docstrings (not a dtype check); no
    output of the snapped generalized Cauchy under D is impossible under D′ (bit for bit); the
    raw float f + s·z(u) published before issue 24 fails the same check (its negative control:
    ~2% of issue 24's pair)."""
    from workbench.audits.floats import OPENDP, SUPPORT, support_checks

    checks = support_checks(draws=600)
    assert set(checks) == set(SUPPORT) | set(OPENDP) == {
        "laplace", "discrete_laplace", "noisy_max", "laplace_threshold", "smooth_cauchy",
        "raw_float_cauchy"}
    for name, check in checks.items():
        if name == "raw_float_cauchy":
            assert check.unreachable > 0 and check.cell().startswith("FAILS")
        elif name in OPENDP:
            assert check.ok and check.cell() == "OpenDP, cited", check
        else:
            assert check.ok and check.draws >= 600, check


def test_an_opendp_citation_that_the_docstring_no_longer_says_is_stale(monkeypatch) -> None:
    """The citation is checked against the installed OpenDP: a changed quote is flagged."""
    import dataclasses

    from workbench.audits import floats

    changed = dataclasses.replace(floats.OPENDP["laplace"], quote="All sampling is inexact.")
    monkeypatch.setitem(floats.OPENDP, "laplace", changed)
    cites = floats.opendp_citations()
    assert not cites["laplace"].ok and cites["laplace"].cell() == "CITE STALE"
    assert cites["noisy_max"].ok
