"""The checking worker: the only place learner code runs. Everything it reports is plain data.

`evaluate` does one check in the current process: references first (real torch, before any
learner code exists; in a worker, computed by a short-lived process of its own, so that they
never exist where learner code runs), then the learner's file, then the checker's
observations.
`serve_request` is the body every kind of worker runs for one request (limits, then a check or
a snippet), after importing torch quietly: a cold or pre-started worker (`main`, which waits
for `go` on a pipe once torch is imported), or a fresh child of the fork server (`serve`).

This module imports torch only inside functions, so that torch's import-time warnings can be
silenced. What it says, and the codes it ends with, are the types of protocol.py.
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
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from gradtutor.checking import protocol
from gradtutor.checking.checkers import worker_checker
from gradtutor.checking.protocol import CHECK_MARK, TUNED_MARK, CheckerRef, WorkerExit

MAX_TRACEBACK_CHARS = 4000

# Where `evaluate` sends each message: the result pipe (`ResultSender`), or a list.
Send = Callable[[protocol.ResultMessage], None]


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


def describe_error(exc: BaseException, filename: str) -> protocol.CaseFailure:
    """An exception from learner code as plain data (sys.exit as the code it was given)."""
    if isinstance(exc, SystemExit):
        return protocol.sys_exit(repr(exc.code), learner_traceback(exc, filename))
    message = str(exc)
    if len(message) > 1000:
        message = message[:1000] + " ... (cut)"
    return protocol.raised(type(exc).__name__, message, learner_traceback(exc, filename))


def load_learner(source: str, filename: str) -> dict[str, Any]:
    """Run the learner's file as a fresh module; its namespace."""
    module = types.ModuleType("learner")
    module.__file__ = filename
    # tracebacks quote the learner's lines even though the file is read from a copy
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec", dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - running learner code is this module's job
    return module.__dict__


def find_function(namespace: dict[str, Any], name: str,
                  arity: int) -> Callable[..., Any] | protocol.FunctionProblem:
    """The learner's function, or what is wrong with it."""
    fn = namespace.get(name)
    if fn is None:
        return protocol.no_function(name)
    if not callable(fn):
        return protocol.not_callable(name)
    try:
        signature = inspect.signature(fn)
        signature.bind(*range(arity))
    except TypeError:
        return protocol.wrong_arity(name, arity, str(signature))
    except ValueError:
        pass  # no signature to inspect (a builtin): calling it will tell
    return fn  # type: ignore[no-any-return]


def reference_message(checker_name: CheckerRef, seed: int) -> protocol.Expected:
    """The checker's cases and reference results for `seed`."""
    checker = worker_checker(checker_name)
    cases = checker.cases(seed)
    return protocol.expected(cases, [checker.expected(case) for case in cases])


Reference = Callable[[CheckerRef, int, Send], None]


def reference_here(checker_name: CheckerRef, seed: int, send: Send) -> None:
    """The reference computed in this very process: only for code that is not a learner's
    (the author's own, in `gradtutor validate`)."""
    send(reference_message(checker_name, seed))


def evaluate(checker_name: CheckerRef, function: str, source: str, filename: str, seed: int,
             send: Send, reference: Reference = reference_here) -> None:
    """One whole check in this process; each result goes to `send` as soon as it exists.

    Messages, in order: `protocol.Expected` (sent by `reference` before learner code runs;
    `Started` instead when the tutor has the references), then a `LearnerError` or the
    `Observed` records. A worker passes `reference_elsewhere`, so that
    the reference results never exist in the process that runs learner code: this process
    only ever holds the cases (the inputs, which are no secret). `trace.install()` must have
    run first.
    """
    from gradtutor.checking import trace  # imports torch

    checker = worker_checker(checker_name)
    reference(checker_name, seed, send)
    cases = checker.cases(seed)
    hide_internal_warnings()
    try:
        namespace = load_learner(source, filename)
    except BaseException as exc:  # noqa: BLE001 - whatever learner code raises is reported
        send(protocol.learner_error(describe_error(exc, filename)))
        return
    fn = find_function(namespace, function, checker.ARITY)
    if not callable(fn):  # a problem (plain data; the learner's callable may be a dict)
        send(protocol.learner_error(fn))
        return
    observed: list[dict[str, Any]] = []
    for case in cases:
        case_trace = trace.start()
        try:
            result = checker.observe(case, fn, case_trace)
            if case_trace.forged:  # the trace's hooks were called outside a real backward
                result = {**result, "forged": case_trace.forged}
            observed.append(result)
        except BaseException as exc:  # noqa: BLE001
            observed.append({"error": describe_error(exc, filename)})
        finally:
            case_trace.close()
    send(protocol.observed(observed))


