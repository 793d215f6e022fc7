"""The practice steps' part of the walkthrough's state machine: exercises, predictions,
Parsons orderings and demos. Pure, like `gradtutor.walk`, which hands these steps here.

The shell reports its background work as events (a save noticed, a verdict, a snippet's
result) and is asked for work by effects (write the starter, run a check or a snippet, open
the editor, record how it went). Loaded only once such a step is reached, so a learner
opening on a slide never waits for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from gradtutor.i18n import msg
from gradtutor.lessons.model import LETTERS, Demo, Exercise, Lesson, Parsons, Predict
from gradtutor.walk import (
    Answer,
    Choose,
    WalkState,
    choose_first,
    exercise_on_screen,
    go_back,
    go_forward,
    unknown_notice,
)

if TYPE_CHECKING:
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.checking.verdict import Verdict
    from gradtutor.walk import Effect, Event

# What the learner can do on an exercise: open the editor, check now, take the next hint,
# ask for the solution, and answer the "show the solution?" question.
Act = Literal["edit", "check", "hint", "solution", "yes", "no"]
# On a Parsons step: move the cursor (or the grabbed line), grab or drop the line.
Move = Literal["up", "down", "grab"]


@dataclass(frozen=True)
class Order:
    """A whole Parsons order at once, as a typed line gives it: the line numbers as shown,
    1-based, in their new order; graded straight away."""

    numbers: tuple[int, ...]


@dataclass(frozen=True)
class FileReady:
    """The exercise's file is in place; `starter` if it holds just the starter (else it holds
    the learner's own work, which was left as it was). `hints` and `solution`: what progress
    says the learner has already seen of this exercise, shown again on coming back; `passed`:
    whether progress says it has passed before."""

    exercise_id: str
    starter: bool
    hints: int = 0
    solution: bool = False
    passed: bool = False


@dataclass(frozen=True)
class FileSaved:
    """The learner's file for `exercise_id` has new content, identified by `digest`."""

    exercise_id: str
    digest: str


@dataclass(frozen=True)
class CheckDone:
    exercise_id: str
    verdict: Verdict


@dataclass(frozen=True)
class CheckFailed:
    """A check that could not run at all (the file vanished, ...); `message` says why."""

    exercise_id: str
    message: str


@dataclass(frozen=True)
class SnippetDone:
    """The code of step `step_id` ran; `result` is what it showed, left and printed."""

    step_id: str
    result: SnippetResult


@dataclass(frozen=True)
class SnippetFailed:
    """The code of step `step_id` could not be run at all; `message` says why."""

    step_id: str
    message: str


@dataclass(frozen=True)
class Say:
    """One line from the shell for the learner: an editor that would not start, ...
    A message (`msg`), so the screen can say it in the learner's language."""

    text: str


# Events the shell reports about its own work, rather than the learner's keys.
Report = FileReady | FileSaved | CheckDone | CheckFailed | SnippetDone | SnippetFailed | Say


@dataclass(frozen=True)
class WriteStarter:
    """Put the exercise's starter in its workspace file, unless the learner has a file there;
    answer with FileReady."""

    exercise_id: str


@dataclass(frozen=True)
class RunCheck:
    """Check the learner's file in the background; answer with CheckDone or CheckFailed."""

    exercise_id: str


@dataclass(frozen=True)
class OpenEditor:
    exercise_id: str


@dataclass(frozen=True)
class RecordCheck:
    exercise_id: str
    passed: bool


@dataclass(frozen=True)
class RecordHints:
    exercise_id: str
    shown: int


@dataclass(frozen=True)
class RecordSolution:
    exercise_id: str


@dataclass(frozen=True)
class RunSnippet:
    """Run a step's code in the background (`show` evaluated after it, the `series` variables
    read back); answer with SnippetDone or SnippetFailed."""

    step_id: str
    code: str
    show: str | None = None
    series: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordPrediction:
    step_id: str
    answer: str
    right: bool


