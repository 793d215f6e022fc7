"""A quiz retake asks its questions, and each question's choices, in another order, so that it
cannot be answered from the places remembered; the answer key follows the choices, so every
key `gradtutor validate` proves stays proven. `gradtutor quiz` has no meaningless "step 1 of
1" in its header."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from gradtutor import progress as prog
from gradtutor.bindings import choice_key
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.lesson_proofs import jobs_for
from gradtutor.lessons.course import load_course
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Lesson, Question, Quiz
from gradtutor.walk.quiz import as_asked, retake

if TYPE_CHECKING:
    from conftest import Cli

FIXTURES = Path(__file__).parent / "fixtures"
COURSE = ["--lessons", str(FIXTURES / "course")]
SEEDS = ("2026-01-01T00:00:00+00:00", "2026-01-01T00:00:01+00:00", "x")


def shipped_quizzes() -> list[tuple[str, Quiz]]:
    return [(f"{lang}/{lesson.id}", quiz)
            for lang in ("en", "zh-CN")
            for lesson in load_course(lang=lang, rules=EXERCISE_RULES).lessons
            for quiz in lesson.quizzes]


def key_by_text(question: Question) -> dict[str, bool]:
    """Each choice, by its text, and whether the key says it is right."""
    return {choice.text: i in question.correct for i, choice in enumerate(question.choices)}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_retake_reorders_every_question_and_its_choices_and_the_key_follows(seed: str) -> None:
    for where, quiz in shipped_quizzes():
        again = retake(quiz, seed)
        assert again == retake(quiz, seed), where  # the same attempt, the same order
        before = {q.id: q for q in quiz.questions}
        assert sorted(before) == sorted(q.id for q in again.questions), where
        if len(quiz.questions) > 1:
            assert [q.id for q in again.questions] != [q.id for q in quiz.questions], where
        for question in again.questions:
            written = before[question.id]
            assert key_by_text(question) == key_by_text(written), (where, question.id)
            assert [c.text for c in question.choices] != [c.text for c in written.choices]
            assert question.multiple == written.multiple
            assert {c.text: c.why for c in question.choices} == {
                c.text: c.why for c in written.choices}


def proofs(lesson: Lesson) -> dict[tuple[str, str], str]:
    """Each proof's expectation ("holds" or not), by its question and its proof's code."""
    return {(job.step or "", str(job.request["proof"]) + str(job.request["holds"])): job.expect
            for job in jobs_for(lesson, FIXTURES / "proofs" / "keys.yaml")
            if job.request["kind"] == "proof"}


def test_a_retake_keeps_every_proven_key_proven() -> None:
    lesson = load_lesson(FIXTURES / "proofs" / "keys.yaml", EXERCISE_RULES)
    scored = prog.record_quiz(prog.Progress(), lesson.id, lesson.quizzes[0].id, 1, 2,
                              SEEDS[0]).of(lesson.id)
    asked = as_asked(lesson, scored)
    assert asked != lesson
    assert proofs(asked) == proofs(lesson) and proofs(lesson)


def test_the_first_attempt_is_asked_as_written_and_a_kept_half_stays_in_its_order() -> None:
    lesson = load_course(rules=EXERCISE_RULES).find("grad")
    quiz = lesson.quizzes[0]
    assert as_asked(lesson, prog.LessonProgress()) is lesson
    half = prog.record_quiz_answers(prog.Progress(), lesson.id, quiz.id, ("b",), "t")
    assert as_asked(lesson, half.of(lesson.id)) is lesson
    scored = prog.record_quiz(half, lesson.id, quiz.id, 1, 3, SEEDS[0])
    retaken = as_asked(lesson, scored.of(lesson.id))
    # answers kept mid-retake: the order is drawn from the last score, which they leave alone
    again = prog.record_quiz_answers(scored, lesson.id, quiz.id, ("a",), SEEDS[1])
    assert as_asked(lesson, again.of(lesson.id)) == retaken != lesson


# --- through the command ------------------------------------------------------------------------


def saved(cli: Cli) -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads((cli.home / "progress.json").read_text(encoding="utf-8"))
    return data


def choices_shown(out: str) -> list[str]:
    """The choices of each open question as the screen numbered them, in order."""
    return re.findall(r"^\s*(?:\( \)|\[ \]) \d\) (.*)$", out, re.M)


def basics() -> Lesson:
    return load_course(FIXTURES / "course", rules=EXERCISE_RULES).find("basics")


def typed_answers(quiz: Quiz) -> str:
    """The lines that answer `quiz` right, as it is asked, and go on after each verdict."""
    return "".join(" ".join(choice_key(i) for i in sorted(q.correct)) + "\n\n"
                   for q in quiz.questions)


def test_gradtutor_quiz_retaken_asks_in_another_order_and_its_header_counts_no_steps(
    cli: Cli,
) -> None:
    quiz = basics().quizzes[0]
    code, first, _ = cli("quiz", "basics", *COURSE, stdin=typed_answers(quiz) + "\n")
    assert code == 0, first
    assert "step 1 of 1" not in first
    at = saved(cli)["lessons"]["basics"]["last_quiz"][quiz.id]["at"]
    asked = retake(quiz, at)
    code, again, _ = cli("quiz", "basics", *COURSE, stdin=typed_answers(asked) + "\n")
    assert code == 0, again  # the keys of the order shown are the right ones
    assert choices_shown(again) != choices_shown(first)
    assert "step 1 of 1" not in again
