"""The tutor in Simplified Chinese: every screen of the `grad` lesson, localized to zh-CN, fits
60 and 100 columns in both looks; Chinese wraps between characters by the line-breaking rules
(no closing punctuation opens a line); boxes, tables, the progress bar and the key legend stay
aligned although each hanzi takes two cells; English left in for want of a translation is
tagged `[EN]`, once, right where it shows.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from narrowing import index_of, step_as, view_as
from rich.cells import cell_len
from rich.console import Console, Group
from rich.text import Text
from zh_screens import english, in_chinese, render, screens, states, zh

from gradtutor.i18n import Untranslated
from gradtutor.lessons.model import Quiz, Slide
from gradtutor.ui.linebreak import OPENING, Prose, break_offsets, keep_ranges
from gradtutor.ui.render import EN_MARK, Look
from gradtutor.ui.walk_screen import screen
from gradtutor.walk.machine import begin
from gradtutor.walk.parsons import ParsonsView

WIDTHS = (60, 100)
HANZI = re.compile("[\u4e00-\u9fff]")
BOX_DRAWING = re.compile("[\u2500-\u259f]")
# Full-width closing punctuation: never the first character of a line.
CJK_CLOSING = "，。、；：？！）」』”"
NOTICE = "“zz”在这里没有作用"  # what typing zz is told, from gradtutor/locale/zh-CN/ui.yaml


# --- what must hold on each screen ---------------------------------------------------------


LINE_PREFIX = re.compile(r"^[ │|]*(?:[-*•>❯] |\d+\. |\(.\) |\[.{1,2}\] )?")


def opens_with_closing(line: str) -> bool:
    """Whether the text of the line (after a box edge, bullet or number) opens with closing
    punctuation, such as a markdown `*` that belongs to the line before, or a `，`."""
    prefix = LINE_PREFIX.match(line)
    assert prefix is not None  # it matches the empty string too
    body = line[prefix.end():].lstrip()
    return bool(body) and (body[0] in CJK_CLOSING or body[:2] in ("*，", "*。", "`，", "`。"))


def panels(lines: list[str]) -> Iterator[list[str]]:
    """The lines of each box drawn, from its top edge to its bottom edge."""
    box: list[str] | None = None
    for line in lines:
        if "╭" in line:
            box = []
        if box is not None:
            box.append(line[line.index(line.strip()[0]):] if line.strip() else line)
            if "╰" in line:
                yield box
                box = None


def hanging_rows(lines: list[str], row: re.Pattern[str]) -> Iterator[tuple[int, list[str]]]:
    """Rows of a label-and-text grid: (cell column of the text, the row's continuation lines)."""
    rows: list[tuple[int, list[str]]] = []
    for line in lines:
        found = row.match(line)
        if found:
            rows.append((cell_len(found.group(0)), []))
        elif rows and line.startswith(" " * 4) and line.strip():
            rows[-1][1].append(line)
        elif rows:
            yield from rows
            rows = []
    yield from rows


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rich"])
def test_every_screen_of_grad_in_chinese_fits_and_breaks_where_chinese_may(width: int,
                                                                           plain: bool) -> None:
    lesson = in_chinese()
    total = len(lesson.steps)
    seen = 0
    for where, lines in screens(lesson, width, plain):
        seen += 1
        shown = "\n".join(lines)
        index = int(where.split()[1]) - 1
        wide = [line for line in lines if cell_len(line) > width]
        assert wide == [], f"{where}: wider than {width} columns"
        starts = [line for line in lines if opens_with_closing(line)]
        assert starts == [], f"{where}: a line opens with closing punctuation"
        ends = [line for line in lines if line and line[-1] in OPENING - set("([{")]
        assert ends == [], f"{where}: a line ends with opening punctuation"
        assert f"第 {index + 1} 步，共 {total} 步" in shown, where
        assert len(HANZI.findall(shown)) > 10, f"{where}: hardly any Chinese"
        assert EN_MARK not in shown, f"{where}: [EN] although every text is translated"
        if where.endswith("notice"):
            assert NOTICE in shown, f"{where}: the notice is not in Chinese"
        # the rule under the lesson's title runs to the edge; the bar never moves
        assert cell_len(lines[0]) == width, where
        bar = lines[2]
        assert cell_len(bar) <= width and bar.index(" 第") == bar_cells(width, total, plain), where
        if plain:
            assert not BOX_DRAWING.search(shown), f"{where}: box drawing in plain look"
        for box in panels(lines):
            assert len({cell_len(line) for line in box}) == 1, f"{where}: a ragged box"
    assert seen > len(lesson.steps) * 3


def bar_cells(width: int, total: int, plain: bool) -> int:
    label = f" 第 {total} 步，共 {total} 步"
    cells = max(4, min(40, width - cell_len(label) - 2))
    return cells + 2 if plain else cells


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rich"])
def test_choices_keep_their_column_when_chinese_wraps(width: int, plain: bool) -> None:
    lesson = in_chinese()
    mark = r"\((?:\*|•| )\)|\[(?:x| )\]"
    question = re.compile(rf"^  (?:{mark}) [1-9]\) ")
    feedback = re.compile(r"^  (?:\[OK\]|\[X\]|✓|✗|-) [1-9]\) *")
    checked = 0
    for where, lines in screens(lesson, width, plain):
        if "question" not in where and "feedback" not in where:
            continue
        grid = question if "question" in where else feedback
        rows = list(hanging_rows(lines, grid))
        assert rows, where
        columns = {column for column, _ in rows}
        assert len(columns) == 1, f"{where}: choices start in different columns"
        for column, more in rows:
            for line in more:
                assert len(line) - len(line.lstrip(" ")) == column, f"{where}: {line!r}"
                checked += 1
    assert checked > 0  # some choice did wrap in Chinese


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rich"])
def test_the_lines_to_order_line_up(width: int, plain: bool) -> None:
    lesson = in_chinese()
    row = re.compile(r"^([>❯ ]) +\d+\. ")
    for where, lines in screens(lesson, width, plain):
        if "order-the-loop" not in where or "help" in where:
            continue
        starts = {cell_len(m.group(0)) for m in map(row.match, lines) if m}
        assert len(starts) == 1, where


@pytest.mark.parametrize("keys", [True, False], ids=["keys", "lines"])
def test_the_key_legend_never_breaks_inside_an_entry(keys: bool) -> None:
    lesson = in_chinese()
    for where, lines in screens(lesson, 60, False, keys=keys):
        if "help" in where:
            continue
        legend = lines[max(i for i, line in enumerate(lines) if not line) + 1:]
        for line in legend:
            for entry in re.split(" · ", line.strip(" ·")):
                assert HANZI.search(entry) is None or " " in entry, f"{where}: {line!r}"
                assert not entry.endswith(("/", "-")), f"{where}: {line!r}"


# --- [EN]: the fallback is visible, and only where it is ----------------------------------

# (step, field path, the state that shows the field)
FALLBACKS = [
    (None, "title", "open"),
    ("grad-attribute", "title", "open"),
    ("grad-attribute", "body", "open"),
    ("read-grad", "prompt", "open"),
    ("read-grad", "hints.1", "hint 1"),
    ("no-optimizer", "notes", "open"),
    ("predict-two-backwards", "prompt", "open"),
    ("predict-two-backwards", "choices.a.text", "open"),
    ("predict-two-backwards", "choices.a.why", "shown"),
    ("order-the-loop", "prompt", "open"),
    ("order-the-loop", "lines.{wrong}.why", "graded"),
    ("hidden-bug-demo", "chart.title", "ran"),
    ("hidden-bug-demo", "chart.y_label", "ran"),
    ("hidden-bug-demo", "chart.x_label", "ran"),
    ("quick-check", "questions.{q}.prompt", "question 1"),
    ("quick-check", "questions.{q}.choices.a.text", "question 1"),
    ("quick-check", "questions.{q}.choices.a.why", "feedback 1"),
]


def field_path(step_id: str | None, path: str) -> str:
    """`path` with {q} the first question's id, {wrong} the line a wrong order is graded on."""
    if "{q}" in path:
        assert step_id is not None
        quiz = step_as(english(), step_id, Quiz)
        return path.format(q=quiz.questions[0].id)
    if "{wrong}" in path:
        assert step_id is not None
        graded = dict(states(english(), index_of(english(), step_id)))["graded"]
        verdict = view_as(graded, ParsonsView).verdict
        assert verdict is not None
        return path.format(wrong=verdict.extra["out_of_place"])
    return path


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rich"])
@pytest.mark.parametrize(("step_id", "path", "state_name"), FALLBACKS,
                         ids=[f"{s}:{p}" for s, p, _ in FALLBACKS])
def test_a_text_without_translation_shows_in_english_tagged_once(step_id: str | None, path: str,
                                                                  state_name: str,
                                                                  plain: bool) -> None:
    path = field_path(step_id, path)
    lesson = in_chinese(drop=(step_id, path))
    index = index_of(lesson, step_id) if step_id else 0
    named = dict(states(lesson, index))
    look = Look(plain, zh())
    for name, state in named.items():
        if name == "help":
            continue
        shown = "\n".join(render(screen(lesson, state, 100, True, look, Path("/tmp")), 100))
        if name == state_name:
            assert shown.count(EN_MARK) == 1, f"{name}: {shown}"
            text = english_text(step_id, path)
            first_words = " ".join(text.split()[:3]).replace("`", "" if not plain else "`")
            assert first_words in " ".join(shown.split()), f"{name}: English not shown"
    other = index + 1 if index + 1 < len(lesson.steps) else index - 1
    shown = "\n".join(render(screen(lesson, begin(lesson, other), 100, True, look), 100))
    assert shown.count(EN_MARK) == (1 if step_id is None else 0)  # the lesson title is on all


def english_text(step_id: str | None, path: str) -> str:
    from gradtutor.lessons.translate import lesson_texts

    for key, text in lesson_texts(english()):
        if (key.step, key.path) == (step_id, path):
            return text
    raise KeyError(path)


def test_the_localized_lesson_marks_exactly_the_missing_text_untranslated() -> None:
    lesson = in_chinese(drop=("grad-attribute", "title"))
    assert isinstance(lesson.steps[0].title, Untranslated)
    assert not isinstance(step_as(lesson, 0, Slide).body, Untranslated)
    assert not isinstance(lesson.title, Untranslated)


# --- the line-breaking rule ----------------------------------------------------------------


def pieces(text: str, width: int, keep: Sequence[tuple[int, int]] = ()) -> list[str]:
    offsets = break_offsets(text, width, keep)
    return [text[a:b] for a, b in zip([0, *offsets], [*offsets, len(text)], strict=True)]


def test_chinese_breaks_between_characters_and_fills_the_line() -> None:
    assert pieces("梯度会在多次反向传播之间不断累积", 10) == [
        "梯度会在多", "次反向传播", "之间不断累", "积"]


def test_closing_punctuation_never_opens_a_line_and_opening_never_ends_one() -> None:
    # "。" would open the second line: the character before it goes down with it
    assert pieces("先清空梯度。再反向传播", 11) == ["先清空梯", "度。再反向", "传播"]
    assert pieces("调用方（caller）会读取它", 12) == ["调用方", "（caller）会", "读取它"]
    assert pieces("他说“先清空”然后", 10) == ["他说“先清", "空”然后"]
    assert pieces("要清零*梯度*。然后", 14) == ["要清零*梯度*。", "然后"]


def test_english_words_and_code_spans_are_never_split() -> None:
    text = "然后调用 optimizer.zero_grad() 清空梯度"
    assert pieces(text, 24) == ["然后调用 ", "optimizer.zero_grad() 清", "空梯度"]
    code = "运行 `loss_fn(prediction, target)` 得到损失"
    spans = keep_ranges(code)  # a code span, as the plain look shows it, is kept whole
    assert pieces(code, 34, spans) == ["运行 `loss_fn(prediction, target)` ", "得到损失"]
    assert pieces(code, 30, spans) == ["运行 ", "`loss_fn(prediction, target)` ", "得到损失"]
    bare = "运行 loss_fn(prediction, target) 得到损失"
    assert pieces(bare, 28, keep=[(3, 31)]) == ["运行 ", "loss_fn(prediction, target) ", "得到损失"]
    assert pieces(bare, 28)[0] == "运行 loss_fn(prediction, "  # what the kept range prevents


def test_a_list_of_code_spans_breaks_after_the_chinese_comma_between_them() -> None:
    text = "一行一个：`optimizer.step()`、`loss = loss_fn(pred, y)`、`loss.backward()`"
    assert pieces(text, 40, keep_ranges(text)) == [
        "一行一个：`optimizer.step()`、", "`loss = loss_fn(pred, y)`、", "`loss.backward()`"]


def test_a_piece_wider_than_the_line_is_cut_rather_than_overflowing() -> None:
    for width in range(1, 12):
        for piece in pieces("一个很长的名字 abcdefghijklmnopqrstuvwxyz，完", width):
            assert cell_len(piece.rstrip()) <= max(width, 2)


@pytest.mark.parametrize("width", [8, 20, 33, 60])
def test_prose_without_chinese_wraps_exactly_as_rich_does(width: int) -> None:
    english_text = ("Gradients accumulate: call optimizer.zero_grad() before each backward "
                    "pass, or w.grad keeps the sum of every pass so far (a bug that hides).")
    assert render(Group(Prose(english_text)), width) == render(Group(Text(english_text)), width)


def test_prose_in_a_table_measures_its_narrowest_piece_not_the_whole_sentence() -> None:
    from rich.measure import Measurement

    console = Console(width=60, file=io.StringIO())
    measured = Measurement.get(console, console.options, Prose("梯度会不断累积。"))
    assert measured == Measurement(4, 16)  # "积。" cannot be parted


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "rich"])
def test_the_marker_follows_the_last_words_of_an_english_body(plain: bool) -> None:
    from gradtutor.ui.render import markdown

    look = Look(plain, zh())
    ends_in_words = render(markdown(Untranslated("First.\n\nThen `w.grad` is None."), look), 60)
    assert ends_in_words[-1].endswith(f"is None. {EN_MARK}")
    assert "\n".join(ends_in_words).count(EN_MARK) == 1
    ends_in_list = render(markdown(Untranslated("Steps:\n\n- zero\n- backward"), look), 60)
    assert ends_in_list[-1].strip() in (EN_MARK, f"- backward {EN_MARK}")
    assert EN_MARK not in "\n".join(render(markdown("First.\n\n- zero", look), 60))


