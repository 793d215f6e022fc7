"""Every Chinese text of the course speaks the glossary of docs/translating.md.

The glossary's table is the one source: its `not` column lists, for a term, the variants that
must not appear in Chinese (结果张量 for 非叶子张量) and the English left as Chinese prose
(`requires grad`). This test reads that table and looks at every translated text of the
shipped course: every entry of every file in lessons/zh-CN (prose, choices, hints, and the
comments of translated code) and every translation in the interface's catalogue
(gradtutor/locale/zh-CN). It also fails on a choice's `why` that opens with 正确 when its English
does not open with "Right.": the screen already says 正确 above a right choice.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.i18n import catalog_files, parse_catalog
from gradtutor.lessons.course import default_lessons_dir, load_course
from gradtutor.lessons.translate import (
    FieldKey,
    Translation,
    lesson_texts,
    load_translation_file,
    parse_translation,
)

GLOSSARY_DOC = Path(__file__).parent.parent / "docs" / "translating.md"
LANGUAGE = "zh-CN"
# Field paths whose text is code: only its comments are translated, so only they are read.
CODE_FIELDS = ("starter", "code")
FENCE = re.compile(r"^ *(```|~~~).*?^ *\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
CHOICE_WHY = re.compile(r"(^|\.)choices\.[a-z]\.why$")


# --- the glossary, read from the doc ---------------------------------------------------------


class Banned(NamedTuple):
    """A variant the glossary rules out: where it is listed, and what to write instead."""

    variant: str
    term: str  # the row's English
    chinese: str  # the row's Chinese, what to write
    glosses: tuple[str, ...]  # `中文（variant）` forms the row itself shows, allowed
    titles_only: bool

    def pattern(self) -> re.Pattern[str]:
        words = re.escape(self.variant).replace(r"\ ", r"\s+")
        if re.fullmatch(r"[A-Za-z][A-Za-z \-]*", self.variant):
            # an English word counts whole: `leaf` is not in `is_leaf`, `non-leaf` or `.leaf`
            return re.compile(rf"(?<![\w\-.]){words}(?![\w\-])", re.IGNORECASE)
        return re.compile(words)


def glossary_rows(doc: str) -> list[dict[str, str]]:
    """The rows of the glossary's table, each by its column names."""
    section = doc.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
            for line in lines[2:]]


def banned_of(rows: Iterable[Mapping[str, str]]) -> list[Banned]:
    found = []
    for row in rows:
        chinese = [term.strip() for term in row["中文"].split(",")]
        shown = row["中文"] + " " + row["note"]
        for variant, titles in re.findall(r"`([^`]+)`( in titles)?", row["not"]):
            glosses = tuple(f"{term}（{variant}）" for term in chinese
                            if f"（{variant}）" in shown)
            found.append(Banned(variant, row["English"], row["中文"], glosses, bool(titles)))
    return found


@cache
def glossary() -> tuple[Banned, ...]:
    return tuple(banned_of(glossary_rows(GLOSSARY_DOC.read_text(encoding="utf-8"))))


# --- what a text says in prose ----------------------------------------------------------------


def comments_of(code: str) -> str:
    """The comments of a piece of Python code, one a line."""
    try:
        return "\n".join(token.string for token in
                         tokenize.generate_tokens(io.StringIO(code).readline)
                         if token.type == tokenize.COMMENT)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return "\n".join(line.split("#", 1)[1] for line in code.splitlines() if "#" in line)


def prose_of(text: str, code: bool) -> str:
    """What of a text is words: a code field's comments; markdown without its code fences
    and code spans (left as one space each)."""
    if code:
        return comments_of(text)
    return CODE_SPAN.sub(" ", FENCE.sub(" ", text.replace("*", "")))


class ZhText(NamedTuple):
    """One translated text: where it is (for the message), its field path, the Chinese, and
    the English it translates, when known."""

    where: str
    path: str
    text: str
    english: str | None


