"""The test command's own guarantees: doctests and durations run, shared data is never skipped
in CI, and CI runs the README's test command."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from conftest import REPO, shared_data


def test_the_test_command_runs_every_docstring_example_and_prints_durations() -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"]
    assert "workbench" in options["testpaths"] and "tests" in options["testpaths"]
    assert "--doctest-modules" in options["addopts"].split()
    assert "--durations=15" in options["addopts"].split()


def test_the_test_command_runs_on_every_core_with_xdist_from_the_test_extra() -> None:
    """CI's 2 cores finish the suite within the guide's 15 minutes only in parallel."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    addopts = project["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert addopts[addopts.index("-n") + 1] == "auto"
    assert addopts[addopts.index("--dist") + 1] == "worksteal"
    assert any(r.startswith("pytest-xdist") for r in project["project"]["optional-dependencies"]
               ["test"])


def test_ci_runs_the_readme_test_command_with_ci_set() -> None:
    script = (REPO / ".ci" / "run").read_text()
    readme_command = re.search(r"^(python -m pytest[^\n]*)$", (REPO / "README.md").read_text(),
                               re.M)
    assert readme_command is not None
    assert readme_command.group(1) in script.splitlines()
    assert re.search(r"^export CI=1$", script, re.M)


def test_no_test_runs_doctest_by_hand() -> None:
    """Doctests run through ``--doctest-modules`` only: a hand-made ``doctest.testmod`` test
    duplicates them and, pointed at a module without examples, cannot fail."""
    for path in sorted((REPO / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                 and n.attr == "testmod"]
        assert not calls, f"{path.name} calls doctest.testmod"


def test_missing_shared_data_fails_in_ci_and_skips_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI must provide"):
        shared_data("no-such-file.csv")
    for value in ("", "0", "false"):
        monkeypatch.setenv("CI", value)
        with pytest.raises(pytest.skip.Exception, match="not found"):
            shared_data("no-such-file.csv")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        shared_data("no-such-file.csv")


def test_shared_data_gives_the_path_when_present() -> None:
    folder = shared_data()
    assert folder.is_dir() and folder == REPO.parent / "shared" / "data"
    first = next(p for p in sorted(folder.iterdir()) if p.is_file())
    assert shared_data(first.name) == first and isinstance(first, Path)
