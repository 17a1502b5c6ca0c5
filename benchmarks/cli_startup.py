"""Issue 25 target: `workbench --help` takes at most 2× `python -c "import pandas"`.

Runs both commands alternately (median of --repeats each, wall clock) and prints the ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    workbench = shutil.which("workbench") or "workbench"
    cli, pandas = [], []
    for _ in range(args.repeats):
        cli.append(_seconds([workbench, "--help"]))
        pandas.append(_seconds([sys.executable, "-c", "import pandas"]))
    a, b = statistics.median(cli), statistics.median(pandas)
    print(f"workbench --help: median {a:.2f} s over {args.repeats} runs")
    print(f"python -c 'import pandas': median {b:.2f} s over {args.repeats} runs")
    print(f"ratio {a / b:.2f} (target ≤ 2)")


if __name__ == "__main__":
    main()
