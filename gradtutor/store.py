"""The progress file on disk: atomic writes, a lock shared by every running tutor, and
recovery from a file that cannot be read.

`update` re-reads the file under the lock and applies a pure transition to it, so two tutors
open at once each add their own changes instead of overwriting the other's.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from gradtutor.errors import GradtutorError
from gradtutor.i18n import Msg, msg
from gradtutor.progress import Progress, ProgressFormatError, from_json, to_json

FILE_NAME = "progress.json"
LOCK_TIMEOUT_S = 10.0


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable; directories cannot be opened this way on Windows.
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` so that a reader sees the old file or the new, never half."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


class ProgressStore:
    """Progress kept in `folder/progress.json`; `warn` gets one line (a `msg()`, for the
    caller to say in the learner's language) if a file is set aside. The file is the same
    whatever the language: ids and numbers only, so progress made in one reads in any other."""

    def __init__(self, folder: Path, warn: Callable[[str], None]) -> None:
        self.folder = folder
        self.path = folder / FILE_NAME
        self._warn = warn
        self.lock_path = folder / f"{FILE_NAME}.lock"

    def load(self) -> Progress:
        """The saved progress; an empty one if there is none or it had to be set aside."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return Progress()
        except PermissionError:
            raise  # not unusable, only locked away: the CLI names it, nothing is set aside
        except OSError as exc:
            return self._set_aside(msg("it could not be read ({error})", error=exc.strerror))
        try:
            return from_json(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._set_aside(msg("it is not valid JSON"))
        except ProgressFormatError as exc:
            reason = exc.args[0] if exc.args and isinstance(exc.args[0], Msg) else str(exc)
            return self._set_aside(reason)
        except RecursionError:
            return self._set_aside(msg("it is nested too deeply"))

    def update(self, change: Callable[[Progress], Progress]) -> Progress:
        """Apply `change` to the freshest saved progress and save the result atomically."""
        # imported here, not at start-up: the first slide shows before anything is saved
        from filelock import FileLock, Timeout

        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_S):
                progress = change(self.load())
                write_atomic(self.path, json.dumps(to_json(progress), indent=2) + "\n")
                return progress
        except Timeout:
            raise GradtutorError(
                msg("progress is locked by another gradtutor that is not answering"),
                msg("close other gradtutor windows, or delete {path}", path=self.lock_path),
            ) from None
        except OSError as exc:
            raise GradtutorError(
                msg("cannot save progress in {folder} ({error})", folder=self.folder,
                    error=exc.strerror),
                msg("set GRADTUTOR_HOME to a folder you can write to"),
            ) from None

    def _set_aside(self, reason: str) -> Progress:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        backup = self.path.with_name(f"progress.{stamp}.bak.json")
        n = 1
        while backup.exists():
            n += 1
            backup = self.path.with_name(f"progress.{stamp}-{n}.bak.json")
        try:
            os.replace(self.path, backup)
        except OSError as exc:
            self._warn(msg("warning: saved progress is unusable ({reason}) and could not be "
                           "moved aside ({error}); starting fresh without saving over it",
                           reason=reason, error=exc.strerror))
            raise GradtutorError(
                msg("cannot move aside the unusable progress file {path}", path=self.path),
                msg("move or delete it yourself, then try again")) from None
        self._warn(msg("warning: saved progress was unusable ({reason}); kept it as {backup} "
                       "and started fresh", reason=reason, backup=backup))
        return Progress()


def default_home(environ: Mapping[str, str]) -> Path:
    """GRADTUTOR_HOME, else the per-user data directory of this OS."""
    override = environ.get("GRADTUTOR_HOME")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("gradtutor", appauthor=False))
