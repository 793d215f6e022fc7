"""Every figure the README quotes, in one run: start-up, then checks.

    python benchmarks/run.py

Runs benchmarks/startup.py (the first slide against the bare import of the UI libraries,
with and without the warm worker starting), benchmarks/save_to_verdict.py (a save to its
verdict on a real terminal, every exercise; POSIX), benchmarks/checks.py (every exercise and
snippet warm and cold, `check --all`, memory), benchmarks/grade.py (a class of 30 graded at
once against one by one), benchmarks/ask.py (the course's answers to two sets of learners'
questions) and benchmarks/mutants.py (whether any verdict depends on the seed), each in its
own process so that no one's imports or memory count in another's figures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    scripts = ["startup.py", "save_to_verdict.py", "checks.py", "grade.py", "ask.py",
               "mutants.py"]
    if sys.platform == "win32":  # no pseudo-terminal to draw the verdict on
        scripts.remove("save_to_verdict.py")
    for script in scripts:
        print(f"== {script}", flush=True)
        code = subprocess.call([sys.executable, str(HERE / script)])
        if code:
            sys.exit(code)
        print(flush=True)


if __name__ == "__main__":
    main()
