"""The plausible-deniability family's splits of R, and why its structure may be public
(issue 28).

**Why a public structure.** With the noisy-entropy CFS on D_T, Adult-sized data learns nothing:
each of the m + m(m − 1)/2 entropies gets Laplace noise of scale N_H·Δ_H(n_T)/ε (σ ≈ 0.23 bits
at n_T ≈ 10.8k), which swamps the correlations, and the release's TSTR accuracy falls to the
majority share. When a PUBLIC proxy of the same population exists (the workbench's premise),
the same CFS search runs on the proxy's exact entropies instead
(:func:`~workbench.generators.plausible_deniability.structure.public_structure`). The network
is then a function of public data only: it spends no ε and reads no record of R, so D_T is
empty (``split_structure`` must be unset).

*Where D_T's share goes.* Theorem 1's per-record (ε, δ) = (ε₀ + ln(1 + γ/t), e^{−ε₀(k − t)})
is a function of k, γ, ε₀ and t only, not of the split, and the model remains ε_gen-DP on
D_P alone and independent of the seeds D_S, which is what Theorem 1 assumes of it (D_P and
D_S are disjoint; the proxy is public, so whatever it holds is public already). Every record
of R is in exactly one part: in D_P it is covered by the model's ε_gen-DP (as a record of D_T
was), in D_S by Theorem 1. So any split keeps every record's bound, and the split is chosen
for utility. The parameters are the noise-limited part: each of the m count tables carries
discrete Laplace noise of scale m·Δ/ε_gen (20 on Adult at ε_gen = 1 under replace-one)
whatever |D_P|, so every conditional's relative error falls as 1/|D_P|; the seeds only need
to be numerous enough for candidates to find k plausible seeds. Hence D_T's share goes to the
parameters and D_S keeps its share: unset, ``split_parameters`` is 0.25 under ``dp`` and 0.5
under ``public`` (the dp default's D_T 0.25 joins D_P; D_S stays 0.5), and the Adult example
goes from D_T 0.2 / D_P 0.4 / D_S 0.4 to D_P 0.6 / D_S 0.4. Keeping D_S's share keeps |D_S|
(the pool Test 2 counts plausible seeds in) and the expected number of released records a
seed starts (n/|D_S|), so nothing on the per-record side grows. Measured by
``benchmarks/plausible_deniability.py --structure`` on an unseen Adult split (R = 5,426
records, 5 seeds): TSTR gain over the majority class +6 points (logistic) and +5 (tree) with
D_T's share in D_P, +4.6 / +2.5 with it in D_S, about −1 / −2 with the dp structure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.generators.public_structure import source_problems

#: (D_T, D_P) shares of R when the spec leaves them unset, per ``structure``: with a public
#: structure D_T's default share joins D_P and D_S keeps its share (see above).
DEFAULT_SHARES = {"dp": (0.25, 0.25), "public": (0.0, 0.5)}


def shares(params: Mapping[str, Any]) -> tuple[float, float]:
    """(D_T, D_P) shares of R, the unset ones at their defaults for the structure.

    >>> shares({"structure": "public", "split_parameters": 0.6}), shares({})
    ((0.0, 0.6), (0.25, 0.25))
    """
    default_t, default_p = DEFAULT_SHARES.get(params.get("structure", "dp"),
                                              DEFAULT_SHARES["dp"])
    f_t, f_p = params.get("split_structure"), params.get("split_parameters")
    return (default_t if f_t is None else float(f_t),
            default_p if f_p is None else float(f_p))


def structure_problems(params: Mapping[str, Any]) -> list[str]:
    """What the structure's source and the splits rule out together (the spec validator reports
    them through the family's ``bound_problems``, ``make_generator`` through its
    ``check_combination``).

    >>> structure_problems({"structure": "public", "split_structure": 0.2,
    ...                     "structure_proxy": "p.csv", "structure_proxy_sha256": "0" * 64}
    ...                    )[0][:55]
    'split_structure must be unset with structure: public (t'
    """
    public = params.get("structure", "dp") == "public"
    out = source_problems(params)
    if public and params.get("split_structure") is not None:
        out.append("split_structure must be unset with structure: public (the structure reads "
                   "no records: D_T is empty)")
    f_t, f_p = shares(params)
    if f_t + f_p >= 1:
        out.append("split_structure + split_parameters must be < 1 (D_S keeps the rest)")
    return out
