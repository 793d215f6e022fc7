"""The worker process's entry point: `python -m gradtutor.runtime.worker` in one of its roles
(a cold or pre-started worker, the fork server, `--reference`), and `serve_request`, the body
every kind of worker runs for one request (limits, then a check or a snippet), after importing
torch quietly (prepare.py). Learner code runs in learner.py; what the worker says, and the
codes it ends with, are the types of checking/protocol.py.

This module imports torch only inside functions, so that torch's import-time warnings can be
silenced.
"""

from __future__ import annotations

import json
import os
import sys

from gradtutor.checking import protocol
from gradtutor.checking.protocol import WorkerExit
from gradtutor.runtime import wire
from gradtutor.runtime.channel import LineReader
from gradtutor.runtime.learner import evaluate
from gradtutor.runtime.prepare import (
    confine_learner,
    import_torch_quietly,
    limit_files,
    limit_memory,
    preload,
)
from gradtutor.runtime.references import (
    Reference,
    reference_by_tutor,
    reference_main,
    refuse_reference,
)
from gradtutor.runtime.sender import Send, flush_output, report_failures, result_sender
from gradtutor.runtime.wire import CHECK_MARK


def serve_request(request: protocol.Request, send: Send,
                  reference: Reference = refuse_reference) -> None:
    """One request, in a worker that has imported torch: the limits, then the check or the
    snippet. The same body for a cold worker, a pre-started one and a fork server's child.

    A check's references are the tutor's (its request says `reference: tutor`): they never
    exist in this process, which runs learner code. Only validate's batch worker, which runs
    the author's own code, passes `reference` to compute them here (`reference_here`)."""
    sys.argv = [request["filename"]]  # as if the learner ran their own file
    limit_files(request["file_bytes"])
    limit_memory(request["memory_bytes"])
    if request["kind"] == "snippet":
        from gradtutor.checking.snippet import run_code

        send(protocol.started())  # the snippet's clock starts now
        ran = run_code(request["code"], request["show"], tuple(request["series"]))
        send(protocol.snippet_failed(ran["error"]) if "error" in ran else
             protocol.snippet_ran(ran["shown"], ran["series"]))
        return
    if request["reference"] == "tutor":
        reference = reference_by_tutor
    evaluate(request["checker"], request["function"], request["source"], request["filename"],
             request["seed"], send, reference)


def answer(request_path: str, send: Send) -> int:
    """Read the request the tutor wrote and serve it; the exit code."""
    def body() -> None:
        with open(request_path, encoding="utf-8") as file:
            request = protocol.decode_request(json.load(file))
        serve_request(request, send)

    return report_failures(send, body)


def _open_pipe(value: str, flags: int) -> int:
    """An fd passed on the command line (a handle on Windows)."""
    if sys.platform == "win32":  # pragma: no cover - exercised by CI on Windows
        import msvcrt

        return msvcrt.open_osfhandle(int(value), flags)
    return int(value)


def wait_for_go(fd: int) -> bool:
    """Block until the tutor says `go` on the pipe `fd` (False: it closed it without)."""
    try:
        said = LineReader(fd).next(None) or b""
    finally:
        os.close(fd)  # learner code must not find it open
    return said.startswith(wire.GO.strip())


def main(argv: list[str] | None = None) -> None:
    """The child process, in one of two forms.

    `python -m gradtutor.runtime.worker REQUEST.json GO RESULT [--preload] [--die-with=PID]`:
    import torch, wait for `go` on the pipe GO (at once for a cold check; later for a
    pre-started worker), then answer REQUEST.json with results on the pipe RESULT and nowhere
    else. With --die-with, it is killed when the tutor PID ends (Linux).

    `python -m gradtutor.runtime.worker --reference`: once torch is imported, a checker and a
    seed (JSON) on stdin, their references on stdout (`references.reference_main`).

    `python -m gradtutor.runtime.worker --serve CONTROL --tutor PID`: the fork server (Linux,
    see `serve`); PID names its tutor, so that a sweep can tell when it is gone.

    Stdout and stderr belong to the learner. Whatever happens, the process ends with
    `os._exit`: no traceback of ours, no waiting for threads the learner left running, no
    atexit handlers of theirs."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--serve"]:
        from gradtutor.runtime.forkserver import serve

        serve(int(args[1]), warm_up="--no-warm-up" not in args)
    if args[:1] == ["--reference"]:
        reference_main()
    for flag in args[3:]:
        if flag.startswith("--die-with="):  # a cold worker ends with the tutor that waits on it
            from gradtutor.runtime.signals import die_with

            die_with(int(flag.partition("=")[2]))
    try:
        request_path = args[0]
        go = _open_pipe(args[1], os.O_RDONLY)
        send = result_sender(_open_pipe(args[2], 0))
    except BaseException:  # noqa: BLE001 - nothing to report on, nowhere to report it
        os._exit(WorkerExit.SOFTWARE)

    def prepare() -> None:
        import_torch_quietly()
        if "--preload" in args[3:]:
            preload()

    code = report_failures(send, prepare)
    if code == 0 and wait_for_go(go):
        confine_learner(os.environ.get(CHECK_MARK) or os.getcwd())
        code = answer(request_path, send)
    flush_output()
    os._exit(code)


# ---- the fork server (Linux) ---------------------------------------------------------------


# ---- the reference process (Linux, beside the fork server) ---------------------------------


if __name__ == "__main__":
    main()
