"""The fork server (Linux): torch imported once, then one fresh child per check, each
forked by `fork_child`.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, NoReturn

from gradtutor.checking import protocol
from gradtutor.checking.protocol import WorkerExit
from gradtutor.runtime import wire
from gradtutor.runtime.prepare import (
    confine_learner,
    import_torch_quietly,
    preload,
    warm_up_training,
)
from gradtutor.runtime.references import serve_references
from gradtutor.runtime.sender import flush_output, report_failures, result_sender
from gradtutor.runtime.signals import fork_child
from gradtutor.runtime.wire import CHECK_MARK, TUNED_MARK
from gradtutor.runtime.worker import answer


def serve(control_fd: int, *, warm_up: bool = True) -> NoReturn:
    """The fork server: import torch and the checkers once, then fork one fresh child per
    request that arrives on the Unix socket `control_fd`, and report how each child ended.

    The messages are protocol.py's. Request: a `HandOver` carrying two fds, the learner's
    output pipe and the private result pipe. Replies: `ServerReady` (or `ServerFailed`) once
    at start, carrying one fd, the tutor's end of the socket of the reference process it names
    (`serve_references`), and naming the child already forked for the first check as its
    spare (`_prefork`); then `ChildTook` once a check's child has its request, `ChildExit`
    once it is reaped (`os.waitstatus_to_exitcode`, as Popen.returncode), and `Spare` once the
    next one is forked. A `Clone` carrying one fd forks a second server on that socket
    (`_clone`) and is answered `Cloned`. No tensor work happens here, and the threads are
    bounded (one per numeric library), so forking is safe.
    When the tutor goes away (end of file on the socket), the server kills its child and ends.

    The reference process lives as long as the server: a fresh one for every check cost some 15
    ms more a check (torch's first-use costs, paid again each time) to save the 10-15 MiB a used
    one holds (benchmarks/checks.py)."""
    import gc
    import socket

    for name in os.environ.pop(TUNED_MARK, "").split(","):  # the server's own (spawn.SERVER_TUNING)
        os.environ.pop(name, None)
    control = socket.socket(fileno=control_fd)
    failures: list[protocol.WorkerError] = []

    def prepare() -> None:
        import_torch_quietly()
        preload()

    if report_failures(failures.append, prepare) != WorkerExit.OK:
        error = failures[0]["error"] if failures else protocol.raised("Error", "?", "")
        _tell(control, wire.server_failed(f"{error['type']}: {error['message']}"))
        os._exit(WorkerExit.SOFTWARE)
    # Everything imported so far stays put: a child's garbage collections skip it, so they
    # do not copy the server's pages (hundreds of MiB, once per check) by touching them.
    gc.collect()
    gc.freeze()
    _serve_checks(control, warm_up)


def _serve_checks(control: Any, warm_up: bool) -> NoReturn:
    """The fork server's loop, once torch and the checkers are imported: start the reference
    process, say ready, then serve requests until the tutor closes `control`."""
    import socket

    references, pid = _fork_references(control)
    spare = _prefork(control, warm_up)
    told = _tell(control, wire.server_ready(pid, spare[0] if spare is not None else None),
                 fds=[references.fileno()])
    references.close()
    if not told:
        os._exit(WorkerExit.OK)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 65536, 2)
        except OSError:
            os._exit(WorkerExit.OK)
        if not data:  # the tutor closed its end: nothing more will come
            os._exit(WorkerExit.OK)
        _reap_ended()
        try:
            request = wire.decode_to_server(data)
            if request["type"] == "clone" and len(fds) == 1:
                _tell(control, wire.cloned(_clone(control, fds[0], spare, warm_up)))
                continue
            if request["type"] != "check":
                raise protocol.Malformed("a clone without its socket")
            output_fd, result_fd = fds
        except ValueError:  # Malformed, or not two fds
            for fd in fds:
                os.close(fd)
            _tell(control, wire.server_failed("a request the server cannot read"))
            continue
        child = _hand_over(spare, data, [output_fd, result_fd]) if spare is not None else None
        if spare is not None:
            spare[1].close()
            spare = None
        if child is None:  # no child waiting (it died, or could not be forked): fork one now
            def on_demand(request: wire.HandOver = request, output_fd: int = output_fd,
                          result_fd: int = result_fd) -> NoReturn:
                os.setsid()
                _check_child(output_fd, result_fd, request)

            child = fork_child(on_demand, close=[control])
        os.close(output_fd)  # the child has its copies; the tutor sees EOF when it ends
        os.close(result_fd)
        if not _tell(control, wire.child_took(child)):
            _end_child(child)
        _tell(control, wire.child_exit(_wait_child(child, control)))
        spare = _prefork(control, warm_up)  # the next check's child, while nothing waits
        if spare is not None:
            _tell(control, wire.spare(spare[0]))


SpareChild = tuple[int, Any]  # a child forked ahead, waiting for its request: its pid, our socket


def _prefork(control: Any, warm_up: bool) -> SpareChild | None:
    """Fork the next check's child ahead of its request (between checks, while nobody waits),
    so that a check does not wait for the fork and the child's setting up: the child closes
    the server's socket, warms up (`warm_up_training`, unless `warm_up` is off: checks back to
    back, as `grade` runs them, would wait for it), waits for its request on a socket of its
    own (`_hand_over`), and leaves the server's session once it has it, before any learner
    code runs. Until then it is of the server's session, so that the tutor finds it by that
    if the server dies before it says the spare's pid (`server.Server.stop`). None if it
    cannot be forked."""
    import socket

    def waiting() -> NoReturn:
        if warm_up:
            warm_up_training()
        data, fds, _, _ = socket.recv_fds(theirs, 65536, 2)
        if not data:  # the server let it go without a request
            os._exit(WorkerExit.OK)
        request = wire.decode_to_server(data)
        output_fd, result_fd = fds
        theirs.close()
        if request["type"] != "check":
            raise protocol.Malformed("not a check")
        os.setsid()
        _check_child(output_fd, result_fd, request)

    try:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except OSError:
        return None
    try:
        pid = fork_child(waiting, close=[control, mine])
    except OSError:
        mine.close()
        return None
    finally:
        theirs.close()
    return pid, mine


def _hand_over(spare: SpareChild, data: bytes, fds: list[int]) -> int | None:
    """Give the waiting child the request and its two fds; its pid, or None if it is gone."""
    import socket

    try:
        socket.send_fds(spare[1], [data], fds)
    except OSError:
        return None
    return spare[0]


def _clone(control: Any, fd: int, spare: SpareChild | None, warm_up: bool) -> int:
    """Fork a second fork server, which serves the control socket `fd` (a `Clone` carrying
    it): a grader's second worker costs a fork, not another import of
    torch, and shares this one's memory. It leads a session of its own, ends with this
    server, and starts its own reference process. Its pid."""
    import socket

    def clone() -> NoReturn:
        os.setsid()
        _serve_checks(socket.socket(fileno=fd), warm_up)

    # the first server's waiting child is not this one's
    pid = fork_child(clone, close=[control, *([spare[1]] if spare is not None else [])])
    os.close(fd)
    return pid


def _reap_ended() -> None:
    """Reap the clones and reference processes that have ended. No check's child is running
    when this is called, so none is reaped here by mistake."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _check_child(output_fd: int, result_fd: int, request: wire.HandOver) -> NoReturn:
    """In the fork server's fresh child, which has left the server's session and closed its
    socket: take the check's output pipe as stdout and stderr, close every other fd but the
    result pipe, move into the check's folder, and answer the request."""
    try:
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.closerange(3, result_fd)
        os.closerange(result_fd + 1, _max_fd())
        os.chdir(request["work"])
        os.environ[CHECK_MARK] = os.path.dirname(request["work"])  # as a spawned worker's
        send = result_sender(result_fd)
        confine_learner(os.path.dirname(request["work"]))
    except BaseException:  # noqa: BLE001 - nowhere to report it; the exit code says it
        os._exit(WorkerExit.SOFTWARE)
    code = answer(request["request"], send)
    flush_output()
    os._exit(code)


