"""Driving the tutor in a real terminal, for the terminal tests (test_terminal,
test_terminal_practice, test_terminal_zh, test_terminal_hangup): a pseudo-terminal driven key
by key, as a learner drives it. Timeouts are generous: these are behaviour checks."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waits import PATIENCE_S, as_from_a_terminal

from gradtutor.bindings import choice_key
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import GradtutorError, LessonProblems
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import LETTERS, Lesson, Parsons, Predict, Question, Quiz
from gradtutor.progress import Progress, finish, visit
from gradtutor.store import ProgressStore

pexpect = pytest.importorskip("pexpect")

FIXTURES = Path(__file__).parent / "fixtures" / "course"
FIRST_SCREEN_S = PATIENCE_S  # Python start-up included; ceilings only (tests/waits.py)
SCREEN_S = PATIENCE_S
# The last words of every screen: each key legend ends with `q quit` (Rich may put styles
# between the key and its word).
LEGEND_END = re.compile(r"q(?:\x1b\[[0-9;]*m)* quit")
FORWARD_KEYS = ("\x1b[C", "n", "\r")  # → n Enter: every way forward, taken in turn
# What an interrupted tutor says: the walkthrough's own goodbye, or the CLI's one for Ctrl-C.
SAVED = re.compile(r"Your place is saved at step \d+ of \d+|interrupted; your progress is saved")
RIGHT, LEFT, CTRL_C = "\x1b[C", "\x1b[D", "\x03"


# --- the lessons -----------------------------------------------------------------------


def shipped_lesson(lesson_id: str = "grad") -> Lesson:
    folder = os.environ.get("GRADTUTOR_LESSONS")
    try:
        course = load_course(Path(folder) if folder else None, rules=EXERCISE_RULES)
    except LessonProblems:
        raise  # a broken shipped lesson is a failure, not a reason to skip
    except GradtutorError as exc:
        pytest.skip(f"no shipped course yet: {exc.message}")
    if lesson_id not in {lesson.id for lesson in course.lessons}:
        pytest.skip(f"the shipped course has no '{lesson_id}' lesson yet")
    return course.find(lesson_id)


# --- driving the tutor -----------------------------------------------------------------


def child_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "COLUMNS", "LINES", "GRADTUTOR_DEBUG")}
    env.update(GRADTUTOR_HOME=str(home), TERM="xterm-256color", **extra)
    return env


class Tutor:
    """One `gradtutor` process in a 40x100 pseudo-terminal, with everything it printed."""

    def __init__(self, args: list[str], home: Path, shell: bool = False, **env: str) -> None:
        self.log = io.StringIO()
        command = [sys.executable, "-m", "gradtutor", *args]
        if shell:  # run it from sh, then show the terminal settings it left behind
            script = " ".join(map(_quote, command)) + '; echo "exit=$?"; stty -a'
            command = ["/bin/sh", "-c", script]
        self.child = pexpect.spawn(command[0], command[1:], env=child_env(home, **env),
                                   dimensions=(40, 100), encoding="utf-8",
                                   timeout=SCREEN_S, codec_errors="strict",
                                   preexec_fn=as_from_a_terminal)
        self.child.logfile_read = self.log
        self.first = True

    def expect(self, *texts: str, timeout: float | None = None) -> None:
        """Each text in turn (exact), within one timeout for all."""
        for text in texts:
            self.expect_re(re.escape(text), text, timeout)

    def expect_re(self, pattern: object, what: str, timeout: float | None = None) -> int:
        """`pattern` as pexpect takes it (a regex, a list of them, pexpect.EOF); which matched.

        On a timeout, the error says what was awaited and shows the end of the terminal.
        """
        if timeout is None:
            timeout = FIRST_SCREEN_S if self.first else SCREEN_S
        try:
            matched = int(self.child.expect(pattern, timeout=timeout))
        except (pexpect.TIMEOUT, pexpect.EOF) as exc:
            tail = strip_ansi(self.log.getvalue())[-1500:]
            raise AssertionError(f"waiting for {what!r}: {type(exc).__name__}; "
                                 f"the terminal ended with:\n{tail}") from None
        self.first = False
        return matched

    def screen(self, *texts: str) -> None:
        """A whole screen: `texts` in order, then its key legend, the last thing it prints."""
        self.expect(*texts)
        self.expect_re(LEGEND_END, "the key legend")

    def step(self, lesson: Lesson, index: int) -> None:
        """The screen of step `index` (0-based): its title and `step N of M`."""
        self.screen(lesson.steps[index].title, f"step {index + 1} of {len(lesson.steps)}")

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def end(self) -> int:
        """Wait for the process to exit; its exit status (128+n for signal n)."""
        self.expect_re(pexpect.EOF, "the end of the program")
        self.child.close()
        signal: int | None = self.child.signalstatus  # pexpect comes untyped (importorskip)
        if signal is not None:
            return 128 + signal
        return int(self.child.exitstatus)

    @property
    def text(self) -> str:
        return self.log.getvalue()


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def prediction_key(step: Predict) -> str:
    """The number key of a prediction's right choice."""
    return choice_key(LETTERS.index(step.answer))


