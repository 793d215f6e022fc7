"""The walkthrough as it looks in a real terminal of the sizes learners have: a pseudo-terminal
of 80x24, 100x30 or 60x20, whose screen is read cell by cell through a terminal emulator
(pyte), so what is asserted is what the learner sees, not what was written and then
scrolled away.

Titles and counts come from the loaded lesson, never from this file.
"""

from __future__ import annotations

import os
import re
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from narrowing import index_of
from screen_term import LEGEND, Term

from gradtutor.bindings import choice_key
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise, Lesson, Quiz, Slide

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal"),
              pytest.mark.slow]
pexpect = pytest.importorskip("pexpect")

SIZES = [(80, 24), (100, 30), (60, 20)]
PGUP, PGDN, HOME, END, ESC, F1 = "\x1b[5~", "\x1b[6~", "\x1b[H", "\x1b[F", "\x1b", "\x1bOP"
RIGHT, UP, DOWN = "\x1b[C", "\x1b[A", "\x1b[B"


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_course(None, rules=EXERCISE_RULES).find("grad")


def first_line(text: str) -> str:
    return text.strip().splitlines()[0][:30]


@pytest.mark.parametrize(("columns", "rows"), SIZES, ids=[f"{c}x{r}" for c, r in SIZES])
def test_every_step_opens_with_its_title_progress_and_legend_in_view(grad: Lesson, tmp_path: Path,
                                                                     columns: int,
                                                                     rows: int) -> None:
    term = Term(["start", "grad"], tmp_path, columns, rows)
    total = len(grad.steps)
    for index, step in enumerate(grad.steps):
        term.shows(step.title[: columns - 10], f"step {index + 1} of {total}")
        top = term.lines[:4]
        assert any(step.title[:20] in line for line in top), (index, top)
        if isinstance(step, Quiz):
            break  # the quiz's own walk is below
        term.send(RIGHT)
    term.send("q")
    assert term.end() == 0


def test_verdicts_and_hints_come_into_view_at_80x24(grad: Lesson, tmp_path: Path) -> None:
    index = next(i for i, s in enumerate(grad.steps) if isinstance(s, Exercise))
    exercise = grad.steps[index]
    assert isinstance(exercise, Exercise)
    term = Term(["start", "grad"], tmp_path, 80, 24)
    for _ in range(index):
        term.send(RIGHT)
    term.shows(exercise.title)
    # the starter, checked as it is, fails: its verdict shows, with the header still on top
    term.send("c")
    term.wait("a verdict", lambda lines: any("Not yet" in line or "did not run" in line
                                             for line in lines), timeout=60)
    assert exercise.title in "\n".join(term.lines[:3])
    for number in range(1, len(exercise.hints) + 1):
        term.send("h")
        term.shows(f"Hint {number} of {len(exercise.hints)}")
    term.send("q")
    assert term.end() == 0


def test_a_prediction_s_verdict_and_a_quiz_answer_s_verdict_come_into_view_at_60x20(
    grad: Lesson, tmp_path: Path,
) -> None:
    from gradtutor.lessons.model import Predict

    predict_at = next(i for i, s in enumerate(grad.steps) if isinstance(s, Predict))
    quiz_at = next(i for i, s in enumerate(grad.steps) if isinstance(s, Quiz))
    term = Term(["start", "grad"], tmp_path, 60, 20)
    for _ in range(predict_at):
        term.send(RIGHT)
    term.shows(grad.steps[predict_at].title[:40])
    term.send("1\r")
    term.shows("You predicted")
    term.wait("the verdict", lambda lines: any("Right." in line or "Not quite." in line
                                               for line in lines))
    for _ in range(quiz_at - predict_at):
        term.send(RIGHT)
    term.shows("Question 1 of")
    quiz = grad.steps[quiz_at]
    assert isinstance(quiz, Quiz)
    wrong = next(i for i in range(len(quiz.questions[0].choices))
                 if i not in quiz.questions[0].correct)
    term.send(choice_key(wrong) + "\r")
    term.shows("Not quite")
    term.send("q")
    assert term.end() == 0


