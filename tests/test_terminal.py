"""The tutor in a real terminal: a pseudo-terminal driven key by key, as a learner drives it.

Step counts, titles and quiz answers come from the loaded lesson, never from this file, so the
tests follow the lesson as it changes. The shipped course is loaded the way the CLI loads it:
from GRADTUTOR_LESSONS when that is set, else the built-in lessons; the `grad` tests skip while
the course has no `grad` lesson. Where a small lesson suffices, the fixture course is used.

These are behaviour checks, not speed tests: timeouts are generous.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.errors import GradtutorError, LessonProblems
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import LETTERS, Lesson, Parsons, Predict, Question, Quiz
from gradtutor.progress import Progress, finish, visit
from gradtutor.store import ProgressStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
pexpect = pytest.importorskip("pexpect")

FIXTURES = Path(__file__).parent / "fixtures" / "course"
FIRST_SCREEN_S = 10  # Python start-up included
SCREEN_S = 5
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


@pytest.fixture
def grad() -> Lesson:
    return shipped_lesson("grad")


@pytest.fixture
def basics() -> Lesson:
    return load_course(FIXTURES, rules=EXERCISE_RULES).find("basics")


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
                                   timeout=SCREEN_S, codec_errors="strict")
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


def answer_letters(question: Question) -> str:
    return "".join(LETTERS[i] for i in sorted(question.correct))


def leave_step(tutor: Tutor, lesson: Lesson, index: int, key: str) -> None:
    """On step `index`'s screen, go forward with `key`; a quiz is answered right first."""
    step = lesson.steps[index]
    if isinstance(step, Quiz):
        total = len(step.questions)
        for number, question in enumerate(step.questions, start=1):
            if number > 1:
                tutor.screen(f"Question {number} of {total}")
            for letter in answer_letters(question):
                tutor.send(letter)
                # the question again, with this choice marked: (•) or (*) or [x]
                tutor.expect_re(rf"(?:\(•\)|\(\*\)|\[x\]) {letter}\) ", f"{letter} marked")
                tutor.screen()
            tutor.send("\r")
            verdict = tutor.expect_re(["Correct!", "Not quite", "Choose an answer first"],
                                      "the verdict")
            assert verdict == 0, f"{step.id}/{question.id}: answered {answer_letters(question)}"
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


# --- the tests -------------------------------------------------------------------------


@pytest.mark.slow
def test_the_whole_lesson_and_its_quiz_with_full_marks(grad: Lesson, tmp_path: Path) -> None:
    tutor = Tutor(["start", "grad"], tmp_path)
    last = len(grad.steps) - 1
    walk_to(tutor, grad, 0, last)
    leave_step(tutor, grad, last, "\r")
    tutor.expect("You finished")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text

    state = saved(tmp_path)["lessons"]["grad"]
    assert state["finished"] is True
    assert set(state["seen"]) == {step.id for step in grad.steps}
    for quiz in grad.quizzes:
        total = len(quiz.questions)
        assert state["best_quiz"][quiz.id]["score"] == total
        assert state["best_quiz"][quiz.id]["total"] == total

    listed = gradtutor(tmp_path, "list", "--plain")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if re.search(r"\bgrad\b", line))
    assert "finished" in row


@pytest.mark.slow
def test_q_saves_the_place_and_start_resumes_there(grad: Lesson, tmp_path: Path) -> None:
    half = len(grad.steps) // 2
    total = len(grad.steps)
    tutor = Tutor(["start", "grad"], tmp_path)
    walk_to(tutor, grad, 0, half)
    tutor.send("q")
    tutor.expect(f"Your place is saved at step {half + 1} of {total}", "gradtutor start grad")
    assert tutor.end() == 0
    assert saved(tmp_path)["lessons"]["grad"]["step"] == grad.steps[half].id

    again = Tutor(["start", "grad"], tmp_path)
    again.step(grad, half)
    again.send("q")
    again.expect(f"Your place is saved at step {half + 1} of {total}")
    assert again.end() == 0


