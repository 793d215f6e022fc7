"""The exercise screen's body: the task, the learner's file, the hints and solution asked
for, and the state of the check; and the exercise as `gradtutor show` prints it. Pure:
nothing here prints or reads the file. Its own words are messages, said by `look.tr`."""

from __future__ import annotations

from pathlib import Path

from rich.cells import chop_cells
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.text import Text

from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise
from gradtutor.ui.check_view import verdict_view
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look, code_block, inline, markdown
from gradtutor.walk.exercise import ExerciseView


def exercise_body(exercise: Exercise, view: ExerciseView, path: Path,
                  look: Look) -> RenderableType:
    """`path` is the learner's file for this exercise, as the screen names it."""
    tr = look.tr
    parts: list[RenderableType] = [markdown(exercise.prompt, look), Text("")]
    if view.kept:
        parts.append(Prose.assemble((tr(msg("Your file")), "bold"),
                                    (tr(msg(" (your earlier work, kept as it was):")),
                                     "grey50")))
    else:
        parts.append(Prose(tr(msg("Your file:")), style="bold"))
    parts.append(Padding(Folded(str(path), "cyan"), (0, 0, 0, 2)))
    parts.append(inline(tr(msg("Edit it in any editor (`e` opens yours); each save is checked "
                               "here.")), look, "italic"))
    for number, hint in enumerate(exercise.hints[: view.hints], start=1):
        label = tr(msg("Hint {number} of {total}: ", number=number, total=len(exercise.hints)))
        parts += [Text(""), Prose.assemble((label, "bold yellow"), inline(hint, look))]
    if view.solution:
        parts += [Text(""), Prose(tr(msg("Solution:")), style="bold"),
                  code_block(exercise.solution, look)]
    parts += [Text(""), status(exercise, view, look)]
    return Group(*parts)


class Folded:
    """Text broken only where it meets the edge of the screen, never at its spaces: a path
    with spaces in it stays readable as one path. Never markup."""

    def __init__(self, text: str, style: str = "") -> None:
        self.text = text
        self.style = style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for piece in chop_cells(self.text, max(1, options.max_width)):
            yield Text(piece, style=self.style)


# Where the short verdict leaves something out, the key that shows it all.
MORE = msg("v shows the whole verdict: every case, and each check's hint.")


def status(exercise: Exercise, view: ExerciseView, look: Look) -> RenderableType:
    """Where the check stands: running, its verdict (and why it works, once passed), or not
    run yet; the solution question takes its place while it is asked."""
    tr = look.tr
    if view.confirming:
        return Prose(tr(msg("Show the solution? You can still write your own afterwards.  "
                            "y shows it, n keeps it hidden.")), style="bold yellow")
    parts: list[RenderableType] = []
    if view.checking:
        parts.append(Prose(tr(msg("checking ...")), style="bold cyan"))
        if view.loading is not None:
            parts.append(Prose(tr(loading_line(view.loading)), style="cyan"))
    if view.verdict is not None:
        if view.checking:
            parts += [Prose(tr(msg("the result before:")), style="grey50")]
        parts.append(verdict_view(view.verdict, look, whole=view.whole, more=MORE))
        if view.whole:
            parts += [Text(""), Prose(tr(msg("v shows the short verdict again.")),
                                      style="grey50")]
        if view.verdict.passed:
            parts += [Text(""), Prose(tr(msg("Why it works")), style="bold green"),
                      Padding(markdown(exercise.why, look), (0, 0, 0, 2))]
    elif not view.checking and view.passed:
        parts.append(Prose(f"{look.ok} " + tr(msg("You passed this exercise earlier: save "
                                                  "your file (or c) to check it again.")),
                           style="green"))
    elif not view.checking:
        parts.append(Prose(tr(msg("Not checked yet: save your file (or c checks it now).")),
                           style="grey50"))
    return Group(*parts)


def loading_line(seconds: int) -> str:
    """Why the first check of a session takes its time, and how long it has taken so far."""
    return msg("loading PyTorch for the first check: a few seconds ({seconds} s so far)",
               seconds=seconds)


def exercise_reading(exercise: Exercise, look: Look) -> RenderableType:
    """The exercise for reading: its task and starter, and how to check it from the shell."""
    # str(): as `show` has always drawn it, the prompt itself untagged; a starter whose
    # comments are not translated is marked once, below it (code_block)
    parts: list[RenderableType] = [markdown(str(exercise.prompt), look), Text(""),
                                   code_block(exercise.starter, look)]
    how = msg("Try it: save the starter above as {id}.py, fill it in, and run "
              "`gradtutor check {id} {id}.py`.", id=exercise.id)
    parts += [Text(""), inline(look.tr(how), look, "italic")]
    return Group(*parts)
