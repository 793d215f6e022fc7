"""The typed lesson model: what a lesson YAML file becomes once it validates.

Frozen dataclasses; the rules each field obeys are in its metadata and enforced by
`schema.build`, which rejects unknown keys so a typo is reported instead of ignored.
The model holds data only; nothing here runs code.
"""

import string
from dataclasses import field
from typing import Literal, get_args

from gradtutor.lessons.schema import rules
from gradtutor.records import record

LETTERS = string.ascii_lowercase

ID = rules(pattern=r"[a-z0-9]+(-[a-z0-9]+)*", max_chars=60, what="id")
TEXT = rules(nonempty=True)
LETTER = rules(pattern=r"[a-z]", what="letter")
PY_NAME = rules(pattern=r"[A-Za-z_][A-Za-z0-9_]*", what="python name")
VAR_NAME = rules(pattern=r"[A-Za-z_][A-Za-z0-9_]*", what="variable name")

def _items(low: int, high: int | None = None, **more: object) -> dict[str, object]:
    return {**rules(min_items=low, max_items=high), **{k: v for k, v in more.items()}}

@record
class Proof:
    """What a quiz choice says about code, as code the learner never sees: `code` (optional)
    runs after the question's `code`, in the same namespace, then `holds`, a Python
    expression, is evaluated; `gradtutor validate` requires `bool(holds)` to be true exactly
    when the answer key marks the choice correct."""

    holds: str = field(metadata=TEXT)
    code: str | None = field(default=None, metadata=TEXT)

@record
class Choice:
    """One answer a learner can pick, and why it is right or wrong; in a quiz, optionally
    the `proof`, never shown, that the answer key is right about it."""

    text: str = field(metadata=TEXT)
    why: str = field(metadata=TEXT)
    proof: Proof | None = None

@record
class Question:
    """A multiple-choice question; `answer` is one letter or a list of letters (a, b, ...)."""

    id: str = field(metadata=ID)
    prompt: str = field(metadata=TEXT)
    choices: tuple[Choice, ...] = field(metadata=_items(2, len(LETTERS)))
    answer: str | tuple[str, ...] = field(metadata={**LETTER, "min_items": 1})
    code: str | None = None

    @property
    def letters(self) -> tuple[str, ...]:
        return (self.answer,) if isinstance(self.answer, str) else self.answer

    @property
    def correct(self) -> frozenset[int]:
        """Indexes of the correct choices."""
        return frozenset(LETTERS.index(letter) for letter in self.letters)

    @property
    def multiple(self) -> bool:
        return len(set(self.letters)) > 1

@record
class Slide:
    """A page of explanation: markdown, an optional code sample that runs as shown, notes."""

    kind: Literal["slide"]
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    body: str = field(metadata=TEXT)
    code: str | None = None
    notes: str | None = None
    optional: bool = False

@record
class Quiz:
    """The quick check: questions answered by letter, scored at the end."""

    kind: Literal["quiz"]
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    questions: tuple[Question, ...] = field(metadata=_items(1))
    intro: str | None = None
    pass_mark: float = field(default=0.7, metadata=rules(ge=0, le=1))

@record
class Replacement:
    """Replace the text `find`, which must occur in the solution exactly once, by `with`."""

    find: str = field(metadata=TEXT)
    with_: str = field(metadata=rules(key="with"))

@record
class Mutant:
    """A real mistake a learner makes: the solution with edits, and the check it must fail."""

    id: str = field(metadata=ID)
    mistake: str = field(metadata=TEXT)
    replace: tuple[Replacement, ...] = field(metadata=_items(1))
    fails: str = field(metadata=ID)

@record
class Rule:
    """What to say about the first case where a declared check does not hold: `say` (a
    message whose `{fields}` name facts of that case) or `explain` (a shared explainer of the
    input family, about the fact `value`, worded from `subject`), when every condition in
    `when` holds for that case (no `when`: always). `help` points at where to look."""

    when: tuple[str, ...] = field(default=(), metadata=rules(nonempty=True))
    say: str | None = field(default=None, metadata=TEXT)
    explain: str | None = field(default=None, metadata=ID)
    value: str | None = field(default=None, metadata=ID)
    subject: str | None = field(default=None, metadata=TEXT)
    help: str | None = field(default=None, metadata=TEXT)

@record
class Column:
    """An evidence column: its title, and the fact (or `2x fact`) it shows for the case."""

    title: str = field(metadata=TEXT)
    shows: str = field(metadata=TEXT)

@record
class DeclaredCheck:
    """One check of an exercise judged from its YAML (`checking/checkers/declared.py`): the
    conditions that hold in every case of a correct run (`expect`), what is said when they
    do (`pass`; none: the check is shown only when it fails) and when they do not (`fail`,
    the first rule that applies to the first failing case), and the evidence shown then (one
    row of `evidence` columns, or a `table` of the input family's). Its
    failure is not judged (it is skipped, with a reason) while a check in `after` fails, one
    mistake at a time, nor when a `skip` rule applies to its first failing case; `unjudged`
    says why when no case gives the facts it names (the function never returned, say)."""

    id: str = field(metadata=ID)
    expect: tuple[str, ...] = field(metadata=_items(1, None, nonempty=True))
    fail: tuple[Rule, ...] = field(metadata=_items(1))
    pass_: str | None = field(default=None, metadata=rules(key="pass", nonempty=True))
    help: str | None = field(default=None, metadata=TEXT)
    evidence: tuple[Column, ...] = ()
    table: str | None = field(default=None, metadata=ID)
    after: tuple[str, ...] = field(default=(), metadata=ID)
    unjudged: str | None = field(default=None, metadata=TEXT)
    skip: tuple[Rule, ...] = ()