def hide_internal_warnings() -> None:
    """Keep warnings that PyTorch raises from its C++ core ("Triggered internally at
    /__w/pytorch/...") out of a check's output: they quote torch's own source lines, and the
    verdict already names the mistake behind them (reading .grad of a tensor that is no longer
    a leaf, say). The learner's own warnings still show."""
    import warnings

    warnings.filterwarnings("ignore", message=r"(?s).*Triggered internally at ")



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


def reference_by_tutor(checker_name: CheckerRef, seed: int, send: Send) -> None:
    """The tutor has the references already, from the fork server's reference process
    (`serve_references`): this process only says that learner code starts now, which starts
    the learner's clock. Nothing of the references ever reaches this process."""
    send(protocol.started())


def reference_elsewhere(checker_name: CheckerRef, seed: int, send: Send) -> None:
    """Have a short-lived process of its own compute the reference results and write them
    straight to the tutor on the result pipe, then wait for it to end: the values never
    exist in this process, which runs learner code next, nor in one it was forked from.

    POSIX: a forked child (torch is imported already, and no tensor work has run here, so
    forking is as safe as the fork server's). Elsewhere (Windows): a fresh interpreter,
    `python -m gradtutor.checking.worker --reference CHECKER_JSON SEED`, whose stdout is the
    result pipe; it imports torch again, so a check there costs one more import."""
    fd = send.fd if isinstance(send, ResultSender) else None
    if fd is None:  # no private pipe to write to: an in-process caller
        reference_here(checker_name, seed, send)
        return
    _flush_output()  # the child must not write out what this process had buffered
    if hasattr(os, "fork"):
        pid = os.fork()
        if pid == 0:
            code = report_failures(send, lambda: send(reference_message(checker_name, seed)))
            os._exit(code)
        warm_up()  # meanwhile, and after the fork: the child must not inherit autograd's threads
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
    else:  # pragma: no cover - Windows; the same path is tested on Linux
        code = spawn_reference(checker_name, seed, fd)
    if code != 0:
        raise ReferenceFailed(f"the reference process ended with exit code {code}")


def warm_up() -> None:
    """One tiny backward pass, so that torch's first-use costs (autograd's engine, the
    operators' caches) are paid while the reference process works, not after it. Nothing of
    it is traced: no case has started."""
    import torch

    with contextlib.suppress(Exception):
        (torch.ones(2, dtype=torch.float64, requires_grad=True) * 2).sum().backward()  # type: ignore[no-untyped-call]


def warm_up_training() -> None:
    """What a check's first training step costs in a fresh child (torch's first use of a
    module, an optimizer, a loss, a backward, and the pages of the server's memory they
    touch), paid by a waiting child before its request comes: a tiny model, the optimizers and
    losses the checkers use, `zero_grad`. The random state is as it was; nothing is traced (no
    case has started) and nothing of it is left."""
    import torch

    with contextlib.suppress(Exception), torch.random.fork_rng(devices=[]):
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.ReLU(),
                                    torch.nn.Linear(4, 2))
        inputs, targets = torch.randn(5, 3), torch.randn(5, 2)
        losses = (torch.nn.MSELoss(), torch.nn.SmoothL1Loss(), torch.nn.HuberLoss(),
                  torch.nn.L1Loss(), torch.nn.CrossEntropyLoss())
        for kind in (torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW):
            optimizer = kind(model.parameters(), lr=0.01)
            for loss_fn in losses:
                optimizer.zero_grad()
                loss_fn(model(inputs), targets.softmax(1)).backward()
                optimizer.step()
        torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9).step()
        [p.grad.tolist() for p in model.parameters() if p.grad is not None]


