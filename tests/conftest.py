"""Shared fixtures: the repository paths, the example spec, the shared data, widget lookup, and a
temporary budget store and co-design autosave folder for every test (tests never touch the
user's state directory, and no two tests share a dataset's ledger or a draft unless they say
so)."""

from __future__ import annotations

import copy
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # One pytest-xdist worker per core already fills the machine: BLAS/OpenMP pools of their own
    # (set before numpy loads; inherited by the CLI subprocesses and kernels) would oversubscribe.
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "israel_births_2014.json"
SHARED_DATA = REPO.parent / "shared" / "data"
BUDGET_STORE_ENV = "WORKBENCH_BUDGET_STORE"  # workbench.privacy.budget_store.ENV_VAR
_stores = itertools.count()


@pytest.fixture(scope="session")
def _budget_store_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("budget-stores")


@pytest.fixture(scope="module", autouse=True)
def _module_budget_store(_budget_store_root: Path) -> Iterator[Path]:
    """Module-scoped fixtures that run ``workbench run`` get the module's own budget store."""
    path = _budget_store_root / f"module-{next(_stores)}"
    old = os.environ.get(BUDGET_STORE_ENV)
    os.environ[BUDGET_STORE_ENV] = str(path)
    yield path
    if old is None:
        os.environ.pop(BUDGET_STORE_ENV, None)
    else:
        os.environ[BUDGET_STORE_ENV] = old


@pytest.fixture(autouse=True)
def budget_store(_module_budget_store: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own budget store (the variable is inherited by subprocesses and kernels)."""
    path = _module_budget_store.parent / f"test-{next(_stores)}"
    monkeypatch.setenv(BUDGET_STORE_ENV, str(path))
    return path


@pytest.fixture(autouse=True)
def draft_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own co-design autosave folder (``$WORKBENCH_DRAFTS``, inherited by Voilà
    kernels): no test reopens another's draft or writes beside the shipped examples."""
    path = tmp_path_factory.mktemp("drafts")
    monkeypatch.setenv("WORKBENCH_DRAFTS", str(path))
    return path


@pytest.fixture(scope="session")
def example_document() -> dict:
    return json.loads(EXAMPLE.read_text())


@pytest.fixture
def example_doc(example_document: dict) -> dict:
    """A fresh, mutable copy of the paper's design."""
    return copy.deepcopy(example_document)


@pytest.fixture(scope="session")
def example_spec():
    from workbench.validation import load_spec

    return load_spec(EXAMPLE)


@pytest.fixture(scope="session")
def proxy_slice(example_spec):
    """A public 20k-row slice of the shipped proxy (raw values), to keep widget tests quick."""
    from workbench.transform.raw import read_raw

    path = REPO / "data_public" / "proxy_sample_166k.csv.gz"
    return read_raw(path, example_spec.columns).iloc[:20_000].reset_index(drop=True)


def in_ci() -> bool:
    """Whether this is a CI run (``.ci/run`` exports CI=1), where ../shared/data always exists."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def shared_data(name: str = "") -> Path:
    """Path of a public file (or, with no name, the folder) in ../shared/data.

    When it is absent the test fails in CI and is skipped only outside CI (a fresh clone
    without the shared folder), so a broken CI layout can never pass silently.
    """
    path = SHARED_DATA / name if name else SHARED_DATA
    if not path.exists():
        message = f"shared data {name or 'folder'} not found at {path}"
        if in_ci():
            pytest.fail(f"{message}; CI must provide ../shared/data", pytrace=False)
        pytest.skip(message)
    return path


def shared_csv(name: str) -> Path:
    """Path of a public US sample in ../shared/data (see :func:`shared_data`)."""
    return shared_data(name)


ADULT_DRAFT = REPO / "examples" / "adult_empty_draft.json"


def adult_proxy_csv(folder: Path, rows: int = 4_000, seed: int = 27) -> Path:
    """A small PUBLIC proxy for ``examples/adult_empty_draft.json``: a seeded sample of the
    UCI Adult extract in ../shared/data (its own header names, ", " separators, "?" markers),
    written to ``folder`` at test time (the repository never ships a copy)."""
    import numpy as np
    import pandas as pd

    source = pd.read_csv(shared_data("adult/adult_train.csv.gz"), dtype=str)
    keep = np.sort(np.random.default_rng(seed).permutation(len(source))[:rows])
    path = Path(folder) / "adult_proxy.csv"
    source.iloc[keep].to_csv(path, index=False)
    return path


def widget_by_class(root: Any, class_name: str) -> Any:
    """The one widget under ``root`` (itself included) carrying the DOM class ``class_name``.

    Tests find widgets by the stable ``wb-*`` classes the dashboards set, never by position.
    """
    found, todo = [], [root]
    while todo:
        widget = todo.pop()
        if class_name in getattr(widget, "_dom_classes", ()):
            found.append(widget)
        todo.extend(getattr(widget, "children", ()))
    assert len(found) == 1, f"{len(found)} widgets with class {class_name!r}"
    return found[0]


def write_adult_halves(work: Path) -> Path:
    """scripts/adult_data.py's public and confidential halves under ``work/out/adult`` (the
    Adult examples name their public proxies there, relative to the working directory)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "adult_data", Path(__file__).resolve().parents[1] / "scripts" / "adult_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    out = work / "out" / "adult"
    if not (out / "adult_raw_public_proxy.csv").exists():
        assert module.main(["--source", str(shared_data("adult/adult_train.csv.gz")),
                            "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def spec():
    """test_dryrun's cheap births design (the evidence and robust-forecast tests)."""
    from test_dryrun import _cheap_document

    from workbench.validation import build_spec

    return build_spec(_cheap_document())


@pytest.fixture(scope="module")
def proxy(spec):
    """6,000 public proxy records cleaned for ``spec``; a module's own ``proxy`` overrides."""
    from workbench.evidence.prepare import prepare_proxy
    from workbench.evidence.sampler import sample_proxy

    return prepare_proxy(spec, sample_proxy(6_000, seed=11))


@pytest.fixture(scope="session")
def adult_halves(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory holding out/adult/ (the halves), made once per session."""
    work = tmp_path_factory.mktemp("adult_halves")
    write_adult_halves(work)
    return work


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """A throw-away PostgreSQL server for the whole session (tests/pg_server.py), in its own
    temporary directory (the server's user must reach it; pytest's base is private)."""
    import tempfile

    from pg_server import remove, start

    cluster = start(Path(tempfile.mkdtemp(prefix="workbench-pg-")) / "cluster")
    yield cluster
    remove(cluster)
