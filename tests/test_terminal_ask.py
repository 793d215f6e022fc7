"""`a` in a real terminal, on every kind of screen, at 80x24 and 60x20: a question typed on a
line over the screen, the course's answer on a page of its own that fits, and Esc gives the
screen back exactly as it was. The terminal is a pseudo-terminal; what it shows is kept by
pyte, a terminal emulator, so each assertion is about the cells a learner would see.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gradtutor.bindings import TABLES, Kind, choice_key
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Lesson, Parsons, Predict, Quiz
from gradtutor.lessons.parsons import initial_order

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
              pytest.mark.slow]
pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

from terminal_support import child_env  # noqa: E402 - after the skip
from waits import PATIENCE_S, as_from_a_terminal  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "course"
SIZES = [pytest.param((24, 80), id="80x24"), pytest.param((20, 60), id="60x20")]
UP, DOWN, RIGHT, ESC = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b"
QUESTION = "why does backward add to grad"


class Terminal:
    """One `gradtutor` in a pseudo-terminal of `size` (rows, columns), as pyte draws it."""

    def __init__(self, args: list[str], home: Path, size: tuple[int, int]) -> None:
        rows, columns = size
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)
        self.child = pexpect.spawn(sys.executable, ["-m", "gradtutor", *args],
                                   env=child_env(home), dimensions=size, encoding="utf-8",
                                   preexec_fn=as_from_a_terminal)

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    @property
    def legend(self) -> str:
        """The last line with anything on it: each screen's key legend."""
        return next((line for line in reversed(self.lines) if line.strip()), "")

    def wait(self, ready: Callable[[list[str]], bool], what: str) -> None:
        """Until what the terminal shows satisfies `ready`; a failure shows the screen."""
        deadline = time.monotonic() + PATIENCE_S
        while not ready(self.lines):
            if time.monotonic() > deadline or not self.child.isalive() and not self._read():
                shown = "\n".join(self.lines)
                raise AssertionError(f"waiting for {what}; the terminal shows:\n{shown}")
            self._read()

    def _read(self) -> bool:
        try:
            self.stream.feed(self.child.read_nonblocking(1 << 16, timeout=0.1))
        except pexpect.TIMEOUT:
            return False
        except pexpect.EOF:
            return False
        return True

    def settled(self, *texts: str) -> list[str]:
        """A whole screen with `texts` on it, down to its legend (which ends with quit). A
        frame is written at once, but may be read in parts: what is left of it is read too."""
        self.wait(lambda lines: all(any(t in line for line in lines) for t in texts)
                  and self.legend.endswith("quit"), f"a screen with {texts}")
        while self._read():
            pass
        return self.settled(*texts) if not self.legend.endswith("quit") else self.lines

    def send(self, keys: str) -> None:
        self.child.send(keys)


@pytest.fixture
def home() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="gt-"))  # short: the exercise screen shows it
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def course(lesson_id: str) -> Lesson:
    return load_course(FIXTURES, rules=EXERCISE_RULES).find(lesson_id)


def ask_and_come_back(term: Terminal, kind: Kind, question: str = QUESTION,
                      teaches: str | None = "Gradients add up") -> None:
    """On a settled screen of `kind`: `a` (or `/`), a question, its answer on a page that
    fits the terminal (citing the step titled `teaches`; None: a question the course does not
    answer, whose page offers no step to go to), then Esc: the screen exactly as it was."""
    before = term.lines
    key = "a" if "a" in next(b.keys for b in TABLES[kind] if b.action == "ask") else "/"
    term.send(key)
    term.wait(lambda lines: any(line.startswith("Ask:") for line in lines),
              f"the question line over the {kind} screen")
    assert term.lines[:3] == before[:3], f"{kind}: the screen stays under the question line"
    term.send(question)
    term.wait(lambda lines: any(question in line for line in lines), "the question typed")
    term.send("\r")
    page = term.settled("You asked:", "Where the course teaches it:" if teaches
                        else "not in this course")
    rows, columns = term.screen.lines, term.screen.columns
    assert len(page) == rows and all(len(line) <= columns for line in page)
    if teaches:
        assert any(teaches in line for line in page), f"{kind}: the step that teaches it"
    else:
        assert "1/2/3" not in term.legend, "no number key where the answer cites no step"
    assert "Esc" in term.legend, f"{kind}: the answer page says how to go back"
    term.send(ESC)
    term.wait(lambda lines: lines == before, f"the {kind} screen exactly as it was")


@pytest.mark.parametrize("size", SIZES)
def test_a_on_slides_and_every_quiz_screen_then_esc_gives_the_place_back(
        size: tuple[int, int], home: Path) -> None:
    basics = course("basics")
    term = Terminal(["start", "basics", "--lessons", str(FIXTURES)], home, size)
    term.settled(basics.steps[0].title)
    ask_and_come_back(term, "slide")
    ask_and_come_back(term, "slide", "qwzx plorb frambulate", teaches=None)
    quiz_at = next(i for i, step in enumerate(basics.steps) if isinstance(step, Quiz))
    for index in range(1, quiz_at + 1):
        term.send(RIGHT)
        term.settled(basics.steps[index].title)
    quiz = basics.steps[quiz_at]
    assert isinstance(quiz, Quiz)
    ask_and_come_back(term, "question")
    for number, question in enumerate(quiz.questions, start=1):
        for key in (choice_key(i) for i in sorted(question.correct)):
            term.send(key)
        term.send("\r")
        term.settled("Correct!")
        if number == 1:
            ask_and_come_back(term, "feedback")
        term.send("\r")
    term.settled("Your score:")
    ask_and_come_back(term, "score")
    term.send("q")
    term.child.expect(pexpect.EOF, timeout=PATIENCE_S)


@pytest.mark.parametrize("size", SIZES)
def test_a_on_an_exercise_its_solution_question_a_prediction_and_an_ordering(
        size: tuple[int, int], home: Path) -> None:
    from test_terminal_practice import keys_to_order

    second = course("second")
    term = Terminal(["start", "second", "--lessons", str(FIXTURES)], home, size)
    term.settled(second.steps[0].title)
    ask_and_come_back(term, "exercise")
    term.send("s")
    term.settled("Show the solution?")
    ask_and_come_back(term, "confirm")
    term.send(ESC)
    term.settled(second.steps[0].title)
    term.send("n")
    predict = second.steps[1]
    assert isinstance(predict, Predict)
    term.settled(predict.title)
    ask_and_come_back(term, "predict")
    term.send(RIGHT)
    parsons = second.steps[2]
    assert isinstance(parsons, Parsons)
    term.settled(parsons.title)
    ask_and_come_back(term, "parsons")
    term.send(keys_to_order(initial_order(parsons), parsons.solution_order) + "\r")
    term.settled("Right: every line comes after the lines it needs.")
    ask_and_come_back(term, "ordered")
    term.send("q")
    term.child.expect(pexpect.EOF, timeout=PATIENCE_S)


@pytest.mark.parametrize("size", SIZES)
def test_a_while_watching_an_exercise(size: tuple[int, int], home: Path) -> None:
    second = course("second")
    exercise = second.steps[0]
    term = Terminal(["watch", exercise.id, "--lessons", str(FIXTURES),
                     "--workspace", str(home / "ws")], home, size)
    term.settled("Your file")
    ask_and_come_back(term, "exercise")
    term.send("\x03")
    term.child.expect(pexpect.EOF, timeout=PATIENCE_S)
