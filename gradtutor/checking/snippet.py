"""Lesson snippets (predict and demo steps): the author's code, run in a worker like a check.

`run_code` is the worker's side, shared with `gradtutor validate`'s batch: it runs the code,
then evaluates `show` and reads the named series, and returns plain data (`run_proof`, the
batch's alone, runs a quiz choice's proof the same way). `snippet_result` is the tutor's
side, pure: it checks that data and returns a SnippetResult. No torch import here.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any

from gradtutor.checking import results
from gradtutor.checking.outcome import MiB, WorkerRun, seconds, signal_name
from gradtutor.checking.protocol import WorkerExit
from gradtutor.i18n import msg

MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class SnippetResult:
    """What a snippet did: the value it shows, the series it leaves, and its output."""

    ok: bool
    shown: str | None  # str(eval(show)) after the code ran, when a `show` was given
    series: tuple[tuple[str, tuple[float, ...]], ...]  # (variable, values); non-finite allowed
    output: str  # its stdout and stderr together, capped as for checks
    error: str | None  # one line: "NameError: name 'x' is not defined", "timed out after 20 s"
    duration_ms: int


# ---- the worker's side ---------------------------------------------------------------------

def run_code(code: str, show: str | None, series: tuple[str, ...] = ()) -> dict[str, Any]:
    """Run a snippet in this process: {"shown", "series": {name: [floats] | description}},
    or {"error": "Type: message"}. Warnings (torch's among them) are not shown: a lesson's
    output is what the author printed."""
    namespace: dict[str, Any] = {"__name__": "__snippet__"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, "<snippet>", "exec", dont_inherit=True), namespace)  # noqa: S102
            shown = str(eval(show, namespace)) if show else None  # noqa: S307 - author code
            found = {name: plain_series(namespace[name]) for name in series if name in namespace}
    except BaseException as exc:  # noqa: BLE001 - every failure is reported as one line
        return {"error": one_line(exc)}
    return {"shown": shown, "series": found}


def run_proof(code: str, proof: str, holds: str) -> dict[str, Any]:
    """Run a quiz question's code, then one choice's proof code, in one namespace, and say
    whether the proof's `holds` is true: {"holds": bool}, or {"error": "Type: message",
    "in": "code" | "proof"}, "code" when the question's own code failed."""
    namespace: dict[str, Any] = {"__name__": "__snippet__"}
    part = "code"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, "<question>", "exec", dont_inherit=True), namespace)  # noqa: S102
            part = "proof"
            exec(compile(proof, "<proof>", "exec", dont_inherit=True), namespace)  # noqa: S102
            expression = compile(holds.strip(), "<holds>", "eval", dont_inherit=True)
            held = bool(eval(expression, namespace))  # noqa: S307 - the author's code
    except BaseException as exc:  # noqa: BLE001 - every failure is reported as one line
        return {"error": one_line(exc), "in": part}
    return {"holds": held}


