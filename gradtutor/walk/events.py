"""What comes into the walkthrough's state machine and what goes out of it. Pure data.

Events are the learner's (a key or a typed line, already read as what it means) or the
shell's news about work it did in the background. Effects are what the shell must do: save
progress, write a starter file, run a check or a snippet, open an editor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from gradtutor.bindings import Scroll

if TYPE_CHECKING:
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.checking.verdict import Verdict

# --- the learner's events ---------------------------------------------------------------------

Nav = Literal["next", "back", "quit", "help", "submit"]
# What the learner can do on an exercise: open the editor, check now, take the next hint,
# ask for the solution, and answer the "show the solution?" question.
Act = Literal["edit", "check", "hint", "solution", "yes", "no"]
# On a Parsons step: move the cursor (or the grabbed line), grab or drop the line.
Move = Literal["up", "down", "grab"]


@dataclass(frozen=True)
class Choose:
    """Toggle (multiple answers) or pick (single answer) choice `index`."""

    index: int


@dataclass(frozen=True)
class Answer:
    """A whole answer at once, as a typed line gives it; it is submitted straight away."""

    indexes: frozenset[int]


@dataclass(frozen=True)
class Order:
    """A whole Parsons order at once, as a typed line gives it: the line numbers as shown,
    1-based, in their new order; graded straight away."""

    numbers: tuple[int, ...]


@dataclass(frozen=True)
class Unknown:
    """Input that means nothing here; `text` is what the learner typed or pressed."""

    text: str


# --- the shell's news -------------------------------------------------------------------------

# Each piece of news below concerns one step: its `step_id`.

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

    @property
    def step_id(self) -> str:
        return self.exercise_id


@dataclass(frozen=True)
class FileSaved:
    """The learner's file for `exercise_id` has new content, identified by `digest`."""

    exercise_id: str
    digest: str

    @property
    def step_id(self) -> str:
        return self.exercise_id


@dataclass(frozen=True)
class CheckDone:
    exercise_id: str
    verdict: Verdict

    @property
    def step_id(self) -> str:
        return self.exercise_id


@dataclass(frozen=True)
class CheckFailed:
    """A check that could not run at all (the file vanished, ...); `message` says why."""

    exercise_id: str
    message: str

    @property
    def step_id(self) -> str:
        return self.exercise_id


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
class QuizRestored:
    """The answers progress kept for `quiz_id`, each as its letters (none if there are none)."""

    quiz_id: str
    answers: tuple[str, ...]

    @property
    def step_id(self) -> str:
        return self.quiz_id


@dataclass(frozen=True)
class Say:
    """One line from the shell for the learner: an editor that would not start, ...
    A message (`msg`), so the screen can say it in the learner's language. About no step."""

    text: str


# --- what the shell must do -------------------------------------------------------------------

@dataclass(frozen=True)
class Visit:
    step_id: str


@dataclass(frozen=True)
class QuizDone:
    quiz_id: str
    score: int
    total: int


@dataclass(frozen=True)
class QuizAnswered:
    """Keep a quiz's answers so far, each as its letters, for coming back to it later."""

    quiz_id: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class RestoreQuiz:
    """Look up the answers kept from a quiz left half done; answer with QuizRestored."""

    quiz_id: str


@dataclass(frozen=True)
class Finished:
    pass


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


# What the shell reports about its own work, rather than the learner's keys.
News: TypeAlias = (FileReady | FileSaved | CheckDone | CheckFailed | SnippetDone | SnippetFailed
                   | QuizRestored)
# The learner's input and the shell's news; the shell handles Scroll itself.
Event: TypeAlias = Nav | Act | Move | Choose | Answer | Order | Unknown | News | Say | Scroll
# Progress to save (the shell saves these before it does anything else)...
Record: TypeAlias = (Visit | QuizDone | QuizAnswered | Finished | RecordCheck | RecordHints
                     | RecordSolution | RecordPrediction)
# ... and work to do, whose answer (if any) comes back as news.
Work: TypeAlias = RestoreQuiz | WriteStarter | RunCheck | OpenEditor | RunSnippet
Effect: TypeAlias = Record | Work
