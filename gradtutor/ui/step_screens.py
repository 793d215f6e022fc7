"""The table of step kinds' screens: how each kind of step is drawn, in the walkthrough from
its view (`gradtutor.walk.kinds` finds the rules that make the view) and for reading
(`gradtutor show`). Pure: renderables out. (docs/authoring.md: what a new kind touches.)

The practice screens' modules load when such a step is first drawn, so that a lesson opening
on a slide does not wait for them; the views are the walkthrough's, named here for types only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rich.console import Group, RenderableType
from rich.text import Text

from gradtutor.lessons.model import Demo, Exercise, Lesson, Parsons, Predict, Quiz, Slide, Step
from gradtutor.records import record
from gradtutor.ui import render
from gradtutor.ui.render import Look

if TYPE_CHECKING:
    from gradtutor.walk.demo import DemoView
    from gradtutor.walk.exercise import ExerciseView
    from gradtutor.walk.parsons import ParsonsView
    from gradtutor.walk.predict import PredictView
    from gradtutor.walk.quiz import QuizView
    from gradtutor.walk.slide import SlideView

StepT = TypeVar("StepT")
ViewT = TypeVar("ViewT")


@record
class Frame:
    """What a step is drawn with besides itself and its view: the lesson it belongs to, the
    width of the screen, the look, and the folder of the exercise files."""

    lesson_id: str
    width: int
    look: Look
    folder: Path


class StepScreen(Generic[StepT, ViewT]):
    """How one kind of step is drawn."""

    # What changes on the screen is scrolled into view (a demo's run arriving is not: it
    # must not pull the reader away from the text).
    follow: bool = True

    def body(self, step: StepT, view: ViewT, frame: Frame) -> RenderableType:
        """The step as its view of the moment shows it."""
        raise NotImplementedError

    def page(self, view: ViewT) -> object:
        """What the body is a page of within the step (another page opens at its top)."""
        return None

    def reading(self, step: StepT, look: Look) -> RenderableType:
        """The step for reading: nothing runs and no answer is given away."""
        raise NotImplementedError


class SlideScreen(StepScreen[Slide, "SlideView"]):
    def body(self, step: Slide, view: SlideView, frame: Frame) -> RenderableType:
        return render.slide_body(step, frame.look)

    def reading(self, step: Slide, look: Look) -> RenderableType:
        return render.slide_body(step, look)


class QuizScreen(StepScreen[Quiz, "QuizView"]):
    def body(self, step: Quiz, view: QuizView, frame: Frame) -> RenderableType:
        total = len(step.questions)
        if view.question >= total:
            return render.score_body(step, view.result(step), frame.lesson_id, frame.look)
        question = step.questions[view.question]
        if view.submitted():
            return render.feedback_body(question, view.question + 1, total, view.marks(step),
                                        frame.look)
        return render.question_body(question, view.question + 1, total, view.selected,
                                    frame.look)

    def page(self, view: QuizView) -> object:
        return view.question

    def reading(self, step: Quiz, look: Look) -> RenderableType:
        return render.quiz_overview(step, look)


class ExerciseScreen(StepScreen[Exercise, "ExerciseView"]):
    def body(self, step: Exercise, view: ExerciseView, frame: Frame) -> RenderableType:
        from gradtutor.ui.exercise_view import exercise_body
        from gradtutor.workspace import exercise_path

        return exercise_body(step, view, exercise_path(frame.folder, step.id), frame.look)

    def reading(self, step: Exercise, look: Look) -> RenderableType:
        from gradtutor.ui.exercise_view import exercise_reading

        return exercise_reading(step, look)


class PredictScreen(StepScreen[Predict, "PredictView"]):
    def body(self, step: Predict, view: PredictView, frame: Frame) -> RenderableType:
        from gradtutor.ui.practice import predict_body, predict_pending

        if view.submitted:
            return predict_body(step, view.prediction(step), view.result, frame.look,
                                view.running)
        return predict_pending(step, view.chosen, frame.look)

    def reading(self, step: Predict, look: Look) -> RenderableType:
        from gradtutor.ui.practice import predict_reading

        return predict_reading(step, look)


class ParsonsScreen(StepScreen[Parsons, "ParsonsView"]):
    def body(self, step: Parsons, view: ParsonsView, frame: Frame) -> RenderableType:
        from gradtutor.ui.practice import parsons_body

        return parsons_body(step, view.order, view.cursor, view.grabbed, view.grade(step),
                            view.run, frame.look)

    def reading(self, step: Parsons, look: Look) -> RenderableType:
        from gradtutor.ui.practice import parsons_reading

        return parsons_reading(step, look)


class DemoScreen(StepScreen[Demo, "DemoView"]):
    follow = False

    def body(self, step: Demo, view: DemoView, frame: Frame) -> RenderableType:
        from gradtutor.ui.practice import demo_body

        return demo_body(step, view.result, frame.width, frame.look)

    def reading(self, step: Demo, look: Look) -> RenderableType:
        from gradtutor.ui.practice import demo_reading

        return demo_reading(step, look)


SCREENS: dict[type[Step], StepScreen[Any, Any]] = {
    Slide: SlideScreen(),
    Quiz: QuizScreen(),
    Exercise: ExerciseScreen(),
    Predict: PredictScreen(),
    Parsons: ParsonsScreen(),
    Demo: DemoScreen(),
}


def screen_for(step: Step) -> StepScreen[Any, Any]:
    """How `step`'s kind is drawn."""
    return SCREENS[type(step)]


def step_for_reading(lesson: Lesson, index: int, width: int, look: Look,
                     place: tuple[int, int] | None = None) -> RenderableType:
    """One step as `gradtutor show` prints it: header and content, no key legend."""
    step = lesson.steps[index]
    return Group(render.header(lesson, index, width, look, place),
                 screen_for(step).reading(step, look),
                 Text(""))
