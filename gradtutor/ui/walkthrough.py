"""The walkthrough's shell: show a screen, wait for a key, a line or news from the
background, do what the decision asks, save what changed.

All decisions live in `gradtutor.walk`; this module only does the I/O around them. Work that
takes time (a check) runs in `background.Background`'s thread, a save is noticed by
`watching.FileWatch`'s, and both post their news to one inbox that the loop waits on together
with the learner's input. So the screen answers keys while a check runs, and a verdict shows
the moment it arrives, without a key press.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradtutor import progress as prog
from gradtutor.env import Environment
from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.lessons.model import LETTERS, Demo, Exercise, Lesson, Parsons, Predict, Quiz, Slide
from gradtutor.store import ProgressStore, now_iso
from gradtutor.ui import render
from gradtutor.ui.keys import TimedReader, timed_reader
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look
from gradtutor.walk import (
    Finished,
    QuizDone,
    Visit,
    WalkState,
    busy,
    enter,
    exercise_on_screen,
    handle,
    key_event,
    line_event,
)

if TYPE_CHECKING:  # the practice machinery loads after the first screen, when it is needed
    from gradtutor.ui.background import Background
    from gradtutor.walk import Effect, Event
    from gradtutor.walk_practice import ParsonsView
    from gradtutor.watching import FileWatch

KEY_WAIT_S = 0.1  # how long a key is awaited before the inbox is looked at again


@dataclass(frozen=True)
class Typed:
    """A line the learner typed ("" at the end of input)."""

    line: str


class LineReader:
    """Reads one line from `stream` in a thread when asked, and posts it as Typed.

    Only one read is ever outstanding, and none is started while the tutor waits for a
    check: piped input is then taken in the order a person would type it."""

    def __init__(self, stream: TextIO, post: Callable[[Typed], None]) -> None:
        self._stream = stream
        self._post = post
        self._wanted = threading.Semaphore(0)
        self._outstanding = False
        self._thread: threading.Thread | None = None

    def want(self) -> None:
        if self._outstanding:
            return
        self._outstanding = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gradtutor-lines",
                                            daemon=True)
            self._thread.start()
        self._wanted.release()

    def got(self) -> None:
        self._outstanding = False

    def _run(self) -> None:
        while True:
            self._wanted.acquire()
            line = self._stream.readline()
            self._post(Typed(line))
            if not line:
                return


@dataclass
class Io:
    """How screens go out and events come in: single keys on a terminal, else lines; and
    the inbox where background threads post their news."""

    console: Console
    keys: bool
    stdin: TextIO
    inbox: queue.Queue[Event | Typed] = field(default_factory=queue.Queue)
    read_key: TimedReader | None = None
    lines: LineReader | None = None

    def show(self, renderable: RenderableType) -> None:
        if self.keys:
            self.console.clear()
        self.console.print(renderable)
        if not self.keys:
            self.console.print("> ", end="")
            self.console.file.flush()

    def post(self, event: Event) -> None:
        """Called from any thread."""
        self.inbox.put(event)

    def next_event(self, lesson: Lesson, state: WalkState) -> Event:
        """The next thing that happens: news from the background first, else the learner's
        key or line."""
        while True:
            if self.read_key is not None:
                with contextlib.suppress(queue.Empty):
                    return self._event(lesson, state, self.inbox.get_nowait())
                key = self.read_key(KEY_WAIT_S)
                if key is not None:
                    return key_event(lesson, state, key)
                continue
            if self.lines is None:
                self.lines = LineReader(self.stdin, self.inbox.put)
            if not busy(state):
                self.lines.want()
            with contextlib.suppress(queue.Empty):  # a timeout keeps Ctrl-C answered
                return self._event(lesson, state, self.inbox.get(timeout=0.5))

    def _event(self, lesson: Lesson, state: WalkState, item: Event | Typed) -> Event:
        if not isinstance(item, Typed):
            return item
        if self.lines is not None:
            self.lines.got()
        if not item.line:  # end of input: stop where we are, progress is saved
            return "quit"
        return line_event(lesson, state, item.line)


def make_io(env: Environment, plain: bool) -> Io:
    console = env.console(plain)
    if env.interactive:
        return Io(console, keys=True, stdin=env.stdin, read_key=timed_reader(env.stdin))
    return Io(console, keys=False, stdin=env.stdin)


# The words of the key legends. Keys stay as they are typed; words that are part of a key
# ("n or Enter") are messages too.
NEXT, BACK, HELP, QUIT = msg("next"), msg("back"), msg("help"), msg("quit")
CHOOSE, SUBMIT, ANSWER = msg("choose"), msg("submit"), msg("answer")
N_OR_ENTER = msg("n or Enter")


def legend(lesson: Lesson, state: WalkState, keys: bool, look: Look) -> RenderableType:
    step = lesson.steps[state.index]
    if isinstance(step, Exercise) and state.exercise is not None:
        return exercise_legend(state, keys, look)
    if isinstance(step, Predict) and state.predict is not None and not state.predict.submitted:
        last = LETTERS[len(step.choices) - 1]
        if keys:
            return render.legend([(f"a-{last}", CHOOSE), ("Enter", SUBMIT), ("→", msg("skip")),
                                  ("←", BACK), ("?", HELP), ("q", QUIT)], look)
        return render.legend([(f"a-{last}", ANSWER), ("n", msg("skip")),
                              ("back", msg("go back")), ("?", HELP), ("q", QUIT)], look)
    if isinstance(step, Parsons) and state.parsons is not None:
        return parsons_legend(state.parsons, keys, look)
    view = state.quiz
    if isinstance(step, Quiz) and view is not None and view.question < len(step.questions):
        last = LETTERS[len(step.questions[view.question].choices) - 1]
        if not view.submitted():
            if keys:
                return render.legend([(f"a-{last}", CHOOSE), ("Enter", SUBMIT),
                                      ("←", BACK), ("?", HELP), ("q", QUIT)], look)
            answer = (msg("answer (several: a c)") if step.questions[view.question].multiple
                      else ANSWER)
            return render.legend([(f"a-{last}", answer), ("back", msg("go back")),
                                  ("?", HELP), ("q", QUIT)], look)
        return render.legend([("Enter" if not keys else "Enter/→", msg("next question")),
                              ("b" if not keys else "←", BACK), ("q", QUIT)], look)
    if keys:
        return render.legend([("→/n/Enter", NEXT), ("←/b", BACK), ("?", HELP),
                              ("q", QUIT)], look)
    return render.legend([(N_OR_ENTER, NEXT), ("b", BACK), ("?", HELP), ("q", QUIT)], look)


def exercise_legend(state: WalkState, keys: bool, look: Look) -> RenderableType:
    if state.exercise is not None and state.exercise.confirming:
        return render.legend([("y", msg("show the solution")), ("n", msg("keep it hidden")),
                              ("q", QUIT)], look)
    moves = ([("→/n", NEXT), ("←/b", BACK)] if keys else [("n", NEXT), ("b", BACK)])
    return render.legend([("e", msg("edit")), ("c", msg("check")), ("h", msg("hint")),
                          ("s", msg("solution")), *moves, ("?", HELP), ("q", QUIT)], look)


def parsons_legend(view: ParsonsView, keys: bool, look: Look) -> RenderableType:
    passed = view.verdict is not None and view.verdict.passed
    if not keys:
        moves = ([(N_OR_ENTER, NEXT)] if passed
                 else [("Enter", msg("check again")), ("n", NEXT)])
        return render.legend([("2 1 3 ...", msg("the new order, by number")), *moves,
                              ("b", BACK), ("?", HELP), ("q", QUIT)], look)
    grab = ("space", msg("drop") if view.grabbed else msg("grab a line"))
    enter = ("Enter", NEXT) if passed else ("Enter", msg("check"))
    return render.legend([("↑/↓", msg("move")), grab, enter, ("→/n", NEXT), ("←/b", BACK),
                          ("?", HELP), ("q", QUIT)], look)


_EXERCISE_HELP = [
    ("e", msg("in an exercise: open your file in your editor ($VISUAL or $EDITOR)")),
    ("c", msg("in an exercise: check your file now (each save is checked anyway)")),
    ("h", msg("in an exercise: the next hint, one more each time")),
    ("s", msg("in an exercise: the solution, after you confirm")),
]
_HELP_KEYS = [
    ("→  n  Enter", msg("next step (in an exercise: move on, solved or not)")),
    ("←  b", msg("previous step")),
    ("a b c ...", msg("in the quiz or a prediction: choose; Enter submits")),
    *_EXERCISE_HELP,
    ("↑  ↓  space", msg("in an ordering step: move the cursor; space grabs or drops a line")),
    ("Enter", msg("in an ordering step: check the order")),
    ("?", msg("show or hide this help")),
    ("q", msg("quit; your place is saved")),
]
_HELP_LINES = [
    (msg("n or empty line"), msg("next step (in an exercise: move on, solved or not)")),
    ("b", msg("previous step")),
    (msg("a  or  a c"), msg("in the quiz or a prediction: your answer letters")),
    ("back", msg("in the quiz: previous question or step")),
    *_EXERCISE_HELP,
    ("2 1 3 ...", msg("in an ordering step: the lines' numbers in your order")),
    ("?", msg("show or hide this help")),
    ("q", msg("quit; your place is saved")),
]
_KEY_COLUMN = 18  # cells


def help_body(keys: bool, look: Look) -> RenderableType:
    """The keys and what they do, one to a line."""
    rows = [(look.tr(key), look.tr(what)) for key, what in (_HELP_KEYS if keys else _HELP_LINES)]
    saved = msg("Progress is saved at every step; `gradtutor start` resumes.")
    return Group(Prose(look.tr(msg("Keys")), style="bold"), Text(""), _key_grid(rows), Text(""),
                 Prose(look.tr(saved)))


def _key_grid(rows: list[tuple[str, str]]) -> RenderableType:
    """Keys in one column and what they do in the next: a description that wraps stays in
    its column, under its first words."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True, min_width=_KEY_COLUMN - 1, style="bold")
    grid.add_column(ratio=1)
    for key, what in rows:
        grid.add_row(Text(key), Prose(what))
    return Padding(grid, (0, 0, 0, 2))


