"""The typed lesson model: what a lesson YAML file becomes once it validates.

Frozen dataclasses; the rules each field obeys are in its metadata and enforced by
`schema.build`, which rejects unknown keys so a typo is reported instead of ignored. Its
metadata also says what a translation does with the field (below). The model holds data
only; nothing here runs code.
"""

import string
from dataclasses import field
from typing import Literal, get_args

from gradtutor.lessons.schema import rules
from gradtutor.records import record

LETTERS = string.ascii_lowercase  # how an author names choices (the learner sees 1, 2, ...)
MAX_CHOICES = 9  # each picked by one digit key

# What a translation does with each field: its metadata's "translate" role, from which
# `lessons/translate/fields.py` derives its tables (tests/test_translate.py fails on a field
# without one). TRANSLATED: words, translated. AS_WRITTEN: code, identifiers, answer keys and
# settings, the same in every language. SHOWN_CODE: code shown to the learner, translated
# only in its comments when it has any; STARTER: a starter's code, always translated for its
# TODOs, likewise in its comments only. BY_ID, BY_LETTER, BY_NUMBER: a list whose items hold
# texts, each item named in a field path by its id, its letter (a, b, ...) or its number (1,
# 2, ...). NESTED_TEXTS: a record whose own fields hold texts.
TRANSLATED = {"translate": "prose"}
AS_WRITTEN = {"translate": "kept"}
SHOWN_CODE = {"translate": "code"}
STARTER = {"translate": "starter"}
BY_ID = {"translate": "by id"}
BY_LETTER = {"translate": "by letter"}
BY_NUMBER = {"translate": "by number"}
NESTED_TEXTS = {"translate": "nested"}

# identifiers are kept as written
ID = rules(pattern=r"[a-z0-9]+(-[a-z0-9]+)*", max_chars=60, what="id") | AS_WRITTEN
TEXT = rules(nonempty=True)
LETTER = rules(pattern=r"[a-z]", what="letter") | AS_WRITTEN
PY_NAME = rules(pattern=r"[A-Za-z_][A-Za-z0-9_]*", what="python name") | AS_WRITTEN
VAR_NAME = rules(pattern=r"[A-Za-z_][A-Za-z0-9_]*", what="variable name") | AS_WRITTEN

# What a step answers when a learner asks (`gradtutor ask`, `a` in the walkthrough): questions
# in a learner's words, translated like any text, and PyTorch's messages (errors and warnings)
# as PyTorch prints them, in English in every language. `validate` proves each question
# finds its own step first.
ASKS = rules(nonempty=True) | BY_NUMBER
ERRORS = rules(nonempty=True) | AS_WRITTEN


def _items(low: int, high: int | None = None, **more: object) -> dict[str, object]:
    return {**rules(min_items=low, max_items=high), **{k: v for k, v in more.items()}}

@record
class Proof:
    """What a quiz choice says about code, as code the learner never sees: `code` (optional)
    runs after the question's `code`, in the same namespace, then `holds`, a Python
    expression, is evaluated; `gradtutor validate` requires `bool(holds)` to be true exactly
    when the answer key marks the choice correct."""

    holds: str = field(metadata=TEXT | AS_WRITTEN)
    code: str | None = field(default=None, metadata=TEXT | AS_WRITTEN)

@record
class Choice:
    """One answer a learner can pick, and why it is right or wrong; in a quiz, optionally
    the `proof`, never shown, that the answer key is right about it."""

    text: str = field(metadata=TEXT | TRANSLATED)
    why: str = field(metadata=TEXT | TRANSLATED)
    proof: Proof | None = field(default=None, metadata=AS_WRITTEN)

@record
class Question:
    """A multiple-choice question; `answer` is one letter or a list of letters (a, b, ...)."""

    id: str = field(metadata=ID)
    prompt: str = field(metadata=TEXT | TRANSLATED)
    choices: tuple[Choice, ...] = field(metadata=_items(2, MAX_CHOICES) | BY_LETTER)
    answer: str | tuple[str, ...] = field(metadata={**LETTER, "min_items": 1})
    code: str | None = field(default=None, metadata=SHOWN_CODE)

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

    kind: Literal["slide"] = field(metadata=AS_WRITTEN)
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT | TRANSLATED)
    body: str = field(metadata=TEXT | TRANSLATED)
    code: str | None = field(default=None, metadata=SHOWN_CODE)
    notes: str | None = field(default=None, metadata=TRANSLATED)
    optional: bool = field(default=False, metadata=AS_WRITTEN)
    asks: tuple[str, ...] = field(default=(), metadata=ASKS)
    errors: tuple[str, ...] = field(default=(), metadata=ERRORS)

@record
class Quiz:
    """The quick check: questions answered by letter, scored at the end."""

    kind: Literal["quiz"] = field(metadata=AS_WRITTEN)
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT | TRANSLATED)
    questions: tuple[Question, ...] = field(metadata=_items(1) | BY_ID)
    intro: str | None = field(default=None, metadata=TRANSLATED)
    pass_mark: float = field(default=0.7, metadata=rules(ge=0, le=1) | AS_WRITTEN)
    asks: tuple[str, ...] = field(default=(), metadata=ASKS)
    errors: tuple[str, ...] = field(default=(), metadata=ERRORS)

