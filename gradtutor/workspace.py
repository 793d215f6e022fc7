"""The learner's exercise files: one `EXERCISE.py` per exercise in a workspace folder, the
starter written there once, and the learner's own editor opened on it; and an ordering step's
answer file, `STEP.txt`, which holds the order the learner last gave in the tutor.

An exercise file the learner has is never written over: the starter goes in only where no
file is.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from gradtutor.errors import GradtutorError
from gradtutor.files import read_capped, write_atomic
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise

# Tried in turn when neither VISUAL nor EDITOR is set; nano first: it shows its own keys.
FALLBACK_EDITORS = ("nano", "vim", "vi")


def default_folder(home: Path) -> Path:
    """The workspace when none is chosen: inside the learner's data folder."""
    return home / "workspace"


def exercise_path(folder: Path, exercise_id: str) -> Path:
    return folder / f"{exercise_id}.py"


MAX_FILE_BYTES = 1024**2  # an answer is a few lines; a check reads no file larger than this


def answer_path(folder: Path, step_id: str) -> Path:
    """The answer file of an ordering step: its lines, one per line, in the learner's order;
    `gradtutor check STEP` reads it when no FILE is named."""
    return folder / f"{step_id}.txt"


def write_answer(folder: Path, step_id: str, lines: tuple[str, ...]) -> None:
    """Put an ordering step's latest answer in its answer file, whole or not at all.

    GradtutorError when it cannot be written."""
    path = answer_path(folder, step_id)
    try:
        write_atomic(path, "".join(line.strip() + "\n" for line in lines))
    except OSError as exc:
        raise GradtutorError(msg("cannot write {path} ({error})", path=path,
                                 error=exc.strerror or exc),
                             msg("choose a folder you can write to with --workspace DIR")
                             ) from None


def read_exercise_file(path: Path, cap: int = MAX_FILE_BYTES) -> bytes:
    """The learner's file (an exercise's code, or a line-ordering step's order) as bytes,
    never more than `cap + 1` of them, and never from a pipe or a device. GradtutorError
    when it is missing, a folder or no regular file, or unreadable; FileTooLarge (one too)
    when it holds more than `cap` bytes."""
    try:
        return read_capped(path, cap, msg("name the file with your answer"))
    except FileNotFoundError:
        raise GradtutorError(msg("there is no file {path}", path=str(path)),
                             msg("write your answer in that file, or name the right one")) from None
    except IsADirectoryError:
        raise GradtutorError(msg("{path} is a folder, not a Python file", path=str(path)),
                             msg("name the .py file with your answer")) from None
    except OSError as exc:
        raise GradtutorError(msg("cannot read {path}: {error}", path=str(path),
                                 error=exc.strerror or str(exc)),
                             msg("check the file's permissions")) from None


def content_digest(data: bytes) -> str:
    """What identifies a file's content: two saves of the same text are one change."""
    return hashlib.sha256(data).hexdigest()


def write_starter(folder: Path, exercise: Exercise) -> bool:
    """Put the exercise's starter in its file unless a file is already there; True if written.

    GradtutorError when the folder cannot be made or written to."""
    path = exercise_path(folder, exercise.id)
    hint = msg("choose a folder you can write to with --workspace DIR")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where the folder should be, no permission, ...
        raise GradtutorError(msg("cannot make the workspace folder {folder} ({error})",
                                 folder=folder, error=exc.strerror or exc), hint) from None
    try:
        # "x": created only if absent, so a learner's file, even one saved a moment ago, stays
        with open(path, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(exercise.starter)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        raise GradtutorError(msg("cannot write {path} ({error})", path=path,
                                 error=exc.strerror or exc), hint) from None


def editor_command(environ: Mapping[str, str], which: Callable[[str], str | None],
                   windows: bool) -> list[str] | None:
    """The command that edits a file (the file's path goes last): $VISUAL, else $EDITOR (each
    may carry arguments, as in `code -w`), else notepad on Windows, else the first of
    FALLBACK_EDITORS found on PATH; None if there is none."""
    for name in ("VISUAL", "EDITOR"):
        value = environ.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value, posix=not windows)
            except ValueError:  # an unclosed quote: take it as one program name
                words = [value]
            if words:
                return [w.strip('"') if windows else w for w in words]
    if windows:
        return ["notepad"]
    for name in FALLBACK_EDITORS:
        found = which(name)
        if found:
            return [found]
    return None


def open_in_editor(path: Path, environ: Mapping[str, str]) -> str | None:
    """Edit `path` in the learner's editor and wait for it to close; None when it ran, else
    one line (a `msg()`, to say in the learner's language) on what went wrong and what to do."""
    command = editor_command(environ, shutil.which, sys.platform == "win32")
    if command is None:
        return msg("No editor found: set EDITOR (for example `export EDITOR=nano`), or open "
                   "{path} in any editor; each save is checked.", path=path)
    try:
        done = subprocess.run([*command, str(path)], check=False)
    except FileNotFoundError:
        return msg("The editor '{editor}' was not found: check VISUAL or EDITOR.",
                   editor=command[0])
    except OSError as exc:
        return msg("The editor '{editor}' could not start ({error}): check EDITOR.",
                   editor=command[0], error=exc.strerror or exc)
    if done.returncode != 0:
        editor = os.path.basename(command[0])
        return msg("The editor '{editor}' ended with exit code {code}.", editor=editor,
                   code=done.returncode)
    return None
