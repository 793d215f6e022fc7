"""The progress file on disk: atomic writes, a lock shared by every running tutor, and
recovery from a file that cannot be read, or from one bad entry in it.

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
from gradtutor.files import FileTooLarge, read_capped, size_text, write_atomic
from gradtutor.i18n import Msg, msg
from gradtutor.progress import Progress, ProgressFormatError, Read, SetAside, parse, to_json

FILE_NAME = "progress.json"
LOCK_TIMEOUT_S = 10.0
MAX_BYTES = 8 * 1024**2  # a whole course's progress is a few KiB
SAID_ONE_BY_ONE = 4  # entries set aside named each on its own line; more are counted


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _temp_files(folder: Path) -> list[Path]:
    """The temporary files `write_atomic` makes for the progress file, left behind by a tutor
    that was killed between making one and renaming it."""
    try:
        return list(folder.glob(f".{FILE_NAME}.*.tmp"))
    except OSError:
        return []


def _remove_temp_files(folder: Path) -> None:
    """Only with the progress lock held: every save writes its temporary file under it."""
    for stale in _temp_files(folder):
        with contextlib.suppress(OSError):
            stale.unlink()


class ProgressStore:
    """Progress kept in `folder/progress.json`; `warn` gets one line (a `msg()`, for the
    caller to say in the learner's language) for each thing set aside. The file is the same
    whatever the language: ids and numbers only, so progress made in one reads in any other.

    An entry that cannot be used is set aside alone: the file as it was is copied next to it
    once, the rest is read and the repaired file saved. A file that is not progress at all is
    moved aside whole. A file that is not a regular file is refused, one too large to be
    progress moved aside unread."""

    def __init__(self, folder: Path, warn: Callable[[str], None]) -> None:
        self.folder = folder
        self.path = folder / FILE_NAME
        self._warn = warn
        self.lock_path = folder / f"{FILE_NAME}.lock"
        self._swept = False
        self._told = False  # entries set aside were said this run

    def load(self) -> Progress:
        """The saved progress; an empty one if there is none or it had to be set aside."""
        if not self._swept:
            self._swept = True
            if _temp_files(self.folder):
                self._sweep_when_free()
        read, _ = self._read()
        if not read.set_aside:
            return read.progress
        return self._repair(read)

    def update(self, change: Callable[[Progress], Progress]) -> Progress:
        """Apply `change` to the freshest saved progress and save the result atomically."""
        # imported here, not at start-up: the first slide shows before anything is saved
        from filelock import FileLock, Timeout

        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_S):
                _remove_temp_files(self.folder)  # the lock is held: none is being written
                progress = change(self._load_locked())
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

    def _read(self) -> tuple[Read, bytes]:
        """The file read, with the entries it sets aside, and its bytes; a file that cannot be
        read at all is moved aside here (NotAFile, a GradtutorError, if it is no file)."""
        try:
            data = read_capped(self.path, MAX_BYTES, msg(
                "move it out of the way: gradtutor keeps progress in a regular file"))
        except FileNotFoundError:
            return Read(Progress()), b""
        except PermissionError:
            raise  # not unusable, only locked away: the CLI names it, nothing is set aside
        except FileTooLarge as exc:
            # moved aside unread: rewriting a file this size at every step would stall the tutor
            return Read(self._set_aside(msg(
                "it is {size}, more than the {limit} progress can take",
                size=size_text(exc.size), limit=size_text(exc.cap)))), b""
        except OSError as exc:
            return Read(self._set_aside(msg("it could not be read ({error})",
                                            error=exc.strerror))), b""
        try:
            return parse(data), data
        except ProgressFormatError as exc:
            reason = exc.args[0] if exc.args and isinstance(exc.args[0], Msg) else str(exc)
            return Read(self._set_aside(reason)), b""

    def _load_locked(self) -> Progress:
        """Read with the lock held; entries set aside are said, after a copy of the file as it
        was is kept (OSError if that copy cannot be made: nothing is then lost either)."""
        read, data = self._read()
        if read.set_aside:
            backup = self._backup(data)
            self._say(read.set_aside, backup)
        return read.progress

    def _repair(self, read: Read) -> Progress:
        """Set the bad entries aside for good, so that they are said once: a copy of the file,
        then the file saved without them. If that cannot be done the file stays as it is."""
        from filelock import FileLock, Timeout

        try:
            with FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_S):
                progress = self._load_locked()
                write_atomic(self.path, json.dumps(to_json(progress), indent=2) + "\n")
                return progress
        except (Timeout, OSError) as exc:
            if not self._told:  # the walkthrough loads often: say it once a run
                # Timeout is an OSError too, one with no strerror
                error = msg("it is locked") if isinstance(exc, Timeout) else str(
                    exc.strerror or exc)
                self._say(read.set_aside, None, error)
            return read.progress

    def _backup(self, data: bytes) -> Path:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        n = 1
        while True:
            name = f"progress.{stamp}.bak.json" if n == 1 else f"progress.{stamp}-{n}.bak.json"
            backup = self.path.with_name(name)
            try:
                fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_BINARY", 0), 0o600)
            except FileExistsError:
                n += 1
                continue
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
                raise
            return backup

    def _say(self, set_aside: tuple[SetAside, ...], backup: Path | None,
             error: str = "") -> None:
        """One line per entry set aside, with where the file as it was is kept; without a
        `backup`, the file could not be repaired (`error`) and is left as it is."""
        self._told = True
        for item in set_aside[:SAID_ONE_BY_ONE]:
            if backup is not None:
                self._warn(msg("warning: set aside {entry} of your saved progress ({reason}); "
                               "the rest is kept, and the file as it was is in {backup}",
                               entry=item.where, reason=item.reason, backup=backup))
            else:
                self._warn(msg("warning: skipped {entry} of your saved progress ({reason}); "
                               "the file is left as it is, as it could not be repaired "
                               "({error})", entry=item.where, reason=item.reason, error=error))
        more = len(set_aside) - SAID_ONE_BY_ONE
        if more > 0:
            self._warn(msg("warning: set aside {count} more entries of your saved progress; "
                           "the file as it was is in {backup}", count=more, backup=backup)
                       if backup is not None else
                       msg("warning: skipped {count} more entries of your saved progress",
                           count=more))

    def _sweep_when_free(self) -> None:
        """Remove the temporary files a tutor killed mid-save left, if no tutor is saving."""
        from filelock import FileLock, Timeout

        with contextlib.suppress(Timeout, OSError), \
                FileLock(str(self.lock_path), timeout=0):
            _remove_temp_files(self.folder)

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
