"""The `gradtutor` command line: thin commands over the core, and the one error boundary.

`run()` is the only place that turns exceptions into a message and an exit code; `--debug`
(or GRADTUTOR_DEBUG=1) lets the traceback through instead.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from gradtutor import __version__
from gradtutor import progress as prog
from gradtutor.env import Environment
from gradtutor.errors import ExitCode, GradtutorError, LessonProblems
from gradtutor.lessons.course import Course, check_files, lesson_files, load_course
from gradtutor.lessons.load import display_path
from gradtutor.lessons.model import Exercise, Lesson
from gradtutor.store import ProgressStore
from gradtutor.ui import render

if TYPE_CHECKING:
    from gradtutor.checking.verdict import Verdict

app = typer.Typer(
    name="gradtutor",
    help="Learn how PyTorch's .grad really behaves, one step at a time, in your terminal.",
    epilog="Start here:  gradtutor start",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _complete_lesson(incomplete: str) -> list[str]:
    try:
        return [lesson.id for lesson in load_course().lessons if lesson.id.startswith(incomplete)]
    except GradtutorError:
        return []


LessonsOpt = Annotated[Path | None, typer.Option(
    "--lessons", metavar="DIR", help="Load lessons from this folder instead of the built-in ones.",
    envvar="GRADTUTOR_LESSONS", file_okay=False)]
PlainOpt = Annotated[bool, typer.Option(
    "--plain", help="No colour and no box drawing (also: NO_COLOR=1 or TERM=dumb).")]
LessonArg = Annotated[str, typer.Argument(
    metavar="LESSON", help="A lesson id, as `gradtutor list` shows it.",
    autocompletion=_complete_lesson)]


def _env(ctx: typer.Context) -> Environment:
    env = ctx.find_root().obj
    if not isinstance(env, Environment):
        env = Environment.from_os()
        ctx.find_root().obj = env
    return env


def _store(env: Environment) -> ProgressStore:
    return ProgressStore(env.home, env.error)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gradtutor {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
) -> None:
    """Learn how PyTorch's `.grad` really behaves, one step at a time, in your terminal.

    Example: `gradtutor start`
    """
    _env(ctx).debug = debug


def _choose_lesson(course: Course, lesson_id: str | None, progress: prog.Progress) -> Lesson:
    if lesson_id:
        return course.find(lesson_id)
    return prog.next_lesson(course.lessons, progress)


def _ask_finished(env: Environment, lesson: Lesson, plain: bool) -> str:
    """A finished lesson: review it, start over, or quit. Returns 'r', 's' or 'q'."""
    console = env.console(plain)
    console.print(Text.assemble(("You have finished ", ""), (lesson.title, "bold"), (".", "")))
    console.print("  r  review it from the first step\n  s  start over (clears your place)\n"
                  "  q  quit")
    while True:
        console.print("Your choice [r/s/q]: ", end="", markup=False)
        console.file.flush()
        if env.interactive:
            from gradtutor.ui.keys import key_reader

            key = key_reader(env.stdin)()
            console.print(key if len(key) == 1 else "")
        else:
            key = env.stdin.readline().strip().lower()[:1] or "q"
        if key in ("r", "s", "q"):
            return key
        if key in ("ctrl-c", "eof", "esc"):
            return "q"


@app.command()
def start(
    ctx: typer.Context,
    lesson_id: Annotated[str | None, typer.Argument(
        metavar="[LESSON]", help="A lesson id; default: the next unfinished lesson.",
        autocompletion=_complete_lesson, show_default=False)] = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Open the walkthrough, where you left off.

    One step per screen: → or n for next, ← or b for back, ? for help, q to quit (your
    place is saved). Without a terminal it reads one command per line. An exercise puts a
    starter file in your workspace; edit it in any editor (e opens yours) and each save is
    checked on the spot.

    Example: `gradtutor start grad`
    """
    from gradtutor.ui.walkthrough import run

    env = _env(ctx)
    course = load_course(lessons)
    store = _store(env)
    saved = store.load()
    lesson = _choose_lesson(course, lesson_id, saved)
    state = saved.of(lesson.id)
    plain = env.plain(plain)
    start_at = prog.resume_index(lesson, state)
    if state.finished:
        choice = _ask_finished(env, lesson, plain)
        if choice == "q":
            return
        if choice == "s":
            store.update(lambda p: prog.restart(p, lesson.id))
        start_at = 0
    final = run(lesson, start_at, env, store, plain, folder=workspace_dir(env, workspace))
    console = env.console(plain)
    if final.outcome == "finished":
        console.print(Text(f"{render.Look(plain).ok} You finished “{lesson.title}”. "
                           f"`gradtutor list` shows the course.", style="bold green"))
    else:
        console.print(f"Your place is saved at step {final.index + 1} of {len(lesson.steps)}. "
                      f"Run `gradtutor start {lesson.id}` to go on.")


