"""Lesson model -> Rich renderables. Pure: nothing here prints or reads keys.

Two looks: `fancy` (colour, boxes, highlighted code) and `plain` (no colour, no box drawing,
markdown shown as written) for NO_COLOR, TERM=dumb, --plain and pipes. Meaning never rests
on colour alone: pass and fail always carry a word and a symbol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich import box
from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from gradtutor.bindings import choice_key
from gradtutor.checking.feedback import listed
from gradtutor.i18n import ENGLISH, Translator, Untranslated, msg
from gradtutor.lessons.model import Choice, Lesson, Question, Quiz, Slide
from gradtutor.lessons.timing import Duration, duration, is_optional
from gradtutor.progress import LessonProgress, exercises_solved, quiz_passed
from gradtutor.records import record
from gradtutor.ui.codeblock import CodeBlock
from gradtutor.ui.linebreak import Prose, ProseMarkdown
from gradtutor.ui.plain_markdown import PlainMarkdown

if TYPE_CHECKING:
    from gradtutor.walk.quiz import AnswerMarks, Marked, QuizResult

MAX_WIDTH = 100
EN_MARK = "[EN]"  # after lesson text shown in English because its translation is missing


@record
class Look:
    """How screens are drawn: `plain` or fancy, and `tr`, the translator that says the
    interface's messages in the learner's language."""

    plain: bool
    tr: Translator = ENGLISH

    @property
    def ok(self) -> str:
        return "[OK]" if self.plain else "✓"

    @property
    def bad(self) -> str:
        return "[X]" if self.plain else "✗"

    @property
    def missed(self) -> str:
        """A right answer the learner did not choose: neither right nor wrong of theirs."""
        return "[!]" if self.plain else "!"


def progress_bar(position: int, total: int, width: int, look: Look) -> Text:
    """`━━━━───── step 4 of 17`, or `[####-----] step 4 of 17` in plain look. The bar is as
    long on every step: it leaves room for the widest label, `step 17 of 17`."""
    label = " " + look.tr(msg("step {position} of {total}", position=position, total=total))
    widest = " " + look.tr(msg("step {position} of {total}", position=total, total=total))
    cells = max(4, min(40, width - max(cell_len(label), cell_len(widest)) - 2))
    filled = round(cells * position / total) if total else 0
    if look.plain:
        return Text(f"[{'#' * filled}{'-' * (cells - filled)}]{label}")
    bar = Text("━" * filled, style="green") + Text("─" * (cells - filled), style="grey50")
    return bar + Text(label, style="bold")


def english_mark(text: str, look: Look) -> Text | None:
    """The dim `[EN]` that follows lesson text shown in English for want of a translation."""
    if not isinstance(text, Untranslated):
        return None
    return Text(EN_MARK, style="" if look.plain else "dim")


def tagged(text: Text, source: str, look: Look) -> Text:
    """`text`, followed by ` [EN]` when `source` is untranslated lesson text."""
    mark = english_mark(source, look)
    if mark is not None:
        text.append(" ")
        text.append_text(mark)
    return text


def markdown(body: str, look: Look) -> RenderableType:
    # Plain look shows the markdown source: it is already readable text, and it pipes well;
    # its paragraphs and list items reflow as the fancy look's do.
    if look.plain:
        return PlainMarkdown(body.strip(), tail=english_mark(body, look))
    return ProseMarkdown(body.strip(), tail=english_mark(body, look))


def inline(text: str, look: Look, style: str = "") -> Text:
    """One line of text in which `code` spans are highlighted (shown as written when plain).
    Chinese in it wraps between characters; code spans are never broken."""
    source, text = text, " ".join(text.split())
    if look.plain or text.count("`") % 2:  # an unpaired backtick: show the text untouched
        return tagged(Prose(text, style=style), source, look)
    parts = text.split("`")
    out = Prose(style=style, keep=[p for p in parts[1::2] if " " in p])
    for n, part in enumerate(parts):
        out.append(part, style="bold cyan" if n % 2 else "")
    return tagged(out, source, look)


def title_text(title: str, look: Look, style: str = "") -> Text:
    """A lesson's or a step's title, tagged when it is shown in English."""
    return tagged(Prose(title, style=style), title, look)


def code_block(code: str, look: Look) -> RenderableType:
    """Code in a box (indented when plain); a line too long for the width continues on the
    next row under its own indentation, behind a continuation mark. Code whose comments are
    shown in English for want of a translation is followed by the `[EN]` mark."""
    block = CodeBlock(code, look.plain)
    boxed: RenderableType = (Padding(block, (0, 0, 0, 4)) if look.plain else
                             Panel(block, box=box.ROUNDED, border_style="grey50", expand=False))
    mark = english_mark(code, look)  # comments not translated: marked once, below the code
    return boxed if mark is None else Group(boxed, mark)


def rule(title: str, look: Look) -> RenderableType:
    if look.plain:  # not markup
        return Rule(title_text(title, look), characters="-", style="none", align="left")
    return Rule(title_text(title, look, "bold cyan"), style="cyan", align="left")


def header(lesson: Lesson, index: int, width: int, look: Look,
           place: tuple[int, int] | None = None) -> RenderableType:
    """The lesson's title in a rule (with its `place` in the course, position of total, when
    the course has more than one lesson), the step's title and the progress bar; a walk of
    one step (a quiz taken alone, an exercise watched alone) has no bar: "step 1 of 1" says
    nothing."""
    step = lesson.steps[index]
    title = title_text(step.title, look, "bold")
    if is_optional(step):
        title.append("  " + look.tr(msg("(optional practice)")), style="" if look.plain else "dim")
    name = lesson.title
    if place is not None and place[1] > 1:
        name = look.tr(msg("Lesson {position} of {total}: {title}", position=place[0],
                           total=place[1], title=lesson.title))
    bar = ([progress_bar(index + 1, len(lesson.steps), width, look)]
           if len(lesson.steps) > 1 else [])
    return Group(rule(name, look), title, *bar, Text(""))


_PLAIN_KEYS = {"←": "Left", "→": "Right", "↑": "Up", "↓": "Down"}


def key_text(key: str, look: Look) -> str:
    """A key (or a word to type) as the screen writes it, never translated: it is what the
    learner presses or types. Arrows are spelt out in the plain look, as not every dumb
    terminal's font has them."""
    if look.plain:
        for arrow, word in _PLAIN_KEYS.items():
            key = key.replace(arrow, word)
    return key


