"""Noticing when the learner saves a file, whatever their editor and file system.

A small stat poll (mtime, size, inode every POLL_S) always runs: it is what finds saves where
file events never arrive (network drives, WSL's /mnt, some containers). File events, where
the OS has them (the `watchfiles` library), only wake the poll at once, so a save shows in a
blink instead of within POLL_S. The folder is watched, not the file, because editors save by
writing a temporary file and renaming it over the old one. A burst of writes settles before
the file is read, and a save whose content did not change is not reported.

GRADTUTOR_WATCH=poll turns the file events off (for testing the fallback, or a file system
whose events misbehave).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from gradtutor.errors import GradtutorError
from gradtutor.files import FileTooLarge
from gradtutor.workspace import content_digest, read_exercise_file

POLL_S = 0.3  # how often the file's stat is looked at when no event woke the watcher
SETTLE_S = 0.05  # a change must hold this long before the file is read (write bursts)
MAX_SETTLE_S = 1.0  # ... but a file written to without pause is read after this long

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
        self.events_seen = False  # a file event has arrived (tests tell the two paths apart)

    def start(self) -> None:
        self._last_signature = _signature(self.path)
        self._last_digest = _digest(self.path)
        poll = threading.Thread(target=self._poll, name="gradtutor-poll", daemon=True)
        self._threads.append(poll)
        if self._use_events:
            events = threading.Thread(target=self._events, name="gradtutor-events", daemon=True)
            self._threads.append(events)
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout=1.0)

    def _poll(self) -> None:
        while not self._stop.is_set():
            woken = self._wake.wait(self._poll_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            signature = _signature(self.path)
            if signature == self._last_signature and not woken:
                continue
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
        """Wait until the file stops changing (or MAX_SETTLE_S passes); its signature then."""
        waited = 0.0
        while waited < MAX_SETTLE_S and not self._stop.wait(SETTLE_S):
            waited += SETTLE_S
            later = _signature(self.path)
            if later == signature:
                return later
            signature = later
        return signature

    def _events(self) -> None:
        """Wake the poll on every file event in the folder that names our file. Any failure
        here (no watchfiles, no inotify watches left, a folder that vanished) leaves the
        poll to do the work alone."""
        name = self.path.name
        try:
            from watchfiles import watch

            for _ in watch(self.path.parent, watch_filter=lambda _c, p: Path(p).name == name,
                           debounce=200, step=20, stop_event=self._stop, recursive=False,
                           raise_interrupt=False, rust_timeout=1000, yield_on_timeout=False,
                           ignore_permission_denied=True):
                self.events_seen = True
                self._wake.set()
        except Exception:  # noqa: BLE001 - events only speed things up; the poll goes on
            return
