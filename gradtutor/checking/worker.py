"""The checking worker: the only place learner code runs. Everything it reports is plain data.

`evaluate` does one check in the current process: references first (real torch, before any
learner code exists), then the learner's file, then the checker's observations. `main` wraps
it as a child process (see runner.py): limits, quiet torch, and results on a private pipe.
"""

from __future__ import annotations

import inspect
import linecache
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from gradtutor.checking import trace
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
    return fn


def evaluate(checker_name: str, function: str, source: str, filename: str, seed: int,
             send: Callable[[dict[str, Any]], None]) -> None:
    """One whole check in this process; each result goes to `send` as soon as it exists.

    Messages, in order: {"type": "expected", "cases", "expected"} (before learner code runs),
    then either {"type": "learner_error", ...} or {"type": "observed", "observed": [...]}.
    `trace.install()` must have run first.
    """
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


def main() -> None:  # pragma: no cover - replaced by the process wrapper in runner.py's design
    raise SystemExit("gradtutor.checking.worker is started by gradtutor check")


if __name__ == "__main__":
    main()
    sys.exit(0)