@record
class Replacement:
    """Replace the text `find`, which must occur in the solution exactly once, by `with`."""

    find: str = field(metadata=TEXT | AS_WRITTEN)
    with_: str = field(metadata=rules(key="with") | AS_WRITTEN)

@record
class Mutant:
    """A real mistake a learner makes: the solution with edits, and the check it must fail."""

    id: str = field(metadata=ID)
    mistake: str = field(metadata=TEXT | TRANSLATED)
    replace: tuple[Replacement, ...] = field(metadata=_items(1) | AS_WRITTEN)
    fails: str = field(metadata=ID)

@record
class Equivalent:
    """A generated mutant of the solution (gradtutor/checking/mutation.py, named by its id)
    that does what the solution does, so that no check can or should catch it; `why` says so
    in one line, for the reviewer (benchmarks/mutants.py lists the candidates)."""

    mutant: str = field(metadata=TEXT | AS_WRITTEN)
    why: str = field(metadata=TEXT | AS_WRITTEN)

@record
class Rule:
    """What to say about the first case where a declared check does not hold: `say` (a
    message whose `{fields}` name facts of that case) or `explain` (a shared explainer of the
    input family, about the fact `value`, worded from `subject`), when every condition in
    `when` holds for that case (no `when`: always). `help` points at where to look."""

    when: tuple[str, ...] = field(default=(), metadata=rules(nonempty=True) | AS_WRITTEN)
    say: str | None = field(default=None, metadata=TEXT | TRANSLATED)
    explain: str | None = field(default=None, metadata=ID)
    value: str | None = field(default=None, metadata=ID)
    subject: str | None = field(default=None, metadata=TEXT | TRANSLATED)
    help: str | None = field(default=None, metadata=TEXT | TRANSLATED)

@record
class Column:
    """An evidence column: its title, and the fact (or `2x fact`) it shows for the case."""

    title: str = field(metadata=TEXT | TRANSLATED)
    shows: str = field(metadata=TEXT | AS_WRITTEN)

@record
class DeclaredCheck:
    """One check of an exercise judged from its YAML (`checking/checkers/declared.py`): the
    conditions that hold in every case of a correct run (`expect`), what is said when they
    do (`pass`; none: the check is shown only when it fails) and when they do not (`fail`,
    the first rule that applies to the first failing case), and the evidence shown then (one
    row of `evidence` columns, or a `table` of the input family's). Its
    failure is not judged (it is skipped, with a reason) while a check in `after` fails, one
    mistake at a time, nor when a `skip` rule applies to its first failing case; `unjudged`
    says why when no case gives the facts it names (the function never returned, say).
    `needs` names the cases of the input family it needs in every seed (`Family.fixed`)."""

    id: str = field(metadata=ID)
    expect: tuple[str, ...] = field(metadata=_items(1, None, nonempty=True) | AS_WRITTEN)
    fail: tuple[Rule, ...] = field(metadata=_items(1) | BY_NUMBER)
    pass_: str | None = field(default=None,
                              metadata=rules(key="pass", nonempty=True) | TRANSLATED)
    help: str | None = field(default=None, metadata=TEXT | TRANSLATED)
    evidence: tuple[Column, ...] = field(default=(), metadata=BY_NUMBER)
    table: str | None = field(default=None, metadata=ID)
    after: tuple[str, ...] = field(default=(), metadata=ID)
    unjudged: str | None = field(default=None, metadata=TEXT | TRANSLATED)
    skip: tuple[Rule, ...] = field(default=(), metadata=BY_NUMBER)
    needs: tuple[str, ...] = field(default=(), metadata=ID)

@record
class Exercise:
    """Write one function in a file. Either a checker from the registry judges what it does
    (`checker`), or the checks declared here do (`inputs` names the input family from
    `checking/checkers/families.py`, and the `solution` run on the same inputs is the
    reference; `catches` lists the errors of PyTorch's that the family reports as facts, and
    `returns` names the values of a tuple the function returns, as facts)."""

    kind: Literal["exercise"] = field(metadata=AS_WRITTEN)
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT | TRANSLATED)
    prompt: str = field(metadata=TEXT | TRANSLATED)
    function: str = field(metadata=PY_NAME)
    starter: str = field(metadata=TEXT | STARTER)
    solution: str = field(metadata=TEXT | AS_WRITTEN)
    hints: tuple[str, ...] = field(metadata=_items(3, None, nonempty=True) | BY_NUMBER)
    mutants: tuple[Mutant, ...] = field(metadata=_items(4) | BY_ID)
    why: str = field(metadata=TEXT | TRANSLATED)
    equivalent: tuple[Equivalent, ...] = field(default=(), metadata=AS_WRITTEN)
    checker: str | None = field(default=None, metadata=ID)
    inputs: str | None = field(default=None, metadata=ID)
    catches: tuple[str, ...] = field(default=(), metadata=ID)
    returns: tuple[str, ...] = field(default=(), metadata=PY_NAME)
    checks: tuple[DeclaredCheck, ...] = field(default=(), metadata=BY_ID)
    timeout: float = field(default=10.0, metadata=rules(gt=0, le=120) | AS_WRITTEN)
    optional: bool = field(default=False, metadata=AS_WRITTEN)
    asks: tuple[str, ...] = field(default=(), metadata=ASKS)
    errors: tuple[str, ...] = field(default=(), metadata=ERRORS)

    @property
    def declared(self) -> bool:
        """Whether this exercise is judged by the checks its YAML declares."""
        return self.inputs is not None