def _max_fd() -> int:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if 0 < soft < 1 << 20 else 1 << 16


def _wait_child(pid: int, control: Any) -> int:
    """Reap the child; its exit code. Where a pidfd is available, also watch the control
    socket: the tutor sends nothing during a check, so if the socket stirs, the tutor has gone
    away, and the child is killed rather than left running with no clock."""
    import select

    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            ready, _, _ = select.select([pidfd, control], [], [])
        finally:
            os.close(pidfd)
        if pidfd not in ready:
            _end_child(pid)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _end_child(pid: int) -> NoReturn:
    """The tutor is gone: kill the child's group, reap it, and end the server."""
    import signal

    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)
    os._exit(WorkerExit.OK)


def _tell(control: Any, message: wire.FromServer, fds: list[int] | None = None) -> bool:
    """Send one message to the tutor (with `fds`, if any); False if it is gone."""
    import socket

    data = protocol.line(message)
    try:
        if fds:
            socket.send_fds(control, [data], fds)
        else:  # an empty SCM_RIGHTS is refused (EINVAL)
            control.send(data)
    except OSError:
        return False
    return True


def _fork_references(control: Any) -> tuple[Any, int]:
    """Fork the reference process (`serve_references`); the tutor's end of its socket, and
    its pid."""
    import socket

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = fork_child(lambda: serve_references(mine), close=[control, theirs])
    mine.close()
    return theirs, pid