def screen(lesson: Lesson, state: WalkState, width: int, keys: bool, look: Look,
           folder: Path | None = None) -> RenderableType:
    """Everything one screen shows for this state; `folder` holds the exercise files."""
    step = lesson.steps[state.index]
    if state.help:
        body = help_body(keys, look)
    elif isinstance(step, Exercise) and state.exercise is not None:
        from gradtutor.ui.exercise_view import exercise_body
        from gradtutor.workspace import exercise_path

        body = exercise_body(step, state.exercise, exercise_path(folder or Path(), step.id),
                             look)
    elif isinstance(step, Slide):
        body = render.slide_body(step, look)
    elif isinstance(step, Predict | Parsons | Demo):
        body = practice_body(step, state, width, look)
    elif isinstance(step, Quiz) and state.quiz is not None:
        view = state.quiz
        total = len(step.questions)
        if view.question >= total:
            body = render.score_body(step, view.score(step), total, look)
        elif view.submitted():
            body = render.feedback_body(step.questions[view.question], view.question + 1, total,
                                        view.answers[view.question], look)
        else:
            body = render.question_body(step.questions[view.question], view.question + 1, total,
                                        view.selected, look)
    else:
        body = render.practice_preview(step, look)
    parts: list[RenderableType] = [render.header(lesson, state.index, width, look), body]
    if state.notice:
        parts += [Text(""), Prose("! " + look.tr(state.notice), style="bold yellow")]
    parts.append(legend(lesson, state, keys, look))
    return Group(*parts)


