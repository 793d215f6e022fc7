"""The `gradtutor` command line: thin commands over the core, and the one error boundary.

`run()` is the only place that turns exceptions into a message and an exit code; `--debug`
(or GRADTUTOR_DEBUG=1) lets the traceback through instead. It is also where the learner's
language is chosen, before Click reads the arguments, so that `--help` and every message
after it are in that language.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import errno
import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Group
from rich.markdown import Markdown
from rich.text import Text

from gradtutor import __version__
from gradtutor import progress as prog
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.env import Environment, Options, OutputLost
from gradtutor.errors import ExitCode, GradtutorError, LessonProblems, Problem
from gradtutor.i18n import (
    ENGLISH_CODE,
    CatalogError,
    Msg,
    choose_language,
    language_code,
    msg,
)
from gradtutor.lessons.course import (
    Course,
    Place,
    Titled,
    check_files,
    course_outline,
    exercise_hint,
    lesson_files,
    load_course,
    load_one,
    place_in,
)
from gradtutor.lessons.load import display_path, rule_problems
from gradtutor.lessons.model import Exercise, Lesson, Parsons
from gradtutor.store import ProgressStore
from gradtutor.translate_cli import app as translate_app
from gradtutor.ui import render
from gradtutor.ui.linebreak import Prose, ProseMarkdown, has_wide

if TYPE_CHECKING:
    from typer.core import TyperGroup

    from gradtutor.asking.answer import Moment
    from gradtutor.checking.lesson_proofs import Job
    from gradtutor.checking.verdict import Verdict
    from gradtutor.grading import Walls
    from gradtutor.i18n import Translator

# Help texts are msg() templates, so that `--lang zh ... --help` can say them in Chinese.
app = typer.Typer(
    name="gradtutor",
    help=msg("Learn how PyTorch's .grad really behaves, one step at a time, in your terminal."),
    epilog=msg("Start here:  gradtutor start"),
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


# The author's translation tools: not among the learner's commands in --help.
app.add_typer(translate_app, name="translate", hidden=True)


def _complete_lesson(incomplete: str) -> list[str]:
    try:
        outline = course_outline()
        ids = ([entry.id for entry in outline.entries] if outline is not None
               else [lesson.id for lesson in load_course(rules=EXERCISE_RULES).lessons])
        return [lesson_id for lesson_id in ids if lesson_id.startswith(incomplete)]
    except GradtutorError:
        return []


def _remember(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """Keeps an option every command takes in `env.options`, under its own name, where the
    commands read it: before the command's name or after it, it means the same."""
    name = param.name or ""
    if name in GLOBAL_OPTIONS and value not in (None, False) and not ctx.resilient_parsing:
        setattr(_env(ctx).options, name, value)
    return value


# The options every command takes (see env.Options), each defined once here: the root takes
# them before a command's name, and each command after it (`_cli` gives a command those it
# has no use for, so that they are accepted everywhere and change nothing there).
EVERY_COMMAND = msg("Options for every command")
GLOBAL_OPTIONS = tuple(option.name for option in dataclasses.fields(Options))
LessonsOpt = Annotated[Path | None, typer.Option(
    "--lessons", metavar="DIR",
    help=msg("Load lessons from this folder instead of the built-in ones."),
    envvar="GRADTUTOR_LESSONS", file_okay=False, callback=_remember,
    rich_help_panel=EVERY_COMMAND)]
PlainOpt = Annotated[bool, typer.Option(
    "--plain", help=msg("No colour and no box drawing (also: NO_COLOR=1 or TERM=dumb, and "
                        "whenever the output is not a terminal)."),
    callback=_remember, rich_help_panel=EVERY_COMMAND)]
DebugOpt = Annotated[bool, typer.Option(
    "--debug", help=msg("Show full tracebacks on errors."), callback=_remember,
    rich_help_panel=EVERY_COMMAND)]
LessonArg = Annotated[str, typer.Argument(
    metavar="LESSON", help=msg("A lesson id, as `gradtutor list` shows it."),
    autocompletion=_complete_lesson)]
WorkspaceOpt = Annotated[Path | None, typer.Option(
    "--workspace", metavar="DIR", envvar="GRADTUTOR_WORKSPACE", file_okay=False,
    help=msg("The folder of exercise files, one EXERCISE.py each; default: in your data "
             "folder."), callback=_remember, rich_help_panel=EVERY_COMMAND)]
# Typer's own help texts, for the catalog: `_cli` says them in the learner's language too.
TYPER_HELP = (msg("Install completion for the current shell."),
              msg("Show completion for the current shell, to copy it or customize the "
                  "installation."))
LANG_HELP = msg("The language to speak: en or zh (default: GRADTUTOR_LANG, else your locale).")


def _env(ctx: typer.Context) -> Environment:
    env = ctx.find_root().obj
    if not isinstance(env, Environment):
        env = Environment.from_os()
        ctx.find_root().obj = env
    return env


def _warn(env: Environment) -> Callable[[str], None]:
    return lambda line: env.error(env.tr(line))


def _store(env: Environment) -> ProgressStore:
    home = env.home
    if home.exists() and not home.is_dir():  # GRADTUTOR_HOME=/dev/null, or a file
        raise GradtutorError(msg("your data folder {home} is not a folder", home=home),
                             msg("set GRADTUTOR_HOME to a folder (it is made if missing)"))
    return ProgressStore(home, _warn(env))


def _look(env: Environment, plain: bool) -> render.Look:
    return render.Look(plain, env.tr)


def _lessons_dir(env: Environment, folder: Path | None) -> Path | None:
    """The course folder: the command's --lessons; without it, one given before the command
    (None: the built-in course)."""
    return folder if folder is not None else env.options.lessons


def _course(env: Environment, folder: Path | None) -> Course:
    """The course in the learner's language, its notes (translations it could not use) shown.
    `folder` is the command's --lessons (`_lessons_dir`)."""
    from gradtutor.ui.lesson_text import neutralised

    course = load_course(_lessons_dir(env, folder), env.lang, rules=EXERCISE_RULES)
    # lesson text is shown on a terminal: no escape sequence in it may act there
    course = dataclasses.replace(course, lessons=neutralised(course.lessons))
    for note in course.notes:
        env.error(env.tr(note))
    return course


class _OneAtATime:
    """The course for a command that shows one lesson at a time (start, show): the lessons'
    ids and titles in course order from its outline, and each lesson loaded and validated
    only when it is asked for, so that a broken lesson elsewhere is reported when it is
    reached. Where the outline cannot be read, the whole course is loaded (and says what is
    wrong)."""

    def __init__(self, env: Environment, folder: Path | None) -> None:
        self.env = env
        self.outline = course_outline(_lessons_dir(env, folder))
        self.course = _course(env, folder) if self.outline is None else None
        self._loaded: dict[str, Lesson] = {}

    def order(self) -> tuple[Titled, ...]:
        if self.course is not None:
            return self.course.lessons
        assert self.outline is not None
        return self.outline.entries

    def lesson(self, lesson_id: str) -> Lesson:
        """The lesson, loaded now if it was not yet; an error for an id the course lacks,
        and its problems for a broken lesson."""
        if self.course is not None:
            return self.course.find(lesson_id)
        assert self.outline is not None
        if lesson_id not in self._loaded:
            from gradtutor.ui.lesson_text import neutralised

            lesson, note = load_one(self.outline.find(lesson_id), self.env.lang,
                                    rules=EXERCISE_RULES)
            if note is not None:
                self.env.error(self.env.tr(note))
            self._loaded[lesson_id] = neutralised(lesson)  # shown on a terminal
        return self._loaded[lesson_id]

    def place(self, lesson_id: str) -> Place:
        """Where the lesson stands, its neighbours titled in the learner's language."""
        place = place_in(self.order(), lesson_id)
        return dataclasses.replace(place, before=self._named(place.before),
                                   after=self._named(place.after))

    def _named(self, neighbour: Titled | None) -> Titled | None:
        if neighbour is None or self.course is not None or neighbour.id in self._loaded:
            return neighbour if neighbour is None else self._loaded.get(neighbour.id, neighbour)
        if self.env.lang != ENGLISH_CODE:  # its title as translated: the lesson knows it
            with contextlib.suppress(LessonProblems):
                return self.lesson(neighbour.id)
        from gradtutor.ui.lesson_text import neutralised

        return neutralised(neighbour)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gradtutor {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help=msg("Show the version and exit."))] = False,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
    workspace: WorkspaceOpt = None,
    debug: DebugOpt = False,
) -> None:
    # The options are kept by `_remember` as they are read; here only the bare `gradtutor`.
    if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
        _introduce(ctx, _env(ctx))


# The commands a newcomer needs first, as bare `gradtutor` lists them; --help has them all.
MAIN_COMMANDS = ("start", "list", "watch", "check", "progress")


