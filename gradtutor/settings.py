"""The learner's settings, kept in the data folder beside the progress (settings.json): the
language last chosen with `--lang`, so that every later command, and the one the tutor names
at the end of a lesson, speaks it too. Reading never fails: a missing, unreadable or foreign
file holds no setting."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from gradtutor.files import write_atomic
from gradtutor.i18n import language_code

SETTINGS_FILE = "settings.json"
_CAP = 64 * 1024  # bytes: a settings file is a few; anything larger is not ours


def _read(home: Path) -> dict[str, object]:
    try:
        with open(home / SETTINGS_FILE, "rb") as handle:
            data = json.loads(handle.read(_CAP + 1)[:_CAP])
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def saved_language(home: Path) -> str | None:
    """The language code kept in `home`'s settings, if it is one gradtutor speaks."""
    value = _read(home).get("lang")
    return language_code(value) if isinstance(value, str) else None


def remember_language(home: Path, lang: str) -> bool:
    """Keep `lang` as the learner's language (other settings stay as they are); False if the
    data folder cannot be written, which leaves the language as it was."""
    settings = _read(home)
    if settings.get("lang") == lang:
        return True
    settings["lang"] = lang
    with contextlib.suppress(OSError):
        write_atomic(home / SETTINGS_FILE, json.dumps(settings, indent=2) + "\n")
        return True
    return False
