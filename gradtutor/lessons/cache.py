"""The plain data of lesson files that already parsed cleanly, keyed by their exact text, so
the next start skips YAML parsing (about 15 ms of the first slide for the grad lesson); also
the colours of a lesson's code (`gradtutor.ui.codeblock.highlighted`), under keys of their own.

Only JSON is stored, so an entry can never build an object or run code; it is still
validated into the model on every load, and a damaged or foreign entry is simply ignored, as
is one that is no regular file or is larger than any lesson's data (it is not even read).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from gradtutor import __version__
from gradtutor.errors import GradtutorError
from gradtutor.files import read_capped

MAX_BYTES = 16 * 1024**2  # a lesson file is at most 2 MB of YAML; its data as JSON is near that
STALE_TEMP_S = 60.0  # a temporary file older than this is no write still in progress


def cache_dir() -> Path:
    home = os.environ.get("GRADTUTOR_HOME")
    if home:
        return Path(home).expanduser() / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("gradtutor", appauthor=False))


def _entry(text: str) -> Path:
    digest = hashlib.sha256(f"{__version__}\0{text}".encode()).hexdigest()[:40]
    return cache_dir() / f"lesson-{digest}.json"


def get(text: str) -> Any | None:
    """The plain data cached for exactly this text, or None."""
    try:
        return json.loads(read_capped(_entry(text), MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError, GradtutorError):  # a cache miss, no more
        return None


def put(text: str, data: Any) -> None:
    """Remember the plain data of a text that parsed and validated with no problem."""
    from gradtutor.files import write_atomic

    with contextlib.suppress(OSError, TypeError, ValueError):  # an unwritable cache costs time only
        write_atomic(_entry(text), json.dumps(data, ensure_ascii=False))
    remove_stale_temp_files(time.time())


def remove_stale_temp_files(now: float) -> None:
    """Remove the temporary files of cache writes that a killed tutor left. Writes take no
    lock here, so only files older than STALE_TEMP_S go: a write still in progress is
    milliseconds old."""
    try:
        found = list(cache_dir().glob(".lesson-*.json.*.tmp"))
    except OSError:
        return
    for stale in found:
        with contextlib.suppress(OSError):
            if now - stale.lstat().st_mtime > STALE_TEMP_S:
                stale.unlink()