def _introduce(ctx: typer.Context, env: Environment) -> None:
    """Bare `gradtutor`: what it is, where to start, the main commands, where the rest is.
    Every text is the one --help shows, already in the learner's language (see `_cli`)."""
    from rich.padding import Padding
    from rich.table import Table

    group = ctx.command
    commands = getattr(group, "commands", {})
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column()
    for name in MAIN_COMMANDS:
        table.add_row(name, Prose((commands[name].help or "").split("\n\n")[0].strip()))
    more = env.tr(msg("`gradtutor --help` lists every command and option."))
    doctor = env.tr(msg("Then try it on your own training script: `gradtutor doctor "
                        "train.py` finds the gradient problems it has."))
    env.console(env.plain()).print(Group(
        Prose(group.help or ""), Text(""), Prose(group.epilog or "", style="bold"), Text(""),
        Padding(table, (0, 0, 0, 2)), Text(""), Prose(doctor), Prose(more)))


def _bold(text: str, part: str) -> Text:
    """`text` with its first `part` (a lesson title) in bold."""
    at = text.find(part)
    if at < 0 or not part:
        return Text(text)
    return Text.assemble(text[:at], (part, "bold"), text[at + len(part):])


def _ask_finished(env: Environment, lesson: Lesson, saved_at: int, plain: bool,
                  after: Titled | None) -> str:
    """A finished lesson: go on at the saved step `saved_at` (0-based; offered when it is not
    the first), go on to the lesson `after` it (when there is one), review it from the first
    step, start over, or quit. Returns 'c', 'n', 'r', 's' or 'q'."""
    console = env.console(plain)
    console.print(_bold(env.tr(msg("You have finished {title}.", title=lesson.title)),
                        lesson.title))
    offers = {"c": msg("  c  continue at step {step} of {total}", step=saved_at + 1,
                       total=len(lesson.steps)) if saved_at > 0 else None,
              "n": msg("  n  the next lesson, “{title}”", title=after.title)
              if after is not None else None,
              "r": msg("  r  review it from the first step"),
              "s": msg("  s  start over (clears your place)"), "q": msg("  q  quit")}
    choices = tuple(key for key, line in offers.items() if line is not None)
    lines = [line for line in offers.values() if line is not None]
    prompt = msg("Your choice [{keys}]: ", keys="/".join(choices))
    for line in lines:
        console.print(env.tr(line))
    while True:
        console.print(env.tr(prompt), end="", markup=False)
        console.file.flush()
        if env.interactive:
            from gradtutor.ui.keys import key_reader

            key = key_reader(env.stdin)()
            console.print(key if len(key) == 1 else "")
        else:
            from gradtutor.ui.terminal import read_line

            key = read_line(env.stdin).strip().lower()[:1] or "q"
        if key in choices:
            return key
        if key in ("ctrl-c", "ctrl-d", "eof", "esc"):
            return "q"


@app.command(help=msg(
    "Open the walkthrough, where you left off.\n\n"
    "One step per screen: → or n for next, ← or b for back, ? for help, q to quit (your "
    "place is saved). Without a terminal it reads one command per line. An exercise puts a "
    "starter file in your workspace; edit it in any editor (e opens yours) and each save is "
    "checked on the spot.\n\n"
    "Example: `gradtutor start grad`"))
def start(
    ctx: typer.Context,
    lesson_id: Annotated[str | None, typer.Argument(
        metavar="[LESSON]", help=msg("A lesson id; default: the next unfinished lesson."),
        autocompletion=_complete_lesson, show_default=False)] = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
    workspace: WorkspaceOpt = None,
) -> None:
    from gradtutor.ui.walkthrough import run

    env = _env(ctx)
    course = _OneAtATime(env, lessons)
    store = _store(env)
    saved = store.load()
    lesson = course.lesson(lesson_id or prog.next_lesson(course.order(), saved).id)
    plain = env.plain(plain)
    choice = ""
    while True:
        state = saved.of(lesson.id)
        start_at = prog.resume_index(lesson, state)
        finished = state.finished
        if not finished:
            break
        after = course.place(lesson.id).after
        choice = _ask_finished(env, lesson, start_at, plain, after)
        if choice == "q":
            return
        if choice != "n" or after is None:
            break
        lesson = course.lesson(after.id)  # that one may be finished too: then it asks again
    if finished and choice != "c":  # review or start over: from the first step
        start_at = 0
    if finished and choice == "s":
        store.update(lambda p: prog.restart(p, lesson.id))
        finished = False
    where = place_in(course.order(), lesson.id)
    final = run(lesson, start_at, env, store, plain, folder=workspace_dir(env, workspace),
                course=_lessons_dir(env, lessons),
                place=(where.position, where.total))
    console = env.console(plain)
    # Prose (from render.inline) in a Group wraps Chinese between characters and never breaks
    # a `command`; printed bare, Rich would join it back into a plain Text.
    if final.outcome == "finished":
        said = env.tr(_finished_words(course.place(lesson.id), lesson, _look(env, plain).ok))
        style = "bold green"
    elif finished and final.index > 0:  # next time it asks first: say which choice goes on
        said = env.tr(msg("Your place is saved at step {step} of {total}. Run "
                          "`gradtutor start {lesson}` and choose c to go on.",
                          step=final.index + 1, total=len(lesson.steps), lesson=lesson.id))
        style = ""
    else:
        said = env.tr(msg("Your place is saved at step {step} of {total}. Run "
                          "`gradtutor start {lesson}` to go on.", step=final.index + 1,
                          total=len(lesson.steps), lesson=lesson.id))
        style = ""
    # the command to type shows as code, as in the lesson's text (as written when plain)
    console.print(Group(render.inline(said, _look(env, plain), style)))


def _finished_words(place: Place, lesson: Lesson, ok: str) -> Msg:
    """What is said when a lesson is finished: where it stands in the course (`place`) and
    what comes next."""
    if place.after is not None:
        return msg("{ok} You finished “{title}”, lesson {position} of {total}. Next: "
                   "“{next}”, `gradtutor start {lesson}`.", ok=ok, title=lesson.title,
                   position=place.position, total=place.total, next=place.after.title,
                   lesson=place.after.id)
    if place.total > 1:
        return msg("{ok} You finished “{title}”, the last lesson of the course. `gradtutor "
                   "progress` shows what you solved in each.", ok=ok, title=lesson.title)
    return msg("{ok} You finished “{title}”. `gradtutor list` shows the course.", ok=ok,
               title=lesson.title)


@app.command("list", help=msg("List the lessons with your progress in each.\n\n"
                               "Example: `gradtutor list`"))
def list_(ctx: typer.Context, lessons: LessonsOpt = None, plain: PlainOpt = False) -> None:
    env = _env(ctx)
    course = _course(env, lessons)
    saved = _store(env).load()
    plain = env.plain(plain)
    look = _look(env, plain)
    console = env.console(plain)
    console.print(render.lessons_table(course.lessons, dict(saved.lessons), look,
                                       course.estimate))
    console.print(render.minutes_note(look))
    if not all(saved.of(lesson.id).finished for lesson in course.lessons):
        upcoming = prog.next_lesson(course.lessons, saved)
        console.print(Group(render.inline(env.tr(msg(
            "Next: lesson {position}, “{title}”: `gradtutor start`",
            position=course.place(upcoming.id).position, title=upcoming.title)), look)))


def _shown(value: str, room: int = 24) -> str:
    """A value the user typed, short enough to echo in one line."""
    return value if len(value) <= room else value[:room] + "…"


def _step_index(lesson: Lesson, step: str) -> int:
    if not step.strip():
        raise GradtutorError(msg("--step needs a step number or id, not an empty value"),
                             msg("try `gradtutor show {lesson} --step 1`", lesson=lesson.id))
    # ASCII digits only: str.isdigit() takes '²' (which int() refuses) and int() takes '١'.
    if re.fullmatch(r"[+-]?[0-9]+", step):
        digits = step.lstrip("+-").lstrip("0") or "0"
        number = int(step) if len(digits) <= 9 else None  # no 5000-digit int() either
        if number is not None and 1 <= number <= len(lesson.steps):
            return number - 1
        raise GradtutorError(
            msg("lesson '{lesson}' has steps 1 to {last}, not {number}", lesson=lesson.id,
                last=len(lesson.steps), number=_shown(step)),
            msg("try `gradtutor show {lesson} --step 1`", lesson=lesson.id))
    index = lesson.index_of(step)
    if index is None:
        import difflib

        close = difflib.get_close_matches(step, [s.id for s in lesson.steps], n=1)
        hint = (msg("did you mean '{close}'?", close=close[0]) if close
                else msg("use a step number, starting at 1"))
        raise GradtutorError(msg("lesson '{lesson}' has no step '{step}'", lesson=lesson.id,
                                 step=_shown(step)),
                             msg("{hint} (`gradtutor show {lesson}` lists them)", hint=hint,
                                 lesson=lesson.id))
    return index


@app.command(help=msg(
    "Print a lesson, or one step of it, without interaction: for reading and piping.\n\n"
    "Quiz answers are not shown; take the quiz with `gradtutor quiz`.\n\n"
    "Example: `gradtutor show grad --step 3 --plain`"))
