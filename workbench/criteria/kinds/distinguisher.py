"""A distinguisher: how well a classifier tells the real data from the release (50% is ideal).

The classifier is trained *without R*: the release S (label "synthetic") against a PUBLIC proxy
(label "real"), a CSV of the spec's columns named by ``proxy``. It is then evaluated on R ∪ S:
E(R, S) = (#R predicted real + #S predicted synthetic) / (n_R + n_S), the accuracy of the
distinguishing game (Bindschaedler et al. 2017, §6: 50% = S indistinguishable from R). The
model and the S half are functions of S and the proxy only, so the accuracy's dependence on R
is one count, with sensitivity 1; it is released with Laplace noise through ``privacy``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.audit_case import AuditCase, rows
from workbench.criteria.classifiers import CLASSIFIERS, make_classifier, one_hot
from workbench.criteria.kinds.base import CheckContext, Param, ShareKind, join_path
from workbench.specification.params import one_of, whole_at_least

if TYPE_CHECKING:
    from workbench.criteria.evaluation_state import Evaluation
    from workbench.specification.model import Criterion, Spec
    from workbench.specification.space import Configuration
    from workbench.transform import TableCodec
    from workbench.transform.cells import PairedCells

#: The repository root: relative proxy paths are tried against the working directory, then it.
_REPO = Path(__file__).resolve().parents[3]
_PROXIES: dict[tuple[Any, ...], np.ndarray] = {}


def proxy_path(name: str) -> Path:
    """The proxy file: absolute, or relative to the working directory, else to the repository."""
    path = Path(os.path.expanduser(name))
    if path.is_absolute() or path.exists():
        return path
    return _REPO / path


def proxy_codes(spec: Spec, config: Configuration, name: str) -> np.ndarray:
    """The PUBLIC proxy read (spec columns only), cleaned by the spec and encoded with the
    configuration; cached per file, spec and configuration."""
    from workbench.transform.clean import clean
    from workbench.transform.raw import apply_domain_policy, read_raw

    path = proxy_path(name)
    if not path.is_file():
        raise ValueError(f"distinguisher: the public proxy file {name!r} does not exist "
                         f"(looked in the working directory and in {str(_REPO)!r})")
    key = (str(path), path.stat().st_mtime_ns, spec.sha256, config.key)
    if key not in _PROXIES:
        frame = clean(apply_domain_policy(read_raw(path, spec.columns), spec.columns), spec)
        _PROXIES.clear()  # one proxy at a time: they can be large
        _PROXIES[key] = spec.table_codec(config).encode(frame)
    return _PROXIES[key]


def _balanced(rows: np.ndarray, size: int, seed: int) -> np.ndarray:
    """At most ``size`` rows, subsampled with a fixed public seed (rows of S or the proxy)."""
    if rows.shape[0] <= size:
        return rows
    pick = np.random.default_rng(seed).choice(rows.shape[0], size=size, replace=False)
    return rows[np.sort(pick)]


def _model(ev: Evaluation, criterion: Criterion) -> Any:
    """The classifier trained on S (label 1) against the proxy (label 0); cached per evaluation."""
    key = ("distinguisher", criterion.id)
    if key not in ev.cache:
        p = criterion.params
        size, seed = int(p.get("train_size", 5000)), int(p.get("seed", 0))
        proxy = proxy_codes(ev.spec, ev.config, str(p["proxy"]))
        synth, public = _balanced(ev.synth, size, seed), _balanced(proxy, size, seed + 1)
        x = one_hot(np.vstack([synth, public]), ev.table.domain.sizes)
        y = np.r_[np.ones(synth.shape[0], dtype=np.int64), np.zeros(public.shape[0], np.int64)]
        ev.cache[key] = make_classifier(str(p.get("classifier", "random_forest")), seed).fit(x, y)
    return ev.cache[key]


def _predict_real(ev: Evaluation, criterion: Criterion, codes: np.ndarray) -> np.ndarray:
    """True where the classifier says "real" (label 0)."""
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    return _model(ev, criterion).predict(one_hot(codes, ev.table.domain.sizes)) == 0


@lru_cache(maxsize=1)
def _audit_proxy() -> str:
    """A tiny PUBLIC proxy for the audit case (g = b only; x, y as in S), in a temp file."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="workbench-audit-"))
    path = folder / "proxy.csv"
    path.write_text("g,x,y\nb,0,0\nb,1,5\nb,2,10\nb,0,5\n", encoding="utf-8")
    return str(path)


