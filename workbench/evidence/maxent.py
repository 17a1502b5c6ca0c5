"""The maximum-entropy distribution consistent with a FACTS file's list form, fitted with mbi.

**Atoms.** Each spec column is cut into atoms: the declared domain of a categorical or
ordinal column; for an integer or continuous column, the bins of its finest 1-way shares fact
(they must cover the column's declared bounds); plus one atom for a missing value when the
column's policy admits missing values. Every other fact's bins must be unions of atoms.
Within a bin the entropy is largest for the uniform spread (or, with a mean fact, the
exponential tilt, :mod:`workbench.evidence.draw`), so the discrete fit over atoms is the whole
problem.

**Constraints** (all linear in the joint distribution μ over atoms):

* a shares fact over columns C, published among the rows whose columns C are all observed:
  G_g(μ) − s_g·S(μ) = 0, where G_g sums the observed atoms of group g and S = Σ_g G_g;
* a missing rate m: μ(missing) − m·n = 0 (a column that may be missing but has no
  missing-rate fact gets m = 0, and the build says so).

**Fit.** mbi's ``estimation.mirror_descent`` (McKenna et al. 2019) minimises
Σ‖Q_c μ_c − y_c‖²/(2σ_c²) over graphical models whose potentials live on the facts' cliques,
from zero potentials. The optimum of such a model that meets every constraint is the
maximum-entropy distribution meeting them (the exponential-family form plus the moment
constraints characterise the I-projection of the uniform distribution). σ_c is the fact's
rounding in counts, so every gap is weighed in units of its own rounding. Rounded numbers
may be slightly inconsistent with each other (a 1-way share against the margin of a rounded
2-way table); when a fact then ends outside its rounding interval a second pass, warm-started,
minimises only the excess over each interval (a hinge), which leaves facts already inside
their interval where they are. No noise is added anywhere: the facts are public.

``generators.mbi_descent`` (compiled once per shape, plain marginals) is not used: these
constraints need mbi's linear queries, and a one-off public fit needs no compiled speed.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.evidence.fact_list import Axis, Fact, FactsError
from workbench.transform import Domain

if TYPE_CHECKING:
    from workbench.transform import ColumnSpec

#: Mirror-descent steps of the first pass (published values) and of the hinge pass.
ITERS = 1500
HINGE_ITERS = 1500


def value_key(v: Any) -> Any:
    """Compare values across JSON and the spec: numbers as floats, anything else as text."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return str(v)


@dataclass(frozen=True)
class ColumnAtoms:
    """One spec column cut into atoms: its values or bins, and a last atom for missing."""

    spec: ColumnSpec
    values: tuple[Any, ...] | None
    bins: tuple[tuple[float, float], ...] | None
    has_missing: bool

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def observed(self) -> int:
        """Atoms of observed values (all but the missing atom)."""
        return len(self.values if self.values is not None else self.bins or ())

    @property
    def size(self) -> int:
        return self.observed + int(self.has_missing)

    def groups_of(self, axis: Axis, where: str) -> np.ndarray:
        """For each observed atom, the index of the axis group holding it."""
        if self.values is not None:
            if axis.values is None:
                raise FactsError(f"{where}: column {self.name!r} is {self.spec.type}: list its "
                                 "'values', not bins")
            keys = [value_key(v) for v in axis.values]
            own = [value_key(v) for v in self.values]
            if sorted(map(json.dumps, keys)) != sorted(map(json.dumps, own)):
                raise FactsError(f"{where}: the values of column {self.name!r} must be exactly "
                                 "its declared domain")
            return np.asarray([keys.index(k) for k in own], dtype=np.int64)
        if axis.bins is None:
            raise FactsError(f"{where}: column {self.name!r} is {self.spec.type}: give 'bins'")
        lows = [b[0] for b in self.bins or ()]
        highs = [b[1] for b in self.bins or ()]
        out = np.full(self.observed, -1, dtype=np.int64)
        for g, (lo, hi) in enumerate(axis.bins):
            first = lows.index(lo) if lo in lows else -1
            # a singleton top atom [5, 5] shares its high with the atom before it ([4, 5]):
            # a bin ends at the first atom from ``first`` ending at hi, the axis' last (closed)
            # bin at the last such atom
            ends = [j for j in range(max(first, 0), len(highs)) if highs[j] == hi]
            last = (ends[-1] if g == len(axis.bins) - 1 else ends[0]) if ends else -1
            if first < 0 or last < 0:
                raise FactsError(f"{where}: bin [{lo:g}, {hi:g}] of column {self.name!r} is "
                                 "not a union of the bins of its finest 1-way fact")
            out[first:last + 1] = g
        if (out < 0).any():
            raise FactsError(f"{where}: the bins of column {self.name!r} must cover its bounds")
        return out