def show(
    ctx: typer.Context,
    lesson_id: LessonArg,
    step: Annotated[str | None, typer.Option(
        "--step", "-s", metavar="N|ID",
        help=msg("Only this step: a number from 1, or a step id."))] = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    from gradtutor.ui.step_screens import step_for_reading

    env = _env(ctx)
    course = _OneAtATime(env, lessons)
    lesson = course.lesson(lesson_id)
    indexes = [_step_index(lesson, step)] if step is not None else range(len(lesson.steps))
    plain = env.plain(plain)
    console = env.console(plain)
    place = place_in(course.order(), lesson.id)
    if step is None and place.total > 1:  # the whole lesson: where it stands in the course
        place = course.place(lesson.id)
        console.print(env.tr(msg("Lesson {position} of {total}; before it: {before}; after "
                                 "it: {after}.", position=place.position, total=place.total,
                                 before=_titled(place.before, env),
                                 after=_titled(place.after, env))), markup=False)
        console.print()
    for index in indexes:
        console.print(step_for_reading(lesson, index, console.width, _look(env, plain),
                                       (place.position, place.total)))


def _titled(lesson: Titled | None, env: Environment) -> str:
    """A neighbouring lesson as `id “title”`, or a word for none."""
    return f"{lesson.id} “{lesson.title}”" if lesson is not None else env.tr(msg("none"))


@app.command(help=msg(
    "Take a lesson's quick check on its own; your score is saved.\n\n"
    "If you quit partway, your answers so far are kept and the quiz goes on from there next "
    "time. Exit code 0 when you pass, 1 when you do not (or leave it unfinished).\n\n"
    "Example: `gradtutor quiz grad`"))
def quiz(ctx: typer.Context, lesson_id: LessonArg, lessons: LessonsOpt = None,
         plain: PlainOpt = False) -> None:
    from gradtutor.ui.walkthrough import run
    from gradtutor.walk.machine import reached_the_end
    from gradtutor.walk.quiz import QuizView

    env = _env(ctx)
    lesson = _course(env, lessons).find(lesson_id)
    quizzes = lesson.quizzes
    if not quizzes:
        raise GradtutorError(msg("lesson '{lesson}' has no quiz", lesson=lesson.id),
                             msg("`gradtutor list` shows the lessons"))
    only_quiz = dataclasses.replace(lesson, steps=tuple(quizzes))
    plain = env.plain(plain)
    store = _store(env)
    final = run(only_quiz, 0, env, store, plain, keep_place=False,
                course=_lessons_dir(env, lessons))
    if not reached_the_end(only_quiz, final):
        kept = isinstance(final.view, QuizView) and final.view.answers
        env.console(plain).print(env.tr(
            msg("Quiz left unfinished: no score was saved; your answers so far are kept for "
                "next time.") if kept else msg("Quiz left unfinished; no score was saved.")))
        raise typer.Exit(ExitCode.FAILED)
    # Every quiz was scored on the way to the end, so its latest score is this run's.
    scores = store.load().of(lesson.id).last_quiz
    if not all(q.id in scores and prog.quiz_passed(q, scores[q.id].score, scores[q.id].total)
               for q in quizzes):
        raise typer.Exit(ExitCode.FAILED)


@app.command("progress", help=msg(
    "Show your progress: where you are in each lesson, the exercises you have solved and "
    "your best quiz scores.\n\n"
    "Example: `gradtutor progress`"))
def progress_(ctx: typer.Context, lessons: LessonsOpt = None, plain: PlainOpt = False) -> None:
    env = _env(ctx)
    course = _course(env, lessons)
    store = _store(env)
    saved = store.load()
    plain = env.plain(plain)
    look = _look(env, plain)
    console = env.console(plain)
    for lesson in course.lessons:
        console.print(render.lesson_progress(lesson, saved.of(lesson.id), look,
                                             course.estimate(lesson)))
    console.print(Text(env.tr(msg("Saved in {path}", path=store.path)), style="grey50"))


@app.command(help=msg("Forget your progress in one lesson, or in all of them.\n\n"
                       "Example: `gradtutor reset grad --yes`"))
def reset(
    ctx: typer.Context,
    lesson_id: Annotated[str | None, typer.Argument(
        metavar="[LESSON]", help=msg("Only this lesson; default: all progress."),
        autocompletion=_complete_lesson, show_default=False)] = None,
    yes: Annotated[bool, typer.Option(
        "--yes", "-y", help=msg("Do not ask for confirmation."))] = False,
    lessons: LessonsOpt = None,
) -> None:
    env = _env(ctx)
    if lesson_id is not None:
        _course(env, lessons).find(lesson_id)  # a typo must not silently reset nothing
    what = (msg("your progress in '{lesson}'", lesson=lesson_id) if lesson_id
            else msg("all your progress"))
    if not yes:
        if not env.stdin_tty:
            raise GradtutorError(msg("refusing to reset {what} without confirmation", what=what),
                                 msg("add --yes to confirm"))
        console = env.console(env.plain())
        console.print(env.tr(msg("Reset {what}? [y/N]: ", what=what)), end="", markup=False)
        console.file.flush()
        from gradtutor.ui.terminal import read_line

        if read_line(env.stdin).strip().lower() not in ("y", "yes", "是"):
            console.print(env.tr(msg("Nothing was reset.")))
            return
    _store(env).update(lambda p: prog.reset(p, lesson_id))
    env.console(env.plain()).print(env.tr(msg("Reset {what}.", what=what)))


def workspace_dir(env: Environment, chosen: Path | None) -> Path:
    """The command's --workspace; without it, one given before the command; else the default."""
    if chosen is not None:
        return chosen
    return env.options.workspace or env.home / "workspace"


TIMEOUT_RANGE = (0.1, 600.0)  # seconds: long enough for any exercise, short of forever


def _seconds(value: float | None) -> float | None:
    """--timeout as given, if it is a finite number of seconds in TIMEOUT_RANGE."""
    low, high = TIMEOUT_RANGE
    if value is None or low <= value <= high:  # NaN and infinities fail this too
        return value
    raise GradtutorError(
        msg("--timeout must be from {low:g} to {high:g} seconds, not {value}", low=low,
            high=high, value=value),
        msg("for example `--timeout 30`; leave it out for the exercise's own limit"))


# The one --timeout of every command that runs learner code, checked by one validator.
TimeoutOpt = Annotated[float | None, typer.Option(
    "--timeout", metavar="SECONDS", callback=_seconds,
    help=msg("Wall-clock limit for the code checked, per exercise, from 0.1 to 600 seconds; "
             "default: the exercise's own."))]


def _check_one(exercise_id: str, path: Path, course: Course, seed: int,
               timeout: float | None, environ: Mapping[str, str]) -> Verdict:
    from gradtutor.checking.check import check_order_file
    from gradtutor.lessons.parsons import parsons_steps
    from gradtutor.runtime.cold import ColdEngine
    from gradtutor.runtime.run import run_check

    orderings = parsons_steps(course.lessons)
    if exercise_id in orderings:  # an order of lines, graded as it is: nothing runs
        return check_order_file(orderings[exercise_id], path)
    exercise = course.find_exercise(exercise_id)
    return run_check(exercise, path, seed=seed, timeout=timeout,
                     engine=ColdEngine(environ=environ))


def _check_all(env: Environment, course: Course, folder: Path, seed: int,
               timeout: float | None, exercises: list[Exercise],
               status: bool = False) -> list[Verdict]:
    """The workspace file of each of `exercises`: `grade` of one student, the workspace, on
    one warm worker: torch is imported once for them all, not once per exercise
    (GRADTUTOR_WARM=0: each cold, as before). As `grade`'s workers, it does not warm up the
    next check's child: the checks come back to back, and each would wait for it (8 checks:
    490-680 ms with it, 308-375 ms without). With `status`, a status line names the check
    running and counts its seconds."""
    from gradtutor.runtime.pool import OwnFolder, grade_class
    from gradtutor.runtime.warm import warm_enabled
    from gradtutor.submissions import Submission
    from gradtutor.ui.status import counting

    numbers = {e.id: number for number, e in enumerate(exercises, start=1)}

    def during(_student: Submission, exercise: Exercise,
               loading: bool) -> contextlib.AbstractContextManager[None]:
        return counting(env, status, functools.partial(
            _checking_line, exercise.id, numbers[exercise.id], len(exercises), loading))

    own = OwnFolder(msg("write your solution there, or point --workspace at your folder"),
                    warm=warm_enabled(env.environ))
    [result] = grade_class([Submission(folder.name, folder)], exercises, seed=seed, jobs=1,
                           timeout=timeout, during_check=during, environ=env.environ, own=own)
    return list(result.verdicts)


def _checking_line(exercise_id: str, number: int, total: int, loading: bool,
                   seconds: int) -> str:
    """`check --all`'s status line: which check runs, and whether it loads PyTorch first."""
    if loading:
        return msg("checking {exercise} ({number} of {total}): loading PyTorch first, a few "
                   "seconds ({seconds} s so far)", exercise=exercise_id, number=number,
                   total=total, seconds=seconds)
    return msg("checking {exercise} ({number} of {total}): {seconds} s so far",
               exercise=exercise_id, number=number, total=total, seconds=seconds)


@app.command(help=msg(
    "Run your code for an exercise and say what it did right and wrong.\n\n"
    "Exit code 0 when it passes, 1 when it does not (wrong answer, crash, timeout, a file that "
    "is not valid Python), 2 for a usage error. `--json` prints the result as one JSON object "
    "(docs/check-format.md); `--all` checks every exercise, for autograding, and `--lesson "
    "ID` every exercise of one lesson.\n\n"
    "A line-ordering step takes a text file with its lines in your order, one per line: "
    "`gradtutor check order-the-loop my_order.txt`.\n\n"
    "Example: `gradtutor check read-grad my_read_grad.py --seed 7`"))
def check(
    ctx: typer.Context,
    exercise_id: Annotated[str | None, typer.Argument(
        metavar="[EXERCISE]", help=msg("An exercise id, such as read-grad, or a line-ordering "
                                       "step, such as order-the-loop."),
        show_default=False)] = None,
    file: Annotated[Path | None, typer.Argument(
        metavar="[FILE]", help=msg("Your Python file (for a line-ordering step: a text file of "
                                   "its lines in your order); default: the workspace file."),
        show_default=False, dir_okay=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help=msg("Check every exercise."))] = False,
    lesson_ids: Annotated[list[str] | None, typer.Option(
        "--lesson", metavar="ID", help=msg("Check every exercise of this lesson "
                                           "(repeatable)."),
        autocompletion=_complete_lesson, show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help=msg("Print one JSON object."))] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", help=msg("The whole verdict: every case of each check's evidence, "
                                    "and its hint (without it, the verdict is cut to one "
                                    "screen)."))] = False,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help=msg("Reproduce a run: the inputs come from this seed."))] = None,
    timeout: TimeoutOpt = None,
    workspace: WorkspaceOpt = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    import json
    import secrets

    from gradtutor.lessons.parsons import parsons_steps

    env = _env(ctx)
    course = _course(env, lessons)
    orderings = parsons_steps(course.lessons)
    folder = workspace_dir(env, workspace)
    seed = secrets.randbelow(2**31) if seed is None else seed
    all_ = all_ or bool(lesson_ids)
    if all_:
        if exercise_id is not None or file is not None:
            raise GradtutorError(msg("--all and --lesson check workspace files"),
                                 msg("leave out EXERCISE and FILE, or drop --all and --lesson"))
        verdicts = _check_all(env, course, folder, seed, timeout,
                              _chosen_exercises(course, lesson_ids or [], []),
                              status=env.status_line and not as_json)
    else:
        if exercise_id is None:
            raise GradtutorError(msg("name the exercise to check"),
                                 msg("for example `gradtutor check read-grad FILE`; "
                                     "exercises: {ids}", ids=_listed(course.exercises())))
        if exercise_id not in orderings and exercise_id not in course.exercises():
            raise GradtutorError(msg("no exercise '{exercise}'", exercise=exercise_id),
                                 exercise_hint(exercise_id, [*course.exercises(), *orderings]))
        from gradtutor.workspace import answer_path, exercise_path

        ordering = exercise_id in orderings
        path = file if file is not None else (
            answer_path(folder, exercise_id) if ordering else exercise_path(folder, exercise_id))
        if not path.is_file():
            if ordering:  # no order given in the tutor yet: say what goes in it
                missing = msg("no answer file for {step} yet: {path}", step=exercise_id,
                              path=path)
                hint = _order_file_hint(orderings[exercise_id])
            else:
                missing = msg("no such file: {path} (your workspace file for it)", path=path)
                hint = msg("pass the path of your Python file as FILE")
            if path.exists():  # a device, a FIFO, a socket: nothing to read a program from
                missing = msg("{path} is not a regular file", path=path)
            elif file is not None:
                missing = msg("no such file: {path}", path=path)
            raise GradtutorError(missing, hint)
        from gradtutor.ui.status import counting

        # on a terminal, the wait is told while it lasts: a cold check loads PyTorch first
        with counting(env, env.status_line and not as_json and not ordering,
                      lambda seconds: msg("checking {exercise}: loading PyTorch first, a few "
                                          "seconds ({seconds} s so far)",
                                          exercise=exercise_id, seconds=seconds)):
            verdicts = [_check_one(exercise_id, path, course, seed, timeout, env.environ)]
    _sandbox_notice(env, verdicts)
    passed = all(v.passed for v in verdicts)
    if as_json:
        from gradtutor.checking.verdict import to_json
        from gradtutor.grading import student_json

        payload = ({**to_json(verdicts[0], env.tr), "lang": env.lang} if not all_ else
                   student_json(verdicts, env.tr, seed=seed, lang=env.lang))
        env.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        from gradtutor.ui.check_view import verdict_view

        plain = env.plain(plain)
        console = env.console(plain)
        more = msg("`--verbose` shows the whole verdict: every case, and each check's hint.")
        for verdict in verdicts:
            console.print(verdict_view(verdict, _look(env, plain), whole=verbose, more=more))
            console.print()
        if all_:
            console.print(env.tr(msg("{passed} of {total} exercises passed",
                                        passed=sum(v.passed for v in verdicts),
                                        total=len(verdicts))))
    raise typer.Exit(int(ExitCode.OK if passed else ExitCode.FAILED))


