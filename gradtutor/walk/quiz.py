"""A quiz in the walkthrough: questions answered by number, one at a time, each answer marked,
scored at the end; the answers kept, so a quiz left half done goes on where it was. Pure."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

from gradtutor import progress as prog
from gradtutor.i18n import msg
from gradtutor.lessons.model import LETTERS, Lesson, Question, Quiz, Step
from gradtutor.records import record
from gradtutor.walk.events import (
    Answer,
    Choose,
    Effect,
    Event,
    News,
    QuizRestored,
    Record,
    RestoreQuiz,
)
from gradtutor.walk.rules import Go, Stay, StepRules, choose_first, in_range, unknown_notice

if TYPE_CHECKING:
    from gradtutor.bindings import Kind


@record
class QuizDone(Record):
    """The quiz was answered to the end: record its score."""

    quiz_id: str
    score: int
    total: int

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.record_quiz(progress, lesson_id, self.quiz_id, self.score, self.total, now)


@record
class QuizAnswered(Record):
    """Keep a quiz's answers so far, each as its letters, for coming back to it later."""

    quiz_id: str
    answers: tuple[str, ...]

    def recorded(self, progress: prog.Progress, lesson_id: str, now: str) -> prog.Progress:
        return prog.record_quiz_answers(progress, lesson_id, self.quiz_id, self.answers, now)


@record
class QuizResult:
    """A finished quiz as its score screen shows it; renderers read `passed`, never decide it."""

    score: int
    total: int
    passed: bool
    missed: tuple[int, ...]  # the questions answered wrong, by their number from 1


@record
class Marked:
    """One choice of an answered question: whether it is a right one, and whether the learner
    chose it."""

    right: bool
    chosen: bool


@record
class AnswerMarks:
    """An answer as its feedback screen shows it: whether it is right as a whole, the right
    choices (their indexes, in order), and each choice marked."""

    right: bool
    correct: tuple[int, ...]
    choices: tuple[Marked, ...]


def mark_answer(question: Question, selected: frozenset[int]) -> AnswerMarks:
    """The marks of the answer `selected` (choice indexes) to `question`."""
    correct = question.correct
    return AnswerMarks(selected == correct, tuple(sorted(correct)),
                       tuple(Marked(i in correct, i in selected)
                             for i in range(len(question.choices))))


@record
class QuizView:
    """Where the learner is inside a quiz. `answers` holds one submitted answer per question."""

    question: int = 0
    selected: frozenset[int] = frozenset()
    answers: tuple[frozenset[int], ...] = ()

    @property
    def busy(self) -> bool:
        return False

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
        return QuizResult(score, total, prog.quiz_passed(quiz, score, total), missed)

    def marks(self, quiz: Quiz) -> AnswerMarks:
        """The marks of the answer submitted to the question on screen."""
        return mark_answer(quiz.questions[self.question], self.answers[self.question])


class QuizRules(StepRules[Quiz, QuizView]):
    def open(self, step: Quiz) -> QuizView:
        return QuizView()

    def arrive(self, step: Quiz) -> list[Effect]:
        return [RestoreQuiz(step.id)]

    def handle(self, step: Quiz, view: QuizView, event: Event) -> Stay[QuizView] | Go:
        total = len(step.questions)
        if view.question >= total:  # the score screen
            if event in ("next", "submit"):
                return "forward"
            if event == "back":
                return Stay(replace(view, question=total - 1))
            return Stay(view, notice=unknown_notice(event))

        question = step.questions[view.question]
        if view.submitted():
            if event in ("next", "submit"):
                after = replace(view, question=view.question + 1, selected=frozenset())
                effects: list[Effect] = []
                if after.question >= total:
                    effects.append(QuizDone(step.id, after.score(step), total))
                return Stay(after, effects)
            if event == "back":
                return _back(view)
            return Stay(view, notice=msg("Press Enter for the next question."))

        if isinstance(event, Choose) and 0 <= event.index < len(question.choices):
            return Stay(replace(view, selected=_toggle(question, view.selected, event.index)))
        if isinstance(event, Answer):
            if not in_range(event.indexes, len(question.choices)):
                return Stay(view, notice=msg("Answer with numbers 1-{last}.",
                                             last=len(question.choices)))
            if len(event.indexes) > 1 and not question.multiple:
                return Stay(view, notice=msg("Choose only one number for this question."))
            view = replace(view, selected=event.indexes)
            event = "submit"
        if event in ("next", "submit"):
            if not view.selected:
                return Stay(view, notice=choose_first(len(question.choices)))
            submitted = replace(view, answers=view.answers[: view.question] + (view.selected,))
            letters = tuple("".join(LETTERS[i] for i in sorted(a)) for a in submitted.answers)
            return Stay(submitted, [QuizAnswered(step.id, letters)])
        if event == "back":
            return _back(view)
        return Stay(view, notice=unknown_notice(event))

    def news(self, step: Quiz, view: QuizView, news: News) -> Stay[QuizView]:
        if isinstance(news, QuizRestored):
            return _restore(step, view, news)
        return Stay(view)

    def keys(self, step: Quiz, view: QuizView) -> Kind:
        if view.question >= len(step.questions):
            return "score"
        return "feedback" if view.submitted() else "question"

    def choices(self, step: Quiz, view: QuizView) -> int:
        question = choosing(step, view)
        return len(question.choices) if question is not None else 0

    def at_end(self, step: Quiz, view: QuizView) -> bool:
        return view.question >= len(step.questions)  # its score is recorded already


