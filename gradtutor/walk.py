"""The walkthrough as a pure state machine: (lesson, state, event) -> (state, effects).

Events come from key presses or typed lines, and from work the shell does in the background
(a save noticed, a check's verdict). Effects are what the shell must do: save progress,
write a starter file, run a check, open an editor. Nothing here reads keys, prints, touches
the disk or starts anything, so every path through a lesson is testable without a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, cast

from gradtutor.bindings import (
    Binding,
    Kind,
    Scroll,
    beneath,
    find_key,
    find_word,
    key_name,
    offers,
    screen_kind,
)
from gradtutor.i18n import msg
from gradtutor.lessons.model import (
    LETTERS,
    Demo,
    Exercise,
    Lesson,
    Parsons,
    Predict,
    Question,
    Quiz,
)
from gradtutor.progress import quiz_passed

if TYPE_CHECKING:  # the practice steps' part loads when such a step is reached
    from gradtutor.walk_practice import (
        Act,
        DemoView,
        ExerciseView,
        Move,
        Order,
        ParsonsView,
        PracticeEffect,
        PredictView,
        Report,
    )

Nav = Literal["next", "back", "quit", "help", "submit"]


@dataclass(frozen=True)
class Choose:
    """Toggle (multiple answers) or pick (single answer) choice `index`."""

    index: int


@dataclass(frozen=True)
class Answer:
    """A whole answer at once, as a typed line gives it; it is submitted straight away."""

    indexes: frozenset[int]


@dataclass(frozen=True)
class Unknown:
    """Input that means nothing here; `text` is what the learner typed or pressed."""

    text: str




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
class QuizRestored:
    """The answers progress kept for `quiz_id`, each as its letters (none if there are none)."""

    quiz_id: str
    answers: tuple[str, ...]


@dataclass(frozen=True)
class Finished:
    pass




if TYPE_CHECKING:  # the learner's input and the shell's news; what the shell must do
    from typing import TypeAlias

    from gradtutor.bindings import ViewAction

    Event: TypeAlias = (Nav | Act | Move | Choose | Answer | Order | Unknown | QuizRestored
                        | Report | Scroll)
    Effect: TypeAlias = (Visit | QuizDone | QuizAnswered | RestoreQuiz | Finished
                         | PracticeEffect)


@dataclass(frozen=True)
class QuizResult:
    """A finished quiz as its score screen shows it; renderers read `passed`, never decide it."""

    score: int
    total: int
    passed: bool
    missed: tuple[int, ...]  # the questions answered wrong, by their number from 1


@dataclass(frozen=True)
class QuizView:
    """Where the learner is inside a quiz. `answers` holds one submitted answer per question."""

    question: int = 0
    selected: frozenset[int] = frozenset()
    answers: tuple[frozenset[int], ...] = ()

    def submitted(self) -> bool:
        return len(self.answers) > self.question

    def score(self, quiz: Quiz) -> int:
        pairs = zip(self.answers, quiz.questions, strict=False)  # unanswered ones score 0
        return sum(answer == question.correct for answer, question in pairs)

    def result(self, quiz: Quiz) -> QuizResult:
        total = len(quiz.questions)
        score = self.score(quiz)
        missed = tuple(number for number, question in enumerate(quiz.questions, start=1)
                       if number > len(self.answers)
                       or self.answers[number - 1] != question.correct)
        return QuizResult(score, total, quiz_passed(quiz, score, total), missed)


@dataclass(frozen=True)
class WalkState:
    index: int
    quiz: QuizView | None = None
    exercise: ExerciseView | None = None
    predict: PredictView | None = None
    parsons: ParsonsView | None = None
    demo: DemoView | None = None
    help: bool = False
    notice: str = ""  # one line for the learner: a message (`msg`), translated by the shell
    outcome: Literal["quit", "finished"] | None = None


def begin(lesson: Lesson, index: int) -> WalkState:
    """The state on opening step `index`."""
    index = max(0, min(index, len(lesson.steps) - 1))
    step = lesson.steps[index]
    if isinstance(step, Exercise | Predict | Parsons | Demo):
        from gradtutor.walk_practice import practice_state

        return practice_state(step, index)
    return WalkState(index=index, quiz=QuizView() if isinstance(step, Quiz) else None)


def enter(lesson: Lesson, index: int) -> tuple[WalkState, list[Effect]]:
    """Open step `index`: its state, and what the shell must do once it is on screen."""
    state = begin(lesson, index)
    step = lesson.steps[state.index]
    effects: list[Effect] = [Visit(step.id)]
    if isinstance(step, Quiz):
        effects.append(RestoreQuiz(step.id))
    if isinstance(step, Exercise | Predict | Parsons | Demo):
        from gradtutor.walk_practice import arrival

        effects += arrival(step)
    return state, effects


def go_forward(lesson: Lesson, state: WalkState) -> tuple[WalkState, list[Effect]]:
    """On to the next step, or the end of the lesson after the last."""
    if state.index + 1 >= len(lesson.steps):
        return replace(state, outcome="finished", notice=""), [Finished()]
    return enter(lesson, state.index + 1)


def go_back(lesson: Lesson, state: WalkState) -> tuple[WalkState, list[Effect]]:
    """Back to the previous step; on the first, a notice says so."""
    if state.index == 0:
        return replace(state, notice=msg("This is the first step.")), []
    return enter(lesson, state.index - 1)


def handle(lesson: Lesson, state: WalkState, event: Event) -> tuple[WalkState, list[Effect]]:
    """Apply one event; return the new state and what the shell must do."""
    if isinstance(event, Scroll):  # the shell's own business: the lesson does not move
        return state, []
    if isinstance(event, QuizRestored):
        return _restore_quiz(lesson, state, event), []
    if not isinstance(event, str | Choose | Answer | Unknown):  # news from the shell, or an order
        from gradtutor import walk_practice

        if not isinstance(event, walk_practice.Order):
            return walk_practice.report(lesson, state, event)
    if event == "quit":
        return replace(state, outcome="quit"), []
    if event == "help":
        return replace(state, help=not state.help, notice=""), []
    state = replace(state, help=False, notice="")
    step = lesson.steps[state.index]
    if isinstance(step, Quiz) and state.quiz is not None:
        return _handle_quiz(lesson, step, state, state.quiz, event)
    if isinstance(step, Exercise | Predict | Parsons):
        from gradtutor.walk_practice import handle_step

        return handle_step(lesson, step, state, event)
    if event in ("next", "submit"):
        return go_forward(lesson, state)
    if event == "back":
        return go_back(lesson, state)
    return replace(state, notice=unknown_notice(event)), []


def reached_the_end(lesson: Lesson, state: WalkState) -> bool:
    """The learner went past the last step, or stands on its score screen when it is a quiz
    (whose score is already recorded)."""
    if state.outcome == "finished":
        return True
    step = lesson.steps[state.index]
    return (state.index == len(lesson.steps) - 1 and isinstance(step, Quiz)
            and state.quiz is not None and state.quiz.question >= len(step.questions))


def exercise_on_screen(lesson: Lesson, state: WalkState) -> Exercise | None:
    """The exercise the learner is on, whose file the shell should watch."""
    step = lesson.steps[state.index]
    if isinstance(step, Exercise) and state.exercise is not None and state.outcome is None:
        return step
    return None


def busy(state: WalkState) -> bool:
    """Background work is running whose result the screen is waiting for."""
    views = (state.predict, state.parsons, state.demo)
    return ((state.exercise is not None and state.exercise.checking)
            or any(view is not None and view.running for view in views))


def unknown_notice(event: Event) -> str:
    if isinstance(event, Unknown):
        if not event.text:  # a key no terminal table names: nothing to say about it
            return ""
        return msg("'{shown}' does nothing here: press ? for the keys.", shown=event.text)
    return msg("'that' does nothing here: press ? for the keys.")


def _handle_quiz(lesson: Lesson, quiz: Quiz, state: WalkState, view: QuizView,
                 event: Event) -> tuple[WalkState, list[Effect]]:
    total = len(quiz.questions)
    if view.question >= total:  # the score screen
        if event in ("next", "submit"):
            return go_forward(lesson, state)
        if event == "back":
            return replace(state, quiz=replace(view, question=total - 1)), []
        return replace(state, notice=unknown_notice(event)), []

    question = quiz.questions[view.question]
    if view.submitted():
        if event in ("next", "submit"):
            after = replace(view, question=view.question + 1, selected=frozenset())
            effects: list[Effect] = []
            if after.question >= total:
                effects.append(QuizDone(quiz.id, after.score(quiz), total))
            return replace(state, quiz=after), effects
        if event == "back":
            return _quiz_back(lesson, state, view)
        return replace(state, notice=msg("Press Enter for the next question.")), []

    if isinstance(event, Choose) and 0 <= event.index < len(question.choices):
        return replace(state, quiz=replace(view, selected=_toggle(question, view.selected,
                                                                    event.index))), []
    if isinstance(event, Answer):
        if not event.indexes or max(event.indexes) >= len(question.choices):
            last = LETTERS[len(question.choices) - 1]
            return replace(state, notice=msg("Answer with letters a-{last}.", last=last)), []
        if len(event.indexes) > 1 and not question.multiple:
            return replace(state, notice=msg("Choose only one letter for this question.")), []
        view = replace(view, selected=event.indexes)
        event = "submit"
    if event in ("next", "submit"):
        if not view.selected:
            last = LETTERS[len(question.choices) - 1]
            return replace(state, notice=choose_first(last)), []
        submitted = replace(view, answers=view.answers[: view.question] + (view.selected,))
        letters = tuple("".join(LETTERS[i] for i in sorted(a)) for a in submitted.answers)
        return replace(state, quiz=submitted), [QuizAnswered(quiz.id, letters)]
    if event == "back":
        return _quiz_back(lesson, state, view)
    return replace(state, notice=unknown_notice(event)), []


def _restore_quiz(lesson: Lesson, state: WalkState, event: QuizRestored) -> WalkState:
    """A quiz just opened takes back the answers kept from before, up to the first that no
    longer fits its question (the lesson may have changed), and goes on after them."""
    step = lesson.steps[state.index]
    view = state.quiz
    if (not isinstance(step, Quiz) or step.id != event.quiz_id or view is None
            or view != QuizView()):
        return state  # the learner has moved on, or has answered already
    answers: list[frozenset[int]] = []
    for letters, question in zip(event.answers, step.questions, strict=False):
        chosen = frozenset(LETTERS.find(c) for c in letters)
        if (not chosen or min(chosen) < 0 or max(chosen) >= len(question.choices)
                or (len(chosen) > 1 and not question.multiple)):
            break
        answers.append(chosen)
    if not answers:
        return state
    # the next question; with every answer in, the last one's feedback, whose Enter scores it
    number = min(len(answers), len(step.questions) - 1)
    selected = answers[number] if number < len(answers) else frozenset()
    return replace(state, quiz=QuizView(number, selected, tuple(answers)),
                   notice=msg("Welcome back: your earlier answers in this quiz are kept."))


def choose_first(last: str) -> str:
    return msg("Choose an answer first: press a letter a-{last}.", last=last)


def _quiz_back(lesson: Lesson, state: WalkState, view: QuizView) -> tuple[WalkState, list[Effect]]:
    if view.question == 0:
        return go_back(lesson, state)
    previous = view.question - 1
    return replace(state, quiz=replace(view, question=previous,
                                       selected=view.answers[previous])), []


def _toggle(question: Question, selected: frozenset[int], index: int) -> frozenset[int]:
    if not question.multiple:
        return frozenset({index})
    return selected - {index} if index in selected else selected | {index}


def choosing(lesson: Lesson, state: WalkState) -> Question | None:
    """The question waiting for an answer, if the learner is on one."""
    step = lesson.steps[state.index]
    view = state.quiz
    if (isinstance(step, Quiz) and view is not None and view.question < len(step.questions)
            and not view.submitted()):
        return step.questions[view.question]
    return None


def choices_on_screen(lesson: Lesson, state: WalkState) -> int:
    """How many choice letters the screen offers: the open question's or prediction's."""
    question = choosing(lesson, state)
    if question is not None:
        return len(question.choices)
    step = lesson.steps[state.index]
    if isinstance(step, Predict) and state.predict is not None and not state.predict.submitted:
        return len(step.choices)
    return 0


def _as_event(binding: Binding) -> Event:
    if binding.scroll:
        return Scroll(cast("ViewAction", binding.action))
    return cast("Event", binding.action)


def _tables(lesson: Lesson, state: WalkState) -> tuple[Kind, ...]:
    """The tables a key or word is looked up in, in turn: the screen's own, and on the help,
    the screen's below it (a key the help does not bind acts there)."""
    kind = screen_kind(lesson, state)
    return (kind, beneath(lesson, state)) if kind == "help" else (kind,)