@pytest.mark.slow
def test_ctrl_c_quits_calmly_and_leaves_the_terminal_as_it_was(basics: Lesson,
                                                               tmp_path: Path) -> None:
    tutor = Tutor(["start", "basics", "--lessons", str(FIXTURES)], tmp_path, shell=True)
    walk_to(tutor, basics, 0, 1)
    tutor.send(CTRL_C)
    tutor.expect_re(SAVED, "the place is saved")
    tutor.expect("exit=")
    tutor.child.expect(r"(\d+)")
    assert tutor.child.match.group(1) in ("0", "130")
    tutor.expect("speed")  # stty -a
    assert tutor.end() == 0
    settings = tutor.text[tutor.text.rindex("exit="):]
    assert re.search(r"(?<![-\w])echo\b", settings), settings  # echo on, not -echo
    assert re.search(r"(?<![-\w])icanon\b", settings), settings
    assert re.search(r"(?<![-\w])isig\b", settings), settings
    assert "Traceback" not in tutor.text
    assert saved(tmp_path)["lessons"]["basics"]["step"] == basics.steps[1].id


@pytest.mark.slow
def test_an_interrupt_signal_while_waiting_for_a_key_quits_calmly(basics: Lesson,
                                                                 tmp_path: Path) -> None:
    tutor = Tutor(["start", "basics", "--lessons", str(FIXTURES)], tmp_path)
    walk_to(tutor, basics, 0, 2)
    tutor.child.kill(signal.SIGINT)
    tutor.expect_re(SAVED, "the place is saved")
    assert tutor.end() in (0, 130)
    assert "Traceback" not in tutor.text
    assert saved(tmp_path)["lessons"]["basics"]["step"] == basics.steps[2].id


@pytest.mark.slow
def test_a_finished_lesson_offers_review_or_start_over(basics: Lesson, tmp_path: Path) -> None:
    args = ["start", "basics", "--lessons", str(FIXTURES)]
    total = len(basics.steps)

    seed_finished(tmp_path, basics)
    over = Tutor(args, tmp_path)
    over.expect("You have finished", "Your choice [c/n/r/s/q]:")
    over.send("s")
    over.step(basics, 0)
    over.send("q")
    over.expect(f"Your place is saved at step 1 of {total}")
    assert over.end() == 0
    state = saved(tmp_path)["lessons"]["basics"]
    assert state["finished"] is False
    assert state["step"] == basics.steps[0].id

    seed_finished(tmp_path, basics)
    review = Tutor(args, tmp_path)
    review.expect("Your choice [c/n/r/s/q]:")
    review.send("r")
    walk_to(review, basics, 0, 1)
    review.send("q")
    review.expect(f"Your place is saved at step 2 of {total}")
    assert review.end() == 0
    state = saved(tmp_path)["lessons"]["basics"]
    assert state["finished"] is True
    assert state["step"] == basics.steps[1].id

    leave = Tutor(args, tmp_path)
    leave.expect("Your choice [c/n/r/s/q]:")
    leave.send("q")
    assert leave.end() == 0
    assert "step 1 of" not in leave.text
    assert saved(tmp_path)["lessons"]["basics"] == state


@pytest.mark.slow
def test_after_finishing_c_goes_on_at_the_step_where_review_stopped(basics: Lesson,
                                                                    tmp_path: Path) -> None:
    args = ["start", "basics", "--lessons", str(FIXTURES)]
    total = len(basics.steps)
    seed_finished(tmp_path, basics)
    review = Tutor(args, tmp_path)
    review.expect("Your choice [c/n/r/s/q]:")
    review.send("r")
    walk_to(review, basics, 0, 2)
    review.send("q")
    review.expect(f"Your place is saved at step 3 of {total}", "choose c to go on")
    assert review.end() == 0

    again = Tutor(args, tmp_path)
    again.expect(f"c  continue at step 3 of {total}", "Your choice [c/n/r/s/q]:")
    again.send("c")
    again.step(basics, 2)
    again.send("q")
    again.expect(f"Your place is saved at step 3 of {total}")
    assert again.end() == 0
    assert f"step 1 of {total}" not in strip_ansi(again.text)
    state = saved(tmp_path)["lessons"]["basics"]
    assert (state["finished"], state["step"]) == (True, basics.steps[2].id)


