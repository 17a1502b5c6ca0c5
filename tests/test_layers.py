"""Imports between subpackages follow the layer order written in docs/architecture.md.

The order is read from the ```layers block of the doc (one line per layer, lowest first; a
line may name several peer units). Every module under ``workbench/`` is parsed (never
imported) and each ``import workbench.x…`` / ``from workbench.x… import`` — at module level or
inside a function — must name a unit on the importer's line or above it. Imports under
``if TYPE_CHECKING:`` are annotations only and are not checked.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "workbench"
DOC = REPO / "docs" / "architecture.md"


def layer_order(text: str) -> list[list[str]]:
    """The ```layers block of the doc: a list of lines, each a list of unit names."""
    match = re.search(r"^```layers\n(.*?)^```", text, flags=re.S | re.M)
    assert match, "docs/architecture.md has no ```layers block"
    lines = [line.split("#", 1)[0].split() for line in match.group(1).splitlines()]
    return [units for units in lines if units]


def unit_levels(order: list[list[str]]) -> dict[str, int]:
    """Unit name -> its line number in the order (0 = lowest)."""
    levels: dict[str, int] = {}
    for level, units in enumerate(order):
        for unit in units:
            assert unit not in levels, f"unit {unit!r} is listed twice"
            levels[unit] = level
    return levels


def unit_of(module: str, levels: dict[str, int]) -> str | None:
    """The unit of a dotted module under ``workbench``: the longest listed prefix."""
    parts = module.split(".")[1:]  # drop 'workbench'
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in levels:
            return name
    return None


def module_name(path: Path, root: Path = REPO) -> str:
    """Dotted module name of a file under ``root``."""
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Line numbers inside ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(path: Path, root: Path = REPO) -> list[tuple[int, str]]:
    """(line, imported workbench module) for every runtime import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    package = module_name(path if path.name == "__init__.py" else path.parent, root)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or node.lineno in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("workbench")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against the importing package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.startswith("workbench"):
                # 'from workbench.specification import model' may name a submodule: check both
                out.append((node.lineno, target))
                out += [(node.lineno, f"{target}.{a.name}") for a in node.names]
    return out


def violations(levels: dict[str, int], root: Path = REPO) -> list[str]:
    """Every import under ``root/workbench`` that goes from a lower layer to a higher one."""
    found = []
    for path in sorted((root / "workbench").rglob("*.py")):
        own = unit_of(module_name(path, root), levels)
        if own is None:
            continue  # the root package (version only)
        for line, target in imports_of(path, root):
            other = unit_of(target, levels)
            if other is not None and levels[other] > levels[own]:
                found.append(f"{path.relative_to(root)}:{line}: {own} imports {other} "
                             f"({target})")
    return sorted(set(found))


@pytest.fixture(scope="module")
def levels() -> dict[str, int]:
    return unit_levels(layer_order(DOC.read_text(encoding="utf-8")))


def test_every_subpackage_has_a_layer(levels) -> None:
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    missing = sorted(p for p in packages if unit_of(f"workbench.{p}.x", levels) is None)
    assert not missing, f"add these subpackages to the ```layers block: {missing}"


def test_imports_follow_the_documented_layers(levels) -> None:
    found = violations(levels)
    assert not found, "imports against the layer order:\n" + "\n".join(found)


def test_the_check_catches_an_upward_import(levels, tmp_path) -> None:
    """A lower layer importing a higher one is reported (so the test above can fail), in a
    function body too; the same import under TYPE_CHECKING, or downwards, is not."""
    pkg = tmp_path / "workbench" / "criteria"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import probe\n", encoding="utf-8")
    (pkg / "probe.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from workbench.privacy import PrivacyContext\n"
        "if TYPE_CHECKING:\n"
        "    from workbench.engine import Candidate\n"
        "def f():\n"
        "    from workbench.validation import build_spec\n"
        "    from ..generators import make_generator\n",
        encoding="utf-8")
    found = violations(levels, tmp_path)
    assert found == [
        "workbench/criteria/probe.py:6: criteria imports validation (workbench.validation)",
        "workbench/criteria/probe.py:6: criteria imports validation "
        "(workbench.validation.build_spec)",
        "workbench/criteria/probe.py:7: criteria imports generators (workbench.generators)",
        "workbench/criteria/probe.py:7: criteria imports generators "
        "(workbench.generators.make_generator)",
    ]


def test_type_checking_imports_and_relative_imports_are_read() -> None:
    """Annotations-only imports are skipped; function-level ones are not."""
    src = PACKAGE / "criteria" / "evaluation_state.py"
    targets = {t for _, t in imports_of(src)}
    assert "workbench.transform.cells" in targets
    assert not any(t.startswith("workbench.privacy") for t in targets)  # TYPE_CHECKING only
    spec_init = {t for _, t in imports_of(PACKAGE / "specification" / "__init__.py")}
    assert "workbench.specification.model" in spec_init


def test_importing_the_spec_model_does_not_import_the_registries() -> None:
    """At run time too: a model type loads neither the validator nor criteria or generators,
    and importing the criteria does not load the spec validator."""
    code = (
        "import sys\n"
        "import workbench.specification.model\n"
        "loaded = [m for m in ('workbench.criteria', 'workbench.generators',"
        " 'workbench.validation.validate') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "import workbench.criteria, workbench.generators\n"
        "assert 'workbench.validation.validate' not in sys.modules\n"
        "from workbench.validation import build_spec\n"
        "assert 'workbench.validation.validate' in sys.modules\n"
        "import workbench.specification\n"
        "assert not hasattr(workbench.specification, 'build_spec')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, env={"PYTHONPATH": str(REPO), "PATH": ""}, check=False)
    assert result.returncode == 0, result.stderr


def test_the_architecture_lists_every_registered_criterion_kind() -> None:
    """The spec table's criteria row names every kind of the registry (it listed 14 of 22)."""
    from workbench.criteria import kinds

    doc = DOC.read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| `criteria` |"))
    missing = [name for name in kinds.names() if f"`{name}`" not in row]
    assert not missing, f"docs/architecture.md's criteria row lacks {missing}"
