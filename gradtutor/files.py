"""Reading a file the tutor did not write itself (progress, the lesson cache, lessons, the
learner's files) so that no file can hang it or fill its memory.

Only regular files are read: a named pipe would block the open or the read forever, a device
such as /dev/zero never ends. The file is opened without blocking and looked at again
through the open descriptor, so a file swapped for a pipe between the two looks is caught
too. At most `cap + 1` bytes are ever read, whatever the file claims its size is.

Writing one (progress, the lesson cache, a translation) is atomic: a reader sees the old file
or the new, never half.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from gradtutor.errors import GradtutorError
from gradtutor.i18n import Msg, msg

# O_NONBLOCK: opening a named pipe with no writer returns at once instead of waiting for one.
# O_NOCTTY: a terminal device opened by mistake never becomes the controlling terminal.
_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_CHUNK = 1 << 20


class NotAFile(GradtutorError):
    """The path names a folder, a named pipe, a device or a socket: nothing to read."""

    def __init__(self, path: Path, kind: Msg, hint: str) -> None:
        super().__init__(msg("cannot read {path}: it is {kind}, not a regular file",
                             path=path, kind=kind), hint)
        self.path = path
        self.kind = kind


class FileTooLarge(GradtutorError):
    """The file holds more than the bytes allowed for its kind; `size` is at least cap + 1."""

    def __init__(self, path: Path, size: int, cap: int, hint: str) -> None:
        super().__init__(msg("cannot read {path}: it is {size}, more than the {limit} "
                             "gradtutor reads from such a file", path=path,
                             size=size_text(size), limit=size_text(cap)), hint)
        self.path = path
        self.size = size
        self.cap = cap


def size_text(size: int) -> str:
    """A byte count as people read it: 512 bytes, 64 KiB, 1.5 MiB, 2.0 GiB."""
    if size < 1024:
        return f"{size} bytes"
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size // 1024} KiB"


def _kind(mode: int) -> Msg:
    if stat.S_ISDIR(mode):
        return msg("a folder")
    if stat.S_ISFIFO(mode):
        return msg("a named pipe (FIFO)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return msg("a device")
    if stat.S_ISSOCK(mode):
        return msg("a socket")
    return msg("a special file")


def read_capped(path: Path, cap: int, hint: str = "") -> bytes:
    """The bytes of the regular file at `path` (symbolic links followed), reading no more
    than `cap + 1` of them. NotAFile or FileTooLarge (GradtutorErrors, with `hint`) when it
    is not one or holds more than `cap` bytes; OSError (FileNotFoundError, ...) as open()
    raises it."""
    hint = hint or msg("name a regular file, or move that one out of the way")
    # a look before opening, so that no device is even opened (opening some has effects)
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotAFile(path, _kind(before.st_mode), hint)
    if before.st_size > cap:
        raise FileTooLarge(path, before.st_size, cap, hint)
    fd = os.open(path, _FLAGS)
    try:
        opened = os.fstat(fd)  # what was opened, which may not be what was looked at
        if not stat.S_ISREG(opened.st_mode):
            raise NotAFile(path, _kind(opened.st_mode), hint)
        if opened.st_size > cap:
            raise FileTooLarge(path, opened.st_size, cap, hint)
        chunks: list[bytes] = []
        total = 0
        while total <= cap:  # a file still growing, or one whose size lies, stops here
            chunk = os.read(fd, min(cap + 1 - total, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise FileTooLarge(path, max(total, opened.st_size), cap, hint)
        return b"".join(chunks)
    finally:
        os.close(fd)


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


def code_state(folder: Path) -> str:
    """The state of the Python code in `folder` and below: each module's path, size and time
    of change, the test by which Python itself decides that a module's compiled form is stale.
    It changes when any module there is edited, added, removed or installed anew."""
    found = []
    for where, folders, names in os.walk(folder):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                with contextlib.suppress(OSError):
                    info = os.stat(os.path.join(where, name))
                    found.append(f"{os.path.relpath(os.path.join(where, name), folder)} "
                                 f"{info.st_size} {info.st_mtime_ns}")
    return "\n".join(found)
