"""Noticing when the learner saves a file, whatever their editor and file system.

A small stat poll (mtime, size, inode every POLL_S) always runs: it is what finds saves where
file events never arrive (network drives, WSL's /mnt, some containers); once inotify has
reported a save in the folder, it leaves them to inotify (it could read one half written).
The folder is watched, not the file, because editors save by writing a temporary file and
renaming it over the old one. A save whose content did not change is not reported.

When is a save over? On Linux, inotify says how a file changed: once its writer closes it
after writing, or renames it into place, it is read as soon as QUIET_DONE_S passes with no
other event for it (a program that truncates the file, then writes it in a second step, is
one save), so a single save is checked at once; a file still open for writing, or gone (an
editor that moves the old file away first), is awaited until it is closed or back.
Elsewhere, file events (the `watchfiles` library) only wake the poll, which then waits for
the file's stat to hold still for SETTLE_S, as it does when it finds a change itself. Either
way a burst of writes is read once, at its end, and never later than MAX_SETTLE_S after it
began.

GRADTUTOR_WATCH=poll turns the file events off (for testing the fallback, or a file system
whose events misbehave).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from gradtutor.errors import GradtutorError
from gradtutor.files import FileTooLarge
from gradtutor.workspace import content_digest, read_exercise_file

if TYPE_CHECKING:
    from gradtutor.inotify import DirectoryEvents

POLL_S = 0.3  # how often the file's stat is looked at when no event woke the watcher
SETTLE_S = 0.05  # without inotify: a change must hold this long before the file is read
MAX_SETTLE_S = 1.0  # ... but a file written to without pause is read after this long
QUIET_DONE_S = 0.01  # inotify: a file closed after writing, or renamed in, is read this soon

Signature = tuple[int, int, int] | None  # (mtime_ns, size, inode), None when there is no file


def events_enabled(environ: Mapping[str, str]) -> bool:
    return environ.get("GRADTUTOR_WATCH", "").strip().lower() != "poll"


def _signature(path: Path) -> Signature:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _digest(path: Path) -> str | None:
    try:
        return content_digest(read_exercise_file(path))
    except FileTooLarge:  # read no further; the check says the file is too large
        return content_digest(repr(_signature(path)).encode())
    except GradtutorError:  # gone, unreadable, or a pipe or device: not a save to check
        return None


class FileWatch:
    """Calls `on_change(digest)` from a background thread each time the content of `path`
    changes, starting from its content when `start` runs."""

    def __init__(self, path: Path, on_change: Callable[[str], None], *,
                 use_events: bool = True, poll_s: float = POLL_S) -> None:
        self.path = path
        self._on_change = on_change
        self._use_events = use_events
        self._poll_s = poll_s
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._last_signature: Signature = None
        self._last_digest: str | None = None
        # inotify's: a save is over (read it at once), and one is under way (the poll waits)
        self._done = False
        self._pending = False
        self._stop_pipe: tuple[int, int] | None = None
        self._inotify_events: DirectoryEvents | None = None
        self.events_seen = False  # a file event has arrived (tests tell the two paths apart)

    def start(self) -> None:
        self._last_signature = _signature(self.path)
        self._last_digest = _digest(self.path)
        poll = threading.Thread(target=self._poll, name="gradtutor-poll", daemon=True)
        self._threads.append(poll)
        if self._use_events:
            self._inotify_events = self._open_inotify()
            events = threading.Thread(target=self._events, name="gradtutor-events", daemon=True)
            self._threads.append(events)
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._stop_pipe is not None:
            os.write(self._stop_pipe[1], b"x")
        for thread in self._threads:
            thread.join(timeout=1.0)
        if self._stop_pipe is not None:
            for fd in self._stop_pipe:
                os.close(fd)
            self._stop_pipe = None

    def _open_inotify(self) -> DirectoryEvents | None:
        """inotify on the folder, in place before `start` returns (Linux; else None)."""
        if not sys.platform.startswith("linux"):
            return None
        from gradtutor.inotify import open_events

        self._stop_pipe = os.pipe()  # wakes the inotify reader when the watch stops
        try:
            return open_events(self.path.parent, self._stop_pipe[0])
        except OSError:  # no inotify to be had (no watches left, say): watchfiles may do
            return None

    def _poll(self) -> None:
        while not self._stop.is_set():
            woken = self._wake.wait(self._poll_s)
            self._wake.clear()
            done, self._done = self._done, False
            if self._stop.is_set():
                return
            if not woken and (self._pending or self._inotify_events is not None
                              and self.events_seen):
                continue  # inotify reports this folder's saves and wakes us when one is over
            signature = _signature(self.path)
            if signature == self._last_signature and not woken:
                continue
            if not done:
                signature = self._settle(signature)
            if signature is None or self._stop.is_set():
                self._last_signature = signature
                continue  # deleted, or renamed away mid-save: the rename in comes next
            self._last_signature = signature
            digest = _digest(self.path)
            if digest is not None and digest != self._last_digest:
                self._last_digest = digest
                self._on_change(digest)

    def _settle(self, signature: Signature) -> Signature:
        """Wait until the file stops changing (or MAX_SETTLE_S passes), or inotify says the
        save is over; its signature then."""
        began = time.monotonic()
        while time.monotonic() - began < MAX_SETTLE_S:
            deadline = time.monotonic() + SETTLE_S
            while (left := deadline - time.monotonic()) > 0:
                if self._wake.wait(left):
                    if self._stop.is_set():
                        return signature
                    self._wake.clear()  # another event of the same burst: keep waiting
                    if self._done:
                        self._done = False
                        return _signature(self.path)
            later = _signature(self.path)
            if later == signature:
                return later
            signature = later
        return signature

    def _events(self) -> None:
        """Wake the poll on the file events of our file. Any failure here (no watchfiles, no
        inotify watches left, a folder that vanished) leaves the poll to do the work alone."""
        try:
            if self._inotify_events is not None:
                self._inotify(self._inotify_events)
            else:
                self._watchfiles()
        except Exception:  # noqa: BLE001 - events only speed things up; the poll goes on
            self._pending = False
            self._wake.set()

    def _inotify(self, events: DirectoryEvents) -> None:
        """Tell the poll when a save of our file is over, by what inotify says of it."""
        from gradtutor.inotify import DONE, ENDED, GONE

        name = self.path.name
        began: float | None = None  # when the save under way began
        due = 0.0  # when it is over, unless another event comes first
        gone = False  # ... and whether it waits for the file to come back
        try:
            while True:
                wait = None if began is None else max(0.0, due - time.monotonic())
                found = events.read(wait)
                if found is None:
                    return
                kinds = [kind for entry, kind in found if entry in (name, "")]
                if ENDED in kinds:
                    return  # the folder went away: the poll finds what happens next
                now = time.monotonic()
                if kinds:
                    self.events_seen = True
                    self._pending = True
                    if began is None or (gone and now >= due):  # back after the wait: anew
                        began = now
                    gone = kinds[-1] == GONE
                    # a save is over when its writer is done (and nothing follows at once);
                    # while the file is open for writing, or gone, its close or return is
                    # awaited
                    due = (min(now + QUIET_DONE_S, began + MAX_SETTLE_S) if kinds[-1] == DONE
                           else began + MAX_SETTLE_S)
                if began is not None and now >= due:
                    began = None
                    self._pending = False
                    if not gone:  # a file that is gone has nothing to read; its return does
                        self._done = True
                        self._wake.set()
        finally:
            self._inotify_events = None  # no more events: the poll's ticks look again
            self._pending = False
            events.close()

    def _watchfiles(self) -> None:
        name = self.path.name
        from watchfiles import watch

        for _ in watch(self.path.parent, watch_filter=lambda _c, p: Path(p).name == name,
                       debounce=200, step=20, stop_event=self._stop, recursive=False,
                       raise_interrupt=False, rust_timeout=1000, yield_on_timeout=False,
                       ignore_permission_denied=True):
            self.events_seen = True
            self._wake.set()
