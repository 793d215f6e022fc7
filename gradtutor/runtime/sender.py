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


class ResultSender:
    """`send` for `evaluate`: one JSON line per message on the private result pipe `fd`.

    The encoder and `os.write` are bound now, before learner code exists, so a learner who
    replaces `json.dumps` or `os.write` later cannot change what the tutor receives."""

    __slots__ = ("_encode", "_write", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
        self._write = os.write

    def __call__(self, message: protocol.ResultMessage) -> None:
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