def offences(item: ZhText, banned: Iterable[Banned]) -> list[str]:
    """What is wrong with one text against the glossary, one phrase each."""
    last = item.path.rsplit(".", 1)[-1]
    prose = prose_of(item.text, code=last in CODE_FIELDS)
    said = []
    for rule in banned:
        if rule.titles_only and item.path != "title":
            continue
        # a gloss the glossary shows (*叶子张量*（leaf）) is not the English left in
        allowed = prose
        for gloss in rule.glosses:
            allowed = allowed.replace(gloss, "")
        count = len(rule.pattern().findall(allowed))
        if count:
            times = f" ×{count}" if count > 1 else ""
            said.append(f"'{rule.variant}'{times} (glossary: {rule.term} -> {rule.chinese})")
    if CHOICE_WHY.search(item.path) and item.english is not None:
        if item.text.lstrip().startswith("正确") and not item.english.lstrip().startswith(
                "Right."):
            said.append("starts with '正确' but its English does not start with 'Right.' "
                        "(the screen already shows 正确 above it)")
        elif item.english.lstrip().startswith("Right.") and not item.text.lstrip().startswith(
                "正确。"):
            said.append("its English starts with 'Right.', so it starts with '正确。'")
    return said


# --- every Chinese text of the course ---------------------------------------------------------


def translation_texts(translation: Translation,
                      english: Mapping[FieldKey, str]) -> Iterator[ZhText]:
    """Each translated entry of a lesson's translation, in file order."""
    for key, entry in translation.entries.items():
        if entry.text is None:
            continue
        line = f":{entry.key_at[0]}" if entry.key_at[0] else ""
        where = f"{translation.path}{line}: lesson {translation.lesson_id}, " + (
            f"{key.path}" if key.step is None else f"step {key.step}, field {key.path}")
        yield ZhText(where, key.path, entry.text, english.get(key))


def course_texts() -> Iterator[ZhText]:
    """Every entry of every lesson translation shipped in lessons/zh-CN."""
    folder = default_lessons_dir()
    course = load_course(folder, rules=EXERCISE_RULES)
    files = sorted((folder / LANGUAGE).glob("*.yaml"))
    assert files, f"no {LANGUAGE} translations in {folder}"
    for path in files:
        translation, problems = load_translation_file(path, use_cache=False)
        assert translation is not None, problems
        lesson = course.find(translation.lesson_id)
        yield from translation_texts(translation, dict(lesson_texts(lesson)))


def catalogue_texts() -> Iterator[ZhText]:
    """Every translation of the interface's zh-CN catalogue."""
    for path in catalog_files(LANGUAGE):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for english, chinese in parse_catalog(data, str(path)).items():
            shown = english if len(english) <= 60 else english[:57] + "..."
            yield ZhText(f"{path.parent.name}/{path.name}: {shown!r}", "", chinese, english)


def report(texts: Iterable[ZhText], banned: Iterable[Banned]) -> list[str]:
    rules = list(banned)
    return [f"{item.where}: {'; '.join(said)}"
            for item in texts if (said := offences(item, rules))]


# --- the tests --------------------------------------------------------------------------------


def test_the_glossary_lists_the_decided_variants() -> None:
    """The table is read as translators see it: each decided term with what it rules out."""
    by_variant = {rule.variant: rule for rule in glossary()}
    for variant, chinese in (("requires grad", "需要梯度"), ("结果张量", "非叶子张量"),
                             ("拽着", "引用着, 留住"), ("回顾", "小结"), ("量一量", "实测"),
                             ("检查程序", "检查器"), ("幻灯片", "页"), ("遗留", "残留梯度"),
                             ("2-范数", "范数, L2 范数"), ("滑动大小", "滑动平均"),
                             ("清零", "清空"), ("leaf", "叶子张量")):
        assert by_variant[variant].chinese == chinese, variant
    assert by_variant["清零"].titles_only and not by_variant["结果张量"].titles_only
    assert by_variant["leaf"].glosses == ("叶子张量（leaf）",)
    assert by_variant["requires grad"].glosses == ()