def test_scroll_keys_move_the_body_and_never_quit(grad: Lesson, tmp_path: Path) -> None:
    # the longest slide at 60x20 surely scrolls
    term = Term(["start", "grad"], tmp_path, 60, 20)
    term.shows("step 1 of")
    term.wait("a marker of more below", lambda lines: any("more lines below" in line
                                                          for line in lines))
    before = term.lines
    for key in (PGDN, END, PGUP, HOME, DOWN, UP, ESC, F1, ESC, "\x1b[2~", "\x1b[3~",
                "\x1b[Z", "\x1b[15~"):
        term.send(key)
        time.sleep(0.15)
    term.send(END)
    term.wait("the end of the step", lambda lines: any("more lines above" in line
                                                       for line in lines)
              and not any("more lines below" in line for line in lines))
    assert term.lines != before
    term.send(HOME)
    body = slice(0, 15)  # the notice below may say that F5 does nothing
    term.wait("the top again", lambda lines: lines[body] == before[body])
    assert term.child.isalive()
    term.send("q")
    assert term.end() == 0


def test_a_resize_lays_the_screen_out_again(grad: Lesson, tmp_path: Path) -> None:
    term = Term(["start", "grad"], tmp_path, 60, 20)
    term.shows("step 1 of")
    narrow = term.lines
    assert max(len(line) for line in narrow) <= 60
    term.resize(100, 30)
    term.wait("the wider layout", lambda lines: max(len(line) for line in lines) > 60
              and bool(LEGEND.search(lines[-1])))
    assert term.lines[2].startswith(narrow[2][:10])  # the progress bar, re-laid out
    term.send("q")
    assert term.end() == 0


def test_a_resize_keeps_the_text_the_reader_was_at(grad: Lesson, tmp_path: Path) -> None:
    term = Term(["start", "grad"], tmp_path, 60, 20)
    term.shows("step 1 of")
    total = 0
    while not any("more lines above" in line for line in term.lines):
        term.send(DOWN)
        total += 1
        time.sleep(0.1)
        term.pump()
        assert total < 5, "the first step does not scroll at 60x20"
    for _ in range(4):
        term.send(DOWN)
    time.sleep(0.5)
    term.pump()
    top = next(line for line in term.lines[5:] if len(line.split()) >= 4)
    words = top.split()[1:4]  # words from the middle of the first full line read
    term.resize(70, 22)
    term.wait("the same text near the top",  # the words may wrap apart: rows read as one
              lambda lines: " ".join(words) in " ".join(" ".join(lines[3:9]).split())
              and bool(LEGEND.search(lines[-1])))
    term.send("q")
    assert term.end() == 0


@pytest.mark.parametrize("how", ["q", "ctrl-c"])
def test_the_terminal_is_restored_when_the_tutor_ends(grad: Lesson, tmp_path: Path,
                                                     how: str) -> None:
    term = Term(["start", "grad"], tmp_path, 80, 24)
    term.shows("step 1 of")
    term.send("q" if how == "q" else "\x03")
    assert term.end() in (0, 130)
    assert restored(term.raw)
    assert "Your place is saved at step 1" in term.raw


def restored(raw: str) -> bool:
    """The alternate screen was entered and then left, and the cursor shown again."""
    return ("\x1b[?1049h" in raw and raw.rindex("\x1b[?1049l") > raw.rindex("\x1b[?1049h")
            and raw.rindex("\x1b[?25h") > raw.rindex("\x1b[?25l"))


def test_a_crash_in_the_walkthrough_still_restores_the_terminal() -> None:
    from gradtutor.env import Environment
    from gradtutor.ui.render import Look
    from gradtutor.ui.terminal import make_io

    master, slave = os.openpty()
    with (os.fdopen(slave, "r", encoding="utf-8") as keys,
          os.fdopen(os.dup(slave), "w", encoding="utf-8") as out):
        env = Environment(stdin=keys, stdout=out, stderr=out, environ={"TERM": "xterm"},
                          stdin_tty=True, stdout_tty=True)
        with pytest.raises(RuntimeError), make_io(env, False, Look(False)):
            raise RuntimeError("a bug")
        out.flush()
    raw = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        raw += chunk
    os.close(master)
    assert restored(raw.decode("utf-8")), raw


