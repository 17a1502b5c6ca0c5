"""The proxy as the enclave would see it (spec columns only, domain policies, cleaning), and
as evidence."""

from __future__ import annotations

import os

import pandas as pd

from workbench.engine.run import load_confidential
from workbench.engine.survey_step import extra_columns
from workbench.evidence.core import Evidence
from workbench.evidence.published import PublishedTables
from workbench.sources import exists, is_url, public_name
from workbench.specification import Spec
from workbench.survey.weight_check import WeightCheckFailed, proxy_check
from workbench.transform import EncodingError
from workbench.transform.clean import clean
from workbench.transform.raw import apply_domain_policy, check_missing
from workbench.transform.stream import as_read


def _as_read(frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """The spec's columns with the dtypes ``read_raw`` gives a CSV (text or float64), plus the
    columns a run reads besides them (a survey's weight)."""
    extra = list(extra_columns(spec))
    missing = [c for c in [*(c.name for c in spec.columns), *extra] if c not in frame.columns]
    if missing:
        raise EncodingError(f"the data has no column(s) {', '.join(repr(m) for m in missing)}")
    out = {name: pd.to_numeric(frame[name], errors="coerce") for name in extra}
    for c in spec.columns:
        col = frame[c.name]
        if c.type == "categorical":
            out[c.name] = col.astype("string")
            continue
        try:
            out[c.name] = pd.to_numeric(col, errors="raise").astype("float64")
        except (ValueError, TypeError):
            out[c.name] = col.astype("string")  # the domain check names the column
    return pd.DataFrame(out)


def prepare_proxy(spec: Spec, proxy: pd.DataFrame | str | os.PathLike[str]) -> pd.DataFrame:
    """Read (a path) or take (a frame) the proxy and clean it exactly as a run cleans its data."""
    if isinstance(proxy, str | os.PathLike):
        if not exists(proxy):  # a database URL is checked when it is read
            raise EncodingError(f"proxy file {os.fspath(proxy)!r} does not exist")
        return as_read(load_confidential(spec, proxy))  # public: text columns as text
    frame = apply_domain_policy(_as_read(proxy, spec), spec.columns)
    frame = clean(frame, spec)
    check_missing(frame, spec.columns)
    return frame


def check_proxy_weights(spec: Spec, frame: pd.DataFrame, n: int | None = None) -> None:
    """The run's weight check, exactly, on the PUBLIC proxy (at ``n`` records: a resample's
    expected total): WeightCheckFailed with the run's message when the proxy's weights would
    be refused, before any task rehearses a loop the run would never reach."""
    survey = spec.survey
    if survey is None or survey.weight_column not in frame.columns:
        return
    weights = pd.to_numeric(frame[survey.weight_column], errors="coerce").to_numpy(dtype=float)
    check = proxy_check(survey, weights, n)
    if check.failing():
        raise WeightCheckFailed(check.message(survey.weight_column, survey.weight_check_epsilon))


def as_evidence(spec: Spec, proxy: Evidence | pd.DataFrame | str | os.PathLike[str],
                published: PublishedTables | None = None) -> Evidence:
    """``proxy`` as evidence for ``spec``: an Evidence as it is (for this spec), else the
    proxy read and cleaned as a run cleans its data, with the ``published`` aggregates."""
    if isinstance(proxy, Evidence):
        return proxy.for_spec(spec)
    source = None if isinstance(proxy, pd.DataFrame) else (
        public_name(proxy) if is_url(proxy) else os.path.basename(os.fspath(proxy)))
    return Evidence(spec, prepare_proxy(spec, proxy), published, source)
