"""The wire formats between the tutor and its own processes (never learner code): the fork
server's control socket (a Unix socket carrying fds), the reference process's socket, a
spawned worker's go-ahead pipe, and the environment marks of a check's processes. The result
channel that learner code's process writes is checking/protocol.py's.
"""

from __future__ import annotations

from typing import Literal, TypedDict, final

from gradtutor.checking.protocol import (
    CheckerRef,
    Expected,
    Malformed,
    _kind,
    _optional_pid,
    _pid,
    _record,
    _text,
    _whole,
    checker_ref,
    decode_expected,
    parse,
)


@final
# ---- the fork server (forkserver.serve) and the tutor, on its control socket ----------------
# The tutor sends a `HandOver` (with the check's two pipes) or a `Clone` (with a socket); the
# server says `ServerReady` (with its reference process's socket) or `ServerFailed` once at
# start, then per check `ChildTook` (the child that has the request), `ChildExit` (how it
# ended), and `Spare` (the child forked ahead for the next check); `Cloned` answers a `Clone`.

class HandOver(TypedDict):
    """Check the request in the file `request`, in the folder `work`."""

    type: Literal["check"]
    request: str
    work: str


@final
class Clone(TypedDict):
    type: Literal["clone"]


@final
class ServerReady(TypedDict):
    """Torch is imported; `references` is the reference process's pid, `spare` the child
    forked ahead for the first check (None if none could be)."""

    type: Literal["ready"]
    references: int
    spare: int | None


@final
class ServerFailed(TypedDict):
    """The server could not start (or read a request): "Type: message"."""

    type: Literal["failed"]
    error: str


@final
class ChildTook(TypedDict):
    """The check's child `pid` has its request."""

    type: Literal["child"]
    pid: int


@final
class ChildExit(TypedDict):
    """The check's child ended with `code` (as `Popen.returncode`: negative for a signal)."""

    type: Literal["exit"]
    code: int


@final
class Spare(TypedDict):
    """The child `pid` is forked ahead and waits for the next check."""

    type: Literal["spare"]
    pid: int


@final
class Cloned(TypedDict):
    """The second server `pid` serves the socket the `Clone` carried."""

    type: Literal["cloned"]
    pid: int


ToServer = HandOver | Clone


FromServer = ServerReady | ServerFailed | ChildTook | ChildExit | Spare | Cloned


def hand_over(request: str, work: str) -> HandOver:
    return {"type": "check", "request": request, "work": work}


def clone() -> Clone:
    return {"type": "clone"}


def server_ready(references: int, spare: int | None) -> ServerReady:
    return {"type": "ready", "references": references, "spare": spare}


def server_failed(error: str) -> ServerFailed:
    return {"type": "failed", "error": error}


def child_took(pid: int) -> ChildTook:
    return {"type": "child", "pid": pid}


def child_exit(code: int) -> ChildExit:
    return {"type": "exit", "code": code}


def spare(pid: int) -> Spare:
    return {"type": "spare", "pid": pid}


def cloned(pid: int) -> Cloned:
    return {"type": "cloned", "pid": pid}


def decode_to_server(data: bytes) -> ToServer:
    record = _record(parse(data), "request")
    if record.get("type") == "clone":
        return clone()
    _kind(record, "check")
    return hand_over(_text(record, "request"), _text(record, "work"))


def decode_from_server(data: bytes) -> FromServer:
    record = _record(parse(data), "server message")
    kind = record.get("type")
    if kind == "ready":
        return server_ready(_pid(record, "references"), _optional_pid(record, "spare"))
    if kind == "failed":
        return server_failed(_text(record, "error"))
    if kind == "child":
        return child_took(_pid(record, "pid"))
    if kind == "exit":
        return child_exit(_whole(record, "code"))
    if kind == "spare":
        return spare(_pid(record, "pid"))
    if kind == "cloned":
        return cloned(_pid(record, "pid"))
    raise Malformed("not a server message")


@final
# ---- the fork server's reference process (references.serve_references) ----------------------
# A line per question, a `ReferenceRequest`; a line back for each, `Expected` or `WorkerError`.

class ReferenceRequest(TypedDict):
    checker: CheckerRef
    seed: int


def reference_request(checker: CheckerRef, seed: int) -> ReferenceRequest:
    return {"checker": checker, "seed": seed}


def decode_reference_request(data: bytes) -> ReferenceRequest:
    record = _record(parse(data), "reference request")
    return reference_request(checker_ref(record, "checker"), _whole(record, "seed"))


def decode_reference(data: bytes) -> Expected:
    """The reference process's answer, if it is references (Malformed for anything else, a
    `worker_error` included: it could not compute them)."""
    return decode_expected(parse(data))


# ---- a spawned worker's go-ahead, on a pipe of its own; the worker's environment ------------

GO = b"go\n"


# The environment variable that marks every process of one check with the check's folder: the
# learner's processes inherit it, even through exec, so the tutor can find them (macOS).
CHECK_MARK = "GRADTUTOR_CHECK_MARK"


# Names the variables the tutor set for the fork server alone (spawn.SERVER_TUNING), which it
# removes from its environment at start.
TUNED_MARK = "GRADTUTOR_SERVER_TUNED"
