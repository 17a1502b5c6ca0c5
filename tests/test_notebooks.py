"""Every tutorial notebook is stored without outputs and runs top to bottom without an error.

Generic on purpose: any ``notebooks/**/*.ipynb`` outside ``notebooks/dashboards/`` (Voilà
dashboards have their own tests) is picked up. Notebooks write under ``$WORKBENCH_OUT``,
pointed here at a temporary directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"


def _notebooks() -> list[Path]:
    """Tutorial notebooks, in name order (dashboards and checkpoints excluded)."""
    found = []
    for path in sorted(NOTEBOOKS.rglob("*.ipynb")):
        parts = path.relative_to(NOTEBOOKS).parts
        if parts[0] == "dashboards" or ".ipynb_checkpoints" in parts:
            continue
        found.append(path)
    return found


PARAMS = [pytest.param(p, id=str(p.relative_to(NOTEBOOKS))) for p in _notebooks()]


def test_there_are_notebooks() -> None:
    assert PARAMS, "no notebooks found under notebooks/"


@pytest.mark.parametrize("path", PARAMS)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.get("outputs"), f"cell {i} of {path.name} has stored outputs"
            assert cell.get("execution_count") is None, f"cell {i} of {path.name} was run"


@pytest.mark.slow
@pytest.mark.parametrize("path", PARAMS)
def test_notebook_executes_without_errors(path: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    # The kernel inherits this environment: outputs and Jupyter/IPython state go to tmp.
    for name, sub in (("WORKBENCH_OUT", "out"), ("IPYTHONDIR", "ipython"),
                      ("MPLCONFIGDIR", "mpl"), ("JUPYTER_CONFIG_DIR", "jupyter_config")):
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [
        f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
        for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
        for out in cell.get("outputs", []) if out.get("output_type") == "error"
    ]
    assert not errors, f"{path.name}: " + "; ".join(errors)
