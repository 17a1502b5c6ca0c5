"""Shared fixtures: the repository paths, the example spec, and the optional shared data."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "israel_births_2014.json"
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def example_document() -> dict:
    return json.loads(EXAMPLE.read_text())


@pytest.fixture
def example_doc(example_document: dict) -> dict:
    """A fresh, mutable copy of the paper's design."""
    return copy.deepcopy(example_document)


@pytest.fixture(scope="session")
def example_spec():
    from workbench.spec import load_spec

    return load_spec(EXAMPLE)


def shared_csv(name: str) -> Path:
    """Path of a public US sample in ../shared/data, or skip the test when absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"shared data {name} not available")
    return path
