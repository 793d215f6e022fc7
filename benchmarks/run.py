"""Every figure the README quotes, in one run: start-up, then checks.

    python benchmarks/run.py

Runs benchmarks/startup.py (the first slide against the bare import of the UI libraries,
with and without the warm worker starting), benchmarks/checks.py (every exercise and snippet
warm and cold, `check --all`, memory) and benchmarks/grade.py (a class of 30 graded at once
against one by one), each in its own process so that no one's imports or memory count in
another's figures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    for script in ("startup.py", "checks.py", "grade.py"):
        print(f"== {script}", flush=True)
        code = subprocess.call([sys.executable, str(HERE / script)])
        if code:
            sys.exit(code)
        print(flush=True)


if __name__ == "__main__":
    main()
