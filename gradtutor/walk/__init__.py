"""The walkthrough: a lesson one step per screen.

Its decisions are a pure state machine: `machine` (moving between steps, whose news is whose)
over the rules of each kind of step (`kinds.RULES`: `quiz`, `exercise`, `predict`, `parsons`,
`demo`, and `rules` for slides), the state they keep (`state`), what comes in and goes out
(`events`) and the keys read as events (`input`). Its shell does the I/O around them: `shell`
runs the loop and carries out the effects, `background` runs checks and snippets in a thread.
The screens are drawn by `gradtutor.ui.step_screens`.

The state machine's names are here too, so that `from gradtutor.walk import handle` reads as
what it is.
"""

from gradtutor.walk.demo import DemoView
from gradtutor.walk.events import (
    Act,
    Answer,
    CheckDone,
    CheckFailed,
    Choose,
    Effect,
    Event,
    FileReady,
    FileSaved,
    Finished,
    Move,
    Nav,
    News,
    OpenEditor,
    Order,
    QuizAnswered,
    QuizDone,
    QuizRestored,
    RecordCheck,
    RecordHints,
    RecordPrediction,
    RecordSolution,
    RestoreQuiz,
    RunCheck,
    RunSnippet,
    Say,
    SnippetDone,
    SnippetFailed,
    Unknown,
    Visit,
    WriteStarter,
)
from gradtutor.walk.exercise import ExerciseView
from gradtutor.walk.input import key_event, line_event
from gradtutor.walk.machine import (
    begin,
    beneath,
    busy,
    choices_on_screen,
    enter,
    exercise_on_screen,
    go_back,
    go_forward,
    handle,
    reached_the_end,
    screen_kind,
)
from gradtutor.walk.parsons import ParsonsView
from gradtutor.walk.predict import PredictView
from gradtutor.walk.quiz import QuizResult, QuizView
from gradtutor.walk.rules import SlideView
from gradtutor.walk.state import StepView, WalkState

__all__ = [
    "Act", "Answer", "CheckDone", "CheckFailed", "Choose", "DemoView", "Effect", "Event",
    "ExerciseView", "FileReady", "FileSaved", "Finished", "Move", "Nav", "News", "OpenEditor",
    "Order", "ParsonsView", "PredictView", "QuizAnswered", "QuizDone", "QuizRestored",
    "QuizResult", "QuizView", "RecordCheck", "RecordHints", "RecordPrediction",
    "RecordSolution", "RestoreQuiz", "RunCheck", "RunSnippet", "Say", "SlideView",
    "SnippetDone", "SnippetFailed", "StepView", "Unknown", "Visit", "WalkState",
    "WriteStarter", "begin", "beneath", "busy", "choices_on_screen", "enter",
    "exercise_on_screen", "go_back", "go_forward", "handle", "key_event", "line_event",
    "reached_the_end", "screen_kind",
]
