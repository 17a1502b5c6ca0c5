"""Must-show 7 of issue 36: the README's quickstart for your own data, run from a clean folder.

The commands and their expected lines are parsed from the README's block, so the test fails
when the README drifts from what the commands do. The folder holds nothing but a link to the
shipped examples (the README runs from the repository's folder); ``REGISTRY`` is the public
Adult file in ../shared/data. Each `# →` line's fixed parts (split at "…") must appear, in
order, in what its command printed.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import shared_data

REPO = Path(__file__).resolve().parents[1]


def quickstart() -> tuple[dict[str, str], list[tuple[str, list[str]]]]:
    """(variables, [(command, expected lines)]) of the README's quickstart block."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart: your own data", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    variables: dict[str, str] = {}
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("# → "):
            steps[-1][1].append(line[4:])
        elif re.fullmatch(r"[A-Z_]+=\S+", line):
            name, value = line.split("=", 1)
            variables[name] = value
        elif line.strip():
            steps.append((line, []))
    return variables, steps


def test_the_readme_block_is_five_commands_in_order() -> None:
    """The quickstart is draft → pilot → proxy build → dry run → run, after the two set-up
    commands, which stay the README's first two."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S).group(1).splitlines()
    assert first[0].startswith("pip install") and first[1] == "python -m pytest -q"
    assert text.index("pip install") < text.index("## Quickstart: your own data")
    variables, steps = quickstart()
    assert set(variables) == {"REGISTRY"}
    words = [re.search(r"workbench (proxy build|\w+)", c).group(1) for c, _ in steps]
    assert words == ["validate", "pilot", "proxy build", "dryrun", "run"]
    assert all(expected for _, expected in steps)


def _printed_in_order(output: str, expected: str) -> bool:
    """Whether the fixed parts of an expected line (split at "…") appear in order."""
    at = 0
    for part in (p.strip() for p in expected.split("…")):
        if not part:
            continue
        found = output.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


@pytest.mark.slow
def test_the_readme_quickstart_runs_from_a_clean_folder(tmp_path: Path) -> None:
    registry = shared_data("adult/adult_train.csv.gz")
    (tmp_path / "examples").symlink_to(REPO / "examples")
    variables, steps = quickstart()
    env = dict(os.environ, PYTHONPATH=str(REPO), REGISTRY=str(registry))
    assert variables["REGISTRY"].endswith("adult/adult_train.csv.gz")
    for command, expected in steps:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, text=True,
                              capture_output=True, timeout=900)
        if command.startswith("workbench run") and "without a candidate (⊥)" in done.stdout:
            # the README: after ⊥ the same command tries again (DP noise; spends again)
            done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, text=True,
                                  capture_output=True, timeout=900)
        output = done.stdout + done.stderr
        assert done.returncode == 0, (command, output[-3000:])
        for line in expected:
            assert _printed_in_order(output, line), (command, line, output[-3000:])
    assert (tmp_path / "mine" / "run" / "release" / "release.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["examples", "mine"]
