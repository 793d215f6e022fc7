"""The plain data of lesson files that already parsed and validated cleanly, keyed by their
exact text and by the state of the code that validated them, so the next start skips YAML
parsing (about 15 ms of the first slide for the grad lesson) and, where the caller allows it,
the checks beyond the lesson's structure (`load_lesson_file`'s `recheck`); also the colours
of a lesson's code (`gradtutor.ui.codeblock.highlighted`), under keys of their own.

Only JSON is stored, so an entry can never build an object or run code; it is still built
into the model, its structure checked, on every load, and a damaged or foreign entry is
simply ignored, as is one that is no regular file or is larger than any lesson's data (it is
not even read). A lesson entry is found only for the same text checked by the same code: the
version, and the state of the loader's modules and of its rules' (`files.code_state`), so
that an edited or reinstalled gradtutor checks every lesson again.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from pathlib import Path
from typing import Any

from gradtutor import __version__

try:  # hashlib's own BLAKE2, without the OpenSSL that importing hashlib loads (3 ms a start)
    from _blake2 import blake2b
except ImportError:  # a Python built without it: hashlib's
    from hashlib import blake2b
from gradtutor.errors import GradtutorError
from gradtutor.files import code_state, read_capped

MAX_BYTES = 16 * 1024**2  # a lesson file is at most 2 MB of YAML; its data as JSON is near that
STALE_TEMP_S = 60.0  # a temporary file older than this is no write still in progress


def cache_dir() -> Path:
    home = os.environ.get("GRADTUTOR_HOME")
    if home:
        return Path(home).expanduser() / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("gradtutor", appauthor=False))


@functools.cache
def _loader_state() -> str:
    """The state of the lesson loader's own code (this package), as the process found it."""
    return code_state(Path(__file__).parent)


def checked_by(rules_state: str) -> str:
    """What a lesson's entry is kept under beside its text: the state of the code that
    validated it, the loader's and its rules' (`ExerciseRules.state`)."""
    return f"{_loader_state()}\0{rules_state}"


def _entry(text: str, checker: str = "") -> Path:
    digest = blake2b(f"{__version__}\0{checker}\0{text}".encode(), digest_size=20).hexdigest()
    return cache_dir() / f"lesson-{digest}.json"


def get(text: str, checker: str = "") -> Any | None:
    """The plain data cached for exactly this text, checked by `checker` (`checked_by`), or
    None."""
    try:
        return json.loads(read_capped(_entry(text, checker), MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError, GradtutorError):  # a cache miss, no more
        return None


def put(text: str, data: Any, checker: str = "") -> None:
    """Remember the plain data of a text that parsed and validated with no problem, checked by
    `checker` (`checked_by`)."""
    from gradtutor.files import write_atomic

    with contextlib.suppress(OSError, TypeError, ValueError):  # an unwritable cache costs time only
        write_atomic(_entry(text, checker), json.dumps(data, ensure_ascii=False))
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