@dataclass(frozen=True)
class Constraint:
    """One fact as a linear constraint on the marginal over its clique."""

    fact: Fact
    clique: tuple[str, ...]
    #: per axis, a (atoms of the column, groups) 0/1 matrix; the missing atom's row is 0
    onehots: tuple[np.ndarray, ...] = ()
    rate: float | None = None  # a missing rate (its clique is the one column)

    def grouped(self, mu: Any) -> Any:
        """G: the marginal summed into the fact's groups, observed rows only (numpy or JAX)."""
        out = mu
        for k, onehot in enumerate(self.onehots):
            out = _xp(mu).moveaxis(_xp(mu).tensordot(out, onehot, axes=([k], [0])), -1, k)
        return out

    def gap(self, mu: Any, total: float) -> tuple[Any, Any]:
        """(difference, allowed difference) in counts; the fact holds when |diff| ≤ allowed."""
        xp = _xp(mu)
        half = 0.5 * self.fact.share_rounding
        if self.rate is not None:
            return xp.reshape(mu[-1] - self.rate * total, (1,)), half * total * xp.ones(1)
        g = self.grouped(mu).ravel()
        s = g.sum()
        return g - xp.asarray(self.fact.shares) * s, half * s * xp.ones_like(g)

    def value(self, mu: Any, total: float) -> np.ndarray:
        """The fact's numbers under μ: shares per cell, or the missing rate."""
        mu = np.asarray(mu, dtype=np.float64)
        if self.rate is not None:
            return np.asarray([mu[-1] / total])
        g = self.grouped(mu).ravel()
        return g / max(float(g.sum()), 1e-300)


def _xp(a: Any) -> Any:
    """numpy for numpy arrays, jax.numpy for traced JAX arrays."""
    if isinstance(a, np.ndarray):
        return np
    import jax.numpy as jnp

    return jnp


@dataclass
class Problem:
    """The atoms of every spec column and the facts as constraints, checked against the spec."""

    atoms: dict[str, ColumnAtoms]
    constraints: list[Constraint]
    means: dict[str, Fact]
    notes: list[str] = field(default_factory=list)

    @property
    def domain(self) -> Domain:
        return Domain(tuple(self.atoms), tuple(a.size for a in self.atoms.values()))


