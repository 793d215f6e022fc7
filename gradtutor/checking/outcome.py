"""From what happened to a check to the checks of its Verdict. Pure: data in, data out.

`source_problem` judges the learner's file before any process starts. `decide` takes what a
worker left behind (the bytes it sent on its result channel, how it ended, whether the tutor
stopped it) and the checker's `judge`, and returns the checks. The judge only ever sees
JSON-decoded plain data; anything else the channel carries is a failed check, never a crash.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gradtutor.checking import protocol, results
from gradtutor.checking.protocol import WorkerExit
from gradtutor.checking.verdict import Check
from gradtutor.i18n import msg

Judge = Callable[[list[Any], list[Any], list[Any]], Sequence[Check]]

GiB = 1024**3
MiB = 1024**2

# Signal numbers shared by Linux and macOS, for names this platform's `signal` lacks.
SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 8: "SIGFPE",
           9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
           24: "SIGXCPU", 25: "SIGXFSZ"}
# What Windows reports for a crashed process, as unsigned exit codes.
WINDOWS_CRASHES = {0xC0000005: msg("crashed with an access violation (a segmentation fault)"),
                   0xC00000FD: msg("crashed with a stack overflow"),
                   0xC0000017: msg("ran out of memory"),
                   0xC000001D: msg("crashed on an illegal instruction"),
                   0xC0000409: msg("crashed (a buffer overrun was detected)")}


@dataclass(frozen=True)
class WorkerRun:
    """Everything the tutor saw of one worker process, as plain data."""

    results: bytes  # the result channel's bytes, at most the cap
    results_overflow: bool  # more came than the cap
    returncode: int | None  # negative: killed by that signal (POSIX)
    timed_out: bool  # the learner's code hit the time limit and was killed
    startup_timed_out: bool  # the worker never got as far as the learner's code
    memory_limit: int | None = None  # bytes learner code may add; None where not enforced
    file_limit: int | None = None
    # the references, when the tutor had them from elsewhere (the fork server's reference
    # process): the worker then sends `started` where it would send them
    reference: protocol.Expected | None = None
    # the memory cap (bytes) at which the kernel killed the check, where a memory cgroup held
    # it: memory the address-space limit does not count (a memfd, shared memory, page cache)
    memory_killed: int | None = None
    # the cap (bytes) on the files of its folder at which the tutor stopped the check
    disk_killed: int | None = None


def signal_name(number: int) -> str:
    """SIGSEGV for 11: this platform's name for a signal number (SIGBUS is 7 on Linux, 10 on
    macOS), else the name it has on both."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return SIGNALS.get(number, f"signal {number}")


def seconds(value: float) -> str:
    return f"{value:g}"


