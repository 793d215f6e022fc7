"""The walkthrough's terminal: screens go out, and the learner's keys (on a terminal) or lines
(anywhere else) come in, together with the news background threads post to one inbox. On a
terminal the screen takes the whole window, which is given back however the walk ends.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from rich.console import Console

from gradtutor.env import Environment
from gradtutor.records import record
from gradtutor.ui.fullscreen import FullScreen
from gradtutor.ui.keys import WAKE_INTERRUPT, WAKE_NEWS, WAKE_RESIZE, TimedReader, timed_reader
from gradtutor.ui.render import Look
from gradtutor.ui.screen import Screen
from gradtutor.walk.input import key_event, line_event
from gradtutor.walk.machine import busy

if TYPE_CHECKING:
    from gradtutor.lessons.model import Lesson
    from gradtutor.walk.events import Event
    from gradtutor.walk.state import WalkState

KEY_WAIT_S = 0.1  # how long a key is awaited before the size is polled and the inbox looked at
# ... where news cannot wake the key reader (Windows; no SIGWINCH pipe): news waits this long
NEWS_WAIT_S = 0.01
LINE_CAP = 4096  # characters in one typed line; input with longer "lines" is not typing


def read_line(stream: TextIO) -> str:
    """One typed line from `stream`; "" at its end, and for input that is no typing at all:
    a line without end (`< /dev/zero`), a closed or hung-up stream."""
    try:
        line = stream.readline(LINE_CAP)
    except (OSError, ValueError):
        return ""
    return "" if len(line) >= LINE_CAP and not line.endswith("\n") else line


@record
class Typed:
    """A line the learner typed ("" at the end of input)."""

    line: str


class LineReader:
    """Reads one line from `stream` in a thread when asked, and posts it as Typed.

    Only one read is ever outstanding, and none is started while the tutor waits for a
    check: piped input is then taken in the order a person would type it."""

    def __init__(self, stream: TextIO, post: Callable[[Typed], None]) -> None:
        self._stream = stream
        self._post = post
        self._wanted = threading.Semaphore(0)
        self._outstanding = False
        self._thread: threading.Thread | None = None

    def want(self) -> None:
        if self._outstanding:
            return
        self._outstanding = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gradtutor-lines",
                                            daemon=True)
            self._thread.start()
        self._wanted.release()

    def got(self) -> None:
        self._outstanding = False

    def _run(self) -> None:
        while True:
            self._wanted.acquire()
            line = read_line(self._stream)
            self._post(Typed(line))
            if not line:
                return


@dataclass
class Io:
    """How screens go out and events come in: single keys on a terminal, else lines; and
    the inbox where background threads post their news. On a terminal, `full` draws each
    screen into the whole window."""

    console: Console
    keys: bool
    stdin: TextIO
    inbox: queue.Queue[Event | Typed] = field(default_factory=queue.Queue)
    read_key: TimedReader | None = None
    lines: LineReader | None = None
    full: FullScreen | None = None
    # Wakes `read_key` from its wait (writes to its `wake` descriptor), so that news shows at
    # once rather than after KEY_WAIT_S: a save's verdict is on screen the moment it is known.
    nudge: Callable[[bytes], None] | None = None

    def show(self, screen: Screen, follow: bool = True) -> None:
        if self.full is not None:
            self.full.show(screen, follow)
            return
        self.console.print(screen)
        if not self.keys:
            self.console.print("> ", end="")
            self.console.file.flush()

    def key(self) -> str:
        """The next key pressed on the terminal ("eof" once it is gone), the screen drawn
        again whenever the window is resized meanwhile; news waits in the inbox (the pages
        over the walkthrough's screen, such as asking, read keys so)."""
        assert self.read_key is not None
        while True:
            key = self.read_key(KEY_WAIT_S)
            if key is not None and key != "resize":  # polled too: not every system signals
                if key in ("ctrl-c", "eof") or not self._too_small():
                    return key
                continue  # a key pressed blind, on a window too small to show the screen
            if self.full is not None:
                self.full.resized()

    def _too_small(self) -> bool:
        return self.full is not None and self.full.too_small()

    def post(self, event: Event) -> None:
        """Called from any thread."""
        self.inbox.put(event)
        if self.nudge is not None:
            self.nudge(WAKE_NEWS)

    def next_event(self, lesson: Lesson, state: WalkState) -> Event:
        """The next thing that happens: news from the background first, else the learner's
        key or line. A resized terminal is drawn again on the way."""
        while True:
            if self.read_key is not None:
                with contextlib.suppress(queue.Empty):
                    return self._event(lesson, state, self.inbox.get_nowait())
                key = self.read_key(KEY_WAIT_S if self.nudge is not None else NEWS_WAIT_S)
                if key is None or key == "resize":  # polled too: not every system signals
                    if self.full is not None:
                        self.full.resized()
                    continue
                if key == "eof":  # the terminal is gone: stop where we are, progress is saved
                    return "quit"
                event = key_event(lesson, state, key)
                if event != "quit" and self._too_small():
                    continue  # pressed blind: only quitting works until the window grows
                return event
            if self.lines is None:
                self.lines = LineReader(self.stdin, self.inbox.put)
            if not busy(state):
                self.lines.want()
            with contextlib.suppress(queue.Empty):  # a timeout keeps Ctrl-C answered
                return self._event(lesson, state, self.inbox.get(timeout=0.5))

    def _event(self, lesson: Lesson, state: WalkState, item: Event | Typed) -> Event:
        if not isinstance(item, Typed):
            return item
        if self.lines is not None:
            self.lines.got()
        if not item.line:  # end of input: stop where we are, progress is saved
            return "quit"
        return line_event(lesson, state, item.line)


@contextlib.contextmanager
def make_io(env: Environment, plain: bool, look: Look) -> Iterator[Io]:
    """The walkthrough's input and output for as long as it runs; on a terminal, the full
    screen, left (and the terminal restored) however the walkthrough ends."""
    console = env.console(plain)
    if not env.interactive:
        with _calm_termination(("SIGHUP",)):
            yield Io(console, keys=False, stdin=env.stdin)
        return
    with _resize_signal() as (wake, note), _calm_termination(("SIGINT", "SIGTERM", "SIGHUP"),
                                                             note):
        full = FullScreen(console, env.terminal_size, look)
        io = Io(console, keys=True, stdin=env.stdin, read_key=timed_reader(env.stdin, wake),
                full=full, nudge=note)
        full.enter()
        try:
            yield io
        finally:
            with ignoring_interrupts():  # a late Ctrl-C must not cut the restore short
                full.leave()


@contextlib.contextmanager
def _calm_termination(names: tuple[str, ...],
                      note: Callable[[bytes], None] | None = None) -> Iterator[None]:
    """These signals quit as q does: SIGTERM (`kill`) and SIGHUP (the terminal closed), and
    SIGINT where it is named. The place is saved and the terminal restored, instead of the
    process dying with the screen still taken. A signal already ignored stays ignored
    (`nohup`): a terminal that goes away then ends the input, which quits all the same.

    Each raises KeyboardInterrupt, and first `note`s it for the key reader (WAKE_INTERRUPT):
    Python drops a KeyboardInterrupt raised while it runs a callback of its own (a weak
    reference's, as an import ends: "Exception ignored in"), and the tutor would then wait
    for keys as if it had never come. Noted, the next wait for a key answers "ctrl-c"."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        if note is not None:
            note(WAKE_INTERRUPT)
        raise KeyboardInterrupt

    previous: dict[signal.Signals, object] = {}
    for name in names:
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]


@contextlib.contextmanager
def _resize_signal() -> Iterator[tuple[int | None, Callable[[bytes], None] | None]]:
    """A descriptor that turns readable when the terminal is resized (SIGWINCH), so the key
    reader wakes at once, and a function that writes another note to it (a signal handler's,
    `_calm_termination`, or news posted, `Io.post`); (None, None) where there is no such
    signal (the size is polled)."""
    winch = getattr(signal, "SIGWINCH", None)
    if winch is None or threading.current_thread() is not threading.main_thread():
        yield None, None
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)

    def note(what: bytes) -> None:
        with contextlib.suppress(OSError):
            os.write(write, what)

    def wake(signum: int, frame: object) -> None:
        note(WAKE_RESIZE)

    previous = signal.signal(winch, wake)
    try:
        yield read, note
    finally:
        signal.signal(winch, previous)
        os.close(read)
        os.close(write)


@contextlib.contextmanager
def ignoring_interrupts() -> Iterator[None]:
    """Ctrl-C does nothing while this lasts (an editor has the terminal, the screen is being
    given back)."""
    # A handler, not SIG_IGN: a handler is reset in the editor's process, SIG_IGN would be
    # inherited and leave the editor unable to be interrupted itself.
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
