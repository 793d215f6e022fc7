"""The worker's end of the result channel: each message one JSON line on a private pipe,
written by functions bound before learner code exists; failures of ours as data.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable

from gradtutor.checking import protocol
from gradtutor.checking.protocol import WorkerExit

MAX_TRACEBACK_CHARS = 4000


# Where `evaluate` sends each message: the result pipe (`ResultSender`), or a list.
Send = Callable[[protocol.ResultMessage], None]


class ChannelLost(Exception):
    """The result pipe cannot be written (learner code closed it, or the tutor went away)."""


class ReferenceFailed(Exception):
    """The process computing the reference results failed; it said why on the channel, if it
    could, so this process says nothing more."""


def exit_code(raised: BaseException | None) -> int:
    """The exit code Python gives a program whose code returned (`raised` None) or raised
    `raised`: 0; a `sys.exit`'s own number (0 for None, 1 for anything but a number); 1."""
    try:
        if raised is None:
            return 0
        if isinstance(raised, SystemExit):
            code = raised.code
            if code is None:
                return 0
            return int(code) & 0xFF if type(code) in (int, bool) else 1
    except BaseException:  # noqa: BLE001 - a learner's SystemExit may have a `code` that raises
        pass
    return 1


class ForkedChildEnds:
    """Where control comes back from learner code to the worker (a `with` block around each
    call of it): in a process that learner code forked (`os.fork`; a `multiprocessing`
    child ends in multiprocessing's own code), the call's return or exception ends the
    process there, by `os._exit` with the code Python would give it (`exit_code`). Nothing
    is flushed (its unwritten output is a copy of its parent's) and nothing is sent: a child
    never reaches the worker's result path, so it can neither spoil nor add to the verdict.

    Made before learner code exists, so `os.getpid` and `os._exit` are the real ones even if
    learner code replaces them later."""

    __slots__ = ("_exit", "_getpid", "_pid")

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._getpid = os.getpid
        self._exit = os._exit

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, raised: BaseException | None, tb: object) -> None:
        self.here(raised)

    def here(self, raised: BaseException | None = None) -> None:
        """End this process if it is not the one this was made in."""
        if self._getpid() != self._pid:
            self._exit(exit_code(raised))


class ResultSender:
    """`send` for `evaluate`: one JSON line per message on the private result pipe `fd`.

    The encoder and `os.write` are bound now, before learner code exists, so a learner who
    replaces `json.dumps` or `os.write` later cannot change what the tutor receives. Only the
    process it was made in writes: a child of learner code that gets this far ends here
    (`ForkedChildEnds`; `evaluate` ends it sooner, as its call of learner code returns)."""

    __slots__ = ("_encode", "_ends", "_write", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
        self._write = os.write
        self._ends = ForkedChildEnds()

    def __call__(self, message: protocol.ResultMessage) -> None:
        self._ends.here()
        view = memoryview((self._encode(message) + "\n").encode("ascii"))
        try:
            while view:
                view = view[self._write(self.fd, view):]
        except OSError as exc:
            raise ChannelLost(str(exc)) from None


def result_sender(fd: int) -> ResultSender:
    return ResultSender(fd)


def flush_output() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        # BaseException: learner code may have replaced the stream with anything at all
        with contextlib.suppress(BaseException):
            stream.flush()  # type: ignore[union-attr]


def report_failures(send: Callable[[protocol.WorkerError], None],
                    body: Callable[[], None]) -> int:
    """Run `body`; the exit code that says how it went. A failure of ours becomes a
    `worker_error` message, never a traceback on the learner's stderr."""
    try:
        body()
        return WorkerExit.OK
    except ChannelLost:
        return WorkerExit.CHANNEL_LOST
    except ReferenceFailed:
        return WorkerExit.SOFTWARE
    except MemoryError:
        return WorkerExit.OUT_OF_MEMORY
    except BaseException as exc:  # noqa: BLE001 - reported as data
        with contextlib.suppress(BaseException):
            send(protocol.worker_error(protocol.raised(
                type(exc).__name__, str(exc)[:1000],
                "".join(traceback.format_exception(exc))[-MAX_TRACEBACK_CHARS:])))
        return WorkerExit.SOFTWARE