class Distinguisher(ShareKind):
    """Accuracy of an S-vs-proxy classifier on R ∪ S; Δ = 1/(n_R + n_S), value in [0, 1]."""

    name = "distinguisher"
    description = ("how often a classifier trained to tell the release from public data "
                   "tells the real records from the released ones (accuracy; 50% is ideal)")
    params = MappingProxyType({
        "proxy": Param(None, doc="a PUBLIC CSV of the spec's columns (the 'real' class)",
                       label="public proxy file"),
        "classifier": Param("random_forest", one_of(*CLASSIFIERS),
                            "the scikit-learn classifier", control="choice",
                            label="classifier", choices=CLASSIFIERS),
        "train_size": Param(5000, whole_at_least(10), "rows of S and of the proxy, at most",
                            control="whole_number", label="training rows per class"),
        "seed": Param(0, whole_at_least(0), "the classifier's random_state",
                      control="whole_number", label="seed"),
    })
    position = 95

    def check_params(self, ctx: CheckContext, params: Mapping[str, Any], path: str) -> None:
        """``proxy`` names a file (checked by :meth:`preflight`: the spec may travel without it)."""
        if not isinstance(params.get("proxy"), str) or not params.get("proxy"):
            ctx.problem(join_path(path, "proxy"), "must name a public CSV file")

    def preflight(self, spec: Spec, criterion: Criterion) -> None:
        """The public proxy must exist and hold the spec's columns before any budget is spent."""
        from workbench.transform.raw import read_raw

        name = str(criterion.params["proxy"])
        path = proxy_path(name)
        if not path.is_file():
            raise ValueError(f"criterion {criterion.id!r} (distinguisher): its public proxy file "
                             f"{name!r} does not exist (looked in the working directory and in "
                             f"{str(_REPO)!r})")
        read_raw(path, spec.columns)  # an EncodingError names a missing column

    def exact(self, ev: Evaluation, criterion: Criterion) -> float:
        """(#R predicted real + #S predicted synthetic) / (n_R + n_S)."""
        real_right = int(_predict_real(ev, criterion, ev.real).sum())
        synth_right = int((~_predict_real(ev, criterion, ev.synth)).sum())
        return (real_right + synth_right) / (ev.real.shape[0] + ev.synth.shape[0])

    def sensitivity(self, spec: Spec, table: TableCodec, criterion: Criterion,
                    pc: PairedCells) -> tuple[float | None, dict[str, Any]]:
        """Δ = 1/(n_R + n_S): the classifier and the S term depend on S and the public proxy
        only, and each record of R adds 1 to the count of R predicted real or not; replacing
        one record changes that count by at most 1, under either neighbour relation (n_R and
        n_S are public)."""
        n_s = int(pc.synth.sum())
        return 1.0 / (pc.n + n_s), {"n_synthetic": n_s}

    def template_params(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """The repository's public births proxy (edit for other data), a random forest."""
        return {"proxy": "data_public/proxy_facts_166k.csv.gz", "classifier": "random_forest",
                "train_size": 5000, "seed": 0}

    def template(self, criterion_id: str, document: Mapping[str, Any]) -> dict[str, Any]:
        """Threshold 0.6 (50% is ideal), ε 0.05."""
        out = super().template(criterion_id, document)
        return {**out, "threshold": 0.6, "epsilon": 0.05}

    def audit_case(self) -> AuditCase:
        """Trained on S (all g = a) against a proxy of g = b only: one record of R moving to
        g = a changes the accuracy on R ∪ S by 1/(n_R + n_S)."""
        return AuditCase(
            {"kind": self.name, "threshold": 0.9,
             "params": {"proxy": _audit_proxy(), "classifier": "logistic_regression"}},
            rows((1, 0, 0), (1, 1, 1), (1, 2, 2), (1, 0, 1)),
            rows((0, 0, 0), (1, 1, 1), (1, 2, 2), (1, 0, 1)),
            rows((0, 0, 0), (0, 1, 1), (0, 2, 2), (0, 0, 1)), 1 / 8,
            "trained on S (all g = a) against the proxy (all g = b): g = a is called synthetic; "
            "R is all g = b (called real), R′ moves one record to g = a: the accuracy on "
            "R ∪ S goes 8/8 → 7/8 (Δ = 1/(n_R + n_S))")


KIND = Distinguisher()
