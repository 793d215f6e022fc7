"""What passes between the walkthrough's state machine and its shell. Pure data.

Events are the learner's (a key or a typed line, already read as what it means) or the
shell's news about work it did in the background. Effects are what the shell must do: record
progress (a `Record`, whose `recorded` is the progress after it) or carry out `Work` (write a
starter file, run a check or a snippet, open an editor), whose answer comes back as news.
What a kind of step records is defined with its rules, which load when a step of that kind is
first reached (`gradtutor.walk.kinds`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

from gradtutor import progress as prog
from gradtutor.bindings import Ask, Scroll
from gradtutor.records import record

if TYPE_CHECKING:
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.checking.verdict import Verdict

# --- the learner's events ---------------------------------------------------------------------

Nav = Literal["next", "back", "quit", "help", "submit"]
# What the learner can do on an exercise: open the editor, check now, take the next hint,
# see the whole verdict (or the short one again), ask for the solution, and answer the
# "show the solution?" question.
Act = Literal["edit", "check", "hint", "verdict", "solution", "yes", "no"]
# On a Parsons step: move the cursor (or the grabbed line), grab or drop the line.
Move = Literal["up", "down", "grab"]


@record
class Choose:
    """Toggle (multiple answers) or pick (single answer) choice `index`."""

    index: int


@record
class Answer:
    """A whole answer at once, as a typed line gives it; it is submitted straight away."""

    indexes: frozenset[int]


@record
class Order:
    """A whole Parsons order at once, as a typed line gives it: the line numbers as shown,
    1-based, in their new order; graded straight away."""

    numbers: tuple[int, ...]


@record
class GoTo:
    """Open step `index` of the lesson (an answer of `a` names it)."""

    index: int


@record
class Unknown:
    """Input that means nothing here; `text` is what the learner typed or pressed."""

    text: str


# --- the shell's news -------------------------------------------------------------------------

@record
class News:
    """Something the shell reports about its own work, rather than the learner's keys; it
    concerns step `step_id`."""

    step_id: str


@record
class FileReady(News):
    """The exercise's file is in place; `starter` if it holds just the starter (else it holds
    the learner's own work, which was left as it was). `hints` and `solution`: what progress
    says the learner has already seen of this exercise, shown again on coming back; `passed`:
    whether progress says it has passed before."""

    starter: bool
    hints: int = 0
    solution: bool = False
    passed: bool = False


@record
class FileSaved(News):
    """The learner's file for the exercise has new content, identified by `digest`."""

    digest: str


@record
class CheckWaiting(News):
    """The check asked for waits for the worker to load PyTorch (the first of a session);
    it has waited `seconds` whole seconds so far. Posted again each second until the check
    ends."""

    seconds: int


@record
class CheckDone(News):
    verdict: Verdict


@record
class CheckFailed(News):
    """A check that could not run at all (the file vanished, ...); `message` says why."""

    message: str


@record
class SnippetDone(News):
    """The step's code ran; `result` is what it showed, left and printed."""

    result: SnippetResult


@record
class SnippetFailed(News):
    """The step's code could not be run at all; `message` says why."""

    message: str


@record
class QuizRestored(News):
    """The answers progress kept for the quiz, each as its letters (none if there are none)."""

    answers: tuple[str, ...]


@record
class Say:
    """One line from the shell for the learner: an editor that would not start, ...
    A message (`msg`), so the screen can say it in the learner's language. About no step."""

    text: str


# --- what the shell must do -------------------------------------------------------------------

class Record:
    """An effect that changes the learner's progress. `place` effects record where the learner
    is, which a quiz or an exercise taken alone does not keep."""

    place: ClassVar[bool] = False

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        """`progress` with this recorded in lesson `lesson_id` at time `now` (pure)."""
        raise NotImplementedError


@record
class Visit(Record):
    place: ClassVar[bool] = True
    step_id: str

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.visit(progress, lesson_id, self.step_id, now)


@record
class Finished(Record):
    place: ClassVar[bool] = True

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.finish(progress, lesson_id, now)


class Work:
    """An effect the shell carries out; what it answers comes back as news."""


@record
class RestoreQuiz(Work):
    """Look up the answers kept from a quiz left half done; answer with QuizRestored."""

    quiz_id: str


@record
class WriteStarter(Work):
    """Put the exercise's starter in its workspace file, unless the learner has a file there;
    answer with FileReady."""

    exercise_id: str


@record
class WriteOrder(Work):
    """Write an ordering step's answer, its lines' code in the order given, to its answer
    file in the workspace, the one `gradtutor check STEP` reads without FILE; a problem
    answers with Say."""

    step_id: str
    lines: tuple[str, ...]


@record
class RunCheck(Work):
    """Check the learner's file in the background; answer with CheckDone or CheckFailed."""

    exercise_id: str


@record
class OpenEditor(Work):
    exercise_id: str


@record
class RunSnippet(Work):
    """Run a step's code in the background (`show` evaluated after it, the `series` variables
    read back); answer with SnippetDone or SnippetFailed."""

    step_id: str
    code: str
    show: str | None = None
    series: tuple[str, ...] = ()


Effect: TypeAlias = Record | Work
# The learner's input and the shell's news; the shell handles Scroll and Ask itself.
Event: TypeAlias = (Nav | Act | Move | Choose | Answer | Order | GoTo | Unknown | News | Say
                    | Scroll | Ask)