@record
class Predict:
    """Guess what a snippet produces; the snippet then runs and the real value is shown."""

    kind: Literal["predict"] = field(metadata=AS_WRITTEN)
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT | TRANSLATED)
    prompt: str = field(metadata=TEXT | TRANSLATED)
    code: str = field(metadata=TEXT | SHOWN_CODE)
    # an expression evaluated after `code`; its value is shown
    show: str = field(metadata=TEXT | AS_WRITTEN)
    choices: tuple[Choice, ...] = field(metadata=_items(2, MAX_CHOICES) | BY_LETTER)
    answer: str = field(metadata=LETTER)
    optional: bool = field(default=False, metadata=AS_WRITTEN)
    asks: tuple[str, ...] = field(default=(), metadata=ASKS)
    errors: tuple[str, ...] = field(default=(), metadata=ERRORS)

@record
class ParsonsLine:
    """One line to put in order; `after` names the lines that must come before it."""

    id: str = field(metadata=ID)
    code: str = field(metadata=TEXT | AS_WRITTEN)
    why: str = field(metadata=TEXT | TRANSLATED)
    after: tuple[str, ...] = field(default=(), metadata=ID)

@record
class ParsonsRun:
    """What a correct order does when it runs: `setup` once, then the ordered lines as the
    body of a loop that runs `repeat` times; after each pass `record` (an expression) is
    evaluated and appended to the list named `series`, which is shown, one value per pass."""

    setup: str = field(metadata=TEXT | AS_WRITTEN)
    record: str = field(metadata=TEXT | AS_WRITTEN)
    series: str = field(metadata=VAR_NAME)
    repeat: int = field(default=10, metadata=rules(ge=1, le=1000) | AS_WRITTEN)

@record
class Parsons:
    """Put shuffled lines in an order that satisfies their `after` constraints.

    `solution` is one correct order (line ids); without it, the lines as listed are one.
    With `run`, a correct order is then run as a loop and its effect shown."""

    kind: Literal["parsons"] = field(metadata=AS_WRITTEN)
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT | TRANSLATED)
    prompt: str = field(metadata=TEXT | TRANSLATED)
    lines: tuple[ParsonsLine, ...] = field(metadata=_items(2) | BY_ID)
    solution: tuple[str, ...] | None = field(default=None, metadata=ID)
    run: ParsonsRun | None = field(default=None, metadata=AS_WRITTEN)
    optional: bool = field(default=False, metadata=AS_WRITTEN)
    asks: tuple[str, ...] = field(default=(), metadata=ASKS)
    errors: tuple[str, ...] = field(default=(), metadata=ERRORS)

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
    title: str = field(metadata=TEXT | TRANSLATED)
    x_label: str = field(default="step", metadata=TRANSLATED)
    y_label: str = field(default="loss", metadata=TRANSLATED)
    # the legend's word for each series, in its order (default: its name, _ read as a space)
    labels: tuple[str, ...] = field(default=(), metadata=rules(nonempty=True) | BY_NUMBER)

    def label(self, index: int) -> str:
        """The legend's word for series `index`."""
        if index < len(self.labels):
            return self.labels[index]
        return self.series[index].replace("_", " ")

@record
class Demo:
    """Real code that runs and shows its result, optionally as a chart."""

    kind: Literal["demo"] = field(metadata=AS_WRITTEN)
    id: str = field(metadata=ID)
    title: str = field(metadata=TEXT | TRANSLATED)
    body: str = field(metadata=TEXT | TRANSLATED)
    code: str = field(metadata=TEXT | SHOWN_CODE)
    chart: Chart | None = field(default=None, metadata=NESTED_TEXTS)
    optional: bool = field(default=False, metadata=AS_WRITTEN)
    asks: tuple[str, ...] = field(default=(), metadata=ASKS)
    errors: tuple[str, ...] = field(default=(), metadata=ERRORS)

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
    title: str = field(metadata=TEXT | TRANSLATED)
    summary: str = field(metadata=TEXT | TRANSLATED)
    order: int = field(metadata=rules(ge=1) | AS_WRITTEN)
    steps: tuple[Step, ...] = field(metadata=_items(1) | AS_WRITTEN)
    minutes: int | None = field(default=None, metadata=rules(ge=1) | AS_WRITTEN)

    def index_of(self, step_id: str) -> int | None:
        """The 0-based position of the step with this id, or None if the lesson has none."""
        for index, step in enumerate(self.steps):
            if step.id == step_id:
                return index
        return None

    @property
    def quizzes(self) -> list[Quiz]:
        return [step for step in self.steps if isinstance(step, Quiz)]
