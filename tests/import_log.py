"""What `python -m gradtutor ARGS` imports, read from `python -X importtime`'s log on stderr:
for the tests that keep start-up light (test_startup_imports, test_cli_lang)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def imported_modules(args: list[str], home: Path) -> list[str]:
    """Every module `python -m gradtutor *args` imports; the command must succeed."""
    return run_logging_imports(args, home)[0]


def run_logging_imports(args: list[str], home: Path) -> tuple[list[str], str, list[str]]:
    """`python -m gradtutor *args`, which must succeed: every module it imports, its stdout,
    and the lines of its stderr that are not the import log."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIMPORTTIME"}
    env["GRADTUTOR_HOME"] = str(home)
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "gradtutor", *args],
                            capture_output=True, text=True, encoding="utf-8", env=env,
                            stdin=subprocess.DEVNULL, timeout=60)
    log = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    others = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    assert result.returncode == 0, "\n".join(others)
    # import time: self [us] | cumulative | imported package   (nested imports are indented)
    modules = [line.rsplit("|", 1)[1].strip() for line in log[1:]]
    assert "gradtutor.cli" in modules  # the log was read right
    return modules, result.stdout, others
