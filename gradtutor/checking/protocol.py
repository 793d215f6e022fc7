"""What the tutor and the processes it starts say to each other, as types: the request a
worker answers, the messages it sends back on its result channel, the fork server's and its
reference process's messages, and the codes a worker ends with when it cannot say more.

Each message has one encoder, a function that builds it (plain JSON data, sent as one line by
`line`), and one decoder that validates whatever arrived and returns a fresh message, or
raises `Malformed`: learner code holds the result pipe and may write anything there, so
nothing it sends reaches a verdict undecoded. A problem in the learner's code travels as a
code (`Problem`) with its data as fields, never as a sentence: the tutor words it
(outcome.py). `read_check` and `read_snippet` are the one reading of a whole result
channel (`check_messages`: a check's messages collected in a list). No torch, no words and
no I/O here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import Enum, IntEnum
from typing import Any, Literal, TypedDict, final

from gradtutor.errors import ExitCode


class WorkerExit(IntEnum):
    """How a worker process ends; the tutor reads it when the result channel could not say
    what happened. SOFTWARE is the tutor's own `ExitCode.SOFTWARE`: 70 means that gradtutor
    itself failed, in whichever of its processes."""

    OK = ExitCode.OK
    SOFTWARE = ExitCode.SOFTWARE  # the worker itself failed; it sends a worker_error if it can
    OUT_OF_MEMORY = 71  # memory ran out outside the learner's own calls
    CHANNEL_LOST = 72  # the result channel was closed or broken, so nothing more can be said


class Malformed(ValueError):
    """Data that is not the message it should be (the reason is for a developer, in English;
    the tutor words what it means for the learner itself)."""


def line(message: Mapping[str, Any]) -> bytes:
    """A message as one line of ASCII JSON."""
    return (json.dumps(message, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def parse(data: bytes | str) -> object:
    """One line (or datagram) as JSON data; Malformed if it is not JSON at all."""
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise Malformed("not JSON") from exc


# ---- field readers: each raises Malformed -------------------------------------------------

def _record(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{what}: not an object")
    return value


def _text(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise Malformed(f"{key}: not a string")
    return value


def _optional_text(record: Mapping[str, Any], key: str) -> str | None:
    return None if record.get(key) is None else _text(record, key)


def _whole(record: Mapping[str, Any], key: str) -> int:
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise Malformed(f"{key}: not an integer")
    return value


def _pid(record: Mapping[str, Any], key: str) -> int:
    value = _whole(record, key)
    if value <= 0:
        raise Malformed(f"{key}: not a process id")
    return value


def _optional_pid(record: Mapping[str, Any], key: str) -> int | None:
    return None if record.get(key) is None else _pid(record, key)


def _list(record: Mapping[str, Any], key: str) -> list[Any]:
    value = record.get(key)
    if not isinstance(value, list):
        raise Malformed(f"{key}: not a list")
    return value


def _kind(record: Mapping[str, Any], expected: str) -> None:
    if record.get("type") != expected:
        raise Malformed(f"not a {expected!r} message")


# ---- what went wrong in the learner's code --------------------------------------------------

class Problem(str, Enum):
    """A problem the worker found in the learner's code, by its code; each has a message type
    below that carries its data."""

    SYS_EXIT = "sys-exit"  # the code called sys.exit: `SysExit`
    NO_FUNCTION = "no-function"  # the file defines no such name: `NoFunction`
    NOT_CALLABLE = "not-callable"  # the name is there but cannot be called: `NotCallable`
    WRONG_ARITY = "wrong-arity"  # the function takes other arguments: `WrongArity`


class _Raised(TypedDict):
    type: str
    message: str
    traceback: str


@final
class Raised(_Raised, total=False):
    """An exception from learner code (or the worker's own, in a `WorkerError`): its type's
    name, its message, the traceback; `uncalled`: a method its line names uncalled, if any."""

    uncalled: str


@final
class SysExit(TypedDict):
    """The learner's code called `sys.exit(code)`; `code` is its repr."""

    problem: Literal[Problem.SYS_EXIT]
    code: str
    traceback: str


@final
class NoFunction(TypedDict):
    problem: Literal[Problem.NO_FUNCTION]
    name: str


@final
class NotCallable(TypedDict):
    problem: Literal[Problem.NOT_CALLABLE]
    name: str


@final
class WrongArity(TypedDict):
    """`name` must take `arity` arguments; the learner's takes `parameters` (as Python shows
    a signature: "(w, loss_fn=None)")."""

    problem: Literal[Problem.WRONG_ARITY]
    name: str
    arity: int
    parameters: str


CaseFailure = Raised | SysExit  # the learner's code stopped: loading it, or on a case
FunctionProblem = NoFunction | NotCallable | WrongArity
# either; spelt out, since mypy narrows a union of TypedDicts by key only when it is flat
Failure = Raised | SysExit | NoFunction | NotCallable | WrongArity


def raised(kind: str, message: str, traceback: str, uncalled: str = "") -> Raised:
    out: Raised = {"type": kind, "message": message, "traceback": traceback}
    return {**out, "uncalled": uncalled} if uncalled else out


def sys_exit(code: str, traceback: str) -> SysExit:
    return {"problem": Problem.SYS_EXIT, "code": code, "traceback": traceback}


def no_function(name: str) -> NoFunction:
    return {"problem": Problem.NO_FUNCTION, "name": name}


def not_callable(name: str) -> NotCallable:
    return {"problem": Problem.NOT_CALLABLE, "name": name}


def wrong_arity(name: str, arity: int, parameters: str) -> WrongArity:
    return {"problem": Problem.WRONG_ARITY, "name": name, "arity": arity,
            "parameters": parameters}


def decode_raised(value: object) -> Raised:
    record = _record(value, "error")
    return raised(_text(record, "type"), _text(record, "message"), _text(record, "traceback"),
                  _optional_text(record, "uncalled") or "")


def _problem(record: Mapping[str, Any]) -> Problem:
    try:
        return Problem(record.get("problem"))
    except ValueError:
        raise Malformed("problem: not a known code") from None


def decode_case_failure(value: object) -> CaseFailure:
    """An exception (no `problem`), or a SysExit."""
    record = _record(value, "error")
    if "problem" not in record:
        return decode_raised(record)
    if _problem(record) is not Problem.SYS_EXIT:
        raise Malformed("problem: not one of running code")
    return sys_exit(_text(record, "code"), _text(record, "traceback"))


def decode_function_problem(value: object) -> FunctionProblem:
    record = _record(value, "error")
    problem = _problem(record)
    if problem is Problem.NO_FUNCTION:
        return no_function(_text(record, "name"))
    if problem is Problem.NOT_CALLABLE:
        return not_callable(_text(record, "name"))
    if problem is Problem.WRONG_ARITY:
        return wrong_arity(_text(record, "name"), _whole(record, "arity"),
                           _text(record, "parameters"))
    raise Malformed("problem: not one of a function")


# ---- the result channel: what a worker sends, one JSON line each ----------------------------

@final
class Expected(TypedDict):
    """The checker's cases (inputs) and its reference results, one per case; opens a check's
    channel, unless the tutor has the references from elsewhere."""

    type: Literal["expected"]
    cases: list[Any]
    expected: list[Any]


@final
class Started(TypedDict):
    """Learner code starts now (its clock starts): opens a snippet's channel, and a check's
    whose references the tutor has from the fork server's reference process."""

    type: Literal["started"]


@final
class Observed(TypedDict):
    """What the checker observed of the learner's function, one plain record per case; a case
    where the function stopped holds only {"error": CaseFailure}. A record may count
    `forged` calls of the trace's hooks."""

    type: Literal["observed"]
    observed: list[dict[str, Any]]


@final
class LearnerError(TypedDict):
    """The learner's file could not be loaded, or holds no usable function."""

    type: Literal["learner_error"]
    stage: Literal["load", "function"]
    error: Failure


@final
class WorkerError(TypedDict):
    """The worker itself failed (before learner code, or in the tutor's own code)."""

    type: Literal["worker_error"]
    error: Raised


@final
class SnippetRan(TypedDict):
    """A snippet ran to its end: str(show), if a `show` was asked for, and the series asked
    for (`snippet.plain_series`: a list of numbers, or what the variable held instead). The
    series are read by `snippet.read_series`, which words what is wrong with them."""

    type: Literal["snippet"]
    shown: str | None
    series: Any


@final
class SnippetFailed(TypedDict):
    """A snippet raised: "Type: message", one line (`snippet.one_line`)."""

    type: Literal["snippet"]
    error: str


CheckFinal = Observed | LearnerError | WorkerError
SnippetFinal = SnippetRan | SnippetFailed | WorkerError
ResultMessage = (Expected | Started | Observed | LearnerError | WorkerError | SnippetRan
                 | SnippetFailed)  # whatever a worker sends


def expected(cases: list[Any], values: list[Any]) -> Expected:
    return {"type": "expected", "cases": cases, "expected": values}


def started() -> Started:
    return {"type": "started"}


def observed(records: list[dict[str, Any]]) -> Observed:
    return {"type": "observed", "observed": records}


def learner_error(error: Failure) -> LearnerError:
    return {"type": "learner_error", "stage": "load" if _stopped_running(error) else "function",
            "error": error}


def _stopped_running(error: Failure) -> bool:
    if "problem" not in error:
        return True  # an exception
    return error["problem"] is Problem.SYS_EXIT


def worker_error(error: Raised) -> WorkerError:
    return {"type": "worker_error", "error": error}


def snippet_ran(shown: str | None, series: Mapping[str, Any]) -> SnippetRan:
    return {"type": "snippet", "shown": shown, "series": dict(series)}


def snippet_failed(error: str) -> SnippetFailed:
    return {"type": "snippet", "error": error}


def decode_expected(value: object) -> Expected:
    """At least one case, and exactly one reference result per case."""
    record = _record(value, "expected")
    _kind(record, "expected")
    cases, values = _list(record, "cases"), _list(record, "expected")
    if not cases or len(cases) != len(values):
        raise Malformed("not one reference per case")
    return expected(cases, values)


def decode_started(value: object) -> Started:
    _kind(_record(value, "started"), "started")
    return started()


def decode_observed(value: object, cases: int) -> Observed:
    """One record per case (`cases` of them); a failure in one is a CaseFailure."""
    record = _record(value, "observed")
    _kind(record, "observed")
    records = _list(record, "observed")
    if len(records) != cases or not all(isinstance(r, dict) for r in records):
        raise Malformed("not one record per case")
    return observed([{**r, "error": decode_case_failure(r["error"])} if "error" in r else r
                     for r in records])


def decode_learner_error(value: object) -> LearnerError:
    """A load error stopped running code (an exception, sys.exit); a function error is one of
    the function problems. Nothing else."""
    record = _record(value, "learner_error")
    _kind(record, "learner_error")
    stage = record.get("stage")
    if stage == "load":
        return learner_error(decode_case_failure(record.get("error")))
    if stage == "function":
        return learner_error(decode_function_problem(record.get("error")))
    raise Malformed("stage: not load or function")


def decode_worker_error(value: object) -> WorkerError:
    record = _record(value, "worker_error")
    _kind(record, "worker_error")
    return worker_error(decode_raised(record.get("error")))


def decode_snippet(value: object) -> SnippetRan | SnippetFailed:
    """An `error` (one line), or what was shown and the series (unread: see SnippetRan)."""
    record = _record(value, "snippet")
    _kind(record, "snippet")
    if "error" in record:
        return snippet_failed(_text(record, "error"))
    return {"type": "snippet", "shown": _optional_text(record, "shown"),
            "series": record.get("series", {})}


# ---- the request: what the tutor asks a worker (a JSON file in the check's folder) ----------

@final
class DeclaredSpec(TypedDict):
    """What a worker needs of an exercise its lesson declares the checks of: its input family,
    the errors the family reports as facts, and the solution (the reference) with its
    function (`checkers.declared.worker_spec`)."""

    inputs: str
    catches: list[str]
    solution: str
    function: str


# A check's checker: a registered checker's name, or a declared exercise's spec.
CheckerRef = str | DeclaredSpec


def checker_ref(record: Mapping[str, Any], key: str) -> CheckerRef:
    """The checker a message names (Malformed if it is neither a name nor a spec)."""
    value = record.get(key)
    if isinstance(value, str):
        return value
    spec = _record(value, key)
    catches = _list(spec, "catches")
    if not all(isinstance(name, str) for name in catches):
        raise Malformed(f"{key}.catches: not names")
    return {"inputs": _text(spec, "inputs"), "catches": catches,
            "solution": _text(spec, "solution"), "function": _text(spec, "function")}


def checker_key(checker: CheckerRef) -> str:
    """A checker's name for keeping its references per seed."""
    return checker if isinstance(checker, str) else json.dumps(checker, sort_keys=True)


@final
class CheckRequest(TypedDict):
    """Check the learner's `source` with `checker` on inputs from `seed`. `reference`:
    "worker" (it computes the references in a process of its own and sends them) or "tutor"
    (the tutor has them; the worker sends `started`). `memory_bytes` and `file_bytes` are
    the limits of the learner's code."""

    kind: Literal["check"]
    checker: CheckerRef
    function: str
    source: str
    filename: str
    seed: int
    memory_bytes: int
    file_bytes: int
    reference: Literal["worker", "tutor"]


@final
class SnippetRequest(TypedDict):
    """Run a lesson's `code`; then str(eval(`show`)) and the variables `series`."""

    kind: Literal["snippet"]
    code: str
    show: str | None
    series: list[str]
    filename: str
    memory_bytes: int
    file_bytes: int


Request = CheckRequest | SnippetRequest


def check_request(*, checker: CheckerRef, function: str, source: str, filename: str, seed: int,
                  memory_bytes: int, file_bytes: int) -> CheckRequest:
    return {"kind": "check", "checker": checker, "function": function, "source": source,
            "filename": filename, "seed": seed, "memory_bytes": memory_bytes,
            "file_bytes": file_bytes, "reference": "worker"}


def snippet_request(*, code: str, show: str | None, series: Sequence[str],
                    memory_bytes: int, file_bytes: int) -> SnippetRequest:
    return {"kind": "snippet", "code": code, "show": show, "series": list(series),
            "filename": "<snippet>", "memory_bytes": memory_bytes, "file_bytes": file_bytes}


def sealed(request: Request) -> Request:
    """`request` as the learner's process may see it (its request file): a declared
    exercise's solution left out. That process needs only the family and the function's name
    to run the learner's function; the solution runs where the references are made."""
    if request["kind"] != "check" or isinstance(request["checker"], str):
        return request
    return {**request, "checker": {**request["checker"], "solution": ""}}


def decode_request(value: object) -> Request:
    record = _record(value, "request")
    memory = _whole(record, "memory_bytes")
    if record.get("kind") == "snippet":
        series = _list(record, "series")
        if not all(isinstance(name, str) for name in series):
            raise Malformed("series: not names")
        return {"kind": "snippet", "code": _text(record, "code"),
                "show": _optional_text(record, "show"), "series": series,
                "filename": _text(record, "filename"), "memory_bytes": memory,
                "file_bytes": _whole(record, "file_bytes")}
    if record.get("kind") != "check":
        raise Malformed("kind: not check or snippet")
    reference = record.get("reference")
    if reference not in ("worker", "tutor"):
        raise Malformed("reference: not worker or tutor")
    return {"kind": "check", "checker": checker_ref(record, "checker"),
            "function": _text(record, "function"), "source": _text(record, "source"),
            "filename": _text(record, "filename"), "seed": _whole(record, "seed"),
            "memory_bytes": memory, "file_bytes": _whole(record, "file_bytes"),
            "reference": "tutor" if reference == "tutor" else "worker"}
