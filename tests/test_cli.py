"""Every command through the real CLI: exit codes, messages, and what gets saved."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from gradtutor import __version__
from gradtutor import progress as prog
from gradtutor.lessons.model import Quiz

if TYPE_CHECKING:
    from conftest import Cli

COURSE = ["--lessons", str(Path(__file__).parent / "fixtures" / "course")]


def saved(cli: Cli) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((cli.home / "progress.json").read_text())
    return data


def test_version(cli: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = cli("--version")
    assert code == 0
    assert capsys.readouterr().out == f"gradtutor {__version__}\n"


@pytest.mark.parametrize("command", ["start", "list", "show", "quiz", "progress", "reset",
                                     "validate"])
def test_every_command_has_help_with_an_example(cli: Cli, capsys: pytest.CaptureFixture[str],
                                                command: str) -> None:
    code, _, _ = cli(command, "--help")
    assert code == 0
    out = capsys.readouterr().out
    assert "Example:" in out
    assert f"gradtutor {command}" in out


def test_list_shows_lessons_and_progress(cli: Cli) -> None:
    code, out, err = cli("list", *COURSE)
    assert (code, err) == (0, "")
    assert "basics" in out and "Gradient basics" in out and "not started" in out
    cli("start", "basics", *COURSE, stdin="n\nq\n")
    _, out, _ = cli("list", *COURSE)
    assert "step 2 of 5" in out


def test_start_walks_a_lesson_by_lines_and_saves_every_step(cli: Cli) -> None:
    code, out, err = cli("start", *COURSE, stdin="n\nn\nq\n")
    assert (code, err) == (0, "")
    assert "step 3 of 5" in out
    assert "Your place is saved at step 3 of 5. Run `gradtutor start basics` to go on." in out
    assert saved(cli)["lessons"]["basics"]["step"] == "accumulate"


def test_start_resumes_where_the_learner_stopped(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nq\n")
    _, out, _ = cli("start", "basics", *COURSE, stdin="q\n")
    assert "step 3 of 5" in out
    assert "step 1 of 5" not in out


def test_end_of_input_quits_and_keeps_the_place(cli: Cli) -> None:
    code, out, _ = cli("start", "basics", *COURSE, stdin="n\n")
    assert code == 0
    assert saved(cli)["lessons"]["basics"]["step"] == "requires-grad"


def test_finishing_the_lesson_records_quiz_and_completion(cli: Cli) -> None:
    code, out, _ = cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    assert code == 0
    assert "Your score: 2 of 2" in out
    assert ("You finished “Gradient basics”, lesson 1 of 2. Next: “Practising gradients”, "
            "`gradtutor start second`.") in " ".join(out.split())
    lesson = saved(cli)["lessons"]["basics"]
    assert lesson["finished"] is True
    assert lesson["best_quiz"]["check"]["score"] == 2
    _, out, _ = cli("start", *COURSE, stdin="q\n")
    assert "Practising gradients" in out  # the next unfinished lesson


def test_a_finished_lesson_offers_review_or_start_over(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    _, out, _ = cli("start", "basics", *COURSE, stdin="r\nq\n")
    assert "You have finished Gradient basics." in out
    assert "step 1 of 5" in out
    assert saved(cli)["lessons"]["basics"]["finished"] is True
    cli("start", "basics", *COURSE, stdin="s\nq\n")
    lesson = saved(cli)["lessons"]["basics"]
    assert (lesson["finished"], lesson["step"]) == (False, "welcome")
    assert lesson["best_quiz"]["check"]["score"] == 2


def test_a_finished_lesson_offers_the_next_one(cli: Cli) -> None:
    """n on a finished lesson's question opens the lesson after it, where that one stands."""
    cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    cli("start", "second", *COURSE, stdin="n\nq\n")  # the next lesson, at its step 2
    _, out, _ = cli("start", "basics", *COURSE, stdin="n\nq\n")
    assert "  n  the next lesson, “Practising gradients”" in out
    assert "Your choice [c/n/r/s/q]: " in out
    after = out.split("Your choice")[1]
    assert "Practising gradients" in after and "step 2 of 4" in after
    assert saved(cli)["lessons"]["basics"]["finished"] is True