def practice_body(step: Predict | Parsons | Demo, state: WalkState, width: int,
                  look: Look) -> RenderableType:
    """A predict, Parsons or demo step as its view of the moment shows it."""
    from gradtutor.ui import practice

    if isinstance(step, Predict) and state.predict is not None:
        view = state.predict
        if view.submitted:
            return practice.predict_body(step, view.chosen, view.result, look)
        body = practice.predict_body(step, None, None, look)
        if view.chosen is None:
            return body
        choice = step.choices[view.chosen]
        return Group(body, Text(""), Prose.assemble(
            (look.tr(msg("Your prediction: ")), "bold"), f"{LETTERS[view.chosen]}) ",
            render.inline(choice.text, look, "bold"),
            ("  " + look.tr(msg("(Enter submits it)")), "grey50")))
    if isinstance(step, Parsons) and state.parsons is not None:
        view_p = state.parsons
        return practice.parsons_body(step, view_p.order, view_p.cursor, view_p.grabbed,
                                     view_p.verdict, view_p.run, look)
    if isinstance(step, Demo) and state.demo is not None:
        return practice.demo_body(step, state.demo.result, width, look)
    return render.practice_preview(step, look)


def run(lesson: Lesson, start: int, env: Environment, store: ProgressStore, plain: bool,
        keep_place: bool = True, folder: Path | None = None) -> WalkState:
    """Walk through `lesson` from step `start` until the learner quits or finishes.

    Every change is saved as it happens, so nothing is lost on Ctrl-C or a closed terminal.
    With `keep_place` False (a quiz taken alone, an exercise watched alone) the place is not
    saved, only scores and how exercises went. Exercise files live in `folder` (default: the
    workspace in the learner's data folder).
    """
    look = Look(plain, env.tr)
    io = make_io(env, plain)
    if folder is None:
        from gradtutor.workspace import default_folder

        folder = default_folder(env.home)
    shell = _Shell(lesson, env, store, io, folder, keep_place)
    state, opened = enter(lesson, start)
    try:
        # The starter is in place (and watched) before a screen names its file; progress is
        # saved once the first screen is up, as is the warm worker started: both take time.
        state = shell.apply(state, [e for e in opened if not isinstance(e, Visit)])
        io.show(screen(lesson, state, io.console.width, io.keys, look, folder))
        if any(isinstance(step, Exercise | Predict | Parsons | Demo) for step in lesson.steps):
            shell.jobs().start()
        state = shell.apply(state, [e for e in opened if isinstance(e, Visit)])
        while state.outcome is None:
            state, effects = handle(lesson, state, io.next_event(lesson, state))
            state = shell.apply(state, effects)
            if state.outcome is None:
                io.show(screen(lesson, state, io.console.width, io.keys, look, folder))
    except KeyboardInterrupt:
        state = handle(lesson, state, "quit")[0]
    finally:
        shell.close()
    if not io.keys:
        io.console.print()
    return state