def _sandbox_notice(env: Environment, verdicts: list[Verdict]) -> None:
    """Once per command, on stderr: learner code ran unconfined here (docs/isolation.md)."""
    from gradtutor.runtime.sandbox import landlock_abi, unavailable_notice

    if any(v.ran for v in verdicts):
        notice = unavailable_notice(landlock_abi(), env.environ)
        if notice is not None:
            env.error(env.tr(notice))


def _listed(items: Iterable[str]) -> str:
    """Names as one phrase, with the learner's language's commas (`a, b` or `a、b`)."""
    from gradtutor.checking.feedback import listed

    return listed(list(items))


def _order_file_hint(step: Parsons) -> str:
    """What an answer file to a line-ordering step holds; its lines in the order the step
    starts from, so the hint gives nothing away."""
    from gradtutor.checking.feedback import listed
    from gradtutor.lessons.parsons import initial_order

    lines = [f"`{step.line(line_id).code.strip()}`" for line_id in initial_order(step)]
    return msg("write its {count} lines there in your order, one per line: {lines}",
               count=len(lines), lines=listed(lines))


@app.command(help=msg(
    "Grade a class: check every student's every exercise, several at once.\n\n"
    "SUBMISSIONS is a folder holding a folder or a .zip per student (or a Canvas or Moodle "
    "bulk download), or the students' folders themselves; each holds the student's files "
    "named as in a workspace (`read-grad.py`, ...). Each student's files are copied to a "
    "private folder and checked there on warm workers, `--jobs` at a time. One seed for the "
    "whole run, printed: `--seed` grades the same inputs again. A summary table is shown; "
    "`--json`, `--csv` and `--junit` write the results for scripts, spreadsheets and CI. "
    "Exit code 0 when grading worked, whatever the scores; 70 when the grader itself could "
    "not check.\n\n"
    "Example: `gradtutor grade submissions/ --jobs 4 --csv grades.csv --junit grades.xml`"))
def grade(
    ctx: typer.Context,
    submissions: Annotated[list[Path], typer.Argument(
        metavar="SUBMISSIONS...", help=msg("A folder of student folders or zips, or "
                                           "students' folders."), show_default=False)],
    lesson_ids: Annotated[list[str] | None, typer.Option(
        "--lesson", metavar="ID", help=msg("Only this lesson's exercises (repeatable)."),
        autocompletion=_complete_lesson, show_default=False)] = None,
    exercise_ids: Annotated[list[str] | None, typer.Option(
        "--exercise", metavar="ID", help=msg("Only this exercise (repeatable)."),
        show_default=False)] = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, max=256, metavar="N",
        help=msg("Checks run at once; default: the number of cores."),
        show_default=False)] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, help=msg("Reproduce a run: the inputs come from this seed."))] = None,
    timeout: TimeoutOpt = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help=msg("Print one JSON object: every student's results."))] = False,
    csv_file: Annotated[str | None, typer.Option(
        "--csv", metavar="FILE|-", help=msg("Write a CSV table: a row per student, a column "
                                            "per exercise (- for standard output)."),
        show_default=False)] = None,
    junit_file: Annotated[Path | None, typer.Option(
        "--junit", metavar="FILE", dir_okay=False,
        help=msg("Write JUnit XML: a test suite per student, a test case per exercise."),
        show_default=False)] = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    import os
    import secrets
    import threading

    from gradtutor import grading
    from gradtutor.runtime.pool import grade_class
    from gradtutor.submissions import Submission, find_submissions
    from gradtutor.ui import grade_view

    env = _env(ctx)
    course = _course(env, lessons)
    # each report asked for: its file, or None for standard output (`grading.REPORTS`)
    asked = {name: where for name, wanted, where in (
        ("csv", csv_file is not None, None if csv_file in (None, "-") else Path(csv_file)),
        ("junit", junit_file is not None, junit_file),
        ("json", as_json, None)) if wanted}
    reports = grading.report_destinations(asked)
    exercises = _chosen_exercises(course, lesson_ids or [], exercise_ids or [])
    ids = [e.id for e in exercises]
    students = find_submissions(submissions, course.exercises())
    for report in reports.values():
        if report is not None:
            _writable(report)
    seed = secrets.randbelow(2**31) if seed is None else seed
    jobs = jobs or os.cpu_count() or 1
    _walls_warning(env)
    env.error(env.tr(msg("Grading: students {students}, exercises {exercises}, checks at a "
                         "time {jobs}; seed {seed} (--seed {seed} grades the same inputs "
                         "again).", students=len(students), exercises=len(ids), jobs=jobs,
                         seed=seed)))
    lock = threading.Lock()
    done: dict[str, int] = {}
    bar = _grading_bar(env, len(students) * len(ids))

    def on_check(student: Submission, verdict: Verdict) -> None:
        with lock:
            done[student.name] = done.get(student.name, 0) + 1
            if bar is not None:
                bar.advance(student.name)
            elif done[student.name] == len(ids):
                env.error(env.tr(msg("graded {student}", student=student.name)))

    try:
        if bar is not None:
            bar.start()
        results = grade_class(students, exercises, seed=seed, jobs=jobs, timeout=timeout,
                              on_check=on_check, environ=env.environ,
                              course_folder=_lessons_dir(env, lessons))
    except KeyboardInterrupt:
        raise grading.GradingInterrupted(
            msg("grading was interrupted; no report was written"),
            msg("grade again; --seed {seed} gives the same inputs", seed=seed)) from None
    finally:
        if bar is not None:
            bar.stop()
    for name, path in reports.items():
        text = grading.REPORTS[name].render(results, ids, seed, env.tr)
        if path is None:
            env.stdout.write(text)
        else:
            _write_report(path, text)
    if None in reports.values():  # standard output holds a report: the summary goes aside
        env.error(grading.class_line(results, env.tr))
    else:
        plain = env.plain(plain)
        console = env.console(plain)
        for part in grade_view.summary(results, ids, _look(env, plain), console.width):
            console.print(part)
        console.print(grading.class_line(results, env.tr))


