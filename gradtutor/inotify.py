"""Linux's inotify, read directly (through libc), for the file watcher: it says not only that
a file changed but how, so a save can be read the moment its writer is done with it.

`DirectoryEvents` watches one folder; `read` waits for events and returns them as
(name, kind) pairs, kind one of the constants below. Anything missing (not Linux, no libc
symbol, no inotify watches left) raises OSError from `open_events`, and the caller falls back.
"""

from __future__ import annotations

import ctypes
import os
import select
import struct
from pathlib import Path

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = getattr(os, "O_CLOEXEC", 0o2000000)
_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
         | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | _IN_ONLYDIR)
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then the name

# What an event means for a file in the folder: its writer is done with it (`DONE`: closed
# after writing, or renamed into place), it is being written or may have changed (`WRITING`;
# also when events were lost), it is gone (`GONE`), or the folder itself went away and no
# more events will come (`ENDED`).
DONE, WRITING, GONE, ENDED = "done", "writing", "gone", "ended"


def kind_of(mask: int) -> str:
    if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
        return ENDED
    if mask & (IN_CLOSE_WRITE | IN_MOVED_TO):
        return DONE
    if mask & (IN_DELETE | IN_MOVED_FROM):
        return GONE
    return WRITING  # IN_MODIFY, IN_ATTRIB, IN_CREATE, IN_Q_OVERFLOW


class DirectoryEvents:
    """The events of one folder's entries, until `close`. `stop_fd`: a descriptor that turns
    readable when the reader is to stop waiting."""

    def __init__(self, fd: int, stop_fd: int) -> None:
        self._fd = fd
        self._stop_fd = stop_fd

    def read(self, timeout: float | None) -> list[tuple[str, str]] | None:
        """The events that came within `timeout` seconds (None: wait until some come), as
        (file name, kind); [] when none came; None when told to stop."""
        ready = select.select([self._fd, self._stop_fd], [], [], timeout)[0]
        if self._stop_fd in ready:
            return None
        if self._fd not in ready:
            return []
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return []
        found = []
        at = 0
        while at + _HEADER.size <= len(data):
            _wd, mask, _cookie, length = _HEADER.unpack_from(data, at)
            raw = data[at + _HEADER.size:at + _HEADER.size + length]
            at += _HEADER.size + length
            found.append((os.fsdecode(raw.rstrip(b"\0")), kind_of(mask)))
        return found

    def close(self) -> None:
        os.close(self._fd)


def open_events(folder: Path, stop_fd: int) -> DirectoryEvents:
    """inotify on `folder`; OSError where that cannot be had."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError) as exc:
        raise OSError(f"no inotify here: {exc}") from None
    add.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
    fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
    if fd < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    if add(fd, os.fsencode(folder), _MASK) < 0:
        error = ctypes.get_errno()
        os.close(fd)
        raise OSError(error, os.strerror(error))
    return DirectoryEvents(fd, stop_fd)
