"""`workbench --help` starts as fast as Python (issue 25): no heavy import before a command runs.

Timings live in ``benchmarks/cli_startup.py``; here the cause is tested: parsing the command
line (and printing help) imports none of numpy, pandas, OpenDP, scikit-learn, jsonschema or
the registries.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "opendp", "sklearn", "jsonschema", "workbench.criteria",
         "workbench.generators", "workbench.engine", "workbench.validation")


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from workbench.cli.main import build_parser\n"
        "try:\n"
        "    build_parser().parse_args(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_validation_skips_the_iri_format_checker() -> None:
    """jsonschema's optional IRI checker (rfc3987_syntax, seconds to import) is never loaded;
    the spec schema has no 'format' keyword that would need it."""
    code = ("import sys\nfrom workbench.validation import load_spec\n"
            "load_spec('examples/israel_births_2014.json')\n"
            "print(sys.modules.get('rfc3987_syntax', 'absent'))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, check=True, env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert out.stdout.strip() in ("None", "absent")
    schema = (REPO / "workbench" / "validation" / "spec.schema.json").read_text()
    assert '"format"' not in schema