def legend_entry(key: str, what: str, look: Look) -> tuple[str, str]:
    """One legend entry as written: its key and its word, said in the learner's language. A
    word typed in a pipe that is itself the entry's word (`back` to go back) is written once,
    not as `back back`."""
    key, what = key_text(key, look), look.tr(what)
    return key, "" if what == key else f" {what}"


def legend(keys: Iterable[tuple[str, str]], look: Look) -> RenderableType:
    """The key legend at the foot of a screen: `n/→/Enter next · b/← back · ...`. Keys and
    their words are messages, said in the learner's language; an entry is never broken."""
    sep = " | " if look.plain else " · "
    parts = Prose()
    entries = []
    for i, (key, what) in enumerate(keys):
        key, what = legend_entry(key, what, look)
        if i:
            parts.append(sep, style="grey50")
        parts.append(key, style="bold")
        parts.append(what)
        entries.append(key + what)
    parts.keep = tuple(entries)
    return Group(Text(""), parts)


def slide_body(slide: Slide, look: Look) -> RenderableType:
    parts: list[RenderableType] = [markdown(slide.body, look)]
    if slide.code:
        parts += [Text(""), code_block(slide.code, look)]
    if slide.notes:
        parts += [Text(""), Prose.assemble((look.tr(msg("Note: ")), "bold"),
                                            inline(slide.notes, look, "italic"))]
    return Group(*parts)


def _mark(question: Question, index: int, selected: frozenset[int], look: Look) -> str:
    chosen = index in selected
    if question.multiple:
        return "[x]" if chosen else "[ ]"
    return ("(*)" if look.plain else "(•)") if chosen else "( )"


def asked(question: Question, look: Look) -> list[RenderableType]:
    """What a question asks: its prompt, and the code it is about, if any."""
    if not question.code:
        return [markdown(question.prompt, look)]
    return [markdown(question.prompt, look), Text(""), code_block(question.code, look)]


def question_body(question: Question, number: int, total: int, selected: frozenset[int],
                  look: Look) -> RenderableType:
    """A question waiting for an answer, with the learner's current selection marked."""
    how = (msg("Question {number} of {total} (choose all that apply; all or nothing)",
               number=number, total=total)
           if question.multiple else
           msg("Question {number} of {total} (choose one)", number=number, total=total))
    parts: list[RenderableType] = [
        Prose(look.tr(how), style="bold"),
        Text(""),
        *asked(question, look),
        Text(""),
    ]
    grid = _hanging()
    for i, choice in enumerate(question.choices):
        # Text, not a str: add_row would read a str as markup and drop "[x]" as a tag
        grid.add_row(Text(f"{_mark(question, i, selected, look)} {choice_key(i)})"),
                     inline(choice.text, look, "bold" if i in selected else ""))
    parts.append(Padding(grid, (0, 0, 0, 2)))
    return Group(*parts)


