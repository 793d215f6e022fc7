"""The exceptions the core raises for the CLI's one error boundary to render, and exit codes."""

from __future__ import annotations

from enum import IntEnum

from gradtutor.i18n import msg
from gradtutor.records import record


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1  # a check or quiz did not pass
    USAGE = 2  # bad input: unknown lesson, broken lesson file, bad option
    SOFTWARE = 70  # gradtutor itself failed (an internal error, a grader that could not run)
    OUTPUT = 74  # the output could not be written (a full disk, a closed stream)
    INTERRUPTED = 130
    BROKEN_PIPE = 141  # the reader went away (`| head`), as a shell reports SIGPIPE


class GradtutorError(Exception):
    """A problem the user can fix: a one-line message and a hint on what to do, each best
    made with `msg()` so that the error boundary can say it in the learner's language."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@record
class Problem:
    """One thing wrong with a lesson file, located at 1-based line and column."""

    path: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.message}"


class LessonProblems(GradtutorError):
    """A lesson file or folder that does not validate: every problem found, each located."""

    def __init__(self, problems: list[Problem]) -> None:
        count = len(problems)
        super().__init__(
            msg("{count} problem in lesson files", count=count) if count == 1
            else msg("{count} problems in lesson files", count=count),
            msg("fix each line above, then run `gradtutor validate` again"),
        )
        self.problems = problems
