"""The tutor in a real terminal: a pseudo-terminal driven key by key, as a learner drives it.

Step counts, titles and quiz answers come from the loaded lesson, never from this file, so the
tests follow the lesson as it changes. The shipped course is loaded the way the CLI loads it:
from GRADTUTOR_LESSONS when that is set, else the built-in lessons; the `grad` tests skip while
the course has no `grad` lesson. Where a small lesson suffices, the fixture course is used.

These are behaviour checks, not speed tests: timeouts are generous.
"""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Lesson, Quiz

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
pexpect = pytest.importorskip("pexpect")

from terminal_support import (  # noqa: E402 - after the skip
    CTRL_C,
    FIXTURES,
    LEFT,
    RIGHT,
    SAVED,
    Tutor,
    answer_keys,
    gradtutor,
    leave_step,
    saved,
    seed_finished,
    sgr_colours,
    shipped_lesson,
    strip_ansi,
    walk_to,
)


@pytest.fixture
def grad() -> Lesson:
    return shipped_lesson("grad")


@pytest.fixture
def basics() -> Lesson:
    return load_course(FIXTURES, rules=EXERCISE_RULES).find("basics")


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
    for key in answer_keys(quiz.questions[0]):
        first.send(key)
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
        for key in answer_keys(question):
            again.send(key)
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
                lines += [" ".join(answer_keys(question)), ""]
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