PracticeEffect = (WriteStarter | RunCheck | OpenEditor | RecordCheck | RecordHints
                  | RecordSolution | RunSnippet | RecordPrediction)


@dataclass(frozen=True)
class ExerciseView:
    """Where the learner is on an exercise. `checking` while a check runs; `again` when the
    file changed during it, so it is checked once more after; `digest` names the content
    last saved or checked, so a save that changed nothing is not checked twice."""

    hints: int = 0
    confirming: bool = False
    solution: bool = False
    checking: bool = False
    again: bool = False
    verdict: Verdict | None = None
    digest: str | None = None
    kept: bool = False  # the learner's file was there already and was left as it was
    passed: bool = False  # progress said, on arrival, that a check of it has passed before
    stuck_on: str | None = None  # the first failing check of the last verdict
    stuck: int = 0  # how many verdicts in a row failed first on that same check


# After this many verdicts in a row that fail on the same check, the tutor points at `h`.
STUCK_AFTER = 3


@dataclass(frozen=True)
class PredictView:
    """A predict step: the letter chosen, whether it is submitted, and the snippet's run."""

    chosen: int | None = None
    submitted: bool = False
    running: bool = False
    result: SnippetResult | None = None


@dataclass(frozen=True)
class ParsonsView:
    """A Parsons step: the lines' order (ids), the cursor, whether the line under it is
    grabbed, the grade of the last submitted order, and the run of a correct one."""

    order: tuple[str, ...]
    cursor: int = 0
    grabbed: bool = False
    verdict: Verdict | None = None
    running: bool = False
    run: SnippetResult | None = None


@dataclass(frozen=True)
class DemoView:
    running: bool = True
    result: SnippetResult | None = None


def practice_state(step: Exercise | Predict | Parsons | Demo, index: int) -> WalkState:
    """The state on opening a practice step at `index`."""
    if isinstance(step, Parsons):
        from gradtutor.lessons.parsons import initial_order

        return WalkState(index=index, parsons=ParsonsView(order=initial_order(step)))
    return WalkState(index=index, exercise=ExerciseView() if isinstance(step, Exercise) else None,
                     predict=PredictView() if isinstance(step, Predict) else None,
                     demo=DemoView() if isinstance(step, Demo) else None)


def arrival(step: Exercise | Predict | Parsons | Demo) -> list[Effect]:
    """What the shell must do on arriving at a practice step."""
    if isinstance(step, Exercise):
        return [WriteStarter(step.id)]
    if isinstance(step, Demo):  # a demo runs on arrival
        series = step.chart.series if step.chart is not None else ()
        return [RunSnippet(step.id, step.code, series=series)]
    return []


def report(lesson: Lesson, state: WalkState, event: Report) -> tuple[WalkState, list[Effect]]:
    """The shell's news. It never closes the help screen: it is shown once help is closed."""
    if isinstance(event, SnippetDone | SnippetFailed):
        return _snippet_report(lesson, state, event)
    return _report(lesson, state, event)


def handle_step(lesson: Lesson, step: Exercise | Predict | Parsons, state: WalkState,
                event: Event) -> tuple[WalkState, list[Effect]]:
    """A learner's event on a practice step (help and quit are handled before)."""
    if isinstance(step, Exercise) and state.exercise is not None:
        return _handle_exercise(lesson, step, state, state.exercise, event)
    if isinstance(step, Predict) and state.predict is not None:
        return _handle_predict(lesson, step, state, state.predict, event)
    if isinstance(step, Parsons) and state.parsons is not None:
        return _handle_parsons(lesson, step, state, state.parsons, event)
    return replace(state, notice=unknown_notice(event)), []