class _Shell:
    """Carries out effects: saves progress, writes starters, starts checks, opens the
    editor, and keeps a watch on the file of the exercise on screen."""

    def __init__(self, lesson: Lesson, env: Environment, store: ProgressStore, io: Io,
                 folder: Path, keep_place: bool) -> None:
        self.lesson = lesson
        self.env = env
        self.store = store
        self.io = io
        self.background: Background | None = None
        self.folder = folder
        self.keep_place = keep_place
        self.exercises = {s.id: s for s in lesson.steps if isinstance(s, Exercise)}
        self.watch: FileWatch | None = None
        self.watched: str | None = None

    def jobs(self) -> Background:
        """The background thread for checks (created on first need; start() begins it)."""
        if self.background is None:
            from gradtutor.ui.background import Background

            self.background = Background(self.io.post, self.env.environ)
        return self.background

    def apply(self, state: WalkState, effects: list[Effect]) -> WalkState:
        """Do `effects`; what they answer at once (a starter written) is handled in turn."""
        pending = list(effects)
        while pending:
            self.save(pending)
            answers: list[Event] = []
            for effect in pending:
                answer = self.do(effect)
                if answer is not None:
                    answers.append(answer)
            pending = []
            for answer in answers:
                state, more = handle(self.lesson, state, answer)
                pending += more
        self.follow(state)
        return state

    def do(self, effect: Effect) -> Event | None:
        if isinstance(effect, Visit | QuizDone | Finished):
            return None  # saved by save()
        from gradtutor import workspace
        from gradtutor.walk_practice import (
            FileReady,
            OpenEditor,
            RunCheck,
            RunSnippet,
            Say,
            WriteStarter,
        )

        if isinstance(effect, WriteStarter):
            try:
                exercise = self.exercises[effect.exercise_id]
                written = workspace.write_starter(self.folder, exercise)
            except GradtutorError as exc:
                return Say(msg("{message} ({hint})", message=exc.message, hint=exc.hint))
            seen = self.store.load().of(self.lesson.id).exercises.get(exercise.id)
            return FileReady(exercise.id, written or self.holds_starter(exercise),
                             hints=seen.hints if seen else 0,
                             solution=seen.solution_seen if seen else False)
        if isinstance(effect, RunCheck):
            self.jobs().check(self.exercises[effect.exercise_id], self.path(effect.exercise_id))
        elif isinstance(effect, RunSnippet):
            self.jobs().snippet(effect.step_id, effect.code, effect.show, effect.series)
        elif isinstance(effect, OpenEditor):
            problem = self.edit(self.path(effect.exercise_id))
            return Say(problem) if problem else None
        return None

    def holds_starter(self, exercise: Exercise) -> bool:
        try:
            return self.path(exercise.id).read_text(encoding="utf-8") == exercise.starter
        except (OSError, UnicodeDecodeError):
            return False

    def path(self, exercise_id: str) -> Path:
        from gradtutor.workspace import exercise_path

        return exercise_path(self.folder, exercise_id)

    def edit(self, path: Path) -> str | None:
        """The learner's editor on `path`, until it closes. Ctrl-C there is the editor's
        business, not a reason to quit the tutor."""
        if not path.is_file():
            return msg("There is no file {path} to open: b then n writes the starter again.",
                       path=str(path))
        from gradtutor.workspace import open_in_editor

        with _ignoring_interrupts():
            return open_in_editor(path, self.env.environ)

    def save(self, effects: list[Effect]) -> None:
        now = now_iso()
        lesson_id = self.lesson.id
        keep_place = self.keep_place

        def change(p: prog.Progress) -> prog.Progress:
            for effect in effects:
                if isinstance(effect, Visit):
                    if keep_place:
                        p = prog.visit(p, lesson_id, effect.step_id, now)
                elif isinstance(effect, QuizDone):
                    p = prog.record_quiz(p, lesson_id, effect.quiz_id, effect.score,
                                         effect.total, now)
                elif isinstance(effect, Finished):
                    if keep_place:
                        p = prog.finish(p, lesson_id, now)
                else:
                    p = _record_practice(p, lesson_id, effect, now)
            return p

        if any(_saved(effect, keep_place) for effect in effects):
            self.store.update(change)

    def follow(self, state: WalkState) -> None:
        """Watch the file of the exercise on screen, and no other."""
        exercise = exercise_on_screen(self.lesson, state)
        wanted = exercise.id if exercise is not None else None
        if wanted == self.watched:
            return
        self.stop_watching()
        if exercise is not None:
            from gradtutor.walk_practice import FileSaved
            from gradtutor.watching import FileWatch, events_enabled

            exercise_id = exercise.id
            self.watch = FileWatch(self.path(exercise_id),
                                   lambda digest: self.io.post(FileSaved(exercise_id, digest)),
                                   use_events=events_enabled(self.env.environ))
            self.watch.start()
            self.watched = exercise_id

    def stop_watching(self) -> None:
        if self.watch is not None:
            self.watch.stop()
        self.watch, self.watched = None, None

    def close(self) -> None:
        self.stop_watching()
        if self.background is not None:
            self.background.close()


