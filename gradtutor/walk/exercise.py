"""An exercise in the walkthrough: the learner's file is checked on each save (and on `c`),
the hints come one at a time, the solution after a question. Pure: the shell writes the
starter, watches the file and runs the checks, and reports back as news."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gradtutor import progress as prog
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise
from gradtutor.records import record
from gradtutor.walk.events import (
    CheckDone,
    CheckFailed,
    CheckWaiting,
    Effect,
    Event,
    FileReady,
    FileSaved,
    News,
    OpenEditor,
    Record,
    RunCheck,
    WriteStarter,
)
from gradtutor.walk.rules import Go, Stay, StepRules, page_on

if TYPE_CHECKING:
    from gradtutor.bindings import Kind
    from gradtutor.checking.verdict import Verdict

# After this many verdicts in a row that fail on the same check, the tutor points at `h`.
STUCK_AFTER = 3


@record
class RecordCheck(Record):
    """A check of the exercise ran (an attempt, even if the learner has moved on)."""

    exercise_id: str
    passed: bool

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.record_check(progress, lesson_id, self.exercise_id, self.passed, now)


@record
class RecordHints(Record):
    exercise_id: str
    shown: int

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.record_hints(progress, lesson_id, self.exercise_id, self.shown, now)


@record
class RecordSolution(Record):
    exercise_id: str

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.record_solution(progress, lesson_id, self.exercise_id, now)


@record
class ExerciseView:
    """Where the learner is on an exercise. `checking` while a check runs; `loading`, the
    seconds it has waited so far for the worker to load PyTorch (None while it does not wait
    for that); `again` when the file changed during it, so it is checked once more after;
    `digest` names the content last saved or checked, so a save that changed nothing is not
    checked twice; `whole` when the learner asked for the whole verdict, not the short cut
    that fits one screen (it stays so for the next verdicts, until asked again)."""

    hints: int = 0
    confirming: bool = False
    solution: bool = False
    checking: bool = False
    loading: int | None = None
    again: bool = False
    verdict: Verdict | None = None
    whole: bool = False
    digest: str | None = None
    kept: bool = False  # the learner's file was there already and was left as it was
    passed: bool = False  # progress said, on arrival, that a check of it has passed before
    stuck_on: str | None = None  # the first failing check of the last verdict
    stuck: int = 0  # how many verdicts in a row failed first on that same check

    @property
    def busy(self) -> bool:
        """A check is running, whose verdict the screen waits for."""
        return self.checking


class ExerciseRules(StepRules[Exercise, ExerciseView]):
    runs_code = True

    def open(self, step: Exercise) -> ExerciseView:
        return ExerciseView()

    def arrive(self, step: Exercise) -> list[Effect]:
        return [WriteStarter(step.id)]

    def handle(self, step: Exercise, view: ExerciseView,
               event: Event) -> Stay[ExerciseView] | Go:
        if view.confirming:
            view = replace(view, confirming=False)
            if event == "yes":
                return Stay(replace(view, solution=True), [RecordSolution(step.id)])
            return Stay(view, notice=msg("The solution stays hidden."))
        if event == "edit":
            return Stay(view, [OpenEditor(step.id)])
        if event == "check":
            return _start_check(step, view)
        if event == "hint":
            if view.hints < len(step.hints):
                shown = view.hints + 1
                return Stay(replace(view, hints=shown), [RecordHints(step.id, shown)])
            last = (msg("That was the last hint.") if view.solution
                    else msg("That was the last hint: s shows the solution."))
            return Stay(view, notice=last)
        if event == "verdict":
            if view.verdict is None:
                return Stay(view, notice=msg("There is no verdict yet: save your file, or c "
                                             "checks it now."))
            return Stay(replace(view, whole=not view.whole))
        if event == "solution":
            if view.solution:
                return Stay(view, notice=msg("The solution is on the screen."))
            return Stay(replace(view, confirming=True))
        return page_on(view, event)

    def news(self, step: Exercise, view: ExerciseView, news: News) -> Stay[ExerciseView]:
        if isinstance(news, FileReady):
            seen = max(view.hints, min(news.hints, len(step.hints)))
            return Stay(replace(view, kept=not news.starter, hints=seen,
                                solution=view.solution or news.solution,
                                passed=view.passed or news.passed))
        if isinstance(news, FileSaved):
            if news.digest == view.digest:
                return Stay(view)
            return _start_check(step, replace(view, digest=news.digest))
        if isinstance(news, CheckWaiting):
            return Stay(replace(view, loading=news.seconds) if view.checking else view)
        notice: str | None = None
        if isinstance(news, CheckDone):
            # a verdict is the news now: a notice of a check that could not run goes
            notice = ""
            view = _count_stuck(replace(view, checking=False, loading=None,
                                        verdict=news.verdict))
            if view.stuck and view.stuck % STUCK_AFTER == 0 and view.hints < len(step.hints):
                notice = msg("This check has failed {times} times in a row: h shows a hint "
                             "({seen} of {total} seen so far).", times=view.stuck,
                             seen=view.hints, total=len(step.hints))
        elif isinstance(news, CheckFailed):
            view = replace(view, checking=False, loading=None)
            notice = news.message
        else:
            return Stay(view)
        if view.again:
            again = _start_check(step, replace(view, again=False))
            return Stay(again.view, again.effects, notice)
        return Stay(view, notice=notice)

    def records(self, step: Exercise, news: News) -> list[Effect]:
        if isinstance(news, CheckDone):
            return [RecordCheck(step.id, news.verdict.passed)]
        return []

    def keys(self, step: Exercise, view: ExerciseView) -> Kind:
        return "confirm" if view.confirming else "exercise"

    def watched(self, step: Exercise, view: ExerciseView) -> Exercise | None:
        return step


RULES = ExerciseRules()


def _count_stuck(view: ExerciseView) -> ExerciseView:
    """Count verdicts in a row that fail first on the same check; a pass ends the run."""
    verdict = view.verdict
    failing = None if verdict is None or verdict.passed else next(
        (c.name for c in verdict.checks if c.status not in ("pass", "skip")), verdict.status)
    if failing is None:
        return replace(view, stuck_on=None, stuck=0)
    return replace(view, stuck_on=failing,
                   stuck=view.stuck + 1 if failing == view.stuck_on else 1)


def _start_check(exercise: Exercise, view: ExerciseView) -> Stay[ExerciseView]:
    if view.checking:  # one check at a time: the newest content is checked when this one ends
        return Stay(replace(view, again=True))
    return Stay(replace(view, checking=True), [RunCheck(exercise.id)])