@pytest.mark.slow
def test_quitting_mid_quiz_then_starting_again_keeps_the_answers(basics: Lesson,
                                                                 tmp_path: Path) -> None:
    args = ["start", "basics", "--lessons", str(FIXTURES)]
    index = next(i for i, step in enumerate(basics.steps) if isinstance(step, Quiz))
    quiz = basics.steps[index]
    assert isinstance(quiz, Quiz) and len(quiz.questions) >= 2
    total = len(quiz.questions)
    first = Tutor(args, tmp_path)
    walk_to(first, basics, 0, index)
    for letter in answer_letters(quiz.questions[0]):
        first.send(letter)
        first.screen()
    first.send("\r")
    first.screen("Correct!")
    first.send("\r")
    first.screen(f"Question 2 of {total}")
    first.send("q")
    first.expect(f"Your place is saved at step {index + 1} of {len(basics.steps)}")
    assert first.end() == 0

    again = Tutor(args, tmp_path)
    again.screen(f"Question 2 of {total}", "Welcome back: your earlier answers")
    for number, question in enumerate(quiz.questions[1:], start=2):
        if number > 2:
            again.screen(f"Question {number} of {total}")
        for letter in answer_letters(question):
            again.send(letter)
            again.screen()
        again.send("\r")
        again.screen("Correct!")
        again.send("\r")
    again.screen(f"Your score: {total} of {total}", "Passed")
    again.send("q")
    assert again.end() == 0
    assert f"Question 1 of {total}" not in strip_ansi(again.text)
    state = saved(tmp_path)["lessons"]["basics"]
    assert state["best_quiz"][quiz.id]["score"] == total
    assert state["quiz_answers"] == {}


@pytest.mark.slow
def test_keys_typed_in_a_burst_are_each_taken(basics: Lesson, tmp_path: Path) -> None:
    """An escape sequence must not swallow the keys typed right after it."""
    total = len(basics.steps)
    assert total >= 4 and not isinstance(basics.steps[2], Quiz)
    tutor = Tutor(["start", "basics", "--lessons", str(FIXTURES)], tmp_path)
    tutor.step(basics, 0)
    tutor.send(RIGHT * 3)
    tutor.step(basics, 3)
    tutor.send(LEFT + "\x1bOD" + "b")  # CSI and SS3 arrows, then a plain key
    tutor.step(basics, 0)
    tutor.send("é" + RIGHT)  # a key of several UTF-8 bytes is one key
    tutor.step(basics, 1)
    tutor.send("q")
    tutor.expect(f"Your place is saved at step 2 of {total}")
    assert tutor.end() == 0
    notices = re.findall(r"'(.*?)' does nothing here", strip_ansi(tutor.text))
    assert notices == ["é"]


def test_piped_stdin_walks_the_whole_lesson(grad: Lesson, tmp_path: Path) -> None:
    lines = []
    for step in grad.steps:
        if isinstance(step, Quiz):
            for question in step.questions:
                lines += [" ".join(answer_letters(question)), ""]
            lines.append("")  # past the score screen
        else:
            lines.append("n")
    result = gradtutor(tmp_path, "start", "grad", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    total = len(grad.steps)
    positions = [result.stdout.find(f"step {n} of {total}") for n in range(1, total + 1)]
    assert -1 not in positions and positions == sorted(positions)
    for quiz in grad.quizzes:
        assert f"Your score: {len(quiz.questions)} of {len(quiz.questions)}" in result.stdout
    assert "You finished" in result.stdout
    assert saved(tmp_path)["lessons"]["grad"]["finished"] is True


@pytest.mark.slow
def test_no_color_means_no_colour_and_no_box_drawing(basics: Lesson, tmp_path: Path) -> None:
    tutor = Tutor(["start", "basics", "--lessons", str(FIXTURES)], tmp_path, NO_COLOR="1")
    tutor.step(basics, 0)
    tutor.send("?")
    tutor.screen("Keys")
    tutor.send("?")
    walk_to(tutor, basics, 0, len(basics.steps) - 1)
    leave_step(tutor, basics, len(basics.steps) - 1, "n")
    tutor.expect("You finished")
    assert tutor.end() == 0

    listing = Tutor(["list", "--lessons", str(FIXTURES)], tmp_path, NO_COLOR="1")
    listing.expect("finished")
    assert listing.end() == 0

    for text in (tutor.text, listing.text):
        assert list(sgr_colours(text)) == []
        boxes = sorted({c for c in text if 0x2500 <= ord(c) <= 0x257F})
        assert boxes == [], boxes