def missing_walls_here(environ: Mapping[str, str]) -> Walls | None:
    """The walls students' code would miss on this system, probed (None: none is missing)."""
    from gradtutor.grading import missing_walls
    from gradtutor.runtime.netns import network_walled
    from gradtutor.runtime.resources import controller_parent
    from gradtutor.runtime.sandbox import landlock_abi, sandbox_enabled
    from gradtutor.runtime.seccomp import filter_machine

    return missing_walls(sys.platform, landlock_abi(), sandbox_enabled(environ),
                         netns=network_walled(), filtered=filter_machine() is not None,
                         memory_cgroup=controller_parent("memory") is not None)


def _walls_warning(env: Environment) -> None:
    """Before a class is graded, one warning naming what students' code is not walled from
    on this system, why, and what a teacher can do."""
    walls = missing_walls_here(env.environ)
    if walls is None:
        return  # walled from everything this grader knows of
    env.error(env.tr(msg("Warning: a student's code can reach {reachable} ({why}); {hint}.",
                         reachable=_listed(env.tr(w) for w in walls.reachable),
                         why=env.tr(walls.why), hint=env.tr(walls.hint))))


def _chosen_exercises(course: Course, lesson_ids: list[str],
                      exercise_ids: list[str]) -> list[Exercise]:
    """The exercises `grade` or `check --all` checks, in course order: those of the lessons
    and the exercises named, or every exercise of the course when none is."""
    wanted = {eid: course.find_exercise(eid) for eid in exercise_ids}
    for lesson_id in lesson_ids:
        lesson = course.find(lesson_id)
        wanted.update((s.id, s) for s in lesson.steps if isinstance(s, Exercise))
    chosen = [e for eid, e in course.exercises().items()
              if not (lesson_ids or exercise_ids) or eid in wanted]
    if not chosen:
        raise GradtutorError(msg("nothing to check: no exercises in {lessons}",
                                 lessons=", ".join(lesson_ids) or "the course"),
                             msg("`gradtutor list` shows the lessons"))
    return chosen


def _writable(path: Path) -> None:
    """A report's path that grading could write at its end, checked before it starts: its
    folder exists and takes files, and it is not a folder itself."""
    folder = path.parent if str(path.parent) else Path(".")
    problem = (msg("it is a folder") if path.is_dir()
               else msg("there is no folder {folder}", folder=folder) if not folder.is_dir()
               else msg("it cannot be written") if not os.access(
                   path if path.exists() else folder, os.W_OK)
               else None)
    if problem is not None:
        raise GradtutorError(msg("cannot write a report to {path}: {problem}", path=path,
                                 problem=problem),
                             msg("choose a file in a folder you can write to; nothing was "
                                 "graded yet"))


def _write_report(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GradtutorError(msg("cannot write {path} ({error})", path=path,
                                 error=exc.strerror or exc),
                             msg("choose a file you can write to")) from None


class _GradingBar:
    """A Rich progress bar on standard error, advanced from the grading threads."""

    def __init__(self, env: Environment, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=env.stderr, force_terminal=True, emoji=False, markup=False,
                          highlight=False, width=env.columns())
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=console, transient=True)
        self._task = self._progress.add_task(env.tr(msg("grading")), total=total)
        self._tr = env.tr

    def start(self) -> None:
        self._progress.start()

    def stop(self) -> None:
        self._progress.stop()

    def advance(self, student: str) -> None:
        self._progress.update(self._task, advance=1,
                              description=self._tr(msg("grading {student}", student=student)))


def _grading_bar(env: Environment, total: int) -> _GradingBar | None:
    """The progress bar, on a terminal; None elsewhere (a line per student instead)."""
    if not env.stderr_tty or env.environ.get("TERM") == "dumb":
        return None
    return _GradingBar(env, total)


def _exercise_to_watch(course: Course, exercise_id: str | None,
                       progress: prog.Progress) -> tuple[Lesson, Exercise]:
    if exercise_id is not None:
        exercise = course.find_exercise(exercise_id)
        lesson = next(lesson for lesson in course.lessons if exercise in lesson.steps)
        return lesson, exercise
    found = prog.exercise_to_practise(course.lessons, progress)
    if found is None:
        names = _listed(course.exercises())
        if not names:
            raise GradtutorError(msg("these lessons have no exercises"),
                                 msg("`gradtutor list` shows them"))
        raise GradtutorError(msg("you have passed every exercise"),
                             msg("name one to work on it again, for example "
                                 "`gradtutor watch {first}` ({ids})",
                                 first=next(iter(course.exercises())), ids=names))
    return found


@app.command(help=msg(
    "Work on one exercise: each time you save its file, it is checked and the result shown."
    "\n\n"
    "The file is EXERCISE.py in your workspace; its starter is put there if you have no file "
    "yet (yours is never written over). e opens it in your editor, c checks now, h shows the "
    "next hint, s the solution; q or Ctrl-C stops.\n\n"
    "Example: `gradtutor watch read-grad`"))
def watch(
    ctx: typer.Context,
    exercise_id: Annotated[str | None, typer.Argument(
        metavar="[EXERCISE]", show_default=False,
        help=msg("An exercise id; default: the one you are on, else the first not passed "
                 "yet."))]
    = None,
    workspace: WorkspaceOpt = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    from gradtutor.ui.walkthrough import run

    env = _env(ctx)
    course = _course(env, lessons)
    store = _store(env)
    lesson, exercise = _exercise_to_watch(course, exercise_id, store.load())
    plain = env.plain(plain)
    folder = workspace_dir(env, workspace)
    alone = dataclasses.replace(lesson, steps=(exercise,))
    run(alone, 0, env, store, plain, keep_place=False, folder=folder, watching=True,
        course=_lessons_dir(env, lessons))
    # soft_wrap: a long path stays one piece to copy, whatever the terminal's width
    env.console(plain).print(env.tr(msg("Stopped watching {path}.",
                                           path=folder / (exercise.id + ".py"))),
                             soft_wrap=True)


@app.command(help=msg(
    "Ask the course a question in your own words, or paste an error message.\n\n"
    "The answer comes from the course, offline: a sentence or two of it, then the steps "
    "that teach it, each with its key passage and the command that shows it. A question the "
    "course does not teach is answered so. With --exercise (and your file), a question such "
    "as \"why does this fail?\" is answered about your file's failing check. No answer "
    "gives an exercise's solution. In the walkthrough and `watch`, press a (or /) to ask "
    "without leaving the screen.\n\n"
    "Example: `gradtutor ask \"why is my w.grad None?\"`"))
def ask(
    ctx: typer.Context,
    question: Annotated[list[str], typer.Argument(
        metavar="QUESTION", show_default=False,
        help=msg("Your question, or the message PyTorch printed (quote it)."))],
    exercise_id: Annotated[str | None, typer.Option(
        "--exercise", metavar="ID", show_default=False,
        help=msg("The exercise you are working on: your file's latest check informs the "
                 "answer."))] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", metavar="PATH", show_default=False, dir_okay=False,
        help=msg("Your file for that exercise; default: its workspace file."))] = None,
    as_json: Annotated[bool, typer.Option("--json", help=msg("Print one JSON object."))] = False,
    workspace: WorkspaceOpt = None,
    lessons: LessonsOpt = None,
    plain: PlainOpt = False,
) -> None:
    import json

    from gradtutor.asking.answer import NOWHERE, to_json
    from gradtutor.ui.answer_view import answer_view
    from gradtutor.ui.asking import ask_course

    env = _env(ctx)
    text = " ".join(question).strip()
    if not text:
        raise GradtutorError(msg("ask needs a question"),
                             msg("try `gradtutor ask \"why is my w.grad None?\"`"))
    folder = _lessons_dir(env, lessons)
    moment = NOWHERE
    if exercise_id is not None or file is not None:
        if exercise_id is None:
            raise GradtutorError(msg("--file needs --exercise: which exercise is it for?"),
                                 msg("add `--exercise ID` (`gradtutor list` names them)"))
        moment = _asking_moment(env, folder, exercise_id, file, workspace, text)
    found = ask_course(folder, text, moment, env.lang)
    if as_json:
        env.stdout.write(json.dumps({**to_json(found, env.tr), "lang": env.lang},
                                    indent=2, ensure_ascii=False) + "\n")
        return
    env.console(env.plain(plain)).print(answer_view(found, _look(env, env.plain(plain))))