RULES = QuizRules()


def choosing(quiz: Quiz, view: QuizView) -> Question | None:
    """The question waiting for an answer, if the learner is on one."""
    if view.question < len(quiz.questions) and not view.submitted():
        return quiz.questions[view.question]
    return None


def _restore(quiz: Quiz, view: QuizView, news: QuizRestored) -> Stay[QuizView]:
    """A quiz just opened takes back the answers kept from before, up to the first that no
    longer fits its question (the lesson may have changed), and goes on after them."""
    if view != QuizView():
        return Stay(view)  # the learner has answered already
    answers: list[frozenset[int]] = []
    for letters, question in zip(news.answers, quiz.questions, strict=False):
        chosen = frozenset(LETTERS.find(c) for c in letters)
        if (not chosen or min(chosen) < 0 or max(chosen) >= len(question.choices)
                or (len(chosen) > 1 and not question.multiple)):
            break
        answers.append(chosen)
    if not answers:
        return Stay(view)
    # the next question; with every answer in, the last one's feedback, whose Enter scores it
    number = min(len(answers), len(quiz.questions) - 1)
    selected = answers[number] if number < len(answers) else frozenset()
    return Stay(QuizView(number, selected, tuple(answers)),
                notice=msg("Welcome back: your earlier answers in this quiz are kept."))


def _back(view: QuizView) -> Stay[QuizView] | Go:
    if view.question == 0:
        return "back"
    previous = view.question - 1
    return Stay(replace(view, question=previous, selected=view.answers[previous]))


def _toggle(question: Question, selected: frozenset[int], index: int) -> frozenset[int]:
    if not question.multiple:
        return frozenset({index})
    return selected - {index} if index in selected else selected | {index}


# --- a retake --------------------------------------------------------------------------------


def as_asked(lesson: Lesson, progress: prog.LessonProgress) -> Lesson:
    """`lesson` with each quiz as this attempt asks it: as written the first time; once the
    quiz was scored, its questions and their choices in an order drawn from the time of the
    last score. So a retake cannot be answered from the places remembered, and a quiz left
    half done is asked in the same order when the learner comes back to it (its answers are
    kept by place)."""
    def asked(step: Step) -> Step:
        if not isinstance(step, Quiz):
            return step
        scored = progress.last_quiz.get(step.id) or progress.best_quiz.get(step.id)
        return step if scored is None else retake(step, scored.at)

    steps = tuple(asked(step) for step in lesson.steps)
    return lesson if steps == lesson.steps else replace(lesson, steps=steps)


def retake(quiz: Quiz, seed: str) -> Quiz:
    """`quiz` with its questions, and each question's choices, in an order drawn from `seed`,
    never the written one (where there is another). A choice keeps its why and its proof, and
    the answer key follows the choices, so the keys `gradtutor validate` proves stay proven."""
    rng = random.Random(f"{quiz.id}\n{seed}")
    questions = [_reordered(question, rng) for question in quiz.questions]
    order = _order(len(questions), rng)
    return replace(quiz, questions=tuple(questions[i] for i in order))


def _reordered(question: Question, rng: random.Random) -> Question:
    order = _order(len(question.choices), rng)
    letters = sorted(LETTERS[order.index(i)] for i in question.correct)
    answer: str | tuple[str, ...] = (letters[0] if isinstance(question.answer, str)
                                     else tuple(letters))
    return replace(question, choices=tuple(question.choices[i] for i in order), answer=answer)


def _order(count: int, rng: random.Random) -> list[int]:
    """A random order of `count` places, never the first one where there is another."""
    order = list(range(count))
    rng.shuffle(order)
    if count > 1 and order == sorted(order):
        order = order[1:] + order[:1]
    return order
