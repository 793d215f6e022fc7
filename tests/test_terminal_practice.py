"""Exercises in a real terminal: the learner saves their file and the verdict appears, with no
key pressed; hints, the solution, skipping, the editor key, and `gradtutor watch`.

Files are saved the way editors save them (a temporary file renamed over the old one). Checks
may start a fresh worker each (torch loads every time), so waits for a verdict are generous
and each test runs as few checks as it can.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise, Lesson

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
pexpect = pytest.importorskip("pexpect")

from terminal_support import (  # noqa: E402 - after the skip
    CTRL_C,
    LEGEND_END,
    Tutor,
    prediction_key,
    saved,
)

FIXTURES = Path(__file__).parent / "fixtures" / "course"
CHECK_S = 30  # a cold check loads torch in a new process; a loaded CI machine is slow
WRONG = textwrap.dedent("""\
    def read_grad(w, loss_fn):
        loss_fn(w).backward()
        return w  # the tensor, not its gradient
""")


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """The test's folder (the tutor's home, with its workspace): a short path of its own.
    The exercise screen shows the workspace file's path, and one longer than the terminal is
    wide wraps; pytest's tmp_path (with pytest-xdist's popen-gwN in it, or a long TMPDIR)
    comes near the 100 columns of the terminal."""
    folder = Path(tempfile.mkdtemp(prefix="gt-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def second() -> Lesson:
    return load_course(FIXTURES, rules=EXERCISE_RULES).find("second")


@pytest.fixture
def exercise(second: Lesson) -> Exercise:
    step = second.steps[0]
    assert isinstance(step, Exercise)
    return step


def start(home: Path, *args: str, **env: str) -> Tutor:
    return Tutor(["start", "second", "--lessons", str(FIXTURES), *args], home, shell=False, **env)


def save_like_an_editor(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def on_exercise(tutor: Tutor, path: Path) -> None:
    """The exercise screen is up (its file is written and watched by then)."""
    tutor.expect("Your file", str(path))
    tutor.expect_re(LEGEND_END, "the key legend")
    assert path.is_file()


def record(home: Path, exercise: Exercise) -> dict[str, object]:
    exercises = saved(home)["lessons"]["second"].get("exercises", {})
    return dict(exercises.get(exercise.id, {}))


@pytest.mark.slow
def test_each_save_is_checked_and_shown_without_a_key(exercise: Exercise, short_tmp: Path) -> None:
    path = short_tmp / "workspace" / f"{exercise.id}.py"
    tutor = start(short_tmp)
    on_exercise(tutor, path)
    assert path.read_text(encoding="utf-8") == exercise.starter

    save_like_an_editor(path, WRONG)
    tutor.expect("checking ...")
    tutor.expect("Not yet", timeout=CHECK_S)
    tutor.expect_re(r"returned\s+w\s+itself", "the mistake, named")
    tutor.expect_re(LEGEND_END, "the key legend")

    save_like_an_editor(path, exercise.solution)
    tutor.expect("checking ...")
    tutor.expect("Passed", timeout=CHECK_S)
    tutor.expect("Why it works")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("q")
    tutor.expect("Your place is saved at step 1")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text
    assert record(short_tmp, exercise) | {"passed_at": ""} == {
        "attempts": 2, "hints": 0, "solution_seen": False, "passed": True, "passed_at": ""}
    assert path.read_text(encoding="utf-8") == exercise.solution  # the learner's file stays


@pytest.mark.slow
def test_hints_one_by_one_then_the_solution_after_yes_then_skip(second: Lesson,
                                                                exercise: Exercise,
                                                                short_tmp: Path) -> None:
    path = short_tmp / "workspace" / f"{exercise.id}.py"
    path.parent.mkdir(parents=True)
    path.write_text("# my own work so far\n", encoding="utf-8")
    total = len(exercise.hints)
    tutor = start(short_tmp)
    tutor.expect("your earlier work, kept")
    tutor.expect_re(LEGEND_END, "the key legend")
    for number in range(1, total + 1):
        tutor.send("h")
        tutor.expect(f"Hint {number} of {total}")
        tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("h")
    tutor.expect("That was the last hint")
    tutor.expect_re(LEGEND_END, "the key legend")

    tutor.send("s")
    tutor.expect("Show the solution?")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("n")  # no: the solution stays hidden and the step stays
    tutor.expect("The solution stays hidden.")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("s")
    tutor.expect("Show the solution?")
    tutor.send("y")
    tutor.expect("Solution:", "read_grad")  # highlighted: colour codes between the words
    tutor.expect_re(LEGEND_END, "the key legend")

    tutor.send("n")  # skip: on to the next step, unsolved
    tutor.expect(second.steps[1].title, f"step 2 of {len(second.steps)}")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("q")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text
    assert record(short_tmp, exercise) == {"attempts": 0, "hints": total, "solution_seen": True,
                                          "passed": False, "passed_at": ""}
    assert saved(short_tmp)["lessons"]["second"]["step"] == second.steps[1].id
    assert path.read_text(encoding="utf-8") == "# my own work so far\n"


@pytest.mark.slow
def test_e_opens_the_editor_named_in_editor_with_its_arguments(exercise: Exercise,
                                                               short_tmp: Path) -> None:
    path = short_tmp / "workspace" / f"{exercise.id}.py"
    editor = short_tmp / "editor.py"
    answer = short_tmp / "answer.py"
    answer.write_text(exercise.solution, encoding="utf-8")
    editor.write_text(textwrap.dedent(f"""\
        import os, sys
        assert sys.argv[1] == "--wait", sys.argv
        target = sys.argv[-1]
        with open(target + ".new", "w", encoding="utf-8") as out:
            out.write(open({str(answer)!r}, encoding="utf-8").read())
        os.replace(target + ".new", target)
    """), encoding="utf-8")
    tutor = start(short_tmp, EDITOR=f"'{sys.executable}' '{editor}' --wait", VISUAL="")
    on_exercise(tutor, path)
    tutor.send("e")
    tutor.expect("Passed", timeout=CHECK_S)
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("q")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text
    assert record(short_tmp, exercise)["passed"] is True


@pytest.mark.slow
def test_e_without_any_editor_says_what_to_do(exercise: Exercise, short_tmp: Path) -> None:
    nothing = short_tmp / "empty-path"
    nothing.mkdir()
    tutor = start(short_tmp, EDITOR="", VISUAL="", PATH=str(nothing))
    on_exercise(tutor, short_tmp / "workspace" / f"{exercise.id}.py")
    tutor.send("e")
    tutor.expect("No editor found: set EDITOR")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("q")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text


@pytest.mark.slow
def test_saves_are_found_by_polling_where_file_events_never_come(exercise: Exercise,
                                                                 short_tmp: Path) -> None:
    path = short_tmp / "workspace" / f"{exercise.id}.py"
    tutor = start(short_tmp, GRADTUTOR_WATCH="poll")
    on_exercise(tutor, path)
    path.write_text(WRONG, encoding="utf-8")  # written in place this time, as some editors do
    tutor.expect("Not yet", timeout=CHECK_S)
    tutor.expect_re(r"returned\s+w\s+itself", "the mistake, named")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send(CTRL_C)
    assert tutor.end() in (0, 130)
    assert "Traceback" not in tutor.text
    assert record(short_tmp, exercise)["attempts"] == 1


@pytest.mark.slow
def test_gradtutor_watch_checks_each_save_until_ctrl_c(exercise: Exercise,
                                                      short_tmp: Path) -> None:
    folder = short_tmp / "my exercises"
    path = folder / f"{exercise.id}.py"
    tutor = Tutor(["watch", exercise.id, "--lessons", str(FIXTURES), "--workspace", str(folder)],
                  short_tmp)
    on_exercise(tutor, path)
    save_like_an_editor(path, exercise.solution)
    tutor.expect("Passed", timeout=CHECK_S)
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send(CTRL_C)
    tutor.expect(f"Stopped watching {path}")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text
    state = json.loads((short_tmp / "progress.json").read_text(encoding="utf-8"))
    lesson = state["lessons"]["second"]
    assert lesson["exercises"][exercise.id]["passed"] is True
    assert lesson["step"] is None  # watching an exercise does not move the walkthrough's place


# On the module path of a test's tutor (and so of its workers): the fork server, and only it,
# waits before it imports torch until the test's gate file exists. The first check then
# waits for the server as long as the test likes, however fast the machine.
HELD_SERVER = """\
import os, sys, time
if "--serve" in sys.argv and os.environ.get("GT_TEST_GATE"):
    deadline = time.monotonic() + 120
    while not os.path.exists(os.environ["GT_TEST_GATE"]) and time.monotonic() < deadline:
        time.sleep(0.02)