def _asking_moment(env: Environment, folder: Path | None, exercise_id: str, file: Path | None,
                   workspace: Path | None, question: str) -> Moment:
    """The moment of `ask --exercise`: the exercise, the learner's file, and, when the
    question is about that file failing, its check's failing checks (the check runs then)."""
    import secrets

    from gradtutor.asking.answer import Moment, asks_why_it_fails
    from gradtutor.ui.asking import failing
    from gradtutor.workspace import exercise_path, read_exercise_file

    course = load_course(folder, rules=EXERCISE_RULES)
    exercise = course.find_exercise(exercise_id)
    path = file if file is not None else exercise_path(workspace_dir(env, workspace),
                                                       exercise_id)
    try:
        code = read_exercise_file(path).decode("utf-8", "replace")
    except GradtutorError:
        if file is not None:
            raise
        return Moment(exercise=exercise)  # no file yet: the exercise alone
    if not asks_why_it_fails(question):
        return Moment(exercise=exercise, code=code)
    from gradtutor.ui.status import counting

    with counting(env, env.status_line, lambda seconds: msg(
            "checking your file for {exercise} first: {seconds} s so far",
            exercise=exercise_id, seconds=seconds)):
        verdict = _check_one(exercise_id, path, course, secrets.randbelow(2**31), None,
                             env.environ)
    return Moment(exercise=exercise, code=code, failing=failing(verdict, env.tr))


@app.command(help=msg(
    "Run your own training script and find the gradient problems it has.\n\n"
    "It runs `python SCRIPT ARGS` as you would (same folder, same arguments, your own "
    "imports and data) until it has made --steps optimizer steps or ended, watching what it "
    "does to .grad, then stops it and reports each problem with its evidence, the line of "
    "your script and the lesson step that teaches it. Your script's output passes through. "
    "Exit code 0 when no problem is seen, 1 when problems are found, 2 when the script could "
    "not be run or observed. docs/doctor.md lists the problems and the `--json` format.\n\n"
    "Example: `gradtutor doctor train.py -- --epochs 1`"))
def doctor(
    ctx: typer.Context,
    script: Annotated[Path, typer.Argument(
        metavar="SCRIPT", help=msg("Your training script, as you would give it to python."),
        dir_okay=False)],
    args: Annotated[list[str] | None, typer.Argument(
        metavar="[-- ARGS...]", show_default=False,
        help=msg("Arguments for your script, after `--`."))] = None,
    steps: Annotated[int, typer.Option(
        "--steps", min=1, max=10_000, metavar="N",
        help=msg("Stop after this many optimizer steps."))] = 20,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", min=1, max=86_400,
        help=msg("Stop the script after this many seconds, and report what was seen."))]
    = 600,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help=msg("Hide your script's own output."))] = False,
    as_json: Annotated[bool, typer.Option("--json", help=msg(
        "Print the report as one JSON object (your script's output goes to stderr)."))]
    = False,
    plain: PlainOpt = False,
) -> None:
    import json

    from gradtutor.doctor.judge import diagnose, to_json
    from gradtutor.doctor.observe import observe
    from gradtutor.ui.status import counting

    env = _env(ctx)
    with counting(env, env.status_line and quiet and not as_json,
                  lambda seconds: msg("observing {script}: {seconds} s so far", script=script,
                                      seconds=seconds)):
        seen = observe(script, args or [], steps, timeout, quiet, output_to_stderr=as_json)
    diagnosis = diagnose(seen.events, seen.ending)
    if not diagnosis.findings:
        _doctor_could_observe(seen, script, timeout)
    if as_json:
        payload = {**to_json(diagnosis, env.tr), "script": str(script), "lang": env.lang}
        env.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        from gradtutor.ui.doctor_view import report_view

        plain = env.plain(plain)
        env.console(plain).print(report_view(diagnosis, _look(env, plain)))
    raise typer.Exit(int(ExitCode.FAILED if diagnosis.findings else ExitCode.OK))


# `gradtutor doctor train.py --lr 1`: the option is the script's, and goes after `--`
SCRIPT_OPTIONS_HINT = msg("your script's own options go after `--`, as in `gradtutor doctor "
                          "train.py -- --epochs 1`; see `gradtutor doctor --help`")


def _doctor_could_observe(seen: Any, script: Path, timeout: float) -> None:
    """Exit code 2, in one line, when there was nothing to judge."""
    from gradtutor.doctor.judge import observed_anything

    if observed_anything(seen.events):
        return
    end: Mapping[str, Any] = next((e for e in seen.events if e.get("e") == "end"), {})
    if seen.ending == "timeout":
        raise GradtutorError(msg("{script} made no backward pass in {seconds:g} seconds",
                                 script=script, seconds=timeout),
                             msg("give it more time with --timeout, or less data"))
    if end.get("reason") == "error":
        raise GradtutorError(msg("{script} stopped before its first backward pass: {error}",
                                 script=script, error=end.get("error", "")),
                             msg("make `python {script}` run first (its error is above)",
                                 script=script))
    if not any(e.get("e") == "torch" for e in seen.events):
        raise GradtutorError(msg("{script} never imported torch: nothing to observe",
                                 script=script),
                             msg("point the doctor at the script that trains your model"))
    raise GradtutorError(msg("{script} ended without a backward pass: nothing to observe",
                             script=script),
                         msg("does it train? a flag may be needed, e.g. `gradtutor doctor "
                             "{script} -- --train`", script=script))


@app.command(help=msg(
    "Check lesson files and report every problem at once, as `file:line:col: message`.\n\n"
    "With code to run, it also proves each exercise (the starter fails, the solution passes, "
    "each mutant fails on the check it names) and each answer key that has code. Every "
    "translation beside a lesson (`<folder>/<language>/<file>`) is checked too: its missing "
    "and stale texts are listed field by field, as warnings. Exit code 0 when all is well, 2 "
    "when there are problems.\n\n"
    "Example: `gradtutor validate lessons/`"))
def validate(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(
        metavar="[PATH]", help=msg("A lesson file or folder; default: the lessons in use."),
        show_default=False)] = None,
    lessons: LessonsOpt = None,
    run_code: Annotated[bool, typer.Option(
        "--run/--no-run", help=msg("Also prove exercises and answer keys by running them."))]
    = True,
) -> None:
    from gradtutor.lessons.course import default_lessons_dir
    from gradtutor.lessons.translate import check_translations, report_lines, translation_target

    env = _env(ctx)
    target = path or lessons or env.options.lessons or default_lessons_dir()
    # a translation file or language folder named by itself: check it with its lessons
    target, only = translation_target(target) or (target, None)
    files = lesson_files(target)
    if not files:
        raise GradtutorError(msg("no lesson files (*.yaml) in {path}", path=display_path(target)),
                             msg("name a lesson file or a folder that holds some"))
    found, problems = check_files(files, EXERCISE_RULES)
    reports, unmatched, broken = check_translations(found, only, whole_folder=target.is_dir(),
                                                    shown=display_path)
    unproven = rule_problems(found)  # no run needed: said with or without --run
    if problems or broken:
        raise LessonProblems(problems + broken + unproven)
    steps = sum(len(lesson.steps) for lesson, _ in found)
    proved = 0
    if run_code:
        from gradtutor.checking.lesson_proofs import jobs_for
        from gradtutor.runtime.proofs import prove

        runs = sum(1 for lesson, path in found for _ in jobs_for(lesson, path))
        if runs:
            env.error(env.tr(msg("running {runs} proofs of exercises and answer keys ...",
                                 runs=runs)))
            try:
                problems = prove(found, _proof_progress(env, found, runs), environ=env.environ)
            finally:
                env.status(None)
            if problems or unproven:
                raise LessonProblems(sorted(unproven + problems,
                                            key=lambda p: (p.path, p.line, p.col)))
            proved = runs
    unproven += _asks_astray(found)
    if unproven:
        raise LessonProblems(unproven)
    look = _look(env, env.plain())
    console = env.console(env.plain())
    count = len(found)
    lessons_ok = (msg("1 lesson", count=count) if count == 1
                  else msg("{count} lessons", count=count))
    summary = (msg("{ok} {lessons} OK ({steps} steps; {runs} proofs passed)", ok=look.ok,
                   lessons=lessons_ok, steps=steps, runs=proved) if proved
               else msg("{ok} {lessons} OK ({steps} steps)", ok=look.ok, lessons=lessons_ok,
                        steps=steps))
    console.print(env.tr(summary))
    for line in [*(line for report in reports for line in report_lines(report)), *unmatched]:
        console.print(line, soft_wrap=True)  # a located line stays one line, to click or grep
    missing = sum(len(report.missing) for report in reports)
    stale = sum(len(report.stale) for report in reports)
    if missing or stale or unmatched:
        console.print(env.tr(msg(
            "translations: {missing} texts missing and {stale} stale, shown in English until "
            "translated (listed above)", missing=missing, stale=stale)))
    elif reports:
        console.print(env.tr(msg("{ok} translations complete: {languages}", ok=look.ok,
                                 languages=", ".join(sorted({r.language for r in reports})))))