def spawn_reference(checker_name: CheckerRef, seed: int, fd: int) -> int:
    """The reference in a fresh interpreter writing to `fd` as its stdout; its exit code."""
    from gradtutor.checking.spawn import start_reference

    return start_reference(checker_name, seed, fd, os.environ).wait()


def reference_main(checker_name: CheckerRef, seed: int) -> NoReturn:
    """`--reference`: send the reference results on stdout (the result pipe), then end."""
    send = ResultSender(sys.stdout.fileno())

    def body() -> None:
        import_torch_quietly()
        send(reference_message(checker_name, seed))

    os._exit(report_failures(send, body))


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


def preload() -> None:
    """Import every checker and the snippet runner now. Imports only, no tensor work: a
    fork server may still fork safely afterwards, and no check pays for these imports."""
    from gradtutor.checking import lifetime, sandbox, snippet  # noqa: F401
    from gradtutor.checking.checkers import CHECKERS, declared  # noqa: F401

    for name in CHECKERS:
        worker_checker(name)
    import importlib

    for module in PRELOADED:
        with contextlib.suppress(ImportError):  # a private module another torch may not have
            importlib.import_module(module)


# Imported lazily by torch the first time a check touches them. An optimizer's first step()
# imports torch._dynamo (step is wrapped to keep dynamo out), and with it sympy, mpmath and
# some 800 modules: seconds, in every forked child, unless the server has them already.
# torch.save and torch.load (the checkpoint family, the state_dict slides) import
# torch.utils.serialization. And the child's own set-up before learner code: its limits
# (resource, some 1.5 ms in a forked child) and the ASCII codec it reads /proc/self/statm with.
# tests/test_warm.py proves that a child setting itself up, the checks of every reference and
# mutant, and every snippet import no other module.
PRELOADED = ("torch._dynamo", "torch.profiler", "torch.profiler._cupti_monitor",
             "torch._subclasses.schema_check_mode", "torch.utils.serialization",
             "torch.utils.serialization.config", "resource", "encodings.ascii")


def _flush_output() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        # BaseException: learner code may have replaced the stream with anything at all
        with contextlib.suppress(BaseException):
            stream.flush()  # type: ignore[union-attr]


def serve_request(request: protocol.Request, send: Send) -> None:
    """One request, in a worker that has imported torch: the limits, then the check or the
    snippet. The same body for a cold worker, a pre-started one and a fork server's child."""
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
    reference = reference_by_tutor if request["reference"] == "tutor" else reference_elsewhere
    evaluate(request["checker"], request["function"], request["source"], request["filename"],
             request["seed"], send, reference)


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


def answer(request_path: str, send: Send) -> int:
    """Read the request the tutor wrote and serve it; the exit code."""
    def body() -> None:
        with open(request_path, encoding="utf-8") as file:
            request = protocol.decode_request(json.load(file))
        serve_request(request, send)

    return report_failures(send, body)


def confine_learner(folder: str) -> None:
    """From here on this process may write only beneath the check's `folder` and signal only
    its own children (Landlock, sandbox.py; nothing where the kernel has none)."""
    if sys.platform.startswith("linux"):
        from gradtutor.checking.sandbox import confine

        with contextlib.suppress(OSError):
            confine(folder, os.getcwd())


def _open_pipe(value: str, flags: int) -> int:
    """An fd passed on the command line (a handle on Windows)."""
    if sys.platform == "win32":  # pragma: no cover - exercised by CI on Windows
        import msvcrt

        return msvcrt.open_osfhandle(int(value), flags)
    return int(value)