class Focused(Group):
    """A body with the parts [first, last) that matter most (a verdict and the words on the
    learner's own answer): a full screen keeps them in view when they appear."""

    def __init__(self, parts: list[RenderableType], focus: tuple[int, int]) -> None:
        super().__init__(*parts)
        self.focus = focus


def _hanging() -> Table:
    """Two columns, label and text, so wrapped text keeps its indent."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    return grid


_VERDICT_WORDS = {
    (True, True): msg("(you chose it; correct answer)"),
    (True, False): msg("(correct answer; you missed it)"),
    (False, True): msg("(you chose it; wrong)"),
    (False, False): msg("(wrong)"),
}


def _feedback_line(choice: Choice, i: int, mark: Marked, look: Look) -> tuple[Text, Text]:
    if mark.right:
        symbol, style = (look.ok, "green") if mark.chosen else (look.missed, "yellow")
    else:
        symbol, style = (look.bad, "red") if mark.chosen else ("-", "grey50")
    text = inline(choice.text, look, "bold")
    text.append("  " + look.tr(_VERDICT_WORDS[mark.right, mark.chosen]), style=style)
    text.append("\n")
    text.append_text(inline(choice.why, look))
    return Text(f"{symbol} {choice_key(i)})", style=style), text


def feedback_body(question: Question, number: int, total: int, marks: AnswerMarks,
                  look: Look) -> RenderableType:
    """The verdict on one answer (`marks`), and why each choice is right or wrong."""
    numbers = listed([choice_key(i) for i in marks.correct])
    verdict = (Prose(f"{look.ok} " + look.tr(msg("Correct!")), style="bold green")
               if marks.right else
               Prose(f"{look.bad} " + look.tr(
                   msg("Not quite: the answer is choice {numbers}.", numbers=numbers)
                   if len(marks.correct) == 1 else
                   msg("Not quite: the answer is choices {numbers}.", numbers=numbers)),
                   style="bold red"))
    parts: list[RenderableType] = [
        Prose(look.tr(msg("Question {number} of {total}", number=number, total=total)),
              style="bold"),
        Text(""),
        *asked(question, look),
        Text(""),
        verdict,
        Text(""),
    ]
    # the learner's own picks first, right under the verdict, so on a short screen the
    # verdict and the words on the pick are in view together; one grid a choice, so the
    # screen can tell those parts from the rest
    verdict_part = len(parts) - 2
    rows = [(_feedback_line(choice, i, mark, look), mark.chosen)
            for i, (choice, mark) in enumerate(zip(question.choices, marks.choices, strict=True))]
    rows.sort(key=lambda row: not row[1])
    labels = max(label.cell_len for (label, _), _ in rows)
    for (label, text), _ in rows:
        grid = _hanging()
        grid.columns[0].min_width = labels  # the texts line up as in one table
        grid.add_row(label, text)
        parts.append(Padding(grid, (0, 0, 0, 2)))
    picks = sum(chosen for _, chosen in rows)
    return Focused(parts, (verdict_part, verdict_part + 2 + picks))


def score_body(quiz: Quiz, result: QuizResult, lesson_id: str, look: Look) -> RenderableType:
    """The score screen: the score, the verdict `result` carries, the questions missed, and
    how to take the quiz again (it belongs to lesson `lesson_id`)."""
    verdict = (Prose(f"{look.ok} " + look.tr(msg("Passed")), style="bold green")
               if result.passed else
               Prose(f"{look.bad} " + look.tr(msg("Not passed yet: go back over the slides and "
                                                  "try again")), style="bold yellow"))
    parts: list[RenderableType] = [
        Prose(look.tr(msg("Your score: {score} of {total}", score=result.score,
                          total=result.total)), style="bold"),
        Text(""), verdict]
    if result.missed:
        grid = _hanging()
        for number in result.missed:
            label = look.tr(msg("Question {number}:", number=number))
            grid.add_row(Text(f"{look.bad} {label}", style="red"),
                         inline(_first_paragraph(quiz.questions[number - 1].prompt), look))
        again = msg("To take it again: run `gradtutor quiz {lesson}`, or come back to this "
                    "step later.", lesson=lesson_id)
        parts += [Text(""), Prose(look.tr(msg("Missed:")), style="bold"),
                  Padding(grid, (0, 0, 0, 2)), Text(""), inline(look.tr(again), look)]
    return Group(*parts)


def _first_paragraph(text: str) -> str:
    """A question's prompt as one line names it: its text up to the first blank line."""
    first = text.strip().split("\n\n")[0]
    return Untranslated(first) if isinstance(text, Untranslated) else first