def _asks_astray(found: list[tuple[Lesson, Path]]) -> list[Problem]:
    """Each question a step declares (`asks`, in English and in each translation) must find
    that step first in `ask`; a problem, at the step, for each that does not."""
    from gradtutor.asking.answer import astray
    from gradtutor.asking.index import from_lessons
    from gradtutor.lessons.translate import in_language

    by_lang: dict[str, Sequence[Lesson]] = {"en": [lesson for lesson, _ in found]}
    for lesson, path in found:
        translated, broken = in_language(lesson, path, "zh-CN")
        if not broken:
            by_lang["zh-CN"] = [*by_lang.get("zh-CN", ()), translated]
    index = from_lessons(by_lang)
    where = {lesson.id: path for lesson, path in found}
    asks = [(lesson.id, step.id, ask) for lessons in by_lang.values() for lesson in lessons
            for step in lesson.steps for ask in step.asks]
    problems = []
    for lesson_id, step_id, ask, first in astray(index, asks):
        path = where[lesson_id]
        text = path.read_text(encoding="utf-8")
        line = next((n for n, row in enumerate(text.splitlines(), start=1)
                     if row.strip() == f"id: {step_id}"), 1)
        problems.append(Problem(display_path(path), line, 1, (
            f"step '{step_id}' declares the question {ask!r}, but `ask` finds "
            f"{first or 'no step'} first; word it closer to this step's own text")))
    return problems


def _proof_progress(env: Environment, found: list[tuple[Lesson, Path]],
                    total: int) -> Callable[[int, Job], None]:
    """What `validate` says as each proof starts: on a terminal, one status line naming it;
    elsewhere (a log), one line as each lesson file's proofs begin."""
    from collections import Counter

    from gradtutor.checking.lesson_proofs import jobs_for

    counts = Counter(display_path(path) for lesson, path in found for _ in jobs_for(lesson, path))
    begun: set[str] = set()

    def started(number: int, job: Job) -> None:
        where = display_path(job.lesson_path)
        if env.stderr_tty:
            env.status(env.tr(msg("proof {number} of {total}: {file}: {proof}",
                                  number=number + 1, total=total, file=where,
                                  proof=job.name())))
        elif where not in begun:
            begun.add(where)
            env.error(env.tr(msg("proving {file} ({count} proofs) ...", file=where,
                                 count=counts[where])))

    return started


# --- the language -----------------------------------------------------------------------------

def _language_option(argv: list[str]) -> str | None:
    """The value of the last `--lang` before `--`, wherever it stands (before the command or
    after it). Read before Click parses: its `--help` and errors are said in the language."""
    value = None
    for index, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and index + 1 < len(argv):
            value = argv[index + 1]
        elif arg.startswith("--lang="):
            value = arg.removeprefix("--lang=")
    return value


def _speak(argv: list[str], env: Environment) -> None:
    """Choose the learner's language and set `env.tr` to say messages in it."""
    from gradtutor.i18n import LANGUAGES

    option = _language_option(argv)
    if option is not None and language_code(option) is None:
        raise GradtutorError(msg("unknown language '{value}' for --lang", value=option),
                             msg("use one of: {choices}",
                                 choices=", ".join(code.split("-")[0] for code in LANGUAGES)))
    from gradtutor.settings import remember_language, saved_language

    wanted = language_code(option) if option is not None else None
    if wanted is not None:  # remembered: later commands speak it too, until another --lang
        remember_language(env.home, wanted)
    choice = choose_language(option, env.environ, utf8=env.utf8,
                             system_locale=env.system_locale,
                             saved=saved_language(env.home) if option is None else None)
    if choice.note:
        env.error(env.tr(msg("gradtutor: warning: {note}", note=choice.note)))
    if choice.lang == ENGLISH_CODE:
        return
    from gradtutor.i18n import translator

    try:
        env.tr = translator(choice.lang)
    except CatalogError as exc:
        env.error(env.tr(msg("gradtutor: warning: the {lang} interface text cannot be read "
                             "({error}); using English", lang=choice.lang, error=str(exc))))


def _only_the_command(argv: list[str]) -> typer.Typer:
    """`app`, or, when the command line starts with the name of one of its commands, `app`
    with that command alone: Typer makes every command's Click object (signatures, types,
    help) on each run, some 10 ms of a first slide, and only the one named can run."""
    for info in app.registered_commands:
        callback = info.callback
        name = info.name or (typer.main.get_command_name(callback.__name__) if callback else None)
        if argv and name == argv[0]:
            alone = copy.copy(app)
            alone.registered_commands, alone.registered_groups = [info], []
            return alone
    return app


def _cli(tr: Translator, argv: list[str] | None = None) -> TyperGroup:
    """The Click command tree of `app` (of the command `argv` names, if it starts with one),
    every command taking `--lang` and the other options for every command, and its help
    said by `tr`. Built afresh on each run, so changing it changes nothing global."""
    from typer.core import TyperArgument, TyperGroup, TyperOption

    group = typer.main.get_command(_only_the_command(argv or []))
    assert isinstance(group, TyperGroup)
    commands = _commands(group)
    # The root's own options for every command, for the commands that have no use for one:
    # taken and kept all the same (`_remember`), its value passed to no command.
    everywhere = [param for param in group.params if param.name in GLOBAL_OPTIONS]
    for command in commands:
        if command is not group:
            has = {param.name for param in command.params}
            for param in everywhere:
                if param.name not in has:
                    unused = copy.copy(param)
                    unused.expose_value = False
                    command.params.append(unused)
        command.params.append(TyperOption(param_decls=["--lang"], metavar="LANG",
                                          help=LANG_HELP, expose_value=False,
                                          rich_help_panel=EVERY_COMMAND))
    if tr.english:
        return group
    options, arguments = tr(msg("Options")), tr(msg("Arguments"))
    for command in commands:
        # Click's own --help says "Show this message and exit." in English; one of ours, under
        # the same names, takes its place, and draws the help with Click's words said by `tr`.
        command.params.append(TyperOption(
            param_decls=["--help", "-h"], is_flag=True, expose_value=False, is_eager=True,
            help=msg("Show this message and exit."), callback=functools.partial(_show_help, tr)))
        # the usage line's placeholders: `gradtutor check [OPTIONS] [EXERCISE] [FILE]`
        command.options_metavar = tr(msg("[OPTIONS]"))
        if hasattr(command, "subcommand_metavar"):
            command.subcommand_metavar = tr(msg("COMMAND [ARGS]..."))
        command.help = tr(command.help) if command.help else command.help
        command.epilog = tr(command.epilog) if command.epilog else command.epilog
        command.short_help = tr(command.short_help) if command.short_help else None
        for param in command.params:
            text = getattr(param, "help", None)
            if text:
                param.help = tr(text)
            if isinstance(param, TyperArgument | TyperOption):
                panel = param.rich_help_panel
                default = arguments if isinstance(param, TyperArgument) else options
                param.rich_help_panel = tr(panel) if panel else default
        if command is not group and hasattr(command, "rich_help_panel"):
            command.rich_help_panel = command.rich_help_panel or tr(msg("Commands"))
    return group


def _commands(group: TyperGroup) -> list[Any]:
    """`group` and every command under it, those of its subgroups (`translate`) too: Click's
    commands, whose attributes `_cli` sets."""
    from typer.core import TyperGroup

    found: list[Any] = [group]
    for command in group.commands.values():
        found += _commands(command) if isinstance(command, TyperGroup) else [command]
    return found