def key_event(lesson: Lesson, state: WalkState, key: str) -> Event:
    """A key press as an event, by the table of the screen on view (`gradtutor.bindings`)."""
    choices = choices_on_screen(lesson, state)
    for table in _tables(lesson, state):
        if (choices and offers(table, "choose") and len(key) == 1
                and key.lower() in LETTERS[:choices]):
            return Choose(LETTERS.index(key.lower()))
        binding = find_key(table, key)
        if binding is not None:
            return _as_event(binding)
    # Esc where there is nothing to close, and keys no table knows, do nothing at all
    return Unknown("" if key in ("unknown", "esc") else key_name(key))


def line_event(lesson: Lesson, state: WalkState, line: str) -> Event:
    """A typed line as an event: a word of the screen's table (`n`, `b`, `q`, `?`, empty for
    Enter, ...), letters such as `a c` for an answer, or line numbers for an order."""
    text = line.strip().lower()
    letters = [c for c in text if c not in " ,;"]
    choices = choices_on_screen(lesson, state)
    for table in _tables(lesson, state):
        if offers(table, "order") and text and all(c.isdigit() or c in " ,;" for c in text):
            from gradtutor.walk_practice import Order

            return Order(tuple(int(n) for n in text.replace(",", " ").replace(";", " ")
                               .split()))
        if (choices and letters and find_word(table, "letters") is not None
                and all(c in LETTERS[:choices] for c in letters)):
            return Answer(frozenset(LETTERS.index(c) for c in letters))
        binding = find_word(table, text)
        if binding is not None:
            return _as_event(binding)
        if choices and letters and all(c in LETTERS for c in letters):
            return Answer(frozenset(LETTERS.index(c) for c in letters))  # handle() says the range
    return "submit" if not text else Unknown(line.strip())
