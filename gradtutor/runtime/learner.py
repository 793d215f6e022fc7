"""Running learner code: the only place it runs. One check in this process: references
first, then the learner's file, then the checker's observations, each sent as plain data.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import traceback
import types
from collections.abc import Callable
from typing import Any

from gradtutor.checking import protocol
from gradtutor.checking.checkers import worker_checker
from gradtutor.checking.protocol import CheckerRef
from gradtutor.runtime.prepare import hide_internal_warnings
from gradtutor.runtime.references import Reference, reference_here
from gradtutor.runtime.sender import MAX_TRACEBACK_CHARS, ForkedChildEnds, Send


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
    return protocol.raised(type(exc).__name__, message, learner_traceback(exc, filename),
                           uncalled_on_line(exc, filename))


# Python's names for a function or method where a value was wanted, as its errors give them
# ("unsupported operand type(s) for +=: 'float' and 'builtin_function_or_method'").
_CALLABLE_KINDS = re.compile(
    r"(?<![\w-])(builtin_function_or_method|method-wrapper|method|function)(?![\w-])")


def uncalled_on_line(exc: BaseException, filename: str) -> str:
    """The method that the learner's line which raised names without calling it (`total +=
    loss.item` gives `loss.item`), when the error is about a function or method used as a
    value; "" for any other error. Only a method of a tensor, module or optimizer, or a
    function of torch's, counts (`trace.torch_callable`), so data such as `w.grad` is never
    taken for one."""
    if not isinstance(exc, (TypeError, AttributeError)) or not _CALLABLE_KINDS.search(
            str(exc)):
        return ""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if not frames or not frames[-1].lineno:
        return ""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    from gradtutor.checking.trace import torch_callable  # imports torch, as the worker has

    line = frames[-1].lineno
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    named = sorted((node.col_offset, ast.unparse(node)) for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and node.lineno == line
                   and isinstance(node.ctx, ast.Load) and id(node) not in called
                   and torch_callable(node.attr))
    return named[0][1][:40] if named else ""


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


def evaluate(checker_name: CheckerRef, function: str, source: str, filename: str, seed: int,
             send: Send, reference: Reference = reference_here) -> None:
    """One whole check in this process; each result goes to `send` as soon as it exists.

    Messages, in order: `protocol.Expected` (sent by `reference` before learner code runs;
    `Started` instead when the tutor has the references), then a `LearnerError` or the
    `Observed` records. A learner's worker passes `reference_by_tutor`, so that
    the reference results never exist in the process that runs learner code: this process
    only ever holds the cases (the inputs, which are no secret). `trace.install()` must have
    run first.

    Each call of learner code is a `with ends:` block: a process that learner code forked
    ends there, as the call returns or raises in it, and only this process goes on.
    """
    from gradtutor.checking import trace  # imports torch

    ends = ForkedChildEnds()
    checker = worker_checker(checker_name)
    reference(checker_name, seed, send)
    cases = checker.cases(seed)
    hide_internal_warnings()
    try:
        with ends:
            namespace = load_learner(source, filename)
    except BaseException as exc:  # noqa: BLE001 - whatever learner code raises is reported
        send(protocol.learner_error(describe_error(exc, filename)))
        return
    with ends:  # reading a signature can run learner code (`__signature__`)
        fn = find_function(namespace, function, checker.ARITY)
    if not callable(fn):  # a problem (plain data; the learner's callable may be a dict)
        send(protocol.learner_error(fn))
        return
    observed: list[dict[str, Any]] = []
    for case in cases:
        case_trace = trace.start()
        try:
            with ends:
                result = checker.observe(case, fn, case_trace)
            if case_trace.forged:  # the trace's hooks were called outside a real backward
                result = {**result, "forged": case_trace.forged}
            observed.append(result)
        except BaseException as exc:  # noqa: BLE001
            observed.append({"error": describe_error(exc, filename)})
        finally:
            case_trace.close()
    send(protocol.observed(observed))