def test_every_chinese_text_of_the_course_follows_the_glossary() -> None:
    texts = list(course_texts()) + list(catalogue_texts())
    assert len(texts) > 1500
    found = report(texts, glossary())
    words: Counter[str] = Counter()
    for line in found:
        words.update(re.findall(r"'([^']+)'(?: ×\d+)? \(glossary", line))
    summary = ", ".join(f"{word} in {count}" for word, count in words.most_common())
    if found:
        pytest.fail(f"{len(found)} Chinese texts break the glossary of docs/translating.md "
                    f"(texts with: {summary}):\n" + "\n".join(found), pytrace=False)


FAKE = """\
translates: tensors
language: zh-CN
steps:
  leaves:
    title:
      source: a00000000001
      text: 回顾
    body:
      source: a00000000002
      text: |
        由一个 requires grad 的张量算出的是*结果张量*，它的计算图拽着损失。

        *叶子张量*（leaf）和 `x.requires_grad` 都可以；Requires  grad 不行，leaf 也不行。

        ```python
        y = x  # requires grad 写在代码块里没关系
        ```
    code:
      source: a00000000003
      text: |
        w = torch.ones(2, requires_grad=True)  # w 需要梯度
        total = w.sum()  # total requires grad too
  zero:
    title:
      source: a00000000004
      text: 每一步都清零
    body:
      source: a00000000005
      text: 把 `w.grad` 原地清零。
  quick-check:
    questions.q.choices.a.why:
      source: a00000000006
      text: 正确。它是叶子张量。
    questions.q.choices.b.why:
      source: a00000000007
      text: 正确。它不是叶子张量。
"""


def test_a_fake_translation_with_banned_words_fails_naming_each() -> None:
    translation, problems = parse_translation(FAKE, "fake/zh-CN/tensors.yaml")
    assert translation is not None, problems
    english = {FieldKey("quick-check", "questions.q.choices.a.why"): "It is a leaf.",
               FieldKey("quick-check", "questions.q.choices.b.why"): "Right. It is not a leaf."}
    found = report(translation_texts(translation, english), glossary())
    by_field = {line.split(": ", 2)[1]: line for line in found}
    assert set(by_field) == {
        "lesson tensors, step leaves, field title", "lesson tensors, step leaves, field body",
        "lesson tensors, step leaves, field code", "lesson tensors, step zero, field title",
        "lesson tensors, step quick-check, field questions.q.choices.a.why"}
    body = by_field["lesson tensors, step leaves, field body"]
    assert body.startswith("fake/zh-CN/tensors.yaml:8: ")
    # twice in prose (the code span and the fence do not count); the gloss is allowed once
    assert "'requires grad' ×2 (glossary: requires grad -> 需要梯度)" in body
    assert "'结果张量' (glossary: non-leaf -> 非叶子张量)" in body
    assert "'拽着'" in body and "'leaf' (glossary" in body
    assert "'回顾'" in by_field["lesson tensors, step leaves, field title"]
    # in code, the English comment is found, the code itself is not
    code = by_field["lesson tensors, step leaves, field code"]
    assert "'requires grad' (glossary" in code
    assert "'清零'" in by_field["lesson tensors, step zero, field title"]
    assert "正确" in by_field["lesson tensors, step quick-check, field questions.q.choices.a.why"]


def test_the_glossary_terms_themselves_pass() -> None:
    good = ZhText("good", "body", "由需要梯度的张量算出的是*非叶子张量*（non-leaf），"
                  "它的计算图引用着这些损失；*叶子张量*（leaf）的 `w.grad` 是残留梯度，"
                  "用 L2 范数衡量。", None)
    assert offences(good, glossary()) == []