def _snippet_report(lesson: Lesson, state: WalkState,
                    event: SnippetDone | SnippetFailed) -> tuple[WalkState, list[Effect]]:
    """A step's code ran (or could not): shown if the learner is still on that step."""
    if lesson.steps[state.index].id != event.step_id or state.outcome is not None:
        return state, []
    result = event.result if isinstance(event, SnippetDone) else None
    if isinstance(event, SnippetFailed):
        state = replace(state, notice=event.message)
    if state.predict is not None and state.predict.running:
        return replace(state, predict=replace(state.predict, running=False, result=result)), []
    if state.parsons is not None and state.parsons.running:
        return replace(state, parsons=replace(state.parsons, running=False, run=result)), []
    if state.demo is not None and state.demo.running:
        return replace(state, demo=replace(state.demo, running=False, result=result)), []
    return state, []


def _handle_predict(lesson: Lesson, step: Predict, state: WalkState, view: PredictView,
                    event: Event) -> tuple[WalkState, list[Effect]]:
    last = LETTERS[len(step.choices) - 1]
    if view.submitted or event in ("next", "back"):  # → moves on without an answer too
        if event in ("next", "submit"):
            return go_forward(lesson, state)
        if event == "back":
            return go_back(lesson, state)
        return replace(state, notice=unknown_notice(event)), []
    if isinstance(event, Choose) and 0 <= event.index < len(step.choices):
        return replace(state, predict=replace(view, chosen=event.index)), []
    if isinstance(event, Answer):
        if len(event.indexes) != 1 or max(event.indexes) >= len(step.choices):
            return replace(state, notice=msg("Answer with one letter, a-{last}.",
                                             last=last)), []
        view = replace(view, chosen=min(event.indexes))
        event = "submit"
    if event == "submit":
        if view.chosen is None:
            return replace(state, notice=choose_first(last)), []
        letter = LETTERS[view.chosen]
        submitted = replace(view, submitted=True, running=True)
        return replace(state, predict=submitted), [
            RecordPrediction(step.id, letter, letter == step.answer),
            RunSnippet(step.id, step.code, show=step.show)]
    return replace(state, notice=unknown_notice(event)), []


def _handle_parsons(lesson: Lesson, step: Parsons, state: WalkState, view: ParsonsView,
                    event: Event) -> tuple[WalkState, list[Effect]]:
    last = len(view.order) - 1
    if event in ("up", "down"):
        target = max(0, min(last, view.cursor + (-1 if event == "up" else 1)))
        if not view.grabbed or target == view.cursor:
            return replace(state, parsons=replace(view, cursor=target)), []
        swapped = list(view.order)
        swapped[view.cursor], swapped[target] = swapped[target], swapped[view.cursor]
        moved = replace(view, order=tuple(swapped), cursor=target, verdict=None, run=None,
                        running=False)  # a new order: the old grade no longer applies
        return replace(state, parsons=moved), []
    if event == "grab":
        return replace(state, parsons=replace(view, grabbed=not view.grabbed)), []
    if isinstance(event, Order):
        numbers = event.numbers
        if sorted(numbers) != list(range(1, len(view.order) + 1)):
            example = " ".join(str(n) for n in [2, 1, *range(3, len(view.order) + 1)])
            return replace(state, notice=msg("Type each line number once, in the new order, "
                                             "such as {example}.", example=example)), []
        order = tuple(view.order[n - 1] for n in numbers)
        return _grade_parsons(step, state, replace(view, order=order, verdict=None))
    if event == "submit":
        if view.verdict is not None and view.verdict.passed:
            return go_forward(lesson, state)
        return _grade_parsons(step, state, view)
    if event == "next":
        return go_forward(lesson, state)
    if event == "back":
        return go_back(lesson, state)
    return replace(state, notice=unknown_notice(event)), []


def _grade_parsons(step: Parsons, state: WalkState,
                   view: ParsonsView) -> tuple[WalkState, list[Effect]]:
    from gradtutor.checking.parsons import grade
    from gradtutor.lessons.parsons import assembled, run_series

    verdict = grade(step, view.order)
    view = replace(view, verdict=verdict, grabbed=False, run=None, running=False)
    if not verdict.passed or step.run is None:
        return replace(state, parsons=view), []
    return (replace(state, parsons=replace(view, running=True)),
            [RunSnippet(step.id, assembled(step, view.order), series=run_series(step))])