"""


@pytest.mark.slow
@pytest.mark.parametrize("command", ["start", "watch"])
def test_the_first_check_says_it_loads_pytorch_and_counts_the_seconds_until_the_verdict(
    command: str, exercise: Exercise, short_tmp: Path,
) -> None:
    pyte = pytest.importorskip("pyte")
    held = short_tmp / "held"
    held.mkdir()
    (held / "sitecustomize.py").write_text(HELD_SERVER, encoding="utf-8")
    gate = short_tmp / "gate"
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(held), os.environ.get("PYTHONPATH")])),
           "GT_TEST_GATE": str(gate)}
    path = short_tmp / "workspace" / f"{exercise.id}.py"
    tutor = (start(short_tmp, **env) if command == "start" else
             Tutor(["watch", exercise.id, "--lessons", str(FIXTURES)], short_tmp, shell=False,
                   **env))
    on_exercise(tutor, path)

    save_like_an_editor(path, WRONG)
    tutor.expect("checking ...", "loading PyTorch for the first check: a few seconds "
                 "(0 s so far)")
    tutor.expect("(1 s so far)", timeout=CHECK_S)  # counted in place, while it waits
    gate.touch()  # the server may import torch now
    tutor.expect("Not yet", timeout=CHECK_S)
    tutor.expect_re(LEGEND_END, "the key legend")
    screen = pyte.Screen(100, 40)
    pyte.Stream(screen).feed(tutor.text)
    shown = "\n".join(screen.display)
    assert "Not yet" in shown and "PyTorch" not in shown and "checking ..." not in shown

    checked = len(tutor.text)
    save_like_an_editor(path, exercise.solution)  # the next check waits for nothing
    tutor.expect("Passed", timeout=CHECK_S)
    tutor.expect_re(LEGEND_END, "the key legend")
    assert "PyTorch" not in tutor.text[checked:]
    tutor.send("q")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text


UP, DOWN, RIGHT = "\x1b[A", "\x1b[B", "\x1b[C"


def keys_to_order(start: tuple[str, ...], goal: tuple[str, ...]) -> str:
    """The keys that turn `start` into `goal` on a Parsons screen: for each place from the
    top, go to the line that belongs there, grab it, carry it up, drop it."""
    order, cursor, keys = list(start), 0, []
    for place, line_id in enumerate(goal):
        at = order.index(line_id)
        keys += [DOWN if at > cursor else UP] * abs(at - cursor)
        keys += [" "] + [UP] * (at - place) + [" "]
        order.insert(place, order.pop(at))
        cursor = place
    return "".join(keys)


@pytest.mark.slow
def test_predict_then_order_the_lines_then_a_demo(second: Lesson, short_tmp: Path) -> None:
    from gradtutor.lessons.model import Demo, Parsons, Predict
    from gradtutor.lessons.parsons import initial_order

    predict, parsons, demo = second.steps[1], second.steps[2], second.steps[3]
    assert isinstance(predict, Predict) and isinstance(parsons, Parsons)
    assert isinstance(demo, Demo) and demo.chart is not None
    tutor = start(short_tmp)
    tutor.expect("Your file")
    tutor.send("n")
    tutor.expect(predict.title)
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send(prediction_key(predict))
    tutor.expect("Your prediction:")
    tutor.send("\r")
    tutor.expect("Right.", f"{predict.show} is")
    tutor.expect("4.0", timeout=CHECK_S)  # the value the snippet really showed
    tutor.expect_re(LEGEND_END, "the key legend")

    tutor.send("\r")
    tutor.expect(parsons.title)
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("\r")  # checked as shuffled: wrong
    tutor.expect("out of place", "Not yet")
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send(keys_to_order(initial_order(parsons), parsons.solution_order) + "\r")
    tutor.expect("Right: every line comes after the lines it needs.")
    tutor.expect_re(LEGEND_END, "the key legend")

    tutor.send(RIGHT)
    tutor.expect(demo.title)
    tutor.expect(demo.chart.title, timeout=CHECK_S)  # it ran on arrival and drew its chart
    tutor.expect_re(LEGEND_END, "the key legend")
    tutor.send("q")
    tutor.expect("Your place is saved at step 4")
    assert tutor.end() == 0
    assert "Traceback" not in tutor.text
    assert saved(short_tmp)["lessons"]["second"]["predictions"][predict.id]["right"] is True


def test_piped_commands_wait_for_the_check_they_started(exercise: Exercise,
                                                        short_tmp: Path) -> None:
    """Without a terminal, the next line is read only once the check has answered, so a
    script of commands runs in the order a person would type them."""
    from terminal_support import gradtutor

    path = short_tmp / "workspace" / f"{exercise.id}.py"
    path.parent.mkdir(parents=True)
    path.write_text(WRONG, encoding="utf-8")
    result = gradtutor(short_tmp, "start", "second", "--lessons", str(FIXTURES),
                       stdin="c\nh\nq\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Traceback" not in out + result.stderr
    assert 0 < out.index("checking ...") < out.index("Not yet") < out.index("Hint 1 of")
    assert record(short_tmp, exercise)["attempts"] == 1


@pytest.mark.slow
def test_ctrl_c_during_a_check_quits_at_once(exercise: Exercise, short_tmp: Path) -> None:
    import time

    path = short_tmp / "workspace" / f"{exercise.id}.py"
    tutor = start(short_tmp)
    on_exercise(tutor, path)
    save_like_an_editor(path, "def read_grad(w, loss_fn):\n    while True:\n        pass\n")
    tutor.expect("checking ...")
    tutor.expect_re(LEGEND_END, "the key legend")
    asked = time.monotonic()
    tutor.send(CTRL_C)
    tutor.expect("Your place is saved at step 1")
    assert tutor.end() == 0
    assert time.monotonic() - asked < exercise.timeout  # not held until the check times out
    assert "Traceback" not in tutor.text