def build_problem(columns: Sequence[ColumnSpec], facts: Sequence[Fact]) -> Problem:
    """Atoms from the spec and the finest 1-way facts, then one constraint per fact."""
    by_name = {c.name: c for c in columns}
    for f in facts:
        for col in [a.column for a in f.axes] or [f.column]:
            if col not in by_name:
                raise FactsError(f"{f.where}: the spec has no column {col!r}")
    atoms = {c.name: _atoms(c, facts) for c in columns}
    notes: list[str] = []
    constraints: list[Constraint] = []
    means: dict[str, Fact] = {}
    rated = set()
    unknown: list[str] = []
    for f in facts:
        if f.kind == "shares":
            onehots = []
            for ax in f.axes:
                a = atoms[ax.column]
                groups = a.groups_of(ax, f.where)
                onehot = np.zeros((a.size, ax.size))
                onehot[np.arange(a.observed), groups] = 1.0
                onehots.append(onehot)
            constraints.append(Constraint(f, tuple(ax.column for ax in f.axes), tuple(onehots)))
        elif f.kind == "missing_rate":
            a = atoms[f.column]
            if f.column in rated:
                raise FactsError(f"{f.where}: column {f.column!r} has two missing-rate facts")
            rated.add(f.column)
            if not a.has_missing:
                if f.value:
                    raise FactsError(f"{f.where}: column {f.column!r} forbids missing values "
                                     "(schema missing: forbid), so its missing rate cannot be met")
                continue
            constraints.append(Constraint(f, (f.column,), rate=float(f.value or 0.0)))
        elif f.kind == "mean":
            if by_name[f.column].type not in {"integer", "continuous"}:
                raise FactsError(f"{f.where}: a mean needs an integer or continuous column")
            if f.column in means:
                raise FactsError(f"{f.where}: column {f.column!r} has two mean facts")
            means[f.column] = f
        else:  # out_of_domain: a pilot's count, informational
            unknown.append(f"{f.column} {f.value:g}")
    if unknown:
        notes.append("out-of-domain cells stated by the facts: " + ", ".join(unknown)
                     + "; the proxy holds declared values only")
    for name, a in atoms.items():
        if a.has_missing and name not in rated:
            implicit = Fact(index=-1, kind="missing_rate", source="none given: assumed 0",
                            rounding=1e-6, column=name, value=0.0, share_rounding=1e-6)
            constraints.append(Constraint(implicit, (name,), rate=0.0))
            notes.append(f"{name}: no missing_rate fact, so the proxy has no missing values in "
                         "it (the spec allows them)")
    return Problem(atoms, constraints, means, notes)


def _atoms(col: ColumnSpec, facts: Sequence[Fact]) -> ColumnAtoms:
    """A column's atoms: its domain, or the bins of its finest 1-way fact (covering bounds)."""
    has_missing = col.missing != "forbid"
    ones = [f for f in facts if f.kind == "shares" and len(f.axes) == 1
            and f.axes[0].column == col.name]
    if not ones:
        raise FactsError(f"column {col.name!r} has no 1-way shares fact: every spec column "
                         "needs one (its values' or bins' shares)")
    if col.domain is not None:
        return ColumnAtoms(col, tuple(col.domain), None, has_missing)
    finest = max(ones, key=lambda f: f.axes[0].size)
    bins = finest.axes[0].bins
    if bins is None:
        raise FactsError(f"{finest.where}: column {col.name!r} is {col.type}: give 'bins'")
    lo, hi = col.bounds  # type: ignore[misc]
    step = 1.0 if col.type == "integer" else 0.0
    gaps = any(b[0] != a[1] + step for a, b in itertools.pairwise(bins))
    if bins[0][0] != lo or bins[-1][1] != hi or gaps:
        raise FactsError(f"{finest.where}: the bins of column {col.name!r} must cover its bounds "
                         f"[{lo:g}, {hi:g}] without gaps ("
                         + ("inclusive integer ranges such as [17, 24], [25, 34])"
                            if step else "half-open ranges [lo, hi), the last closed)"))
    return ColumnAtoms(col, None, bins, has_missing)


# ----------------------------------------------------------------------------- fitting


def _loss(problem: Problem, total: float, hinge: bool):
    """The mbi loss over the constraints: squared gaps, or squared excess over the rounding."""
    import jax.numpy as jnp

    def loss_fn(marginals: Any) -> Any:
        value = 0.0
        for c in problem.constraints:
            mu = marginals.project(c.clique).datavector(flatten=False)
            diff, allowed = c.gap(mu, total)
            sigma = max(c.fact.share_rounding * total, 1e-9)
            if hinge:
                diff = jnp.maximum(jnp.abs(diff) - allowed, 0.0)
            value += 0.5 * jnp.vdot(diff, diff) / sigma**2
        return value

    return loss_fn


