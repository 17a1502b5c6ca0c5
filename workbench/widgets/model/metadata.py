"""The draft's metadata beyond its shape: the dataset id that keys the budget store.

``metadata.dataset`` names the confidential dataset; every run of every spec with that id
charges one ledger in the budget store (``--spend-again``, the lifetime cap). The spec
validator checks its form (one validator); this module says what a careful designer must also
know: a draft without an id cannot be run, and an id taken from a shipped example would share
that example's budget store. Plain Python, no ipywidgets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from workbench.widgets.model.drafts import EXAMPLES

NO_DATASET = ("metadata.dataset is not set: name the confidential dataset (e.g. "
              "'my-registry-2024'); `workbench run` refuses a spec without it, since it keys "
              "the dataset's budget store")


@lru_cache(maxsize=1)
def example_datasets() -> dict[str, tuple[str, ...]]:
    """Dataset id → the shipped example files that use it (read once)."""
    out: dict[str, list[str]] = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        try:
            dataset = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(
                "dataset")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(dataset, str):
            out.setdefault(dataset, []).append(path.name)
    return {k: tuple(v) for k, v in out.items()}


def dataset_problems(document: Mapping[str, Any], spec_path: Path | None = None) -> list[str]:
    """What the data step still lacks about the dataset id (empty when it is fine).

    An id of a shipped example is fine only for a draft opened from one of those examples;
    with no ``spec_path`` (a draft built in a notebook) only a missing id is reported.
    """
    dataset = (document.get("metadata") or {}).get("dataset")
    if not isinstance(dataset, str) or not dataset:
        return [NO_DATASET]
    files = example_datasets().get(dataset, ())
    if spec_path is None:
        return []
    own = spec_path.resolve().parent == EXAMPLES and spec_path.name in files
    if files and not own:
        return [f"metadata.dataset '{dataset}' is the id of the shipped example(s) "
                f"{', '.join(files)}: runs of this design would share their budget store "
                "(earlier spend, the lifetime cap); give this dataset its own id"]
    return []