@app.command("list")
def list_(ctx: typer.Context, lessons: LessonsOpt = None, plain: PlainOpt = False) -> None:
    """List the lessons with your progress in each.

    Example: `gradtutor list`
    """
    env = _env(ctx)
    course = load_course(lessons)
    saved = _store(env).load()
    plain = env.plain(plain)
    env.console(plain).print(render.lessons_table(course.lessons, dict(saved.lessons),
                                                  render.Look(plain)))


def _step_index(lesson: Lesson, step: str) -> int:
    if step.isdigit():
        number = int(step)
        if 1 <= number <= len(lesson.steps):
            return number - 1
        raise GradtutorError(
            f"lesson '{lesson.id}' has steps 1 to {len(lesson.steps)}, not {number}",
                             f"try `gradtutor show {lesson.id} --step 1`")
    index = lesson.index_of(step)
    if index is None:
        import difflib

        close = difflib.get_close_matches(step, [s.id for s in lesson.steps], n=1)
        hint = f"did you mean '{close[0]}'?" if close else "use a step number, starting at 1"
        raise GradtutorError(f"lesson '{lesson.id}' has no step '{step}'",
                             f"{hint} (`gradtutor show {lesson.id}` lists them)")
    return index


@app.command()
def show(
    ctx: typer.Context,
    lesson_id: LessonArg,
    step: Annotated[str | None, typer.Option(
        "--step", "-s", metavar="N|ID",
        help="Only this step: a number from 1, or a step id.")] = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    """Print a lesson, or one step of it, without interaction: for reading and piping.

    Quiz answers are not shown; take the quiz with `gradtutor quiz`.

    Example: `gradtutor show grad --step 3 --plain`
    """
    env = _env(ctx)
    lesson = load_course(lessons).find(lesson_id)
    indexes = [_step_index(lesson, step)] if step else range(len(lesson.steps))
    plain = env.plain(plain) or not env.stdout_tty
    console = env.console(plain)
    for index in indexes:
        console.print(render.step_for_reading(lesson, index, console.width, render.Look(plain)))


@app.command()
def quiz(ctx: typer.Context, lesson_id: LessonArg, lessons: LessonsOpt = None,
         plain: PlainOpt = False) -> None:
    """Take a lesson's quick check on its own; your score is saved.

    Example: `gradtutor quiz grad`
    """
    from gradtutor.ui.walkthrough import run

    env = _env(ctx)
    lesson = load_course(lessons).find(lesson_id)
    quizzes = lesson.quizzes
    if not quizzes:
        raise GradtutorError(f"lesson '{lesson.id}' has no quiz",
                             "`gradtutor list` shows the lessons")
    only_quiz = dataclasses.replace(lesson, steps=tuple(quizzes))
    plain = env.plain(plain)
    final = run(only_quiz, 0, env, _store(env), plain, keep_place=False)
    if final.outcome != "finished":
        env.console(plain).print("Quiz left unfinished; no score was saved.")


@app.command("progress")
def progress_(ctx: typer.Context, lessons: LessonsOpt = None, plain: PlainOpt = False) -> None:
    """Show your progress: where you are in each lesson and your quiz scores.

    Example: `gradtutor progress`
    """
    env = _env(ctx)
    course = load_course(lessons)
    store = _store(env)
    saved = store.load()
    plain = env.plain(plain)
    look = render.Look(plain)
    console = env.console(plain)
    for lesson in course.lessons:
        state = saved.of(lesson.id)
        seen = len(state.seen & {s.id for s in lesson.steps})
        line = Text.assemble((f"{lesson.id}", "bold"), f"  {lesson.title}: ",
                             render.status_text(lesson, state, look),
                             f"; {seen} of {len(lesson.steps)} steps seen")
        best = render.quiz_text(lesson, state)
        if best != "-":
            line.append(f"; best quiz score {best}")
        console.print(line)
    console.print(Text(f"Saved in {store.path}", style="grey50"))


@app.command()
def reset(
    ctx: typer.Context,
    lesson_id: Annotated[str | None, typer.Argument(
        metavar="[LESSON]", help="Only this lesson; default: all progress.",
        autocompletion=_complete_lesson, show_default=False)] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    lessons: LessonsOpt = None,
) -> None:
    """Forget your progress in one lesson, or in all of them.

    Example: `gradtutor reset grad --yes`
    """
    env = _env(ctx)
    if lesson_id is not None:
        load_course(lessons).find(lesson_id)  # a typo must not silently reset nothing
    what = f"your progress in '{lesson_id}'" if lesson_id else "all your progress"
    if not yes:
        if not env.stdin_tty:
            raise GradtutorError(f"refusing to reset {what} without confirmation",
                                 "add --yes to confirm")
        console = env.console(env.plain())
        console.print(f"Reset {what}? [y/N]: ", end="", markup=False)
        console.file.flush()
        if env.stdin.readline().strip().lower() not in ("y", "yes"):
            console.print("Nothing was reset.")
            return
    _store(env).update(lambda p: prog.reset(p, lesson_id))
    env.console(env.plain()).print(f"Reset {what}.")


WorkspaceOpt = Annotated[Path | None, typer.Option(
    "--workspace", metavar="DIR", envvar="GRADTUTOR_WORKSPACE", file_okay=False,
    help="The folder of exercise files, one EXERCISE.py each; default: in your data folder.")]


def workspace_dir(env: Environment, chosen: Path | None) -> Path:
    return chosen if chosen is not None else env.home / "workspace"


def _check_one(exercise_id: str, path: Path, course: Course, seed: int,
               timeout: float | None) -> Verdict:
    from gradtutor.checking.parsons import grade_file, parsons_steps
    from gradtutor.checking.runner import read_learner_file, run_check

    orderings = parsons_steps(course.lessons)
    if exercise_id in orderings:  # an order of lines, graded as it is: nothing runs
        return grade_file(orderings[exercise_id], read_learner_file(path), str(path))
    return run_check(course.find_exercise(exercise_id), path, seed=seed, timeout=timeout)


@app.command()
def check(
    ctx: typer.Context,
    exercise_id: Annotated[str | None, typer.Argument(
        metavar="[EXERCISE]", help="An exercise id, such as read-grad, or a line-ordering "
                                   "step, such as order-the-loop.",
        show_default=False)] = None,
    file: Annotated[Path | None, typer.Argument(
        metavar="[FILE]", help="Your Python file (for a line-ordering step: a text file of its "
                               "lines in your order); default: the workspace file.",
        show_default=False, dir_okay=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Check every exercise.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help="Reproduce a run: the inputs come from this seed.")] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", min=0.1, metavar="SECONDS", help="Wall-clock limit for your code.")] = None,
    workspace: WorkspaceOpt = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    """Run your code for an exercise and say what it did right and wrong.

    Exit code 0 when it passes, 1 when it does not (wrong answer, crash, timeout, a file that
    is not valid Python), 2 for a usage error. `--json` prints the result as one JSON object
    (docs/check-format.md); `--all` checks every exercise, for autograding.

    A line-ordering step takes a text file with its lines in your order, one per line:
    `gradtutor check order-the-loop my_order.txt`.

    Example: `gradtutor check read-grad my_read_grad.py --seed 7`
    """
    import json
    import secrets

    from gradtutor.checking.parsons import parsons_steps

    env = _env(ctx)
    course = load_course(lessons)
    orderings = parsons_steps(course.lessons)
    folder = workspace_dir(env, workspace)
    seed = secrets.randbelow(2**31) if seed is None else seed
    if all_:
        if exercise_id is not None or file is not None:
            raise GradtutorError("--all checks every exercise's workspace file",
                                 "leave out EXERCISE and FILE, or drop --all")
        verdicts = [_check_one(eid, folder / f"{eid}.py", course, seed, timeout)
                    if (folder / f"{eid}.py").is_file() else missing_verdict(eid, folder, seed)
                    for eid in course.exercises()]
    else:
        if exercise_id is None:
            raise GradtutorError("name the exercise to check",
                                 f"for example `gradtutor check read-grad FILE`; exercises: "
                                 f"{', '.join(course.exercises())}")
        if exercise_id not in orderings and exercise_id not in course.exercises():
            import difflib

            known = [*course.exercises(), *orderings]
            close = difflib.get_close_matches(exercise_id, known, n=1)
            raise GradtutorError(f"no exercise '{exercise_id}'",
                                 f"did you mean '{close[0]}'?" if close
                                 else f"exercises: {', '.join(known) or 'none in these lessons'}")
        ordering = exercise_id in orderings
        path = file if file is not None else folder / (
            f"{exercise_id}.txt" if ordering else f"{exercise_id}.py")
        if not path.is_file():
            where = "" if file is not None else " (your workspace file for it)"
            raise GradtutorError(f"no such file: {path}{where}",
                                 f"pass the path of your {'answer' if ordering else 'Python'} "
                                 f"file as FILE")
        verdicts = [_check_one(exercise_id, path, course, seed, timeout)]
    passed = all(v.passed for v in verdicts)
    if as_json:
        from gradtutor.checking.verdict import to_json

        payload = (to_json(verdicts[0]) if not all_ else {
            "passed": passed, "total": len(verdicts),
            "passed_count": sum(v.passed for v in verdicts), "seed": seed,
            "exercises": [to_json(v) for v in verdicts]})
        env.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        from gradtutor.ui.check_view import verdict_view

        plain = env.plain(plain)
        console = env.console(plain)
        for verdict in verdicts:
            console.print(verdict_view(verdict, render.Look(plain)))
            console.print()
        if all_:
            console.print(f"{sum(v.passed for v in verdicts)} of {len(verdicts)} exercises passed")
    raise typer.Exit(int(ExitCode.OK if passed else ExitCode.FAILED))


def missing_verdict(exercise_id: str, folder: Path, seed: int) -> Verdict:
    """--all with no file for an exercise: a failed result, so a class report stays complete."""
    from gradtutor.checking.verdict import Check, Verdict

    return Verdict(exercise_id, "error", (Check(
        "file", "error", f"there is no file {folder / (exercise_id + '.py')}",
        "write your solution there, or point --workspace at your folder"),), seed, 0)


def _exercise_to_watch(course: Course, exercise_id: str | None,
                       progress: prog.Progress) -> tuple[Lesson, Exercise]:
    if exercise_id is not None:
        exercise = course.find_exercise(exercise_id)
        lesson = next(lesson for lesson in course.lessons if exercise in lesson.steps)
        return lesson, exercise
    found = prog.exercise_to_practise(course.lessons, progress)
    if found is None:
        names = ", ".join(course.exercises())
        if not names:
            raise GradtutorError("these lessons have no exercises", "`gradtutor list` shows them")
        raise GradtutorError("you have passed every exercise",
                             f"name one to work on it again, for example "
                             f"`gradtutor watch {next(iter(course.exercises()))}` ({names})")
    return found


@app.command()
def watch(
    ctx: typer.Context,
    exercise_id: Annotated[str | None, typer.Argument(
        metavar="[EXERCISE]", show_default=False,
        help="An exercise id; default: the one you are on, else the first not passed yet.")]
    = None,
    workspace: WorkspaceOpt = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    """Work on one exercise: each time you save its file, it is checked and the result shown.

    The file is EXERCISE.py in your workspace; its starter is put there if you have no file
    yet (yours is never written over). e opens it in your editor, c checks now, h shows the
    next hint, s the solution; q or Ctrl-C stops.

    Example: `gradtutor watch read-grad`
    """
    from gradtutor.ui.walkthrough import run

    env = _env(ctx)
    course = load_course(lessons)
    store = _store(env)
    lesson, exercise = _exercise_to_watch(course, exercise_id, store.load())
    plain = env.plain(plain)
    folder = workspace_dir(env, workspace)
    alone = dataclasses.replace(lesson, steps=(exercise,))
    run(alone, 0, env, store, plain, keep_place=False, folder=folder)
    # soft_wrap: a long path stays one piece to copy, whatever the terminal's width
    env.console(plain).print(f"Stopped watching {folder / (exercise.id + '.py')}.",
                             soft_wrap=True)


@app.command()
def validate(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(
        metavar="[PATH]", help="A lesson file or folder; default: the lessons in use.",
        show_default=False)] = None,
    lessons: LessonsOpt = None,
    run_code: Annotated[bool, typer.Option(
        "--run/--no-run", help="Also prove exercises and answer keys by running them.")] = True,
) -> None:
    """Check lesson files and report every problem at once, as `file:line:col: message`.

    With code to run, it also proves each exercise (the starter fails, the solution passes,
    each mutant fails on the check it names) and each answer key that has code. Exit code
    0 when all is well, 2 when there are problems.

    Example: `gradtutor validate lessons/`
    """
    from gradtutor.lessons.course import default_lessons_dir

    env = _env(ctx)
    target = path or lessons or default_lessons_dir()
    files = lesson_files(target)
    if not files:
        raise GradtutorError(f"no lesson files (*.yaml) in {display_path(target)}",
                             "name a lesson file or a folder that holds some")
    found, problems = check_files(files)
    if problems:
        raise LessonProblems(problems)
    steps = sum(len(lesson.steps) for lesson, _ in found)
    proofs = ""
    if run_code:
        from gradtutor.checking.safety import jobs_for, prove

        runs = sum(1 for lesson, path in found for _ in jobs_for(lesson, path))
        if runs:
            env.error(f"running {runs} proofs of exercises and answer keys ...")
            problems = prove(found)
            if problems:
                raise LessonProblems(problems)
            proofs = f"; {runs} proofs passed"
    look = render.Look(env.plain())
    env.console(env.plain()).print(
        f"{look.ok} {len(found)} lesson{'s' if len(found) != 1 else ''} OK "
        f"({steps} steps{proofs})")


def run(argv: list[str], env: Environment) -> int:
    """Run the CLI on `argv`; the single place where errors become messages and exit codes."""
    debug = "--debug" in argv or env.environ.get("GRADTUTOR_DEBUG") == "1"
    try:
        result = app(args=argv, prog_name="gradtutor", standalone_mode=False, obj=env)
        return int(result) if isinstance(result, int) else 0
    except LessonProblems as exc:
        if debug:
            raise
        for problem in exc.problems:
            env.error(str(problem))
        env.error(f"gradtutor: {exc.message} ({exc.hint})")
        return int(exc.exit_code)
    except GradtutorError as exc:
        if debug:
            raise
        hint = f" (hint: {exc.hint})" if exc.hint else ""
        env.error(f"gradtutor: error: {exc.message}{hint}")
        return int(exc.exit_code)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        env.error("gradtutor: interrupted; your progress is saved")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback without --debug
        if _is_usage_error(exc):
            command = _command_of(argv)
            env.error(f"gradtutor: error: {exc.format_message()} "  # type: ignore[attr-defined]
                      f"(hint: see `gradtutor {command + ' ' if command else ''}--help`)")
            return int(ExitCode.USAGE)
        if debug:
            raise
        env.error(f"gradtutor: internal error: {type(exc).__name__}: {exc} "
                  f"(hint: rerun with --debug and report it)")
        return 70


def _is_usage_error(exc: Exception) -> bool:
    # Click's usage errors (vendored inside newer Typer releases): they know how to word
    # themselves and carry an exit code.
    return callable(getattr(exc, "format_message", None)) and hasattr(exc, "exit_code")


def _command_of(argv: list[str]) -> str:
    commands = {"start", "list", "show", "quiz", "progress", "reset", "validate", "check",
                "watch"}
    return next((a for a in argv if a in commands), "")


def main() -> None:
    sys.exit(run(sys.argv[1:], Environment.from_os()))