def fit(problem: Problem, total: float) -> Any:
    """The maximum-entropy model (an mbi MarkovRandomField) meeting the facts (module doc)."""
    import mbi
    from mbi import estimation, marginal_loss
    from mbi.clique_utils import maximal_subset

    domain = problem.domain
    mdomain = mbi.Domain(domain.names, domain.sizes)
    cliques = maximal_subset([c.clique for c in problem.constraints] + [(n,) for n in domain.names])
    l2 = _loss(problem, total, hinge=False)
    lipschitz = _lipschitz(problem, cliques, total)
    model = estimation.mirror_descent(
        mdomain, marginal_loss.MarginalLossFn(cliques, l2, lipschitz),
        known_total=float(total), iters=ITERS)
    if all(ok for _, ok in fitted_values(problem, model, total)):
        return model
    hinge = marginal_loss.MarginalLossFn(cliques, _loss(problem, total, hinge=True), lipschitz)
    return estimation.mirror_descent(mdomain, hinge, known_total=float(total),
                                     potentials=model.potentials, iters=HINGE_ITERS)


def _lipschitz(problem: Problem, cliques: Sequence[tuple[str, ...]], total: float) -> float:
    """A cheap estimate of the loss gradient's Lipschitz constant (mbi's first step size).

    As for plain marginals (``generators.mbi_model.lipschitz``): Σ over the constraints read
    from one model clique K of (|K|/|c|)·g_c/σ_c², g_c the most atoms in one group of the
    fact, maximised over K. The operator (I − s1ᵀ) of a share constraint has norm about 1, so
    this is the right size, and mbi's line search corrects it (halving when too bold)
    instead of 50 power-iteration steps through a compiled Hessian-vector product.
    """
    domain = problem.domain
    blocks: dict[tuple[str, ...], float] = {}
    for c in problem.constraints:
        parent = next(k for k in cliques if set(c.clique) <= set(k))
        ratio = domain.size(parent) / domain.size(c.clique)
        group = float(np.prod([onehot.sum(axis=0).max() for onehot in c.onehots])) \
            if c.onehots else 1.0
        sigma = max(c.fact.share_rounding * total, 1e-9)
        blocks[parent] = blocks.get(parent, 0.0) + ratio * group / sigma**2
    return max(blocks.values())


def fitted_values(problem: Problem, model: Any, total: float,
                  tolerance: float = 1e-9) -> list[tuple[np.ndarray, bool]]:
    """Per constraint: its numbers under the model, and whether every one is within rounding
    (widened by ``tolerance``, a fraction of the half-rounding: the report's FIT_TOLERANCE)."""
    out = []
    for c in problem.constraints:
        mu = np.asarray(model.project(c.clique).datavector(flatten=False), dtype=np.float64)
        diff, allowed = c.gap(mu, total)
        out.append((c.value(mu, total),
                    bool(np.all(np.abs(diff) <= allowed * (1 + tolerance)))))
    return out


def empirical_marginal(codes: np.ndarray, domain: Domain, clique: Sequence[str]) -> np.ndarray:
    """Counts of a coded table over ``clique`` (axes in clique order)."""
    idx = [domain.index(c) for c in clique]
    sizes = [domain.sizes[i] for i in idx]
    flat = np.ravel_multi_index(tuple(codes[:, i] for i in idx), sizes) if idx else \
        np.zeros(len(codes), dtype=np.int64)
    return np.bincount(flat, minlength=int(np.prod(sizes))).reshape(sizes).astype(np.float64)


def column_masses(model: Any, name: str) -> np.ndarray:
    """The model's 1-way counts of one column (its atoms)."""
    return np.asarray(model.project((name,)).datavector(flatten=False), dtype=np.float64)


def describe_constraint(c: Constraint, values: np.ndarray) -> tuple[str, int]:
    """The worst-fitting cell's label and index (for the report)."""
    if c.rate is not None:
        return "missing", 0
    gaps = np.abs(values - np.asarray(c.fact.shares))
    worst = int(np.argmax(gaps))
    labels = [ax.labels() for ax in c.fact.axes]
    pos = np.unravel_index(worst, [len(lab) for lab in labels])
    return " × ".join(lab[p] for lab, p in zip(labels, pos, strict=True)), worst