def test_the_last_lesson_says_so_and_offers_no_next_one(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    _, out, _ = cli("list", *COURSE)
    assert "Next: lesson 2, “Practising gradients”: `gradtutor start`" in out
    seed(cli, lambda p: prog.finish(p, "second", "t"))
    _, out, _ = cli("start", "second", *COURSE, stdin="q\n")
    assert "Your choice [r/s/q]: " in out and "  n  " not in out
    _, out, _ = cli("list", *COURSE)
    assert "Next:" not in out  # every lesson is finished


def test_show_says_where_a_lesson_stands_in_the_course(cli: Cli) -> None:
    _, out, _ = cli("show", "second", *COURSE)
    assert out.startswith("Lesson 2 of 2; before it: basics “Gradient basics”; after it: "
                          "none.\n")
    _, out, _ = cli("show", "basics", *COURSE, "--step", "1")
    assert "before it" not in out  # one step, for reading or piping: the step alone ...
    assert out.startswith("Lesson 1 of 2: Gradient basics ---")  # ... under its header


def test_the_walkthrough_header_says_where_the_lesson_stands(cli: Cli) -> None:
    _, out, _ = cli("start", "second", *COURSE, stdin="q\n")
    assert "Lesson 2 of 2: Practising gradients ---" in out


def test_a_course_of_one_lesson_has_no_place_to_tell(cli: Cli, tmp_path: Path) -> None:
    shutil.copy(Path(COURSE[1]) / "basics.yaml", tmp_path / "basics.yaml")
    _, out, _ = cli("start", "basics", "--lessons", str(tmp_path), stdin="q\n")
    assert "Gradient basics ---" in out and "Lesson 1 of" not in out


def test_quiz_alone_scores_without_moving_the_place(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nq\n")
    code, out, _ = cli("quiz", "basics", *COURSE, stdin="1\n\n1 3\n\n\n")
    assert code == 1  # scored, and not passed
    assert "Your score: 1 of 2" in out
    lesson = saved(cli)["lessons"]["basics"]
    assert lesson["step"] == "requires-grad"
    assert lesson["last_quiz"]["check"]["score"] == 1


def test_quiz_on_a_lesson_without_one(cli: Cli, tmp_path: Path) -> None:
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "l.yaml").write_text(
        "id: noquiz\ntitle: T\nsummary: S\norder: 1\nsteps:\n"
        "  - {kind: slide, id: a, title: A, body: b}\n")
    code, _, err = cli("quiz", "noquiz", "--lessons", str(folder))
    assert code == 2
    assert err == ("gradtutor: error: lesson 'noquiz' has no quiz "
                   "(hint: `gradtutor list` shows the lessons)\n")


def test_show_prints_every_step_without_answers(cli: Cli) -> None:
    code, out, _ = cli("show", "basics", *COURSE, "--plain")
    assert code == 0
    for n in range(1, 6):
        assert f"step {n} of 5" in out
    assert "Question 2 of 2" in out
    assert "correct answer" not in out and "Gradients accumulate until" not in out


@pytest.mark.parametrize(("step", "title"), [("2", "Asking for gradients"),
                                             ("wrap-up", "Wrap-up")])
def test_show_one_step_by_number_or_id(cli: Cli, step: str, title: str) -> None:
    code, out, _ = cli("show", "basics", "--step", step, *COURSE)
    assert code == 0
    assert out.splitlines()[1] == title
    assert out.count("step ") == 1


@pytest.mark.parametrize(("args", "message"), [
    (["show", "basic"], "gradtutor: error: no lesson 'basic' "
                        "(hint: did you mean 'basics'? (see `gradtutor list`))"),
    (["show", "basics", "--step", "9"], "gradtutor: error: lesson 'basics' has steps 1 to 5, "
                                        "not 9 (hint: try `gradtutor show basics --step 1`)"),
    (["show", "basics", "--step", "wrapup"],
     "gradtutor: error: lesson 'basics' has no step 'wrapup' "
     "(hint: did you mean 'wrap-up'? (`gradtutor show basics` lists them))"),
    (["show"], "gradtutor: error: Missing argument 'LESSON'. "
               "(hint: see `gradtutor show --help`)"),
    (["bogus"], "gradtutor: error: No such command 'bogus'. (hint: see `gradtutor --help`)"),
    (["reset", "basics"], "gradtutor: error: refusing to reset your progress in 'basics' "
                          "without confirmation (hint: add --yes to confirm)"),
    (["start", "nope"], "gradtutor: error: no lesson 'nope' "
                        "(hint: lessons here: basics, second (see `gradtutor list`))"),
])
def test_user_errors_are_one_line_with_a_hint(cli: Cli, args: list[str], message: str) -> None:
    code, out, err = cli(*args, *COURSE)
    assert code == 2
    assert err == message + "\n"
    assert "Traceback" not in out + err


def test_missing_lessons_folder(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("list", "--lessons", str(tmp_path / "missing"))
    assert code == 2
    assert err.startswith("gradtutor: error: no such file or folder: ")
    assert err.count("\n") == 1


def test_hints_seen_are_still_shown_when_the_learner_comes_back(cli: Cli) -> None:
    _, out, _ = cli("start", "second", *COURSE, stdin="h\nh\nq\n")
    assert "Hint 2 of 3" in out and saved(cli)["lessons"]["second"]["exercises"]["square-grad"][
        "hints"] == 2
    code, out, _ = cli("start", "second", *COURSE, stdin="q\n")
    assert code == 0
    assert "Hint 1 of 3: Make a leaf tensor that requires grad." in out
    assert "Hint 2 of 3" in out and "Hint 3 of 3" not in out


def test_reset_with_yes_forgets_one_lesson(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nq\n")
    cli("start", "second", *COURSE, stdin="n\nq\n")
    code, out, _ = cli("reset", "basics", "--yes", *COURSE)
    assert code == 0
    assert "Reset your progress in 'basics'." in out
    assert set(saved(cli)["lessons"]) == {"second"}


def test_reset_asks_on_a_terminal_and_no_keeps_everything(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nq\n")
    code, out, _ = cli("reset", *COURSE, stdin="n\n", tty=True)
    assert code == 0
    assert "Nothing was reset." in out
    assert set(saved(cli)["lessons"]) == {"basics"}
    code, out, _ = cli("reset", *COURSE, stdin="y\n", tty=True)
    assert "Reset all your progress." in out
    assert saved(cli)["lessons"] == {}


def test_progress_lists_each_lesson(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nq\n")
    code, out, _ = cli("progress", *COURSE)
    assert code == 0
    assert out.splitlines()[:9] == [
        "basics  Gradient basics",
        "  step 3 of 5; 3 of 5 steps seen",
        "  about 5 minutes",  # the lesson's own `minutes: 5`
        "  quiz: not taken yet",
        "    take it: `gradtutor quiz basics`",
        "second  Practising gradients",
        "  not started; 0 of 4 steps seen",
        "  about 9 minutes",  # estimated from its text: it sets no minutes
        "  exercises solved: 0 of 1",
    ]
    assert "progress.json" in out.replace("\n", "")


@pytest.mark.parametrize("width", [60, 80])
def test_progress_shows_exercises_solved_and_the_quiz_score_in_short_lines(cli: Cli,
                                                                           width: int) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\n1\n\n\n\n")  # 1 of 2: not passed
    seed(cli, lambda p: prog.record_check(p, "second", "square-grad", True, "t"))
    code, out, _ = cli("progress", *COURSE, width=width)
    assert code == 0
    lines = out.splitlines()
    assert "  exercises solved: 1 of 1" in lines
    assert "[X] quiz: best score 1 of 2, not passed yet" in out  # piped: the plain look
    assert all(len(line) <= width for line in lines[:-2])  # all but the path of the file


def seed(cli: Cli, change: Callable[[prog.Progress], prog.Progress]) -> None:
    from gradtutor.store import ProgressStore

    ProgressStore(cli.home, lambda line: None).update(change)


def course_quiz(lesson_id: str) -> Quiz:
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course

    return load_course(Path(COURSE[1]), rules=EXERCISE_RULES).find(lesson_id).quizzes[0]


def test_quiz_exits_1_when_not_passed_and_0_when_passed(cli: Cli) -> None:
    code, out, _ = cli("quiz", "basics", *COURSE, stdin="1\n\n1 3\n\n\n")
    assert code == 1
    assert "Not passed yet" in out and "Question 1: What does" in out
    assert "To take it again: run `gradtutor quiz basics`" in out
    # the retake asks in another order, drawn from the time of the first score
    from gradtutor.walk.quiz import retake

    at = saved(cli)["lessons"]["basics"]["last_quiz"]["check"]["at"]
    asked = retake(course_quiz("basics"), at)
    lines = "".join(" ".join(str(i + 1) for i in sorted(q.correct)) + "\n\n"
                    for q in asked.questions)
    code, out, _ = cli("quiz", "basics", *COURSE, stdin=lines + "\n")
    assert code == 0
    assert "Passed" in out and "Missed:" not in out


def test_quiz_quit_on_its_score_screen_is_scored_and_says_nothing_false(cli: Cli) -> None:
    code, out, _ = cli("quiz", "basics", *COURSE, stdin="2\n\n1 3\n\nq\n")
    assert code == 0
    assert "no score was saved" not in out
    assert saved(cli)["lessons"]["basics"]["last_quiz"]["check"]["score"] == 2


def test_a_quiz_left_half_done_goes_on_from_there_in_start_and_in_quiz(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\nq\n")  # question 1 answered
    assert saved(cli)["lessons"]["basics"]["quiz_answers"] == {"check": ["b"]}
    code, out, _ = cli("quiz", "basics", *COURSE, stdin="q\n")
    assert code == 1
    assert "Question 2 of 2" in out and "Question 1 of 2" not in out
    assert "Welcome back: your earlier answers in this quiz are kept." in out
    assert "your answers so far are kept for next time" in " ".join(out.split())
    code, out, _ = cli("start", "basics", *COURSE, stdin="1 3\n\n\nq\n")
    assert "Question 1 of 2" not in out and "Your score: 2 of 2" in out
    lesson = saved(cli)["lessons"]["basics"]
    assert lesson["quiz_answers"] == {} and lesson["last_quiz"]["check"]["score"] == 2


def test_a_finished_lesson_offers_to_continue_at_the_saved_step(cli: Cli) -> None:
    cli("start", "basics", *COURSE, stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    _, out, _ = cli("start", "basics", *COURSE, stdin="r\nn\nq\n")
    assert "  c  continue at step 5 of 5" in out  # where the lesson was finished
    assert ("Your place is saved at step 2 of 5. Run `gradtutor start basics` and choose c "
            "to go on.") in " ".join(out.split())
    code, out, _ = cli("start", "basics", *COURSE, stdin="c\nq\n")
    assert code == 0
    assert "  c  continue at step 2 of 5" in out and "Your choice [c/n/r/s/q]: " in out
    assert "step 2 of 5" in out.split("Your choice")[1] and "step 1 of 5" not in out
    assert saved(cli)["lessons"]["basics"]["finished"] is True


def test_a_passed_exercise_says_so_on_coming_back(cli: Cli) -> None:
    seed(cli, lambda p: prog.record_check(p, "second", "square-grad", True, "t"))
    code, out, _ = cli("start", "second", *COURSE, stdin="q\n")
    assert code == 0
    assert "You passed this exercise earlier: save your file (or c) to check it again." in out
    assert "Not checked yet" not in out


def test_corrupt_progress_gives_one_warning_and_carries_on(cli: Cli) -> None:
    cli.home.mkdir(parents=True)
    (cli.home / "progress.json").write_text("{oops")
    code, out, err = cli("list", *COURSE)
    assert code == 0
    assert err.count("\n") == 1
    assert err.startswith(
        "warning: saved progress was unusable (it is not valid JSON); kept it as ")
    assert "not started" in out
    assert len(list(cli.home.glob("progress.*.bak.json"))) == 1


def test_validate_reports_every_problem_then_a_summary(cli: Cli, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(
        "id: bad\ntitle: T\nsumary: S\norder: 1\nsteps:\n"
        "  - {kind: slid, id: a, title: A, body: b}\n"
        "  - {kind: slide, id: b, body: b}\n")
    code, out, err = cli("validate", "bad.yaml")
    assert code == 2
    assert err.splitlines() == [
        "bad.yaml:3:1: unknown key 'sumary'; did you mean 'summary'?",
        "bad.yaml:6:12: unknown step kind 'slid'; did you mean 'slide'?",
        "bad.yaml:7:5: missing required key 'title' in steps[2]; add `title:`",
        "gradtutor: 3 problems in lesson files "
        "(fix each line above, then run `gradtutor validate` again)",
    ]


def test_a_broken_lesson_folder_stops_start_with_located_problems(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.yaml").write_text("id: x\ntitle: [unclosed\n")
    code, _, err = cli("start", "--lessons", ".")
    assert code == 2
    assert err.splitlines()[0].startswith("x.yaml:3:1: YAML syntax error:")
    assert "Traceback" not in err


def course_copy(tmp_path: Path, change: Callable[[str, str], str] = lambda _name, text: text
                ) -> Path:
    """A copy of the fixture course, each file's text passed through `change(name, text)`."""
    folder = tmp_path / "course"
    shutil.copytree(Path(COURSE[1]), folder)
    for path in folder.glob("*.yaml"):
        path.write_text(change(path.name, path.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def break_second(name: str, text: str) -> str:
    """The fixture's second lesson with a step of an unknown kind, past its first lines."""
    return text.replace("  - kind: exercise", "  - kind: exercize", 1) if name == "second.yaml" \
        else text


SECOND_BROKEN = "unknown step kind 'exercize'; did you mean 'exercise'?"


def test_a_broken_lesson_elsewhere_does_not_stop_start_or_show(cli: Cli,
                                                               tmp_path: Path) -> None:
    """start and show load the lesson they show; the course's order comes from the first
    lines of each file."""
    lessons = ["--lessons", str(course_copy(tmp_path, break_second))]
    code, out, err = cli("start", "basics", *lessons, stdin="q\n")
    assert (code, err) == (0, "")
    assert out.startswith("Lesson 1 of 2: Gradient basics ")
    code, out, err = cli("show", "basics", *lessons)
    assert (code, err) == (0, "")
    assert out.startswith("Lesson 1 of 2; before it: none; after it: second “Practising "
                          "gradients”.\n")


def test_a_broken_lesson_is_reported_when_reached_and_by_list_and_validate(
        cli: Cli, tmp_path: Path) -> None:
    lessons = ["--lessons", str(course_copy(tmp_path, break_second))]
    reached = [["start", "second"], ["show", "second", "--step", "1"],
               ["start", "basics"],  # finished, and n chooses the next lesson
               ["list"], ["validate"]]
    seed(cli, lambda p: prog.finish(p, "basics", "t"))
    for command in reached:
        code, out, err = cli(*command, *lessons, stdin="n\n")
        assert code == 2, command
        assert f"second.yaml:6:11: {SECOND_BROKEN}" in err, command
        assert "Traceback" not in err


def test_a_changed_lesson_file_shows_at_once(cli: Cli, tmp_path: Path) -> None:
    """Nothing cached stands in for a file that changed: its title, and its order in the
    course, are read again."""
    folder = course_copy(tmp_path)
    lessons = ["--lessons", str(folder)]
    _, out, _ = cli("show", "second", *lessons)
    assert out.startswith("Lesson 2 of 2; before it: basics “Gradient basics”;")
    basics = folder / "basics.yaml"
    basics.write_text(basics.read_text().replace("title: Gradient basics", "title: First things")
                      .replace("order: 1", "order: 3"))
    _, out, _ = cli("show", "second", *lessons)
    assert out.startswith("Lesson 1 of 2; before it: none; after it: basics “First things”.")
    code, out, _ = cli("start", "basics", *lessons, stdin="q\n")
    assert code == 0 and out.startswith("Lesson 2 of 2: First things ")


def test_internal_errors_are_one_line_unless_debug(cli: Cli,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from gradtutor.lessons import course

    def broken(*_args: object, **_kwargs: object) -> NoReturn:
        raise RuntimeError("boom")

    monkeypatch.setattr("gradtutor.cli.load_course", broken)
    code, _, err = cli("list")
    assert code == 70
    assert err == ("gradtutor: internal error: RuntimeError: boom "
                   "(hint: rerun with --debug and report it)\n")
    with pytest.raises(RuntimeError):
        cli("--debug", "list")
    assert course.load_course is not broken


def test_python_dash_m_runs_the_same_cli(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "gradtutor", "show", "nope"],
                            capture_output=True, text=True, timeout=60,
                            env={"GRADTUTOR_HOME": str(tmp_path), "PATH": "",
                                 "SYSTEMROOT": __import__("os").environ.get("SYSTEMROOT", "")})
    assert result.returncode == 2
    assert result.stderr.startswith("gradtutor: error: no lesson 'nope'")


# --- the command line a newcomer types --------------------------------------------------------

def test_bare_gradtutor_says_where_to_start_and_the_main_commands(cli: Cli) -> None:
    code, out, err = cli()
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("Learn how PyTorch's .grad really behaves")
    assert "Start here:  gradtutor start" in lines
    listed = [line.split()[0] for line in lines if line.startswith("  ") and line[2] != " "]
    assert listed == ["start", "list", "watch", "check", "progress"]
    assert "  start     Open the walkthrough, where you left off." in lines
    assert ("Then try it on your own training script: `gradtutor doctor train.py` finds the "
            "gradient problems it has.") in " ".join(lines)
    assert lines[-1] == "`gradtutor --help` lists every command and option."
    assert len(lines) < 20


@pytest.mark.parametrize("where", ["before", "after"])
def test_options_for_every_command_work_before_or_after_it(cli: Cli, tmp_path: Path,
                                                           where: str) -> None:
    (tmp_path / "square-grad.py").write_text("def square_grad(x):\n    return None\n")
    options = [*COURSE, "--workspace", str(tmp_path), "--plain"]
    argv = [*options, "check", "square-grad"] if where == "before" else [
        "check", "square-grad", *options]
    code, out, err = cli(*argv)
    assert (code, err) == (1, "")
    assert out.startswith("[X] square-grad: ")  # the fixture course's exercise, in that folder
    code, out, _ = cli(*(["--lessons", str(tmp_path / "nowhere"), "list"] if where == "before"
                         else ["list", "--lessons", str(tmp_path / "nowhere")]))
    assert code == 2


def test_the_later_of_two_lessons_options_counts(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("--lessons", str(tmp_path / "nowhere"), "list", *COURSE)
    assert code == 0 and "Gradient basics" in out


def test_an_option_a_command_has_no_use_for_is_accepted_and_changes_nothing(cli: Cli,
                                                                            tmp_path: Path) -> None:
    expected = cli("list", *COURSE)
    assert cli("list", *COURSE, "--workspace", str(tmp_path)) == expected
    assert cli("--workspace", str(tmp_path), "list", *COURSE) == expected


def test_debug_after_the_command_shows_the_traceback_too(cli: Cli,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> NoReturn:
        raise RuntimeError("boom")

    monkeypatch.setattr("gradtutor.cli.load_course", broken)
    with pytest.raises(RuntimeError):
        cli("list", "--debug")


@pytest.mark.parametrize("command", [[], ["list"], ["watch"]])
def test_help_lists_the_options_for_every_command_in_their_own_panel(
    cli: Cli, capsys: pytest.CaptureFixture[str], command: list[str],
) -> None:
    code, _, _ = cli(*command, "--help")
    assert code == 0
    out = capsys.readouterr().out
    panel = out[out.index("Options for every command"):]
    for option in ("--lessons", "--plain", "--workspace", "--debug", "--lang"):
        assert option in panel
        assert out.count(f" {option} ") == 1  # said once, where it is explained


def error_lines(width: int, *argv: str, lang: dict[str, str] | None = None) -> list[str]:
    """What a terminal `width` columns wide shows of the error `argv` ends with."""
    import io

    from gradtutor.cli import run
    from gradtutor.env import Environment

    stderr = io.StringIO()
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=stderr,
                      environ=lang or {}, stdin_tty=False, stdout_tty=False, stderr_tty=True,
                      width=width)
    assert run(list(argv), env) == 2
    return stderr.getvalue().splitlines()


@pytest.mark.parametrize("width", [60, 80])
@pytest.mark.parametrize("lang", [{}, {"GRADTUTOR_LANG": "zh"}])
def test_errors_on_a_terminal_wrap_between_words_never_inside_a_command(
    width: int, lang: dict[str, str],
) -> None:
    from rich.cells import cell_len

    argv = ["check", "order-the-loop", "--workspace", "/no/such/folder"]
    lines = error_lines(width, *argv, lang=lang)
    assert len(lines) > 1
    assert all(cell_len(line) <= width and line == line.rstrip() for line in lines)
    assert all(line.count("`") % 2 == 0 for line in lines)  # every `command` on one line
    assert all(line.startswith("  ") for line in lines[1:])
    if not lang:
        words = " ".join(lines).split()
        assert "`optimizer.zero_grad()`," in words and "/no/such/folder/order-the-loop.txt" in words


def test_piped_output_is_plain_and_its_lines_end_without_spaces(cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("start", "basics", *COURSE, stdin="n\nq\n")
    assert code == 0 and "step 2 of 5" in out
    assert not any("\u2500" <= char <= "\u259f" for char in out)  # no box drawing, no bars
    # (the walkthrough's prompt, "> ", is the one line that ends in a space)
    assert all(line == line.rstrip() for line in out.splitlines() if line != "> ")
    (tmp_path / "square-grad.py").write_text("def square_grad(x):\n    return None\n")
    code, out, _ = cli("check", "square-grad", "--workspace", str(tmp_path), *COURSE)
    assert code == 1 and out.startswith("[X] square-grad: ")
    assert all(line == line.rstrip() for line in out.splitlines())


def test_bare_gradtutor_and_options_before_the_command_in_a_real_process(tmp_path: Path) -> None:
    course = str(Path(__file__).parent / "fixtures" / "course")
    environ = {**__import__("os").environ, "GRADTUTOR_HOME": str(tmp_path),
               "GRADTUTOR_LANG": "en"}
    bare = subprocess.run([sys.executable, "-m", "gradtutor"], capture_output=True, text=True,
                          timeout=60, env=environ)
    assert (bare.returncode, bare.stderr) == (0, "")
    assert "Start here:  gradtutor start" in bare.stdout
    listed = subprocess.run([sys.executable, "-m", "gradtutor", "--lessons", course, "--plain",
                             "--debug", "list"], capture_output=True, text=True, timeout=60,
                            env=environ)
    assert (listed.returncode, listed.stderr) == (0, "")
    assert "Gradient basics" in listed.stdout


def test_a_rebinding_update_is_explained_without_pytorch_internals_or_repeated_skips(
    cli: Cli, tmp_path: Path,
) -> None:
    # `w = w - lr * w.grad` reads .grad of a non-leaf: PyTorch warns from its C++ core
    (tmp_path / "manual-sgd.py").write_text(
        "def manual_sgd(w, loss_fn, batches, lr):\n"
        "    for batch in batches:\n"
        "        w.grad = None\n"
        "        loss_fn(w, batch).backward()\n"
        "        w = w - lr * w.grad\n")
    code, out, err = cli("--plain", "check", "manual-sgd", "--workspace", str(tmp_path),
                         "--verbose", width=200)
    assert (code, err) == (1, "")
    said = " ".join(out.split())
    assert "makes a new tensor and points your function's local name w at it" in said
    assert "Triggered internally" not in out and "Warning" not in out
    assert "Your code printed" not in out
    skipped = [line for line in out.splitlines() if line.startswith("- ")]
    assert skipped == ["- backward-per-batch, per-batch-gradient, update: not run (not judged: "
                       "see the other checks)"]
    code, out, _ = cli("check", "manual-sgd", "--workspace", str(tmp_path), "--json")
    checks = {c["name"]: c["status"] for c in json.loads(out)["checks"]}
    assert checks == {"no-optimizer": "pass", "stays-leaf": "fail", "backward-per-batch": "skip",
                      "per-batch-gradient": "skip", "update": "skip"}


def test_an_update_through_dot_data_passes_with_a_note(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "manual-sgd.py").write_text(
        "def manual_sgd(w, loss_fn, batches, lr):\n"
        "    for batch in batches:\n"
        "        w.grad = None\n"
        "        loss_fn(w, batch).backward()\n"
        "        w.data -= lr * w.grad\n")
    code, out, _ = cli("check", "manual-sgd", "--workspace", str(tmp_path), "--json")
    assert code == 0
    notes = [c["note"] for c in json.loads(out)["checks"] if "note" in c]
    assert len(notes) == 1 and ("an in-place update with recording off, as the lesson shows, "
                                "is the safe way") in notes[0]
    code, out, _ = cli("--plain", "check", "manual-sgd", "--workspace", str(tmp_path), width=200)
    assert code == 0 and "note: Your updates went through w.data" in " ".join(out.split())


@pytest.mark.parametrize(("lang", "missing", "crashed"), [
    ("en", "[X] square-grad: not written yet", "[X] square-grad: Your code did not run to the end"),
    ("zh", "[X] square-grad：还没有写", "[X] square-grad：你的代码没有运行完"),
], ids=["en", "zh"])
def test_check_all_says_a_file_not_there_is_not_written_yet(cli: Cli, tmp_path: Path, lang: str,
                                                            missing: str, crashed: str) -> None:
    code, out, _ = cli("check", "--all", "--workspace", str(tmp_path), "--lang", lang, *COURSE)
    assert code == 1 and out.splitlines()[0] == missing and crashed not in out
    code, out, _ = cli("check", "--all", "--workspace", str(tmp_path), "--json", *COURSE)
    assert json.loads(out)["exercises"][0]["status"] == "error"  # scripts see what they did
    (tmp_path / "square-grad.py").write_text("raise ValueError('oops')\n")
    code, out, _ = cli("check", "--all", "--workspace", str(tmp_path), "--lang", lang, *COURSE)
    assert code == 1 and out.splitlines()[0] == crashed
    # checked where it is (its traceback names it there), and left there
    code, out, _ = cli("check", "--all", "--workspace", str(tmp_path), "--json", *COURSE)
    assert f'File "{tmp_path / "square-grad.py"}", line 1' in (
        json.loads(out)["exercises"][0]["checks"][0]["message"])
    assert (tmp_path / "square-grad.py").read_text() == "raise ValueError('oops')\n"


def test_the_taught_fix_typed_into_the_no_grad_predict_starter_passes(cli: Cli,
                                                                      tmp_path: Path) -> None:
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.course import load_course

    starter = load_course(rules=EXERCISE_RULES).find_exercise("no-grad-predict").starter
    fixed = starter.replace("    return 3 * w + 1",
                            "    with torch.no_grad():\n        return 3 * w + 1")
    assert fixed != starter
    (tmp_path / "no-grad-predict.py").write_text(fixed)
    code, out, _ = cli("check", "no-grad-predict", "--workspace", str(tmp_path))
    assert code == 0, out


def check_where(home: Path, *argv: str, stdout_tty: bool, lang: str = "en",
                course: list[str] = COURSE,
                environ: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`gradtutor check ARGV` with stderr on a terminal and stdout on one or in a pipe: its
    exit code, stdout and stderr (`course`: the --lessons arguments; `environ`: variables
    besides the home, the language and the terminal's)."""
    import io

    from gradtutor.cli import run
    from gradtutor.env import Environment

    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdin=io.StringIO(), stdout=out, stderr=err,
                      environ={"GRADTUTOR_HOME": str(home), "GRADTUTOR_LANG": lang,
                               "TERM": "xterm", **(environ or {})},
                      stdin_tty=False, stdout_tty=stdout_tty, stderr_tty=True, width=100)
    code = run(["check", *argv, *course], env)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "lang", "status"), [
    (["square-grad"], "en", "checking square-grad: loading PyTorch first, a few seconds "
                            "(0 s so far)"),
    (["--all"], "en", "checking square-grad (1 of 1): loading PyTorch first, a few seconds "
                      "(0 s so far)"),
    (["--all"], "zh", "正在检查 square-grad（第 1 个，共 1 个）：要先加载 PyTorch，需要几秒钟"
                      "（已等 0 秒）"),
])
def test_check_on_a_terminal_shows_a_status_line_while_it_works_and_none_in_a_pipe_or_json(
    tmp_path: Path, argv: list[str], lang: str, status: str,
) -> None:
    (tmp_path / "square-grad.py").write_text("def read_grad(w, loss_fn):\n    return None\n")
    argv = [*argv, "--workspace", str(tmp_path)]
    code, out, err = check_where(tmp_path / "home", *argv, stdout_tty=True, lang=lang)
    assert code == 1 and "square-grad" in out
    assert err.startswith("\r\x1b[K" + status)  # at once, before the check's first second
    assert err.endswith("\r\x1b[K")  # and cleared before the verdict is printed
    for stdout_tty, extra in ((False, []), (True, ["--json"])):
        code, out, err = check_where(tmp_path / "home", *argv, *extra, stdout_tty=stdout_tty,
                                     lang=lang)
        assert code == 1 and "square-grad" in out
        assert "\x1b" not in err and "PyTorch" not in err and "\r" not in err


@pytest.mark.slow
@pytest.mark.parametrize(("warm", "second_loads"), [("1", False), ("0", True)],
                         ids=["warm", "cold"])
def test_check_all_on_a_terminal_says_which_checks_load_pytorch_first(
        tmp_path: Path, warm: str, second_loads: bool) -> None:
    """On one warm worker only `check --all`'s first check loads PyTorch; with the warm worker
    off (GRADTUTOR_WARM=0) each check runs cold, and each says it loads PyTorch. A file not
    written runs nothing and has no status line."""
    for exercise_id in ("read-grad", "none-before-backward"):
        (tmp_path / f"{exercise_id}.py").write_text("def nothing():\n    return None\n")
    code, out, err = check_where(tmp_path / "home", "--lesson", "grad", "--workspace",
                                 str(tmp_path), stdout_tty=True, course=[],
                                 environ={"GRADTUTOR_WARM": warm})
    assert code == 1 and "0 of 8 exercises passed" in out
    assert err.startswith("\r\x1b[Kchecking read-grad (1 of 8): loading PyTorch first")
    assert "\r\x1b[Kchecking none-before-backward (2 of 8): " in err
    loads = "\r\x1b[Kchecking none-before-backward (2 of 8): loading PyTorch first" in err
    assert loads == second_loads
    assert "(3 of 8)" not in err



@pytest.mark.parametrize(("stdout_tty", "stderr_tty", "term", "shown"), [
    (True, True, "xterm", True),
    (False, True, "xterm", False),  # output to a pipe or a file: the status would not be seen
    (True, False, "xterm", False),  # stderr to a log: no "\r" and escapes in it
    (True, True, "dumb", False),
])
def test_a_status_line_needs_stdout_and_stderr_on_a_real_terminal(
    stdout_tty: bool, stderr_tty: bool, term: str, shown: bool,
) -> None:
    import io

    from gradtutor.env import Environment

    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                      environ={"TERM": term}, stdin_tty=False, stdout_tty=stdout_tty,
                      stderr_tty=stderr_tty)
    assert env.status_line is shown
