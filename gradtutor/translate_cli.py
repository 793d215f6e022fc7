"""`gradtutor translate`: the author's tools for translating a lesson (docs/translating.md),
also run as `python -m gradtutor.lessons.translate`. Thin commands over
`gradtutor.lessons.translate`; what goes wrong is raised to the CLI's one error boundary.

What they print for the author (the report, the file) is English, as `validate`'s report is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gradtutor.env import Environment
from gradtutor.errors import ExitCode, GradtutorError, LessonProblems, Problem
from gradtutor.i18n import msg

if TYPE_CHECKING:
    from gradtutor.lessons.model import Lesson
    from gradtutor.lessons.translate import Translation

app = typer.Typer(
    help=msg("Tools for translating lessons (see docs/translating.md)."),
    rich_markup_mode="markdown",
)

LessonFileArg = Annotated[Path, typer.Argument(
    metavar="LESSON", help=msg("The lesson file, e.g. lessons/grad.yaml."), show_default=False)]
LanguageArg = Annotated[str, typer.Argument(
    metavar="LANGUAGE", help=msg("A language tag, e.g. zh-CN."), show_default=False)]
FileOpt = Annotated[Path | None, typer.Option(
    "--file", metavar="PATH", show_default=False,
    help=msg("The translation file (default: LESSON_DIR/LANGUAGE/NAME)."))]


class BrokenFiles(LessonProblems):
    """A lesson or translation file the tools cannot use: its located problems, one line each,
    are all there is to say (as the tools have always said them)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(problems)
        self.message = self.hint = ""


@app.command("skeleton", help=msg(
    "Print a new translation file with every text still to translate.\n\n"
    "Example: `gradtutor translate skeleton lessons/grad.yaml zh-CN`"))
def skeleton_(ctx: typer.Context, lesson: LessonFileArg, language: LanguageArg,
              file: FileOpt = None) -> None:
    from gradtutor.lessons.load import display_path
    from gradtutor.lessons.translate import skeleton

    env = _env(ctx)
    english = _lesson(lesson, language)
    env.stdout.write(skeleton(english, language, None, display_path(lesson)))


@app.command(help=msg(
    "Rewrite the translation file for the lesson as it is now: new texts added, stale ones "
    "marked, translations kept.\n\n"
    "Example: `gradtutor translate update lessons/grad.yaml zh-CN`"))
def update(ctx: typer.Context, lesson: LessonFileArg, language: LanguageArg,
           file: FileOpt = None) -> None:
    from gradtutor.files import write_atomic
    from gradtutor.lessons.load import display_path
    from gradtutor.lessons.translate import (
        check_translation,
        skeleton,
        summary_line,
        translation_file,
    )

    env = _env(ctx)
    english = _lesson(lesson, language)
    target = file or translation_file(lesson, language)
    existing = _translation(target)
    write_atomic(target, skeleton(english, language, existing, display_path(lesson)))
    env.stdout.write(f"wrote {display_path(target)}\n")
    report = check_translation(english, _translation(target), language)
    env.stdout.write(summary_line(report) + "\n")


@app.command(help=msg(
    "List what is missing, stale or unused; exit 1 if anything is.\n\n"
    "Example: `gradtutor translate report lessons/grad.yaml zh-CN`"))
def report(ctx: typer.Context, lesson: LessonFileArg, language: LanguageArg,
           file: FileOpt = None) -> None:
    from gradtutor.lessons.translate import check_translation, report_lines, translation_file

    env = _env(ctx)
    english = _lesson(lesson, language)
    found = check_translation(english, _translation(file or translation_file(lesson, language)),
                              language)
    env.stdout.write("\n".join(report_lines(found)) + "\n")
    raise typer.Exit(int(ExitCode.OK if found.complete else ExitCode.FAILED))


def _env(ctx: typer.Context) -> Environment:
    env = ctx.find_root().obj
    assert isinstance(env, Environment), "the CLI passes its Environment as the root's obj"
    return env


def _lesson(path: Path, language: str) -> Lesson:
    """The lesson to translate into `language`, which must be a language to translate into."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.lessons.load import load_lesson_file
    from gradtutor.lessons.translate import is_target_language

    if not is_target_language(language):
        raise GradtutorError(msg("'{language}' is not a language to translate into",
                                 language=language), msg("use a tag like zh-CN"))
    lesson, problems = load_lesson_file(path, EXERCISE_RULES)
    if lesson is None:
        raise BrokenFiles(problems)
    return lesson


def _translation(path: Path) -> Translation | None:
    """The translation file at `path`, read afresh; None if there is none yet."""
    from gradtutor.lessons.translate import load_translation_file

    if not path.is_file():
        return None
    translation, problems = load_translation_file(path, use_cache=False)
    if translation is None:
        raise BrokenFiles(problems)
    return translation