def _show_help(tr: Translator, ctx: typer.Context, _param: object, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        with _chinese_wrapping(), _click_words(ctx, tr):
            help_text = ctx.get_help()
        typer.echo(help_text, color=ctx.color)
        ctx.exit()


# Typer's own words in a help screen, by the name of the constant it keeps each in: their
# templates for the catalog, `{}` where Typer puts the value.
_TYPER_WORDS = (("DEFAULT_STRING", msg("[default: {value}]", value="{}")),
                ("ENVVAR_STRING", msg("[env var: {name}]", name="{}")),
                ("REQUIRED_LONG_STRING", msg("[required]")),
                ("DEPRECATED_STRING", msg("(deprecated) ")))


@contextlib.contextmanager
def _click_words(ctx: typer.Context, tr: Translator) -> Iterator[None]:
    """While --help is drawn, Click's and Typer's own words in it ("Usage:", "[required]",
    "[env var: ...]") are said by `tr`. Both say them through gettext, which has no catalog
    here. The usage line's prefix comes from the formatter this context makes, so the
    context gets its own kind of formatter; Typer's words are module constants, swapped for
    the drawing and put back after, as `_chinese_wrapping` does."""
    from typer import rich_utils

    base: Any = ctx.formatter_class
    usage = tr(msg("Usage: "))

    def write_usage(self: Any, prog: str, args: str = "", prefix: str | None = None) -> None:
        base.write_usage(self, prog, args, usage if prefix is None else prefix)

    said: Any = type("SaidFormatter", (base,), {"write_usage": write_usage})
    ctx.formatter_class = said
    original = {name: getattr(rich_utils, name) for name, _ in _TYPER_WORDS
                if hasattr(rich_utils, name)}
    for name, words in _TYPER_WORDS:
        if name in original:
            setattr(rich_utils, name, tr(words))
    try:
        yield
    finally:
        for name, value in original.items():
            setattr(rich_utils, name, value)
        ctx.formatter_class = base


@contextlib.contextmanager
def _chinese_wrapping() -> Iterator[None]:
    """While --help is drawn, Typer's Markdown wraps Chinese between characters (as `Prose`
    does) instead of only at spaces, which would cut a sentence short with "…" in the help
    tables. Typer has no hook for this, so its one text factory is swapped for the drawing
    and put back after; where a Typer version lacks it, help wraps as Typer's own does."""
    from typer import rich_utils

    original = getattr(rich_utils, "_make_rich_text", None)
    if original is None:
        yield
        return
    def make_rich_text(*, text: str, style: str = "", markup_mode: Any) -> Any:
        made = original(text=text, style=style, markup_mode=markup_mode)
        if isinstance(made, Markdown) and has_wide(text):
            return ProseMarkdown(made.markup, style=style)
        return made

    rich_utils._make_rich_text = make_rich_text
    try:
        yield
    finally:
        rich_utils._make_rich_text = original


def run(argv: list[str], env: Environment) -> int:
    """Run the CLI on `argv`; the single place where errors become messages and exit codes,
    said in the learner's language."""
    debug = "--debug" in argv or env.environ.get("GRADTUTOR_DEBUG") == "1"
    tr = env.tr
    try:
        _speak(argv, env)
        tr = env.tr
        try:
            result = _cli(tr, argv)(args=argv, prog_name="gradtutor", standalone_mode=False,
                                    obj=env)
        finally:
            env.stdout.flush()  # what is still buffered fails here, inside the boundary
        return int(result) if isinstance(result, int) else 0
    except OutputLost as exc:
        if debug:
            raise
        if exc.errno == errno.EPIPE:  # `gradtutor list | head -1`: the reader had enough
            return int(ExitCode.BROKEN_PIPE)
        _say_error(env, msg("cannot write the output ({error})", error=exc.reason),
                   msg("check where the output goes: a full disk or a closed stream"))
        return int(ExitCode.OUTPUT)
    except LessonProblems as exc:
        if debug:
            raise
        for problem in exc.problems:
            env.error(str(problem))
        if exc.message:  # the translation tools' problems are said by their lines alone
            env.error(tr(msg("gradtutor: {message} ({hint})", message=exc.message,
                             hint=exc.hint)))
        return int(exc.exit_code)
    except GradtutorError as exc:
        if debug:
            raise
        _say_error(env, exc.message, exc.hint)
        return int(exc.exit_code)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        env.error(tr(msg("gradtutor: interrupted; your progress is saved")))
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the boundary: never a traceback without --debug
        if _is_usage_error(exc):
            command = _command_of(argv)
            message = _shorten_values(exc.format_message())  # type: ignore[attr-defined]
            if not tr.english:
                message = tr(_usage_problem(exc, message))
            about_option = "option" in exc.format_message().lower()  # type: ignore[attr-defined]
            hint = (SCRIPT_OPTIONS_HINT if command == "doctor" and about_option
                    else msg("see `gradtutor {command}--help`",
                             command=command + " " if command else ""))
            env.error(tr(msg("gradtutor: error: {message}{hint}", message=message,
                             hint=tr(msg(" (hint: {hint})", hint=hint)))))
            return int(ExitCode.USAGE)
        if debug:
            raise
        if isinstance(exc, OSError) and exc.filename:  # a file or folder the OS refused
            _say_error(env, _file_problem(exc), _file_hint(exc, env))
            return int(ExitCode.USAGE)
        env.error(tr(msg("gradtutor: internal error: {error} (hint: rerun with --debug and "
                         "report it)", error=f"{type(exc).__name__}: {exc}")))
        return 70


def _say_error(env: Environment, message: str, hint: str) -> None:
    said = env.tr(msg(" (hint: {hint})", hint=hint)) if hint else ""
    env.error(env.tr(msg("gradtutor: error: {message}{hint}", message=message, hint=said)))


def _file_problem(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return msg("permission denied: {path}", path=exc.filename)
    return msg("cannot use {path} ({error})", path=exc.filename,
               error=exc.strerror or type(exc).__name__)


def _file_hint(exc: OSError, env: Environment) -> str:
    """What to do about a file the OS refused: in the data folder, give it back or move it."""
    path = Path(os.fsdecode(exc.filename))
    with contextlib.suppress(OSError, RuntimeError):
        if path.absolute().is_relative_to(env.home.absolute()):
            return msg("gradtutor keeps your progress in {home}; make it yours to read and "
                       "write (`chmod -R u+rwX {home}`), or set GRADTUTOR_HOME to another "
                       "folder", home=env.home)
    if isinstance(exc, PermissionError):
        return msg("make it readable (and writable, if gradtutor writes it), or use another")
    return msg("check that the path is right")


def _shorten_values(message: str) -> str:
    """Click's message with any very long quoted value (a 5000-digit number) cut short."""
    return re.sub(r"'([^']{40})[^']{8,}'", r"'\1…'", message)


def _is_usage_error(exc: Exception) -> bool:
    # Click's usage errors (vendored inside newer Typer releases): they know how to word
    # themselves and carry an exit code.
    return callable(getattr(exc, "format_message", None)) and hasattr(exc, "exit_code")


# Click words its usage errors in English only; these are the ones a learner meets, as
# (Click's message, the same in a msg() template). Any other stays English.
_CLICK_PROBLEMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"No such option: (?P<option>\S+) \(Possible options: (?P<options>.+)\)"),
     lambda m: msg("no such option: {option} (did you mean {options}?)", **m.groupdict())),
    (re.compile(r"No such option: (?P<option>\S+)"),
     lambda m: msg("no such option: {option}", **m.groupdict())),
    (re.compile(r"Option '(?P<option>[^']+)' requires an argument\."),
     lambda m: msg("{option} needs a value", **m.groupdict())),
    (re.compile(r"Missing argument '(?P<name>[^']+)'\."),
     lambda m: msg("missing {name}", **m.groupdict())),
    (re.compile(r"No such command '(?P<command>[^']+)'\. Did you mean '(?P<close>[^']+)'\?"),
     lambda m: msg("no command '{command}'; did you mean '{close}'?", **m.groupdict())),
    (re.compile(r"No such command '(?P<command>[^']+)'\."),
     lambda m: msg("no command '{command}'", **m.groupdict())),
    (re.compile(r"Missing command\."), lambda m: msg("missing a command")),
    (re.compile(r"Got unexpected extra argument(?:\(s\)|s)? \((?P<extra>.+)\)"),
     lambda m: msg("too many arguments: {extra}", **m.groupdict())),
    (re.compile(r"Invalid value for (?P<name>.+?): (?P<problem>.+)"),
     lambda m: msg("invalid value for {name}: {problem}", **m.groupdict())),
)


def _usage_problem(exc: Exception, message: str) -> str:
    """Click's usage error as a msg(), when it is one of those a learner meets."""
    for pattern, to_message in _CLICK_PROBLEMS:
        found = pattern.fullmatch(message)
        if found:
            return to_message(found)
    return message


def _command_of(argv: list[str]) -> str:
    commands = {"start", "list", "show", "quiz", "progress", "reset", "validate", "check",
                "watch", "ask", "grade", "doctor", "translate"}
    return next((a for a in argv if a in commands), "")


def main(argv: list[str] | None = None) -> None:
    """The console script: the command line's arguments (or `argv`), run, then exit."""
    code = run(sys.argv[1:] if argv is None else argv, Environment.from_os())
    if code in (ExitCode.OUTPUT, ExitCode.BROKEN_PIPE) and sys.stdout is not None:
        # what Python still holds for stdout must not fail again, as a traceback, at exit
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(code)
