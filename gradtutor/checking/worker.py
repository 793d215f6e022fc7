"""The checking worker: the only place learner code runs. Everything it reports is plain data.

`evaluate` does one check in the current process: references first (real torch, before any
learner code exists), then the learner's file, then the checker's observations. `main` wraps
it as a child process (see runner.py): limits, quiet torch, and results on a private pipe.

This module imports torch only inside `main` and `evaluate`, so that `main` can silence
torch's import-time warnings and so that the tutor can read the exit codes below cheaply.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import linecache
import os
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from gradtutor.checking.checkers import load as load_checker

MAX_TRACEBACK_CHARS = 4000


def learner_traceback(exc: BaseException, filename: str) -> str:
    """The traceback cut down to the learner's own frames (the tutor's frames are noise)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = traceback.format_list(frames) if frames else []
    lines += traceback.format_exception_only(type(exc), exc)
    text = "".join(lines)
    if len(text) > MAX_TRACEBACK_CHARS:
        half = MAX_TRACEBACK_CHARS // 2
        text = text[:half] + "\n... (cut) ...\n" + text[-half:]
    return text


def describe_error(exc: BaseException, filename: str) -> dict[str, Any]:
    """An exception from learner code as plain data."""
    kind = type(exc).__name__
    if isinstance(exc, SystemExit):
        return {"type": "SystemExit", "message": f"your code called sys.exit({exc.code!r})",
                "traceback": learner_traceback(exc, filename)}
    message = str(exc)
    if len(message) > 1000:
        message = message[:1000] + " ... (cut)"
    return {"type": kind, "message": message, "traceback": learner_traceback(exc, filename)}


def load_learner(source: str, filename: str) -> dict[str, Any]:
    """Run the learner's file as a fresh module; its namespace."""
    module = types.ModuleType("learner")
    module.__file__ = filename
    # tracebacks quote the learner's lines even though the file is read from a copy
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec", dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - running learner code is this module's job
    return module.__dict__


def find_function(namespace: dict[str, Any], name: str, arity: int) -> Callable[..., Any] | str:
    """The learner's function, or a message saying what is wrong with it."""
    fn = namespace.get(name)
    if fn is None:
        return f"your file does not define a function named `{name}`"
    if not callable(fn):
        return f"`{name}` in your file is not a function"
    try:
        signature = inspect.signature(fn)
        signature.bind(*range(arity))
    except TypeError:
        return (f"`{name}` must take {arity} argument{'s' if arity != 1 else ''}; "
                f"yours is `{name}{signature}`")
    except ValueError:
        pass  # no signature to inspect (a builtin): calling it will tell
    return fn  # type: ignore[no-any-return]


def evaluate(checker_name: str, function: str, source: str, filename: str, seed: int,
             send: Callable[[dict[str, Any]], None]) -> None:
    """One whole check in this process; each result goes to `send` as soon as it exists.

    Messages, in order: {"type": "expected", "cases", "expected"} (before learner code runs),
    then either {"type": "learner_error", ...} or {"type": "observed", "observed": [...]}.
    `trace.install()` must have run first.
    """
    from gradtutor.checking import trace  # imports torch

    checker = load_checker(checker_name)
    cases = checker.cases(seed)
    send({"type": "expected", "cases": cases,
          "expected": [checker.expected(case) for case in cases]})
    try:
        namespace = load_learner(source, filename)
    except BaseException as exc:  # noqa: BLE001 - whatever learner code raises is reported
        send({"type": "learner_error", "stage": "load", "error": describe_error(exc, filename)})
        return
    fn = find_function(namespace, function, checker.ARITY)
    if isinstance(fn, str):
        send({"type": "learner_error", "stage": "function", "error": {
            "type": "Signature", "message": fn, "traceback": ""}})
        return
    observed: list[dict[str, Any]] = []
    for case in cases:
        case_trace = trace.start()
        try:
            observed.append(checker.observe(case, fn, case_trace))
        except BaseException as exc:  # noqa: BLE001
            observed.append({"error": describe_error(exc, filename)})
        finally:
            case_trace.close()
    send({"type": "observed", "observed": observed})


# How the worker ends when it could not say so on the result channel (runner.py reads these).
EXIT_WORKER_ERROR = 70  # the worker itself failed; it sends a "worker_error" first if it can
EXIT_OUT_OF_MEMORY = 71  # memory ran out outside the learner's own calls
EXIT_CHANNEL_LOST = 72  # the result channel was closed or broken, so nothing more can be said


class ChannelLost(Exception):
    """The result pipe cannot be written (learner code closed it, or the tutor went away)."""