def answer_keys(question: Question) -> str:
    """The number keys of the right answer, as the screen numbers the choices."""
    return "".join(choice_key(i) for i in sorted(question.correct))


def leave_step(tutor: Tutor, lesson: Lesson, index: int, key: str) -> None:
    """On step `index`'s screen, go forward with `key`; a quiz is answered right first."""
    step = lesson.steps[index]
    if isinstance(step, Quiz):
        total = len(step.questions)
        for number, question in enumerate(step.questions, start=1):
            if number > 1:
                tutor.screen(f"Question {number} of {total}")
            for choice in answer_keys(question):
                tutor.send(choice)
                # the question again, with this choice marked: (•) or (*) or [x]
                tutor.expect_re(rf"(?:\(•\)|\(\*\)|\[x\]) {choice}\) ", f"{choice} marked")
                tutor.screen()
            tutor.send("\r")
            verdict = tutor.expect_re(["Correct!", "Not quite", "Choose an answer first"],
                                      "the verdict")
            assert verdict == 0, f"{step.id}/{question.id}: answered {answer_keys(question)}"
            tutor.screen()
            tutor.send("\r" if number % 2 else RIGHT)  # Enter or → for the next question
        tutor.screen(f"Your score: {total} of {total}", "Passed")
    if isinstance(step, Predict | Parsons) and key == "\r":
        key = RIGHT  # Enter there submits an answer or an order; → moves on without one
    tutor.send(key)


def walk_to(tutor: Tutor, lesson: Lesson, start: int, target: int) -> None:
    """From step `start` (its screen not yet seen) to the screen of step `target`."""
    tutor.step(lesson, start)
    for index in range(start, target):
        leave_step(tutor, lesson, index, FORWARD_KEYS[index % len(FORWARD_KEYS)])
        tutor.step(lesson, index + 1)


def saved(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / "progress.json").read_text(encoding="utf-8"))
    return data


def gradtutor(home: Path, *args: str, stdin: str = "",
              **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gradtutor", *args], input=stdin,
                          capture_output=True, text=True, encoding="utf-8",
                          env=child_env(home, **env), timeout=60)


def seed_finished(home: Path, lesson: Lesson) -> None:
    store = ProgressStore(home, lambda line: None)
    now = "2026-01-01T00:00:00+00:00"

    def change(p: Progress) -> Progress:
        for step in lesson.steps:
            p = visit(p, lesson.id, step.id, now)
        return finish(p, lesson.id, now)

    store.update(change)


def sgr_colours(text: str) -> Iterator[str]:
    """Every SGR sequence in `text` that sets a foreground or background colour."""
    for match in re.finditer(r"\x1b\[([0-9;:]*)m", text):
        codes = [int(c) for c in re.split(r"[;:]", match.group(1)) if c.isdigit()]
        if any(30 <= c <= 38 or 40 <= c <= 48 or 90 <= c <= 97 or 100 <= c <= 107
               for c in codes):
            yield match.group(0)
