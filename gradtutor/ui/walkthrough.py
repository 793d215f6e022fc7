"""The walkthrough's shell: show a screen, wait for a key, a line or news from the
background, do what the decision asks, save what changed.

All decisions live in the state machine (`gradtutor.walk.machine`); this module only does the
I/O around them. Work that takes time (a check) runs in the thread of
`gradtutor.walk.background.Background`, a save is noticed by `watching.FileWatch`'s, and both
post their news to one inbox that the loop waits on together with the learner's input
(`gradtutor.ui.terminal.Io`). So the screen answers keys while a check runs, and a verdict
shows the moment it arrives, without a key press.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING

from gradtutor.bindings import Ask, Scroll
from gradtutor.env import Environment
from gradtutor.errors import GradtutorError
from gradtutor.i18n import msg
from gradtutor.lessons.model import Exercise, Lesson
from gradtutor.store import ProgressStore, now_iso
from gradtutor.ui.render import Look
from gradtutor.ui.step_screens import screen_for
from gradtutor.ui.terminal import Io, ignoring_interrupts, make_io
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.events import (
    CheckWaiting,
    Effect,
    Event,
    FileReady,
    FileSaved,
    OpenEditor,
    QuizRestored,
    Record,
    RestoreQuiz,
    RunCheck,
    RunSnippet,
    Say,
    Visit,
    WriteOrder,
    WriteStarter,
)
from gradtutor.walk.kinds import rules_for
from gradtutor.walk.machine import enter, exercise_on_screen, handle
from gradtutor.walk.state import WalkState

if TYPE_CHECKING:  # the practice machinery loads after the first screen, when it is needed
    from gradtutor.walk.background import Background
    from gradtutor.watching import FileWatch


def run(lesson: Lesson, start: int, env: Environment, store: ProgressStore, plain: bool,
        keep_place: bool = True, folder: Path | None = None,
        place: tuple[int, int] | None = None, watching: bool = False,
        course: Path | None = None) -> WalkState:
    """Walk through `lesson` from step `start` until the learner quits or finishes.

    Every change is saved as it happens, so nothing is lost on Ctrl-C or a closed terminal.
    With `keep_place` False (a quiz taken alone, an exercise watched alone) the place is not
    saved, only scores and how exercises went. Exercise files live in `folder` (default: the
    workspace in the learner's data folder). `place` (position, total) is the lesson's in
    its course, shown in the header. `watching`: `lesson` is one exercise watched alone, left
    only by quitting. `course` is the folder of the course (None: the built-in one), whose
    index answers `a`.
    """
    look = Look(plain, env.tr)
    if lesson.quizzes:  # a retake asks in another order
        from gradtutor.walk.quiz import as_asked

        lesson = as_asked(lesson, store.load().of(lesson.id))
    if folder is None:
        from gradtutor.workspace import default_folder

        folder = default_folder(env.home)
    with make_io(env, plain, look) as io:
        state = _walk(lesson, start, env, store, io, look, folder, keep_place, place, watching,
                      course)
    if not io.keys:
        io.console.print()
    return state


def _walk(lesson: Lesson, start: int, env: Environment, store: ProgressStore, io: Io,
          look: Look, folder: Path, keep_place: bool,
          place: tuple[int, int] | None, watching: bool = False,
          course: Path | None = None) -> WalkState:
    shell = _Shell(lesson, env, store, io, folder, keep_place)
    state, opened = enter(lesson, start)
    state = replace(state, watching=watching)

    def show(follow: bool) -> None:
        io.show(screen(lesson, state, io.console.width, io.keys, look, folder, place), follow)

    unsaved: list[Effect] = []  # recorded by the last event, saved once its screen is drawn
    try:
        # The starter is in place (and watched) before a screen names its file; progress is
        # saved once the first screen is up, as is the warm worker started: both take time.
        state = shell.apply(state, [e for e in opened if not isinstance(e, Visit)])
        show(follow=False)
        if any(rules_for(step).runs_code for step in lesson.steps):
            shell.jobs().start()
        state = shell.apply(state, [e for e in opened if isinstance(e, Visit)])
        while state.outcome is None:
            event = io.next_event(lesson, state)
            if isinstance(event, Ask):
                answered = _ask(io, lesson, state, env, look, folder, place, course, event)
                if answered is None:
                    show(follow=False)  # the screen as it was
                    continue
                event = answered
            if isinstance(event, Scroll):
                if io.full is not None and event.action == "page-or-next" and io.full.at_end():
                    event = "next"  # space at the end of a step goes on, as a reader expects
                else:
                    if io.full is not None:
                        io.full.scroll(event.action)
                    continue
            state, effects = handle(lesson, state, event)
            state = shell.apply(state, effects, unsaved)
            if state.outcome is None:
                # what changed is scrolled into view, except where nothing was asked for:
                # a demo's run arriving must not pull the reader away from the text, nor
                # does a wait's count of seconds, once it is shown
                ticked = isinstance(event, CheckWaiting) and event.seconds > 0
                show(follow=screen_for(lesson.steps[state.index]).follow and not ticked)
            shell.save(unsaved)  # after the screen: a verdict is not kept waiting by it
            unsaved.clear()
    except KeyboardInterrupt:
        state = handle(lesson, state, "quit")[0]
    finally:
        try:
            with ignoring_interrupts():  # what an interrupt cut short is saved all the same
                shell.save(unsaved)
        finally:
            shell.close()
    return state


def _ask(io: Io, lesson: Lesson, state: WalkState, env: Environment, look: Look, folder: Path,
         place: tuple[int, int] | None, course: Path | None, event: Ask) -> Event | None:
    """`a`: ask over the screen (or, typed on a line, answer at once); what the walk does
    next, if anything (a step to go to, or quitting)."""
    from gradtutor.ui.ask_screen import ask_on_lines, ask_on_terminal

    if io.full is None:
        ask_on_lines(io, event.question, lesson, state, env, folder, course, look)
        return None
    below = screen(lesson, state, io.console.width, io.keys, look, folder, place)
    return ask_on_terminal(io, below, lesson, state, env, folder, course)


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
            from gradtutor.walk.background import Background

            # the wait for PyTorch is told on a screen redrawn in place, not in a transcript
            self.background = Background(self.io.post, self.env.environ, waits=self.io.keys)
        return self.background

    def apply(self, state: WalkState, effects: list[Effect],
              later: list[Effect] | None = None) -> WalkState:
        """Do `effects`; what they answer at once (a starter written) is handled in turn.
        What they record is saved at once, or put in `later` for the caller to save."""
        pending = list(effects)
        while pending:
            if later is None:
                self.save(pending)
            else:
                later.extend(pending)
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
        """Carry out one piece of work; what it answers at once, as news. Progress to save
        is saved by `save`."""
        match effect:
            case RestoreQuiz(quiz_id):
                kept = self.store.load().of(self.lesson.id).quiz_answers.get(quiz_id, ())
                return QuizRestored(quiz_id, kept) if kept else None
            case WriteStarter(exercise_id):
                from gradtutor import workspace

                try:
                    exercise = self.exercises[exercise_id]
                    written = workspace.write_starter(self.folder, exercise)
                except GradtutorError as exc:
                    return Say(msg("{message} ({hint})", message=exc.message, hint=exc.hint))
                seen = self.store.load().of(self.lesson.id).exercises.get(exercise.id)
                return FileReady(exercise.id, written or self.holds_starter(exercise),
                                 hints=seen.hints if seen else 0,
                                 solution=seen.solution_seen if seen else False,
                                 passed=seen.passed if seen else False)
            case WriteOrder(step_id, lines):
                from gradtutor.workspace import write_answer

                try:
                    write_answer(self.folder, step_id, lines)
                except GradtutorError as exc:
                    return Say(msg("{message} ({hint})", message=exc.message, hint=exc.hint))
            case RunCheck(exercise_id):
                self.jobs().check(self.exercises[exercise_id], self.path(exercise_id))
            case RunSnippet(step_id, code, show, series):
                self.jobs().snippet(step_id, code, show, series)
            case OpenEditor(exercise_id):
                problem = self.edit(self.path(exercise_id))
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
            with ignoring_interrupts():
                return open_in_editor(path, self.env.environ)
        finally:
            if full is not None:
                full.enter()

    def save(self, effects: list[Effect]) -> None:
        """Record in progress what `effects` record; the place only where it is kept."""
        records = [e for e in effects
                   if isinstance(e, Record) and (self.keep_place or not e.place)]
        if records:
            now, lesson_id = now_iso(), self.lesson.id
            self.store.update(lambda p: reduce(
                lambda done, record: record.recorded(done, lesson_id, now), records, p))

    def follow(self, state: WalkState) -> None:
        """Watch the file of the exercise on screen, and no other."""
        exercise = exercise_on_screen(self.lesson, state)
        wanted = exercise.id if exercise is not None else None
        if wanted == self.watched:
            return
        self.stop_watching()
        if exercise is not None:
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