def _report(lesson: Lesson, state: WalkState, event: FileReady | FileSaved | CheckDone
            | CheckFailed | Say) -> tuple[WalkState, list[Effect]]:
    """The shell's news. It never closes the help screen: it is shown once help is closed."""
    if isinstance(event, Say):
        return replace(state, notice=event.text), []
    effects: list[Effect] = []
    if isinstance(event, CheckDone):  # it ran: an attempt, even if the learner has moved on
        effects.append(RecordCheck(event.exercise_id, event.verdict.passed))
    exercise = exercise_on_screen(lesson, state)
    view = state.exercise
    if exercise is None or view is None or exercise.id != event.exercise_id:
        return state, effects  # news about a step the learner has left
    if isinstance(event, FileReady):
        seen = max(view.hints, min(event.hints, len(exercise.hints)))
        return replace(state, exercise=replace(view, kept=not event.starter, hints=seen,
                                               solution=view.solution or event.solution,
                                               passed=view.passed or event.passed)), effects
    if isinstance(event, FileSaved):
        if event.digest == view.digest:
            return state, effects
        return _start_check(state, replace(view, digest=event.digest), exercise)
    if isinstance(event, CheckDone):
        view = _count_stuck(replace(view, checking=False, verdict=event.verdict))
        if view.stuck and view.stuck % STUCK_AFTER == 0 and view.hints < len(exercise.hints):
            state = replace(state, notice=msg(
                "This check has failed {times} times in a row: h shows a hint ({seen} of "
                "{total} seen so far).", times=view.stuck, seen=view.hints,
                total=len(exercise.hints)))
    else:
        view = replace(view, checking=False)
        state = replace(state, notice=event.message)
    if view.again:
        state, more = _start_check(state, replace(view, again=False), exercise)
        return state, effects + more
    return replace(state, exercise=view), effects


def _count_stuck(view: ExerciseView) -> ExerciseView:
    """Count verdicts in a row that fail first on the same check; a pass ends the run."""
    verdict = view.verdict
    failing = None if verdict is None or verdict.passed else next(
        (c.name for c in verdict.checks if c.status not in ("pass", "skip")), verdict.status)
    if failing is None:
        return replace(view, stuck_on=None, stuck=0)
    return replace(view, stuck_on=failing,
                   stuck=view.stuck + 1 if failing == view.stuck_on else 1)


def _start_check(state: WalkState, view: ExerciseView,
                 exercise: Exercise) -> tuple[WalkState, list[Effect]]:
    if view.checking:  # one check at a time: the newest content is checked when this one ends
        return replace(state, exercise=replace(view, again=True)), []
    return replace(state, exercise=replace(view, checking=True)), [RunCheck(exercise.id)]


def _handle_exercise(lesson: Lesson, exercise: Exercise, state: WalkState, view: ExerciseView,
                     event: Event) -> tuple[WalkState, list[Effect]]:
    if view.confirming:
        view = replace(view, confirming=False)
        if event == "yes":
            return (replace(state, exercise=replace(view, solution=True)),
                    [RecordSolution(exercise.id)])
        return replace(state, exercise=view, notice=msg("The solution stays hidden.")), []
    if event == "edit":
        return state, [OpenEditor(exercise.id)]
    if event == "check":
        return _start_check(state, view, exercise)
    if event == "hint":
        if view.hints < len(exercise.hints):
            shown = view.hints + 1
            return (replace(state, exercise=replace(view, hints=shown)),
                    [RecordHints(exercise.id, shown)])
        last = (msg("That was the last hint.") if view.solution
                else msg("That was the last hint: s shows the solution."))
        return replace(state, notice=last), []
    if event == "solution":
        if view.solution:
            return replace(state, notice=msg("The solution is on the screen.")), []
        return replace(state, exercise=replace(view, confirming=True)), []
    if event in ("next", "submit"):
        return go_forward(lesson, state)
    if event == "back":
        return go_back(lesson, state)
    return replace(state, notice=unknown_notice(event)), []
