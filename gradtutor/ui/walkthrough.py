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
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rich.console import Console, Group, RenderableType
from rich.text import Text

from gradtutor import progress as prog
from gradtutor.bindings import Scroll, beneath, screen_kind
from gradtutor.env import Environment
from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.lessons.model import LETTERS, Demo, Exercise, Lesson, Parsons, Predict, Quiz, Slide
from gradtutor.store import ProgressStore, now_iso
from gradtutor.ui import render
from gradtutor.ui.fullscreen import FullScreen
from gradtutor.ui.keys import TimedReader, timed_reader
from gradtutor.ui.legend import help_body
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look
from gradtutor.ui.screen import Screen
from gradtutor.walk import (
    Finished,
    QuizAnswered,
    QuizDone,
    QuizRestored,
    RestoreQuiz,
    Visit,
    WalkState,
    busy,
    choices_on_screen,
    enter,
    exercise_on_screen,
    handle,
    key_event,
    line_event,
)

if TYPE_CHECKING:  # the practice machinery loads after the first screen, when it is needed
    from gradtutor.ui.background import Background
    from gradtutor.walk import Effect, Event
    from gradtutor.watching import FileWatch

KEY_WAIT_S = 0.1  # how long a key is awaited before the inbox is looked at again
LINE_CAP = 4096  # characters in one typed line; input with longer "lines" is not typing


def read_line(stream: TextIO) -> str:
    """One typed line from `stream`; "" at its end, and for input that is no typing at all:
    a line without end (`< /dev/zero`), a closed or hung-up stream."""
    try:
        line = stream.readline(LINE_CAP)
    except (OSError, ValueError):
        return ""
    return "" if len(line) >= LINE_CAP and not line.endswith("\n") else line


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
            line = read_line(self._stream)
            self._post(Typed(line))
            if not line:
                return


@dataclass
class Io:
    """How screens go out and events come in: single keys on a terminal, else lines; and
    the inbox where background threads post their news. On a terminal, `full` draws each
    screen into the whole window."""

    console: Console
    keys: bool
    stdin: TextIO
    inbox: queue.Queue[Event | Typed] = field(default_factory=queue.Queue)
    read_key: TimedReader | None = None
    lines: LineReader | None = None
    full: FullScreen | None = None

    def show(self, screen: Screen, follow: bool = True) -> None:
        if self.full is not None:
            self.full.show(screen, follow)
            return
        self.console.print(screen)
        if not self.keys:
            self.console.print("> ", end="")
            self.console.file.flush()

    def post(self, event: Event) -> None:
        """Called from any thread."""
        self.inbox.put(event)

    def next_event(self, lesson: Lesson, state: WalkState) -> Event:
        """The next thing that happens: news from the background first, else the learner's
        key or line. A resized terminal is drawn again on the way."""
        while True:
            if self.read_key is not None:
                with contextlib.suppress(queue.Empty):
                    return self._event(lesson, state, self.inbox.get_nowait())
                key = self.read_key(KEY_WAIT_S)
                if key is None or key == "resize":  # polled too: not every system signals
                    if self.full is not None:
                        self.full.resized()
                    continue
                if key == "eof":  # the terminal is gone: stop where we are, progress is saved
                    return "quit"
                return key_event(lesson, state, key)
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


@contextlib.contextmanager
def make_io(env: Environment, plain: bool, look: Look) -> Iterator[Io]:
    """The walkthrough's input and output for as long as it runs; on a terminal, the full
    screen, left (and the terminal restored) however the walkthrough ends."""
    console = env.console(plain)
    if not env.interactive:
        with _calm_termination(("SIGHUP",)):
            yield Io(console, keys=False, stdin=env.stdin)
        return
    with _resize_signal() as wake, _calm_termination(("SIGTERM", "SIGHUP")):
        full = FullScreen(console, env.terminal_size, look)
        io = Io(console, keys=True, stdin=env.stdin, read_key=timed_reader(env.stdin, wake),
                full=full)
        full.enter()
        try:
            yield io
        finally:
            with _ignoring_interrupts():  # a late Ctrl-C must not cut the restore short
                full.leave()


