"""The registry of checkers that lesson YAML may name. A lesson can only pick from these;
it never carries checker code.

An exercise is judged either by a checker module named here (`checker:` in the lesson) or by
the checks its YAML declares on an input family (`inputs:`, `declared.py`). Both give the
worker the same contract, `Observer`; only `judge` runs in the tutor, on plain data.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gradtutor.checking.protocol import CheckerRef
    from gradtutor.checking.verdict import Check
    from gradtutor.lessons.model import Exercise

CHECKERS: dict[str, str] = {
    "fix-the-loop": "fix_the_loop",
    "manual-sgd": "manual_sgd",
}

Judge = Callable[[list[Any], list[Any], list[Any]], Sequence["Check"]]


class Observer(Protocol):
    """What the worker needs of a checker: the half of it that makes cases and observes the
    learner's function (`gradtutor.runtime.checker.Checker` is what runs checks).

    - ``ARITY``: how many positional parameters the learner's function takes;
    - ``cases(seed)``: plain-data inputs, from ``random.Random(seed)``; no torch;
    - ``expected(case)``: the reference result, computed with the real torch *before* any
      learner code is loaded, by a process of the worker's own (never in the process that
      runs learner code);
    - ``observe(case, fn, trace)``: calls the learner's ``fn`` on fresh tensors built from
      ``case`` (in the worker, after the learner's file is loaded) and returns plain data:
      values via ``trace.values``, events from ``trace.events``.

    A checker module also defines ``judge(cases, expected, observed) -> list[Check]``: the
    pass/fail decision, in the tutor's process, from plain data only (no torch). Its messages,
    hints and evidence words are ``msg()`` templates (a declared exercise's come from its
    lesson), each translated; the checker tests fail on any that is not.
    """

    @property
    def ARITY(self) -> int: ...  # noqa: N802 - the modules' constant

    def cases(self, seed: int, /) -> list[dict[str, Any]]: ...

    def expected(self, case: dict[str, Any], /) -> dict[str, Any]: ...

    def observe(self, case: dict[str, Any], fn: Any, trace: Any, /) -> dict[str, Any]: ...


class CheckerModule(Observer, Protocol):
    """A checker module: the worker's contract, and the tutor's `judge`."""

    def judge(self, cases: list[Any], expected: list[Any], observed: list[Any], /
              ) -> Sequence[Check]: ...


if TYPE_CHECKING:  # mypy holds every registered module to the contract; nothing at run time
    from gradtutor.checking.checkers import declared, fix_the_loop, manual_sgd

    _REGISTERED: tuple[CheckerModule, ...] = (fix_the_loop, manual_sgd)
    _DECLARED: type[Observer] = declared.WorkerChecker


def load(name: str) -> CheckerModule:
    """The checker module registered under `name` (KeyError if there is none)."""
    module: CheckerModule = importlib.import_module(
        f"{__name__}.{CHECKERS[name]}")
    return module


def worker_checker(ref: CheckerRef) -> Observer:
    """What a worker runs for the checker a request names (KeyError, ValueError if none)."""
    if isinstance(ref, dict):
        from gradtutor.checking.checkers.declared import WorkerChecker

        return WorkerChecker(ref)
    checker: Observer = load(ref)
    return checker


def request_checker(exercise: Exercise) -> CheckerRef:
    """What a check's request names as the exercise's checker."""
    if exercise.declared:
        from gradtutor.checking.checkers.declared import worker_spec

        return worker_spec(exercise)
    return str(exercise.checker)


def judge_of(exercise: Exercise) -> Judge:
    """The tutor-side judge of an exercise."""
    if exercise.declared:
        from gradtutor.checking.checkers.declared import judge_exercise

        return judge_exercise(exercise)
    judge: Judge = load(str(exercise.checker)).judge
    return judge
