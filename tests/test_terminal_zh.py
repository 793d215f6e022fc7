"""The walkthrough in Simplified Chinese, in a real terminal: chosen by GRADTUTOR_LANG or the
locale, it says its slides, prediction, quiz, help and key legend in Chinese, and no interface
word is left in English.

What the screens must show comes from the lesson localized the way the tutor localizes it, and
from the interface catalog, never from this file, so the tests follow both as they change.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest

from gradtutor.bindings import choice_key
from gradtutor.i18n import Translator, msg, translator
from gradtutor.lessons.course import default_lessons_dir
from gradtutor.lessons.model import Lesson, Predict, Quiz
from gradtutor.lessons.translate import load_translation, localize
from gradtutor.progress import Progress, visit
from gradtutor.store import ProgressStore

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
              pytest.mark.slow]
pexpect = pytest.importorskip("pexpect")

from terminal_support import (  # noqa: E402 - after the skip
    RIGHT,
    Tutor,
    gradtutor,
    prediction_key,
    shipped_lesson,
    strip_ansi,
)

RUN_S = 40  # a prediction's snippet may start a worker that loads torch


@cache
def zh() -> Translator:
    return translator("zh-CN")


def say(template: str, **fields: object) -> str:
    return zh()(msg(template, **fields))


@pytest.fixture
def grad_zh() -> Lesson:
    lesson = shipped_lesson("grad")
    translation, problems = load_translation(default_lessons_dir() / "grad.yaml", "zh-CN")
    assert problems == []
    return localize(lesson, translation, "zh-CN")[0]


def counter(lesson: Lesson, index: int) -> str:
    return say("step {position} of {total}", position=index + 1, total=len(lesson.steps))


# Every screen ends with its key legend, whose last entry is `q 退出`.
LEGEND_END = re.compile("q(?:\x1b\\[[0-9;]*m)* " + re.escape(zh()(msg("quit"))))


def screen(tutor: Tutor, *texts: str) -> None:
    tutor.expect(*texts)
    tutor.expect_re(LEGEND_END, "the Chinese key legend")


def place_at(home: Path, lesson: Lesson, step_id: str) -> None:
    """Progress that resumes the lesson at `step_id`."""
    now = "2026-01-01T00:00:00+00:00"

    def change(p: Progress) -> Progress:
        return visit(p, lesson.id, step_id, now)

    ProgressStore(home, lambda line: None).update(change)


def english_interface_words(text: str) -> list[str]:
    """Interface words that should have been said in Chinese."""
    plain = strip_ansi(text)
    words = [r"\bstep \d+ of \d+", r"\bq quit\b", r"\? help\b", r"\bQuestion \d+ of",
             r"Your score", r"Correct!", r"\bnext question\b"]
    return [w for w in words if re.search(w, plain)]


def test_slides_and_a_prediction_in_chinese(grad_zh: Lesson, tmp_path: Path) -> None:
    tutor = Tutor(["start", "grad"], tmp_path, GRADTUTOR_LANG="zh-CN")
    predict = next(i for i, s in enumerate(grad_zh.steps) if isinstance(s, Predict))
    for index in range(predict):
        screen(tutor, grad_zh.steps[index].title, counter(grad_zh, index))
        if index == 0:
            tutor.send("?")
            screen(tutor, say("Keys"), say("show or hide this help"))
            tutor.send("?")
            screen(tutor, grad_zh.steps[0].title)
        tutor.send(RIGHT)
    step = grad_zh.steps[predict]
    assert isinstance(step, Predict)
    screen(tutor, step.title, counter(grad_zh, predict), say("choose"), say("submit"))
    tutor.send(prediction_key(step))
    screen(tutor, say("Your prediction: "), say("(Enter submits it)"))
    tutor.send("\r")
    tutor.expect(say("Right."), say("You predicted"), say("{expression} is", expression=step.show))
    tutor.expect_re(LEGEND_END, "the legend")
    tutor.send("q")
    tutor.expect(say("step {position} of {total}", position=predict + 1,
                     total=len(grad_zh.steps)).split("，")[0])
    assert tutor.end() == 0
    assert english_interface_words(tutor.text) == []


def test_the_quiz_in_chinese_with_full_marks(grad_zh: Lesson, tmp_path: Path) -> None:
    index = next(i for i, s in enumerate(grad_zh.steps) if isinstance(s, Quiz))
    quiz = grad_zh.steps[index]
    assert isinstance(quiz, Quiz)
    place_at(tmp_path, grad_zh, quiz.id)
    tutor = Tutor(["start", "grad"], tmp_path, LANG="zh_CN.UTF-8")
    total = len(quiz.questions)
    tutor.expect(quiz.title, counter(grad_zh, index))
    for number, question in enumerate(quiz.questions, start=1):
        screen(tutor, say("Question {number} of {total}", number=number, total=total))
        for i in sorted(question.correct):
            tutor.send(choice_key(i))
            screen(tutor)
        tutor.send("\r")
        verdict = tutor.expect_re([re.escape(say("Correct!")), re.escape(say("Not quite."))],
                                  "the verdict")
        assert verdict == 0, question.id
        screen(tutor, say("next question"))
        tutor.send("\r")
    screen(tutor, say("Your score: {score} of {total}", score=total, total=total), say("Passed"))
    tutor.send("q")
    assert tutor.end() == 0
    assert english_interface_words(tutor.text) == []


def test_without_a_terminal_the_lines_and_legend_are_chinese_too(grad_zh: Lesson,
                                                                 tmp_path: Path) -> None:
    done = gradtutor(tmp_path, "start", "grad", stdin="?\nn\nzz\nq\n", COLUMNS="60",
                     GRADTUTOR_LANG="zh-CN")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for text in (grad_zh.steps[0].title, counter(grad_zh, 0), say("Keys"),
                 say("the next step"), grad_zh.steps[1].title, counter(grad_zh, 1),
                 say("'{shown}' does nothing here: press ? for the keys.", shown="zz"),
                 f"q {say('quit')}"):
        assert text in out, text
    assert english_interface_words(out) == []