def test_a_plain_chinese_list_item_wraps_under_its_text_at_60_columns() -> None:
    """Prior review P34: in the plain look a list item's second line started at column 0."""
    from gradtutor.ui.render import markdown

    body = ("参数的 `.grad` 里可能还留着调用之前的梯度。\n\n"
            "- `loss_fn`：一个损失函数，调用方式为 `loss_fn(prediction, target)`，"
            "它对本批次的各行取平均；\n"
            "- `batches`：一个由 `(x, y)` 对组成的列表。")
    assert render(markdown(body, Look(True, zh())), 60) == [
        "参数的 `.grad` 里可能还留着调用之前的梯度。",
        "",
        "- `loss_fn`：一个损失函数，调用方式为",
        "  `loss_fn(prediction, target)`，它对本批次的各行取平均；",
        "- `batches`：一个由 `(x, y)` 对组成的列表。",
    ]



@pytest.mark.parametrize("lesson_id", ["tensors", "grad"])
def test_a_demo_chart_s_legend_is_in_the_learner_s_language(lesson_id: str) -> None:
    """The legend names each curve with the lesson's label for it, translated as lesson text
    is (lesson 1's node count, lesson 3's hidden-bug demo), never the variable's name."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.checking.snippet import SnippetResult
    from gradtutor.lessons.course import load_course
    from gradtutor.lessons.model import Demo
    from gradtutor.ui.practice import demo_body

    lesson = load_course(lang="zh-CN", rules=EXERCISE_RULES).find(lesson_id)
    demo = next(s for s in lesson.steps if isinstance(s, Demo) and s.chart is not None)
    assert demo.chart is not None
    series = tuple((name, (3.0, 2.0, 1.0 + k)) for k, name in enumerate(demo.chart.series))
    result = SnippetResult(True, None, series, "", None, 5)
    for plain in (True, False):
        shown = "\n".join(render(demo_body(demo, result, 80, Look(plain, zh())), 80))
        legend = shown.splitlines()[-1]
        for name in demo.chart.series:
            assert name.replace("_", " ") not in shown, (name, legend)
        assert len(HANZI.findall(legend)) >= 4 and EN_MARK not in legend, legend
