"""The plain data of lesson files that already parsed cleanly, keyed by their exact text, so
the next start skips YAML parsing (about 15 ms of the first slide for the grad lesson).

Only JSON is stored, so an entry can never build an object or run code; it is still
validated into the model on every load, and a damaged or foreign entry is simply ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from gradtutor import __version__


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
        return json.loads(_entry(text).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def put(text: str, data: Any) -> None:
    """Remember the plain data of a text that parsed and validated with no problem."""
    from gradtutor.store import write_atomic

    with contextlib.suppress(OSError, TypeError, ValueError):  # an unwritable cache costs time only
        write_atomic(_entry(text), json.dumps(data, ensure_ascii=False))