def quiz_overview(quiz: Quiz, look: Look) -> RenderableType:
    """The quiz for reading (show): questions and choices, answers not revealed."""
    parts: list[RenderableType] = []
    if quiz.intro:
        parts += [markdown(quiz.intro, look), Text("")]
    for n, question in enumerate(quiz.questions, start=1):
        parts += [question_body(question, n, len(quiz.questions), frozenset(), look), Text("")]
    return Group(*parts)


def lessons_table(lessons: tuple[Lesson, ...], states: dict[str, LessonProgress],
                  look: Look, estimate: Callable[[Lesson], Duration] = duration) -> Table:
    """The course with the learner's progress in each lesson; `estimate` says how long each
    takes (the course's, which reads it from the English)."""
    table = Table(box=None if look.plain else box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column(Text(look.tr(msg("lesson"))))
    table.add_column(Text(look.tr(msg("title"))))
    table.add_column(Text(look.tr(msg("progress"))))
    table.add_column(Text(look.tr(msg("quiz"))), justify="right")
    table.add_column(Text(look.tr(msg("minutes"))), justify="right")
    for position, lesson in enumerate(lessons, start=1):  # its place in the course
        state = states.get(lesson.id, LessonProgress())
        table.add_row(str(position), Text(lesson.id, overflow="fold"),
                      title_text(lesson.title, look),
                      Text(status_text(lesson, state, look)), quiz_text(lesson, state),
                      minutes_text(estimate(lesson)))
    return table


def minutes_text(time: Duration) -> str:
    """A lesson's estimated minutes: the core path, then `+` the optional practice."""
    return f"{time.core} +{time.optional}" if time.optional else str(time.core)


def minutes_note(look: Look) -> str:
    """What `list`'s minutes column means."""
    return look.tr(msg("minutes: the core path for a fluent reader, estimated from all it "
                       "shows and asks; + the steps marked optional practice, each of which n "
                       "skips"))


def status_text(lesson: Lesson, state: LessonProgress, look: Look) -> str:
    if state.finished:
        return f"{look.ok} " + look.tr(msg("finished"))
    if state.step is None:
        return look.tr(msg("not started"))
    index = lesson.index_of(state.step)
    position = (index + 1) if index is not None else 1
    return look.tr(msg("step {position} of {total}", position=position, total=len(lesson.steps)))


def lesson_progress(lesson: Lesson, state: LessonProgress, look: Look,
                    time: Duration | None = None) -> RenderableType:
    """One lesson in `gradtutor progress`: its id and title, then one short line each for the
    place, the exercises solved and the quiz, so that it reads well in a narrow terminal."""
    title = Prose.assemble((lesson.id, "bold"), "  ")
    title.append_text(title_text(lesson.title, look))
    seen = len(state.seen & {step.id for step in lesson.steps})
    time = time or duration(lesson)
    lines = [(2, status_text(lesson, state, look) + look.tr(msg(
        "; {seen} of {total} steps seen", seen=seen, total=len(lesson.steps)))),
             (2, look.tr(msg("about {core} minutes, and {optional} more for the optional "
                             "practice", core=time.core, optional=time.optional)
                         if time.optional else msg("about {core} minutes", core=time.core)))]
    solved, count = exercises_solved(lesson, state)
    if count:
        lines.append((2, look.tr(msg("exercises solved: {solved} of {total}", solved=solved,
                                     total=count))))
    for quiz in lesson.quizzes:
        best = state.best_quiz.get(quiz.id)
        if best is None:
            lines += [(2, look.tr(msg("quiz: not taken yet"))),
                      (4, look.tr(msg("take it: `gradtutor quiz {lesson}`", lesson=lesson.id)))]
        elif quiz_passed(quiz, best.score, best.total):
            lines.append((2, f"{look.ok} " + look.tr(msg(
                "quiz: best score {score} of {total}, passed", score=best.score,
                total=best.total))))
        else:
            lines += [(2, f"{look.bad} " + look.tr(msg(
                          "quiz: best score {score} of {total}, not passed yet",
                          score=best.score, total=best.total))),
                      (4, look.tr(msg("take it again: `gradtutor quiz {lesson}`",
                                      lesson=lesson.id)))]
    return Group(title, *(Padding(inline(line, look), (0, 0, 0, indent), expand=False)
                          for indent, line in lines))


def quiz_text(lesson: Lesson, state: LessonProgress) -> str:
    scores = [state.best_quiz[q.id] for q in lesson.quizzes if q.id in state.best_quiz]
    if not scores:
        return "-"
    return ", ".join(f"{s.score}/{s.total}" for s in scores)