def source_problem(raw: bytes, filename: str, function: str, max_bytes: int,
                   size: int | None = None) -> Check | None:
    """What makes the learner's file impossible to run, found without running it; None if
    nothing. `compile` parses the file without executing a line of it. `size` is the file's
    size when `raw` is not all of it (a file too large is not read whole); without it, `raw`
    of `max_bytes` and one byte is a copy cut there (a graded class's), of unknown size."""
    cut = size is None and len(raw) == max_bytes + 1
    size = len(raw) if size is None else size
    if size > max_bytes:
        said = (msg("Your file is more than the {limit} KiB a check accepts.",
                    limit=max_bytes // 1024) if cut else
                msg("Your file is {size:.1f} MiB, more than the {limit} KiB a check "
                    "accepts.", size=size / MiB, limit=max_bytes // 1024))
        return Check("file", "error", said,
                     msg("an answer is a few lines: keep only the function `{function}`",
                         function=function))
    try:
        source = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        return Check("file", "error",
                     msg("Your file is not UTF-8 text: line {line} has the byte 0x{byte:02x}, "
                         "which UTF-8 does not allow.", line=line, byte=raw[exc.start]),
                     msg("save the file as UTF-8 in your editor"))
    if not source.strip():
        return Check("file", "error", msg("Your file is empty."),
                     msg("write the function `{function}` in it", function=function))
    if "\0" in source:  # compile() says so without a line number, or as a ValueError
        line = source[:source.index("\0")].count("\n") + 1
        return Check("file", "error",
                     msg("Line {line} of your file is not valid Python: it contains a NUL "
                         "byte.", line=line),
                     msg("remove the invisible character (save the file as plain text)"))
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Check("file", "error", syntax_message(exc), msg("fix that line, then check again"))
    except (ValueError, RecursionError, MemoryError):
        return Check("file", "error", msg("Your file is nested too deeply for Python to read."),
                     msg("split the deepest expression into several lines"))
    return None


def syntax_message(exc: SyntaxError) -> str:
    """Where the file is not Python and Python's own words for why (they stay English), with
    the line quoted and a caret under the spot."""
    if exc.lineno:
        message = msg("Line {line} of your file is not valid Python: {error}.",
                      line=exc.lineno, error=exc.msg)
    else:
        message = msg("Your file is not valid Python: {error}.", error=exc.msg)
    if not (exc.text and exc.text.strip()):
        return message
    text = exc.text.rstrip("\n")
    caret = ""
    if exc.offset and exc.offset > 0:
        indent = len(text) - len(text.lstrip())
        caret = "\n    " + " " * max(0, exc.offset - 1 - indent) + "^"
    return msg("{message}\n\n    {code}{caret}", message=message, code=text.strip(), caret=caret)


@dataclass(frozen=True)
class ReadResults:
    """The result channel read (`results.read_check`): the references, and the message that
    ended the check; or, in words, why the channel could not be read."""

    expected: protocol.Expected | None = None
    final: protocol.CheckFinal | None = None
    problem: str | None = None


def parse_results(data: bytes, overflow: bool, cap: int,
                  reference: protocol.Expected | None = None) -> ReadResults:
    """The worker's messages, read by `results.read_check` (with a `reference` the tutor had
    from elsewhere, the worker opens with `started`); a fault in words."""
    read = results.read_check(data, overflow, reference)
    if read.fault is None:
        return ReadResults(read.expected, read.final)
    return ReadResults(problem=channel_fault(read.fault, read.about, cap))


def channel_fault(fault: results.Fault, about: str, cap: int) -> str:
    """Why a check's result channel could not be read, in words."""
    if fault is results.Fault.OVERFLOW:
        return msg("more than {size} MiB of results", size=cap // MiB)
    if fault is results.Fault.NOT_A_RESULT:
        return msg("a line that is not a result")
    if fault is results.Fault.WRONG_SHAPE:
        return msg("a `{kind}` message of the wrong shape", kind=about)
    if fault is results.Fault.OUT_OF_ORDER:
        return msg("results out of order")
    return msg("references of the wrong shape")


def memory_check(limit: int | None) -> Check:
    message = (msg("Your code ran out of memory (the limit is {limit:g} GiB).", limit=limit / GiB)
               if limit else msg("Your code ran out of memory."))
    return Check("memory", "error", message,
                 msg("look for a list or tensor that keeps growing, or one far larger than the "
                     "exercise needs"))


def is_memory_error(error: protocol.CaseFailure) -> bool:
    """MemoryError, or torch's allocator failing: "can't allocate memory" where an address
    space limit refuses it (POSIX), "not enough memory" where a Job Object's commit limit does
    (Windows), or OutOfMemoryError."""
    if "problem" in error:  # sys.exit
        return False
    return (error["type"] in ("MemoryError", "OutOfMemoryError")
            or any(words in error["message"] for words in (
                "can't allocate memory", "Cannot allocate memory", "not enough memory")))


def what_went_wrong(error: protocol.CaseFailure) -> str:
    """What stopped the learner's code, in words: `your code raised ...`."""
    if "problem" in error:
        return msg("your code called sys.exit({code})", code=error["code"])
    kind, message = error["type"], error["message"]
    if kind == "KeyboardInterrupt":
        return msg("your code raised KeyboardInterrupt")
    if kind == "EOFError":
        return msg("your code tried to read input (input() or sys.stdin), but a check has no "
                   "one to type it")
    if message:
        # the sentence around it supplies the full stop: "... calling backward." not "..".
        if message.endswith(".") and not message.endswith(".."):
            message = message[:-1]
        return msg("your code raised {kind}: {message}", kind=kind, message=message)
    return msg("your code raised {kind}", kind=kind)


def function_problem(problem: protocol.FunctionProblem) -> str:
    """What is wrong with the learner's function, as a sentence."""
    name = problem["name"]
    if problem["problem"] is protocol.Problem.NO_FUNCTION:
        return msg("Your file does not define a function named `{name}`.", name=name)
    if problem["problem"] is protocol.Problem.NOT_CALLABLE:
        return msg("`{name}` in your file is not a function.", name=name)
    arity, signature = problem["arity"], name + problem["parameters"]
    if arity == 1:
        return msg("`{name}` must take 1 argument; yours is `{signature}`.",
                   name=name, signature=signature)
    return msg("`{name}` must take {arity} arguments; yours is `{signature}`.",
               name=name, arity=arity, signature=signature)


def _with_traceback(message: str, error: protocol.CaseFailure) -> str:
    trace = error["traceback"].strip()
    return msg("{message}\n\n{traceback}", message=message, traceback=trace) if trace else message


def learner_error_check(message: protocol.LearnerError, function: str,
                        memory: int | None) -> Check:
    error = message["error"]
    if "problem" in error and error["problem"] is not protocol.Problem.SYS_EXIT:
        return Check("function", "error", function_problem(error),
                     msg("define `def {function}(...)` at the top level of your file, with the "
                         "parameters the exercise asks for", function=function))
    if is_memory_error(error):
        return memory_check(memory)
    if "problem" not in error and error.get("uncalled"):
        return Check("loads", "error", msg(
            "Your file could not be loaded: {why}", why=uncalled_error(error)))
    interrupted = "problem" in error or error["type"] in ("SystemExit", "KeyboardInterrupt")
    hint = (msg("code under `if __name__ == \"__main__\":` does not run during a check")
            if interrupted else
            msg("the lines above are where it happened, most recent last"))
    return Check("loads", "error", _with_traceback(
        msg("Your file could not be loaded: {what}.", what=what_went_wrong(error)), error), hint)


def uncalled_error(error: protocol.Raised) -> str:
    """Why the learner's code raised, when its line names a method without calling it and
    the error is about that (`total += loss.item`): said from that line, with no traceback,
    as lines that name a method alone are said (`common.uncalled_lines_words`)."""
    return msg("a line of your code names `{name}` without calling it, so Python took "
               "`{name}` itself, not what it returns, and then {what}. A function or method "
               "runs only with parentheses after its name.", name=error.get("uncalled", ""),
               what=what_went_wrong(error))


def case_error_check(observed: list[dict[str, Any]], function: str,
                     memory: int | None) -> Check | None:
    """The first check case in which the learner's function raised, as a check. Each
    record's `error` is a CaseFailure (`protocol.decode_observed`)."""
    failing = [(i, o["error"]) for i, o in enumerate(observed) if "error" in o]
    if not failing:
        return None
    i, error = failing[0]
    if is_memory_error(error):
        return memory_check(memory)
    if "problem" not in error and error.get("uncalled"):
        return Check("runs", "error", msg(
            "`{function}` stopped on check case {case} of {cases}: {why}", function=function,
            case=i + 1, cases=len(observed), why=uncalled_error(error)))
    return Check("runs", "error", _with_traceback(
        msg("`{function}` stopped on check case {case} of {cases}: {what}.", function=function,
            case=i + 1, cases=len(observed), what=what_went_wrong(error)), error),
        msg("the lines above are where it happened, most recent last"))


def ended_early_check(returncode: int | None, memory: int | None,
                      file_limit: int | None) -> Check:
    """The process ended (or was killed) after learner code started, before the results."""
    def ended(how: str, hint: str = "") -> Check:
        return Check("process", "error",
                     msg("Your code {how} before the checks could finish.", how=how), hint)

    if returncode == WorkerExit.OUT_OF_MEMORY:
        return memory_check(memory)
    if returncode == WorkerExit.CHANNEL_LOST:
        return ended(msg("closed or broke the channel the checker reports on"),
                     msg("do not close or write to file descriptors your code did not open"))
    if returncode is not None and returncode < 0:
        name = signal_name(-returncode)
        if name == "SIGSEGV":
            return ended(msg("crashed with a segmentation fault (it touched memory it does not "
                             "own, e.g. through ctypes)"))
        if name == "SIGKILL":
            return ended(msg("was killed (SIGKILL); most likely it ran out of memory"),
                         msg("look for a list or tensor that keeps growing"))
        if name == "SIGXFSZ" and file_limit:
            return ended(msg("wrote a file larger than the {limit} MiB limit",
                             limit=file_limit // MiB))
        if name == "SIGABRT":
            return ended(msg("aborted (SIGABRT)"))
        return ended(msg("was stopped by {signal}", signal=name))
    if returncode is not None and (returncode & 0xFFFFFFFF) in WINDOWS_CRASHES:
        return ended(WINDOWS_CRASHES[returncode & 0xFFFFFFFF])
    how = (msg("ended the process (exit code unknown)") if returncode is None else
           msg("ended the process (exit code {code})", code=returncode))
    return ended(how, msg("remove the call that exits (os._exit, os.kill, ...) from your code"))


def startup_check(results: ReadResults, run: WorkerRun, allowance: float) -> Check:
    """The worker never reached the learner's code: the tutor's problem, not the learner's."""
    if run.startup_timed_out:
        return Check("start-up", "error",
                     msg("The checker was not ready after {seconds} s (it imports PyTorch "
                         "before it runs your code), so your code was not checked.",
                         seconds=seconds(allowance)),
                     msg("try again; if it keeps happening, check that "
                         "`python -c \"import torch\"` works"))
    final = results.final
    if final is not None and final["type"] == "worker_error":
        error = final["error"]
        hint = (msg("install PyTorch: python -m pip install torch")
                if "torch" in error["message"] and error["type"].endswith("Error") else
                msg("this is a gradtutor problem; the output below may say more"))
        return Check("start-up", "error",
                     msg("The checker could not start ({error}: {message}), so your code was "
                         "not checked.", error=error["type"], message=error["message"]), hint)
    code = "unknown" if run.returncode is None else run.returncode
    return Check("start-up", "error",
                 msg("The checker could not start (exit code {code}), so your code was not "
                     "checked.", code=code),
                 msg("this is a gradtutor problem; the output below may say more"))


def judged(judge: Judge, expected: protocol.Expected,
           observed: list[dict[str, Any]]) -> list[Check]:
    try:
        checks = list(judge(expected["cases"], expected["expected"], observed))
    except Exception as exc:  # noqa: BLE001 - odd data must fail the check, not the tutor
        return [Check("results", "error",
                      msg("The checker could not judge your results ({error}: {message}).",
                          error=type(exc).__name__, message=str(exc)),
                      msg("if your code writes to the checker's channel, stop; otherwise this "
                          "is a gradtutor bug"))]
    if not checks or not all(isinstance(c, Check) for c in checks):
        return [Check("results", "error", msg("The checker returned no checks."),
                      msg("this is a gradtutor bug"))]
    return checks


def decide(run: WorkerRun, judge: Judge, *, function: str, timeout: float,
           startup_allowance: float, results_cap: int) -> tuple[Check, ...]:
    """The checks for one worker run: the first thing that went wrong, or the judge's checks."""
    if run.timed_out:
        return (Check("time-limit", "timeout",
                      msg("Your code was still running after {seconds} s: look for a loop that "
                          "never ends or a call that waits for input.",
                          seconds=seconds(timeout))),)
    if run.memory_killed is not None:
        return (memory_check(run.memory_killed),)
    if run.disk_killed is not None:
        return (Check("disk", "error", msg(
            "Your code wrote more than {limit} MiB of files (or too many files) in its folder, "
            "so the check was stopped.", limit=run.disk_killed // MiB),
            msg("look for a loop that keeps writing or saving files")),)
    results = parse_results(run.results, run.results_overflow, results_cap, run.reference)
    if results.problem is not None:
        if run.returncode == WorkerExit.OUT_OF_MEMORY:
            return (memory_check(run.memory_limit),)
        return (Check("results", "error",
                      msg("The checker's results came back unreadable ({problem}), so your "
                          "code could not be judged.", problem=results.problem),
                      msg("return small values (the gradient itself), and do not write to file "
                          "descriptors your code did not open")),)
    if results.expected is None:
        return (startup_check(results, run, startup_allowance),)
    final = results.final
    if final is None:
        return (ended_early_check(run.returncode, run.memory_limit, run.file_limit),)
    if final["type"] == "worker_error":
        error = final["error"]
        if is_memory_error(error) or run.returncode == WorkerExit.OUT_OF_MEMORY:
            return (memory_check(run.memory_limit),)
        return (Check("process", "error",
                      msg("The check stopped on an unexpected error ({error}: {message}).",
                          error=error["type"], message=error["message"]),
                      msg("if your code changes Python or torch internals, undo that; "
                          "otherwise this is a gradtutor bug")),)
    if final["type"] == "learner_error":
        return (learner_error_check(final, function, run.memory_limit),)
    observed = final["observed"]
    failed = case_error_check(observed, function, run.memory_limit) or forged_check(observed)
    if failed is not None:
        return (failed,)
    problem = inconsistency(results.expected["cases"], observed)
    if problem is not None:
        return (Check("results", "error",
                      msg("The checker's results came back unreadable ({problem}), so your "
                          "code could not be judged.", problem=problem),
                      msg("return small values (the gradient itself), and do not write to file "
                          "descriptors your code did not open")),)
    return tuple(judged(judge, results.expected, observed))


def _shape(values: Any) -> tuple[int, ...] | None:
    """The shape of nested lists of numbers (rectangular); None for anything else."""
    if isinstance(values, bool):
        return None
    if isinstance(values, (int, float)):
        return ()
    if not isinstance(values, list):
        return None
    inner = [_shape(v) for v in values]
    if any(s is None for s in inner) or len(set(inner)) > 1:
        return None
    return (len(values), *(inner[0] or ())) if inner else (0,)


def inconsistency(cases: list[Any], observed: list[dict[str, Any]]) -> str | None:
    """What in the observations cannot have come from a real run, checked against what the
    tutor knows itself (the cases it was sent by the reference process); None if nothing.
    A gradient autograd put in w.grad always has w's shape, and the trace's events are
    records with a kind."""
    for case, seen in zip(cases, observed, strict=True):
        events = seen.get("events", [])
        if not isinstance(events, list) or not all(
                isinstance(e, dict) and isinstance(e.get("event"), str) for e in events):
            return msg("an event that is not one")
        w = case.get("w") if isinstance(case, dict) else None
        if w is None:
            continue
        grads = [e.get("grad") for e in events
                 if e["event"] == "accumulate" and e.get("param") == "w"]
        after = seen.get("grad_after")
        if isinstance(after, list):
            grads.append(after)
        if any(_shape(g) != _shape(w) for g in grads):
            return msg("a gradient whose shape is not w's")
    return None


def forged_check(observed: list[dict[str, Any]]) -> Check | None:
    """A failed check if the learner's code called the checker's gradient hooks itself,
    outside a backward pass that reached the tensor (the worker counts such calls as
    `forged` and records nothing for them)."""
    counts = [o.get("forged") for o in observed]
    forged = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c > 0)
    if not forged and all(c is None for c in counts):
        return None
    return Check("trace", "fail",
                 msg("Your code called the checker's gradient hooks itself, outside a "
                     "backward pass ({count} times), so the gradients it claims did not come "
                     "from backward().", count=max(forged, 1)),
                 msg("let backward() fill .grad; do not call hooks or the checker's trace "
                     "yourself"))