def wait_for_go(fd: int) -> bool:
    """Block until the tutor says `go` on the pipe `fd` (False: it closed it without)."""
    said = b""
    try:
        while b"\n" not in said and (chunk := os.read(fd, 64)):
            said += chunk
    except OSError:
        said = b""
    finally:
        os.close(fd)  # learner code must not find it open
    return said.startswith(b"go")


def main(argv: list[str] | None = None) -> None:
    """The child process, in one of two forms.

    `python -m gradtutor.checking.worker REQUEST.json GO RESULT [--preload] [--die-with=PID]`:
    import torch, wait for `go` on the pipe GO (at once for a cold check; later for a
    pre-started worker), then answer REQUEST.json with results on the pipe RESULT and nowhere
    else. With --die-with, it is killed when the tutor PID ends (Linux).

    `python -m gradtutor.checking.worker --serve CONTROL --tutor PID`: the fork server (Linux,
    see `serve`); PID names its tutor, so that a sweep can tell when it is gone.

    Stdout and stderr belong to the learner. Whatever happens, the process ends with
    `os._exit`: no traceback of ours, no waiting for threads the learner left running, no
    atexit handlers of theirs."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--serve"]:
        serve(int(args[1]), warm_up="--no-warm-up" not in args)
    if args[:1] == ["--reference"]:
        reference_main(json.loads(args[1]), int(args[2]))
    for flag in args[3:]:
        if flag.startswith("--die-with="):  # a cold worker ends with the tutor that waits on it
            from gradtutor.checking.lifetime import die_with

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
    _flush_output()
    os._exit(code)


# ---- the fork server (Linux) ---------------------------------------------------------------

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

    for name in os.environ.pop(TUNED_MARK, "").split(","):  # the server's own (warm.py)
        os.environ.pop(name, None)
    control = socket.socket(fileno=control_fd)
    failures: list[protocol.WorkerError] = []

    def prepare() -> None:
        import_torch_quietly()
        preload()

    if report_failures(failures.append, prepare) != WorkerExit.OK:
        error = failures[0]["error"] if failures else protocol.raised("Error", "?", "")
        _tell(control, protocol.server_failed(f"{error['type']}: {error['message']}"))
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
    told = _tell(control, protocol.server_ready(pid, spare[0] if spare is not None else None),
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
            request = protocol.decode_to_server(data)
            if request["type"] == "clone" and len(fds) == 1:
                _tell(control, protocol.cloned(_clone(control, fds[0], spare, warm_up)))
                continue
            if request["type"] != "check":
                raise protocol.Malformed("a clone without its socket")
            output_fd, result_fd = fds
        except ValueError:  # Malformed, or not two fds
            for fd in fds:
                os.close(fd)
            _tell(control, protocol.server_failed("a request the server cannot read"))
            continue
        child = _hand_over(spare, data, [output_fd, result_fd]) if spare is not None else None
        if spare is not None:
            spare[1].close()
            spare = None
        if child is None:  # no child waiting (it died, or could not be forked): fork one now
            def on_demand(request: protocol.HandOver = request, output_fd: int = output_fd,
                          result_fd: int = result_fd) -> NoReturn:
                os.setsid()
                _check_child(output_fd, result_fd, request)

            child = fork_child(on_demand, close=[control])
        os.close(output_fd)  # the child has its copies; the tutor sees EOF when it ends
        os.close(result_fd)
        if not _tell(control, protocol.child_took(child)):
            _end_child(child)
        _tell(control, protocol.child_exit(_wait_child(child, control)))
        spare = _prefork(control, warm_up)  # the next check's child, while nothing waits
        if spare is not None:
            _tell(control, protocol.spare(spare[0]))


Spare = tuple[int, Any]  # a child forked ahead, waiting for its request: its pid, our socket


def fork_child(body: Callable[[], None], *, close: Sequence[Any] = ()) -> int:
    """Fork a child of the fork server that dies with it (its parent-death signal: the server
    ends with the tutor, so the child with it), closes the server's sockets `close`, and runs
    `body`; it ends with `os._exit` whatever happens: OK when `body` returns, SOFTWARE when it
    raises (there is nowhere to report it; the exit code says it). The child's pid (OSError if
    it cannot be forked)."""
    server = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = WorkerExit.SOFTWARE
        try:
            from gradtutor.checking.lifetime import die_with

            die_with(server)
            for each in close:
                each.close()
            body()
            code = WorkerExit.OK
        finally:
            os._exit(code)
    return pid


def _prefork(control: Any, warm_up: bool) -> Spare | None:
    """Fork the next check's child ahead of its request (between checks, while nobody waits),
    so that a check does not wait for the fork and the child's setting up: the child closes
    the server's socket, warms up (`warm_up_training`, unless `warm_up` is off: checks back to
    back, as `grade` runs them, would wait for it), waits for its request on a socket of its
    own (`_hand_over`), and leaves the server's session once it has it, before any learner
    code runs. Until then it is of the server's session, so that the tutor finds it by that
    if the server dies before it says the spare's pid (`warm._Server.stop`). None if it
    cannot be forked."""
    import socket

    def waiting() -> NoReturn:
        if warm_up:
            warm_up_training()
        data, fds, _, _ = socket.recv_fds(theirs, 65536, 2)
        if not data:  # the server let it go without a request
            os._exit(WorkerExit.OK)
        request = protocol.decode_to_server(data)
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


def _hand_over(spare: Spare, data: bytes, fds: list[int]) -> int | None:
    """Give the waiting child the request and its two fds; its pid, or None if it is gone."""
    import socket

    try:
        socket.send_fds(spare[1], [data], fds)
    except OSError:
        return None
    return spare[0]


def _clone(control: Any, fd: int, spare: Spare | None, warm_up: bool) -> int:
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


def _check_child(output_fd: int, result_fd: int, request: protocol.HandOver) -> NoReturn:
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
    _flush_output()
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


def _tell(control: Any, message: protocol.FromServer, fds: list[int] | None = None) -> bool:
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


# ---- the reference process (Linux, beside the fork server) ---------------------------------

def _fork_references(control: Any) -> tuple[Any, int]:
    """Fork the reference process (`serve_references`); the tutor's end of its socket, and
    its pid."""
    import socket

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = fork_child(lambda: serve_references(mine), close=[control, theirs])
    mine.close()
    return theirs, pid


def serve_references(channel: Any) -> None:
    """The fork server's reference process: for each `ReferenceRequest` line from the
    tutor, one line back, the checker's cases and reference results for that seed
    (`reference_message`), or a `WorkerError`. It ends when the tutor closes the socket.

    It is the fork server's child, never an ancestor of learner code, so the references it
    computes never exist where learner code runs; and learner code cannot reach it: it is not
    dumpable (no /proc/<pid>/mem, no ptrace for the same user), and where Landlock confines
    learner code (sandbox.py), a confined process can neither trace nor signal it, root
    included. The references are computed while the check's child is forked and starts, so a
    warm check does not wait for them (nor pay for a second fork)."""
    from gradtutor.checking.lifetime import not_dumpable

    not_dumpable()
    hide_internal_warnings()
    warm_up()
    stream = channel.makefile("rwb")
    for line in stream:
        try:
            stream.write(protocol.line(_reference_reply(line)))
            stream.flush()
        except OSError:
            break


def _reference_reply(line: bytes) -> protocol.Expected | protocol.WorkerError:
    """The reference process's answer to one request line."""
    replies: list[protocol.Expected | protocol.WorkerError] = []

    def body() -> None:
        request = protocol.decode_reference_request(line)
        replies.append(reference_message(request["checker"], request["seed"]))

    report_failures(replies.append, body)
    return replies[-1] if replies else protocol.worker_error(
        protocol.raised("MemoryError", "", ""))


if __name__ == "__main__":
    main()