def result_sender(fd: int) -> Callable[[dict[str, Any]], None]:
    """`send` for `evaluate`: one JSON line per message on the private result pipe `fd`.

    The encoder and `os.write` are bound now, before learner code exists, so a learner who
    replaces `json.dumps` or `os.write` later cannot change what the tutor receives."""
    encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
    write = os.write

    def send(message: dict[str, Any]) -> None:
        view = memoryview((encode(message) + "\n").encode("ascii"))
        try:
            while view:
                view = view[write(fd, view):]
        except OSError as exc:
            raise ChannelLost(str(exc)) from None

    return send


def _lower_limit(which: int, value: int) -> None:
    """Set soft and hard limit to `value` (or the existing hard limit, if lower). Lowering
    the hard limit cannot be undone by an unprivileged process, so learner code cannot lift it."""
    import resource

    _, hard = resource.getrlimit(which)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (value, value))


def limit_files(file_bytes: int) -> None:
    """No core dumps, and no file bigger than `file_bytes` (POSIX; elsewhere nothing)."""
    if os.name != "posix":
        return
    import resource
    import signal

    _lower_limit(resource.RLIMIT_CORE, 0)
    _lower_limit(resource.RLIMIT_FSIZE, file_bytes)
    # a write past the limit then fails with an OSError the learner sees, instead of a signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def mapped_bytes() -> int | None:
    """The address space this process has mapped now (Linux /proc), else None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def limit_memory(budget: int | None) -> None:
    """Allow `budget` bytes of address space beyond what is mapped now (torch included).

    Only where RLIMIT_AS works and what is mapped can be read: Linux. macOS ignores
    RLIMIT_AS for most allocations; Windows has no rlimits (a job object would do it)."""
    if budget is None or os.name != "posix" or sys.platform == "darwin":
        return
    import resource

    mapped = mapped_bytes()
    if mapped is not None:
        _lower_limit(resource.RLIMIT_AS, mapped + budget)


def import_torch_quietly() -> None:
    """Import torch and install the trace with every warning swallowed: a learner must never
    see torch's own import-time warnings (the NumPy one, deprecations) as if they were theirs.

    `showwarning` is replaced rather than the filters, so that the filters torch and NumPy
    install while importing stay in force for the learner's code afterwards."""
    import warnings

    shown = warnings.showwarning
    warnings.showwarning = lambda *args, **kwargs: None
    try:
        import torch

        from gradtutor.checking import trace

        torch.set_num_threads(1)
        # RuntimeError if inter-op work already ran: one thread is a preference, not a limit
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(1)
        trace.install()
    finally:
        warnings.showwarning = shown


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        # BaseException: learner code may have replaced the stream with anything at all
        with contextlib.suppress(BaseException):
            stream.flush()  # type: ignore[union-attr]


def run_request(request: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> None:
    """Everything the worker does for one request, in the order that makes it safe."""
    sys.argv = [request["filename"]]  # as if the learner ran their own file
    limit_files(int(request["file_bytes"]))
    import_torch_quietly()
    limit_memory(request.get("memory_bytes"))
    evaluate(request["checker"], request["function"], request["source"], request["filename"],
             int(request["seed"]), send)


def main(argv: list[str] | None = None) -> None:
    """The child process: `python -m gradtutor.checking.worker REQUEST.json`.

    The request names the checker, the learner's source and the result pipe's fd. Results
    go to that pipe only; stdout and stderr belong to the learner. Whatever happens, the
    process ends with `os._exit`: no traceback of ours on stderr, no waiting for threads the
    learner left running, no atexit handlers of theirs."""
    args = sys.argv[1:] if argv is None else argv
    try:
        with open(args[0], encoding="utf-8") as file:
            request = json.load(file)
        if sys.platform == "win32":  # Windows passes a handle, not an fd
            import msvcrt

            fd = msvcrt.open_osfhandle(int(request["result_handle"]), 0)
        else:
            fd = int(request["result_fd"])
        send = result_sender(fd)
    except BaseException:  # noqa: BLE001 - nothing to report on, nowhere to report it
        os._exit(EXIT_WORKER_ERROR)
    code = EXIT_WORKER_ERROR
    try:
        run_request(request, send)
        code = 0
    except ChannelLost:
        code = EXIT_CHANNEL_LOST
    except MemoryError:
        code = EXIT_OUT_OF_MEMORY
    except BaseException as exc:  # noqa: BLE001 - reported as data, never as a traceback
        with contextlib.suppress(BaseException):
            send({"type": "worker_error", "error": {
                "type": type(exc).__name__, "message": str(exc)[:1000],
                "traceback": "".join(traceback.format_exception(exc))[-MAX_TRACEBACK_CHARS:]}})
    finally:
        _flush_output()
        os._exit(code)


if __name__ == "__main__":
    main()