def test_a_ctrl_c_that_python_drops_still_quits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the keys are not being read is SIGINT, a KeyboardInterrupt; Python drops
    one raised in a callback of its own (a weak reference's, as an import ends), and the tutor
    then waited for keys as if no Ctrl-C had come. The next wait for a key answers it."""
    import signal
    import weakref

    from gradtutor.env import Environment
    from gradtutor.ui.render import Look
    from gradtutor.ui.terminal import make_io

    dropped: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: dropped.append(u.exc_value))
    # as in a tutor started from a terminal: Ctrl-C is Python's, not ignored (a process
    # started in the background by a shell without job control inherits it ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    class Thing:
        pass

    master, slave = os.openpty()
    try:
        with (os.fdopen(slave, "r", encoding="utf-8") as keys,
              os.fdopen(os.dup(slave), "w", encoding="utf-8") as out):
            env = Environment(stdin=keys, stdout=out, stderr=out, environ={"TERM": "xterm"},
                              stdin_tty=True, stdout_tty=True)
            with make_io(env, False, Look(False)) as io:
                assert io.read_key is not None
                thing = Thing()
                ref = weakref.ref(thing, lambda r: signal.raise_signal(signal.SIGINT))
                del thing  # the callback runs, the interrupt comes inside it and is dropped
                assert ref() is None
                assert [type(e) for e in dropped] == [KeyboardInterrupt]
                assert io.read_key(5.0) == "ctrl-c"  # a key a learner pressed: quit
                assert io.read_key(0.1) is None  # and only once
    finally:
        os.close(master)
        signal.signal(signal.SIGINT, previous)


def test_sigterm_quits_calmly_and_restores_the_terminal(grad: Lesson, tmp_path: Path) -> None:
    import signal

    term = Term(["start", "grad"], tmp_path, 80, 24)
    term.shows("step 1 of")
    term.send(RIGHT)
    term.shows("step 2 of")
    term.child.kill(signal.SIGTERM)
    term.end()
    assert restored(term.raw)
    assert "Traceback" not in term.raw


ADDED_SLIDES = ("optimizer-step", "several-losses", "zero-grad-scope")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_slides_that_fill_the_lesson_s_gaps_fit_an_80x24_screen_unscrolled(grad: Lesson,
                                                                               tmp_path: Path,
                                                                               lang: str) -> None:
    """The optimizer, why-backward-adds and which-zero_grad slides: all of each in view at once."""
    term = Term(["start", "grad", "--lang", lang], tmp_path, 80, 24)
    last = max(index_of(grad, step_id) for step_id in ADDED_SLIDES)
    for index, step in enumerate(grad.steps[: last + 1]):
        counter = f"step {index + 1} of" if lang == "en" else f"第 {index + 1} 步"
        def on_screen(lines: list[str], c: str = counter) -> bool:
            return any(c in line for line in lines[:4]) and " q " in lines[-1] + " "

        term.wait(counter, on_screen)
        if step.id in ADDED_SLIDES:
            time.sleep(0.3)
            term.pump()
            body = "\n".join(term.lines)
            assert "▼" not in body and "▲" not in body, (step.id, body)
            assert isinstance(step, Slide)
            if step.code is not None:  # the code's last line too (optimizer-step has none)
                assert step.code.splitlines()[-1].strip() in body
        term.send(RIGHT)
    term.send("q")
    assert term.end() == 0


QUIZ_SIZES = [(80, 24), (60, 20)]
LESSONS = [lesson.id for lesson in load_course(None, rules=EXERCISE_RULES).lessons]


def _words(markdown: str) -> str:
    """The first words of a choice's explanation as the screen shows them."""
    return " ".join(re.sub(r"[`*]", "", markdown).split()[:3])


def _read(lines: list[str]) -> str:
    """The screen's rows read as one text, so words wrapped apart read together."""
    return " ".join(" ".join(lines).split())


def _question_open(lines: list[str], heading: str, choices: int) -> bool:
    """The question is on screen with its `choices` in view, or the marker of more below."""
    body = "\n".join(lines)
    return (heading in body and bool(LEGEND.search(lines[-1]))
            and ("more lines below" in body
                 or all(re.search(rf"[\])] {choice_key(i)}\)", body) for i in range(choices))))


def _answer_shown(lines: list[str], why: str) -> bool:
    """A wrong answer's verdict and the words on the learner's pick are on screen."""
    return (any("Not quite: the answer is" in line for line in lines)
            and all(t in _read(lines) for t in ("(you chose it; wrong)", why))
            and bool(LEGEND.search(lines[-1])))


@pytest.mark.parametrize(("columns", "rows"), QUIZ_SIZES,
                         ids=[f"{c}x{r}" for c, r in QUIZ_SIZES])
@pytest.mark.parametrize("lesson_id", LESSONS)
def test_every_quiz_question_shows_its_choices_then_the_verdict_on_the_learner_s_pick(
    tmp_path: Path, lesson_id: str, columns: int, rows: int,
) -> None:
    """At each size, every question of the lesson's quiz opens with its choices in view (or
    the marker saying they are below), and after a wrong answer the verdict and the words on
    the chosen choice are on screen together, without scrolling."""
    lesson = load_course(None, rules=EXERCISE_RULES).find(lesson_id)
    at = next(i for i, s in enumerate(lesson.steps) if isinstance(s, Quiz))
    quiz = lesson.steps[at]
    assert isinstance(quiz, Quiz)
    term = Term(["start", lesson_id], tmp_path, columns, rows)
    term.shows("step 1 of")
    term.send(RIGHT * at)
    total = len(quiz.questions)
    for number, question in enumerate(quiz.questions, start=1):
        term.wait(f"question {number} and its choices or the marker",
                  partial(_question_open, heading=f"Question {number} of {total} (",
                          choices=len(question.choices)))
        wrong = next(i for i in range(len(question.choices)) if i not in question.correct)
        term.send(choice_key(wrong) + "\r")
        why = _words(question.choices[wrong].why)
        term.wait(f"question {number}'s verdict and the words on choice {choice_key(wrong)}",
                  partial(_answer_shown, why=why))
        term.send("\r")
    term.shows("Your score")
    term.send("q")
    assert term.end() == 0


def _verdict_in_view(lines: list[str]) -> bool:
    return (any("Not quite: the answer is" in line for line in lines)
            and bool(LEGEND.search(lines[-1])))


def test_help_and_a_resize_keep_the_place_and_the_verdict_in_view(grad: Lesson,
                                                                  tmp_path: Path) -> None:
    at = next(i for i, s in enumerate(grad.steps) if isinstance(s, Quiz))
    quiz = grad.steps[at]
    assert isinstance(quiz, Quiz)
    term = Term(["start", "grad"], tmp_path, 60, 20)
    # a long slide, scrolled down: closing the help comes back to the same lines
    term.shows("step 1 of")
    term.wait("a marker of more below", lambda lines: any("more lines below" in line
                                                          for line in lines))
    term.send(PGDN)
    term.wait("the slide scrolled", lambda lines: any("more lines above" in line
                                                      for line in lines))
    scrolled = term.lines
    term.send("?")
    term.wait("the help", lambda lines: lines != scrolled and bool(LEGEND.search(lines[-1])))
    term.send(ESC)
    term.wait("the same lines as before the help", lambda lines: lines == scrolled)
    # a verdict in view stays in view across the help and a resize there and back
    term.send(RIGHT * at)
    term.shows(f"Question 1 of {len(quiz.questions)} (")
    question = quiz.questions[0]
    wrong = next(i for i in range(len(question.choices)) if i not in question.correct)
    term.send(choice_key(wrong) + "\r")
    term.wait("the verdict", _verdict_in_view)
    answered = term.lines
    term.send("?")
    term.wait("the help", lambda lines: not _verdict_in_view(lines)
              and bool(LEGEND.search(lines[-1])))
    term.send(ESC)
    term.wait("the verdict again, where it was", lambda lines: lines == answered)
    term.resize(120, 40)
    term.wait("the wide layout", lambda lines: max(len(line) for line in lines) > 60
              and _verdict_in_view(lines))
    term.resize(60, 20)
    term.wait("the verdict after resizing back", lambda lines: len(lines) == 20
              and max(len(line) for line in lines) <= 60 and _verdict_in_view(lines))
    term.send("q")
    assert term.end() == 0