def one_line(exc: BaseException) -> str:
    """`Type: message`, first line only, cut to a readable length."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."


def plain_series(value: Any) -> list[float] | str:
    """A list/tuple of numbers or a 1-D tensor (or array) as floats; otherwise what it is, in
    words, for the tutor's message."""
    if getattr(value, "ndim", None) == 1 and callable(getattr(value, "tolist", None)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        numbers_found: list[float] = []
        for item in value:
            number = _number(item)
            if number is None:
                return f"a {type(value).__name__} holding a {type(item).__name__}"
            numbers_found.append(number)
        return numbers_found
    ndim = getattr(value, "ndim", None)
    if isinstance(ndim, int):
        return f"a {ndim}-D {type(value).__name__}"
    return f"a {type(value).__name__}"


def _number(item: Any) -> float | None:
    if isinstance(item, numbers.Real):
        return float(item)
    if getattr(item, "ndim", None) == 0 and callable(getattr(item, "item", None)):
        value = item.item()  # a 0-d tensor, a NumPy scalar
        return float(value) if isinstance(value, numbers.Real) else None
    return None


# ---- the tutor's side (pure) ---------------------------------------------------------------

def snippet_result(run: WorkerRun, output: str, *, series: tuple[str, ...], timeout: float,
                   startup_allowance: float, duration_ms: int,
                   stopped: bool = False) -> SnippetResult:
    """The SnippetResult for one worker run, decided from plain data only. `stopped`: the
    tutor ended the run because it was closing."""
    def failed(error: str) -> SnippetResult:
        return SnippetResult(False, None, (), output, error, duration_ms)

    if stopped:
        return failed(msg("stopped because the tutor was closing"))
    if run.timed_out:
        return failed(msg("timed out after {seconds} s", seconds=seconds(timeout)))
    if run.startup_timed_out:
        return failed(msg("the worker was not ready after {seconds} s",
                          seconds=seconds(startup_allowance)))
    read = results.read_snippet(run.results, run.results_overflow)
    if read.fault is results.Fault.OVERFLOW:
        return failed(msg("the snippet's results were larger than {mib} MiB",
                          mib=len(run.results) // MiB))
    if read.fault is not None:
        return failed(msg("the snippet's results came back unreadable"))
    final = read.final
    if final is None:
        return failed(_ended_early(run.returncode))
    if final["type"] == "worker_error":
        error = final["error"]
        return failed(msg("the worker failed: {type}: {message}", type=error["type"],
                          message=error["message"]))
    if "error" in final:
        return failed(final["error"])
    values, problem = checked_series(final["series"], series)
    if problem is not None:
        return failed(problem)
    return SnippetResult(True, final["shown"], values, output, None, duration_ms)


Series = tuple[tuple[str, tuple[float, ...]], ...]  # (variable, values), in the order asked


@dataclass(frozen=True)
class SeriesFault:
    """Why a run's series cannot be drawn: `name` is missing (`holds` None) or holds `holds`,
    what it is instead in words; `name` None: the series came back as no mapping at all."""

    name: str | None
    holds: str | None = None


def read_series(found: Any, names: tuple[str, ...]) -> tuple[Series, SeriesFault | None]:
    """The series `names` from a `run_code` result's "series", as floats; or the first one
    that is missing or not numbers. The learner's side (`checked_series`) and `gradtutor
    validate` word the fault each for its reader."""
    if not isinstance(found, dict):
        return (), SeriesFault(None)
    values: list[tuple[str, tuple[float, ...]]] = []
    for name in names:
        if name not in found:
            return (), SeriesFault(name)
        value = found[name]
        if not isinstance(value, list) or not all(_is_number(v) for v in value):
            return (), SeriesFault(name, value if isinstance(value, str)
                                   else f"a {type(value).__name__}")
        values.append((name, tuple(float(v) for v in value)))
    return tuple(values), None


def checked_series(found: Any, names: tuple[str, ...]) -> tuple[Series, str | None]:
    """`read_series`, with the fault as a message naming the variable."""
    values, fault = read_series(found, names)
    if fault is None:
        return values, None
    if fault.name is None:
        return (), msg("the snippet's series came back unreadable")
    if fault.holds is None:
        return (), msg("the code left no variable named `{name}`", name=fault.name)
    return (), msg("`{name}` is not a list of numbers or a 1-D tensor (it is {holds})",
                   name=fault.name, holds=fault.holds)


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, float) or (isinstance(value, int) and abs(value) < 2**1000)


def _ended_early(returncode: int | None) -> str:
    if returncode == WorkerExit.OUT_OF_MEMORY:
        return msg("the snippet ran out of memory")
    if returncode == WorkerExit.CHANNEL_LOST:
        return msg("the snippet closed the channel its results go back on")
    if returncode is not None and returncode < 0:
        return msg("the snippet's process was killed by {signal}", signal=signal_name(-returncode))
    code = "unknown" if returncode is None else returncode
    return msg("the snippet's process ended before it finished (exit code {code})", code=code)