def _saved(effect: Effect, keep_place: bool) -> bool:
    if isinstance(effect, Visit | Finished):
        return keep_place
    if isinstance(effect, QuizDone):
        return True
    from gradtutor.walk_practice import RecordCheck, RecordHints, RecordPrediction, RecordSolution

    return isinstance(effect, RecordCheck | RecordHints | RecordSolution | RecordPrediction)


def _record_practice(p: prog.Progress, lesson_id: str, effect: Effect, now: str) -> prog.Progress:
    """How a practice step went, into progress; effects that record nothing leave it."""
    from gradtutor.walk_practice import RecordCheck, RecordHints, RecordPrediction, RecordSolution

    if isinstance(effect, RecordCheck):
        return prog.record_check(p, lesson_id, effect.exercise_id, effect.passed, now)
    if isinstance(effect, RecordHints):
        return prog.record_hints(p, lesson_id, effect.exercise_id, effect.shown, now)
    if isinstance(effect, RecordSolution):
        return prog.record_solution(p, lesson_id, effect.exercise_id, now)
    if isinstance(effect, RecordPrediction):
        return prog.record_prediction(p, lesson_id, effect.step_id, effect.answer,
                                      effect.right, now)
    return p


@contextlib.contextmanager
def _ignoring_interrupts() -> Iterator[None]:
    # A handler, not SIG_IGN: a handler is reset in the editor's process, SIG_IGN would be
    # inherited and leave the editor unable to be interrupted itself.
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