@record
class Exercise:
    """Write one function in a file. Either a checker from the registry judges what it does
    (`checker`), or the checks declared here do (`inputs` names the input family from
    `checking/checkers/families.py`, and the `solution` run on the same inputs is the
    reference; `catches` lists the errors of PyTorch's that the family reports as facts, and
    `returns` names the values of a tuple the function returns, as facts)."""

    kind: Literal["exercise"]
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    prompt: str = field(metadata=TEXT)
    function: str = field(metadata=PY_NAME)
    starter: str = field(metadata=TEXT)
    solution: str = field(metadata=TEXT)
    hints: tuple[str, ...] = field(metadata=_items(3, None, nonempty=True))
    mutants: tuple[Mutant, ...] = field(metadata=_items(4))
    why: str = field(metadata=TEXT)
    checker: str | None = field(default=None, metadata=ID)
    inputs: str | None = field(default=None, metadata=ID)
    catches: tuple[str, ...] = field(default=(), metadata=ID)
    returns: tuple[str, ...] = field(default=(), metadata=PY_NAME)
    checks: tuple[DeclaredCheck, ...] = ()
    timeout: float = field(default=10.0, metadata=rules(gt=0, le=120))
    optional: bool = False

    @property
    def declared(self) -> bool:
        """Whether this exercise is judged by the checks its YAML declares."""
        return self.inputs is not None

@record
class Predict:
    """Guess what a snippet produces; the snippet then runs and the real value is shown."""

    kind: Literal["predict"]
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    prompt: str = field(metadata=TEXT)
    code: str = field(metadata=TEXT)
    show: str = field(metadata=TEXT)  # an expression evaluated after `code`; its value is shown
    choices: tuple[Choice, ...] = field(metadata=_items(2, len(LETTERS)))
    answer: str = field(metadata=LETTER)
    optional: bool = False

@record
class ParsonsLine:
    """One line to put in order; `after` names the lines that must come before it."""

    id: str = field(metadata=ID)
    code: str = field(metadata=TEXT)
    why: str = field(metadata=TEXT)
    after: tuple[str, ...] = field(default=(), metadata=ID)

@record
class ParsonsRun:
    """What a correct order does when it runs: `setup` once, then the ordered lines as the
    body of a loop that runs `repeat` times; after each pass `record` (an expression) is
    evaluated and appended to the list named `series`, which is shown, one value per pass."""

    setup: str = field(metadata=TEXT)
    record: str = field(metadata=TEXT)
    series: str = field(metadata=VAR_NAME)
    repeat: int = field(default=10, metadata=rules(ge=1, le=1000))

@record
class Parsons:
    """Put shuffled lines in an order that satisfies their `after` constraints.

    `solution` is one correct order (line ids); without it, the lines as listed are one.
    With `run`, a correct order is then run as a loop and its effect shown."""

    kind: Literal["parsons"]
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    prompt: str = field(metadata=TEXT)
    lines: tuple[ParsonsLine, ...] = field(metadata=_items(2))
    solution: tuple[str, ...] | None = field(default=None, metadata=ID)
    run: ParsonsRun | None = None
    optional: bool = False

    @property
    def solution_order(self) -> tuple[str, ...]:
        """The author's correct order, as line ids."""
        return self.solution if self.solution is not None else tuple(ln.id for ln in self.lines)

    def line(self, line_id: str) -> ParsonsLine:
        """The line with this id (KeyError if there is none)."""
        for candidate in self.lines:
            if candidate.id == line_id:
                return candidate
        raise KeyError(line_id)

@record
class Chart:
    """Series the demo's code leaves in named variables, drawn as a chart."""

    series: tuple[str, ...] = field(metadata={**VAR_NAME, "min_items": 1})
    title: str = field(metadata=TEXT)
    x_label: str = "step"
    y_label: str = "loss"

@record
class Demo:
    """Real code that runs and shows its result, optionally as a chart."""

    kind: Literal["demo"]
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    body: str = field(metadata=TEXT)
    code: str = field(metadata=TEXT)
    chart: Chart | None = None
    optional: bool = False

Step = Slide | Quiz | Exercise | Predict | Parsons | Demo


def kind_of(step_type: type) -> str:
    """The `kind:` a lesson file gives a step of this type (its `kind` field's one value)."""
    (kind,) = get_args(step_type.__annotations__["kind"])
    return str(kind)


# The kinds of step, in the order of `Step`: a new kind is one record added to `Step`.
STEP_KINDS: tuple[str, ...] = tuple(kind_of(t) for t in get_args(Step))

@record
class Lesson:
    """One lesson: metadata and an ordered list of steps with stable ids."""

    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT)
    summary: str = field(metadata=TEXT)
    order: int = field(metadata=rules(ge=1))
    steps: tuple[Step, ...] = field(metadata=_items(1))
    minutes: int | None = field(default=None, metadata=rules(ge=1))

    def index_of(self, step_id: str) -> int | None:
        """The 0-based position of the step with this id, or None if the lesson has none."""
        for index, step in enumerate(self.steps):
            if step.id == step_id:
                return index
        return None

    @property
    def quizzes(self) -> list[Quiz]:
        return [step for step in self.steps if isinstance(step, Quiz)]
