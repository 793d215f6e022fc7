"""The typed lesson model: what a lesson YAML file becomes once it validates.

Every model forbids unknown keys so that a typo is reported instead of silently ignored.
The model holds data only; nothing here runs code.
"""

from __future__ import annotations

import string
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

Id = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=60)]
Text = Annotated[str, StringConstraints(min_length=1)]
Letter = Annotated[str, StringConstraints(pattern=r"^[a-z]$")]

LETTERS = string.ascii_lowercase


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Choice(Model):
    """One answer a learner can pick, and why it is right or wrong."""

    text: Text
    why: Text


class Question(Model):
    """A multiple-choice question; `answer` is one letter or a list of letters (a, b, ...)."""

    id: Id
    prompt: Text
    code: str | None = None
    choices: list[Choice] = Field(min_length=2, max_length=len(LETTERS))
    answer: Letter | list[Letter]

    @field_validator("answer")
    @classmethod
    def _no_empty_answer(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list) and not value:
            raise ValueError("needs at least one letter, for example [a, c]")
        return value

    @property
    def correct(self) -> frozenset[int]:
        """Indexes of the correct choices."""
        letters = [self.answer] if isinstance(self.answer, str) else self.answer
        return frozenset(LETTERS.index(letter) for letter in letters)

    @property
    def multiple(self) -> bool:
        return isinstance(self.answer, list) and len(set(self.answer)) > 1


class Slide(Model):
    """A page of explanation: markdown, an optional code sample that runs as shown, notes."""

    kind: Literal["slide"]
    id: Id
    title: Text
    body: Text
    code: str | None = None
    notes: str | None = None


class Quiz(Model):
    """The quick check: questions answered by letter, scored at the end."""

    kind: Literal["quiz"]
    id: Id
    title: Text
    intro: str | None = None
    questions: list[Question] = Field(min_length=1)
    pass_mark: float = Field(default=0.7, ge=0, le=1)


class Mutant(Model):
    """A real mistake a learner makes: the solution with edits, and the check it must fail."""

    id: Id
    mistake: Text
    replace: list[Replacement] = Field(min_length=1)
    fails: Id


class Replacement(Model):
    """Replace the text `find`, which must occur in the solution exactly once, by `with`."""

    find: Text
    with_: str = Field(alias="with")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Exercise(Model):
    """Write one function in a file; a checker from the registry judges what it does."""

    kind: Literal["exercise"]
    id: Id
    title: Text
    prompt: Text
    checker: Id
    function: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    starter: Text
    solution: Text
    hints: list[Text] = Field(min_length=3)
    mutants: list[Mutant] = Field(min_length=4)
    why: Text
    timeout: float = Field(default=10.0, gt=0, le=120)


class Predict(Model):
    """Guess what a snippet produces; the snippet then runs and the real value is shown."""

    kind: Literal["predict"]
    id: Id
    title: Text
    prompt: Text
    code: Text
    show: Text = Field(description="an expression evaluated after `code`; its value is shown")
    choices: list[Choice] = Field(min_length=2, max_length=len(LETTERS))
    answer: Letter


class ParsonsLine(Model):
    """One line to put in order; `after` names the lines that must come before it."""

    id: Id
    code: Text
    after: list[Id] = Field(default_factory=list)
    why: Text


class Parsons(Model):
    """Put shuffled lines in an order that satisfies their `after` constraints."""

    kind: Literal["parsons"]
    id: Id
    title: Text
    prompt: Text
    lines: list[ParsonsLine] = Field(min_length=2)


class Chart(Model):
    """Series the demo's code leaves in named variables, drawn as a chart."""

    series: list[Text] = Field(min_length=1)
    title: Text
    x_label: str = "step"
    y_label: str = "loss"


class Demo(Model):
    """Real code that runs and shows its result, optionally as a chart."""

    kind: Literal["demo"]
    id: Id
    title: Text
    body: Text
    code: Text
    chart: Chart | None = None


Step = Annotated[
    Union[Slide, Quiz, Exercise, Predict, Parsons, Demo],
    Field(discriminator="kind"),
]
STEP_KINDS: tuple[str, ...] = ("slide", "quiz", "exercise", "predict", "parsons", "demo")


class Lesson(Model):
    """One lesson: metadata and an ordered list of steps with stable ids."""

    id: Id
    title: Text
    summary: Text
    order: int = Field(ge=1)
    minutes: int | None = Field(default=None, ge=1)
    steps: list[Step] = Field(min_length=1)

    def index_of(self, step_id: str) -> int | None:
        """The 0-based position of the step with this id, or None if the lesson has none."""
        for index, step in enumerate(self.steps):
            if step.id == step_id:
                return index
        return None

    @property
    def quizzes(self) -> list[Quiz]:
        return [step for step in self.steps if isinstance(step, Quiz)]


Mutant.model_rebuild()