@contextlib.contextmanager
def _calm_termination(names: tuple[str, ...]) -> Iterator[None]:
    """These signals quit as q does: SIGTERM (`kill`) and SIGHUP (the terminal closed). The
    place is saved and the terminal restored, instead of the process dying with the screen
    still taken. A signal already ignored stays ignored (`nohup`): a terminal that goes away
    then ends the input, which quits all the same."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous: dict[signal.Signals, object] = {}
    for name in names:
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]


@contextlib.contextmanager
def _resize_signal() -> Iterator[int | None]:
    """A descriptor that turns readable when the terminal is resized (SIGWINCH), so the key
    reader wakes at once; None where there is no such signal (the size is polled)."""
    winch = getattr(signal, "SIGWINCH", None)
    if winch is None or threading.current_thread() is not threading.main_thread():
        yield None
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)

    def wake(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):
            os.write(write, b"!")

    previous = signal.signal(winch, wake)
    try:
        yield read
    finally:
        signal.signal(winch, previous)
        os.close(read)
        os.close(write)


def screen(lesson: Lesson, state: WalkState, width: int, keys: bool, look: Look,
           folder: Path | None = None) -> Screen:
    """Everything one screen shows for this state; `folder` holds the exercise files."""
    step = lesson.steps[state.index]
    choices = choices_on_screen(lesson, state)
    last_letter = LETTERS[choices - 1] if choices else ""
    if state.help:
        body = help_body(beneath(lesson, state), keys, look, last_letter)
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
            body = render.score_body(step, view.result(step), lesson.id, look)
        elif view.submitted():
            body = render.feedback_body(step.questions[view.question], view.question + 1, total,
                                        view.answers[view.question], look)
        else:
            body = render.question_body(step.questions[view.question], view.question + 1, total,
                                        view.selected, look)
    else:
        body = render.practice_preview(step, look)
    parts = list(body.renderables) if isinstance(body, Group) else [body]
    page = (state.index, state.help, state.quiz.question if state.quiz is not None else None)
    return Screen(render.header(lesson, state.index, width, look), parts, state.notice,
                  screen_kind(lesson, state), keys, look, last_letter, page)


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
    if folder is None:
        from gradtutor.workspace import default_folder

        folder = default_folder(env.home)
    with make_io(env, plain, look) as io:
        state = _walk(lesson, start, env, store, io, look, folder, keep_place)
    if not io.keys:
        io.console.print()
    return state


def _walk(lesson: Lesson, start: int, env: Environment, store: ProgressStore, io: Io,
          look: Look, folder: Path, keep_place: bool) -> WalkState:
    shell = _Shell(lesson, env, store, io, folder, keep_place)
    state, opened = enter(lesson, start)

    def show(follow: bool) -> None:
        io.show(screen(lesson, state, io.console.width, io.keys, look, folder), follow)

    try:
        # The starter is in place (and watched) before a screen names its file; progress is
        # saved once the first screen is up, as is the warm worker started: both take time.
        state = shell.apply(state, [e for e in opened if not isinstance(e, Visit)])
        show(follow=False)
        if any(isinstance(step, Exercise | Predict | Parsons | Demo) for step in lesson.steps):
            shell.jobs().start()
        state = shell.apply(state, [e for e in opened if isinstance(e, Visit)])
        while state.outcome is None:
            event = io.next_event(lesson, state)
            if isinstance(event, Scroll):
                if io.full is not None and event.action == "page-or-next" and io.full.at_end():
                    event = "next"  # space at the end of a step goes on, as a reader expects
                else:
                    if io.full is not None:
                        io.full.scroll(event.action)
                    continue
            state, effects = handle(lesson, state, event)
            state = shell.apply(state, effects)
            if state.outcome is None:
                # what changed is scrolled into view, except where nothing was asked for:
                # a demo's run arriving must not pull the reader away from the text
                show(follow=not isinstance(lesson.steps[state.index], Demo))
    except KeyboardInterrupt:
        state = handle(lesson, state, "quit")[0]
    finally:
        shell.close()
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
        if isinstance(effect, Visit | QuizDone | QuizAnswered | Finished):
            return None  # saved by save()
        if isinstance(effect, RestoreQuiz):
            kept = self.store.load().of(self.lesson.id).quiz_answers.get(effect.quiz_id, ())
            return QuizRestored(effect.quiz_id, kept) if kept else None
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
                             solution=seen.solution_seen if seen else False,
                             passed=seen.passed if seen else False)
        if isinstance(effect, RunCheck):
            self.jobs().check(self.exercises[effect.exercise_id], self.path(effect.exercise_id))
        elif isinstance(effect, RunSnippet):
            self.jobs().snippet(effect.step_id, effect.code, effect.show, effect.series)
        elif isinstance(effect, OpenEditor):
            problem = self.edit(self.path(effect.exercise_id))
            return Say(problem) if problem else None
        return None

    def holds_starter(self, exercise: Exercise) -> bool:
        from gradtutor.workspace import read_exercise_file

        try:  # never from a pipe or a device, never more than a check would read
            text = read_exercise_file(self.path(exercise.id)).decode("utf-8")
            return text.replace("\r\n", "\n").replace("\r", "\n") == exercise.starter
        except (GradtutorError, UnicodeDecodeError):
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

        full = self.io.full
        if full is not None:
            full.leave()  # the editor has the terminal to itself
        try:
            with _ignoring_interrupts():
                return open_in_editor(path, self.env.environ)
        finally:
            if full is not None:
                full.enter()

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
                elif isinstance(effect, QuizAnswered):
                    p = prog.record_quiz_answers(p, lesson_id, effect.quiz_id, effect.answers,
                                                 now)
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
    if isinstance(effect, QuizDone | QuizAnswered):
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
