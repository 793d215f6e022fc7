"""Lesson translations: the zh-CN grad translation is used where fresh, English shows (and is
reported) where a text is missing or stale, broken files give located messages, code never
changes, and each translation keeps its English's markdown structure.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.cli import main
from gradtutor.i18n import Untranslated
from gradtutor.lessons import model
from gradtutor.lessons.course import lesson_files
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Demo, Exercise, Lesson, Predict, Quiz, Slide
from gradtutor.lessons.translate import (
    COMMENTED_CODE,
    ITEMS,
    KEPT,
    NESTED,
    PROSE,
    Entry,
    FieldKey,
    Translation,
    check_translation,
    check_translations,
    fingerprint,
    languages_in,
    lesson_texts,
    load_translation,
    load_translation_file,
    localize,
    parse_translation,
    report_lines,
    same_code,
    shape_differences,
    skeleton,
    translation_file,
    translation_target,
)
from gradtutor.lessons.translate.fields import ROLES

ROOT = Path(__file__).resolve().parent.parent
GRAD = ROOT / "lessons" / "grad.yaml"
ZH = ROOT / "lessons" / "zh-CN" / "grad.yaml"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def grad() -> Lesson:
    return load_lesson(GRAD, EXERCISE_RULES)


@pytest.fixture(scope="module")
def zh() -> Translation:
    translation, problems = load_translation_file(ZH, use_cache=False)
    assert translation is not None, "\n".join(map(str, problems))
    return translation


def fresh_entries(lesson: Lesson, translation: Translation) -> dict[FieldKey, tuple[str, str]]:
    """(English, translation) of every text whose translation is fresh."""
    return {key: (english, entry.text) for key, english in lesson_texts(lesson)
            if (entry := translation.entries.get(key)) is not None and entry.text is not None
            and entry.source == fingerprint(english)}


def prose_entries(lesson: Lesson, translation: Translation) -> dict[FieldKey, tuple[str, str]]:
    """`fresh_entries` that are markdown: not code (a starter, a slide's code...), whose
    comments alone are translated."""
    return {key: pair for key, pair in fresh_entries(lesson, translation).items()
            if key.path.rsplit(".", 1)[-1] not in ("starter", "code")}


def text_at(lesson: Lesson, key: FieldKey) -> str:
    return dict(lesson_texts(lesson))[key]


def with_step(lesson: Lesson, step_id: str, **changes: Any) -> Lesson:
    steps = tuple(dataclasses.replace(s, **changes) if s.id == step_id else s
                  for s in lesson.steps)
    return dataclasses.replace(lesson, steps=steps)


def drop(translation: Translation, key: FieldKey) -> Translation:
    return translation._replace(entries={k: v for k, v in translation.entries.items() if k != key})


# --- the zh-CN translation of grad ------------------------------------------------------------

def test_every_translated_text_of_grad_is_shown_in_chinese(grad: Lesson, zh: Translation) -> None:
    localized, report = localize(grad, zh, "zh-CN")
    fresh = fresh_entries(grad, zh)
    shown = dict(lesson_texts(localized))
    assert len(fresh) >= 210  # every text of the lesson as it was translated
    for key, (english, chinese) in fresh.items():
        assert shown[key] == chinese, key
        assert CJK.search(chinese) or chinese == english, f"{key} is not Chinese: {chinese!r}"
        assert not report.shows_english(key.step, key.path)
    assert report.translated == len(fresh)
    assert (report.lesson_id, report.language, report.mismatch) == ("grad", "zh-CN", None)


def test_the_grad_translation_has_no_entry_the_lesson_lacks(grad: Lesson, zh: Translation) -> None:
    report = check_translation(grad, zh, "zh-CN")
    assert report.unused == ()
    assert report.reshaped == ()


def test_texts_without_translation_are_the_steps_added_since(grad: Lesson,
                                                              zh: Translation) -> None:
    """Steps added to grad.yaml after the translation show as missing, nothing else does."""
    _, report = localize(grad, zh, "zh-CN")
    translated_steps = {key.step for key in zh.entries}
    assert {key.step for key in report.missing}.isdisjoint(translated_steps)
    assert report.english == frozenset(report.missing) | {s.key for s in report.stale}


def test_the_lesson_title_and_summary_are_translated(grad: Lesson, zh: Translation) -> None:
    localized, _ = localize(grad, zh, "zh-CN")
    assert localized.title == "读取与清空 .grad"
    assert CJK.search(localized.summary)
    assert (localized.id, localized.order, localized.minutes) == (grad.id, grad.order,
                                                                 grad.minutes)


def test_every_kind_of_text_in_grad_is_translated(grad: Lesson, zh: Translation) -> None:
    localized, _ = localize(grad, zh, "zh-CN")
    slide = next(s for s in localized.steps if isinstance(s, Slide) and s.id == "no-optimizer")
    exercise = next(s for s in localized.steps if isinstance(s, Exercise)
                    and s.id == "read-grad")
    quiz = next(s for s in localized.steps if isinstance(s, Quiz))
    question = next(q for q in quiz.questions if q.id == "unused-head")
    texts = [slide.title, slide.body, slide.notes or "", exercise.title, exercise.prompt,
             exercise.why, *exercise.hints, *(m.mistake for m in exercise.mutants),
             quiz.title, quiz.intro or "", question.prompt,
             *(c.text for c in question.choices if " " in c.text),  # not a value: None
             *(c.why for c in question.choices)]
    assert all(CJK.search(text) for text in texts), texts


# --- fallback and staleness -------------------------------------------------------------------

def test_a_text_without_translation_falls_back_to_english_and_is_missing(
        grad: Lesson, zh: Translation) -> None:
    key = FieldKey("grad-accumulates", "body")
    localized, report = localize(grad, drop(zh, key), "zh-CN")
    step = localized.steps[localized.index_of("grad-accumulates") or 0]
    assert isinstance(step, Slide)
    assert step.body == text_at(grad, key)
    assert isinstance(step.body, Untranslated)  # so the renderer marks it [EN]
    assert CJK.search(step.title)  # the rest of the step is still translated
    assert not isinstance(step.title, Untranslated)
    assert key in report.missing
    assert report.shows_english("grad-accumulates", "body")
    assert not report.shows_english("grad-accumulates", "title")
    assert any(line.endswith("missing (shown in English): step grad-accumulates: body")
               for line in report_lines(report))


def test_an_entry_with_empty_text_counts_as_missing(grad: Lesson, zh: Translation) -> None:
    key = FieldKey("recap", "title")
    emptied = zh._replace(entries={**zh.entries, key: zh.entries[key]._replace(text=None)})
    localized, report = localize(grad, emptied, "zh-CN")
    assert localized.steps[localized.index_of("recap") or 0].title == "Recap"
    assert key in report.missing


def test_changing_the_english_makes_the_translation_stale(grad: Lesson, zh: Translation) -> None:
    key = FieldKey("habit", "body")
    edited = with_step(grad, "habit", body=text_at(grad, key) + "\nA new sentence.\n")
    localized, report = localize(edited, zh, "zh-CN")
    step = localized.steps[localized.index_of("habit") or 0]
    assert isinstance(step, Slide)
    assert step.body.endswith("A new sentence.\n")  # English, with the change
    assert isinstance(step.body, Untranslated)
    (stale,) = [s for s in report.stale if s.key == key]
    assert stale.was == zh.entries[key].source
    assert stale.now == fingerprint(step.body) != stale.was
    assert report.shows_english("habit", "body")
    line, col = stale.at
    assert ZH.read_text(encoding="utf-8").splitlines()[line - 1][col - 1:] == stale.was
    assert (f"lessons/zh-CN/grad.yaml:{line}:{col}: stale: the English of step habit body "
            f"changed after it was translated; revise the text, then set "
            f"`source: {stale.now}`") in [ln.replace(str(ROOT) + "/", "")
                                          for ln in report_lines(report)]


def test_rewrapping_the_english_keeps_the_translation_fresh() -> None:
    english = "One two three\nfour five.\n\n- a list\n  item\n"
    assert fingerprint(english) == fingerprint("One two three four five.\n\n- a list item")
    assert fingerprint(english) == fingerprint("  One  two three\r\nfour five.\n \n- a list item\n")
    assert fingerprint(english) != fingerprint("One two three four five.\n- a list item")
    assert fingerprint(english) != fingerprint("One two three four five!\n\n- a list item")


def test_code_fences_count_every_space_in_the_fingerprint() -> None:
    before = "Run this:\n\n```\nif x:\n    y()\n```\n"
    assert fingerprint(before) != fingerprint(before.replace("    y()", "  y()"))
    assert fingerprint(before) == fingerprint(before.replace("Run this:", "Run\nthis:"))


def test_a_fingerprint_is_12_hex_digits_of_sha256() -> None:
    import hashlib

    assert fingerprint("Hello,\n  world\n") == hashlib.sha256(b"Hello, world").hexdigest()[:12]


# --- unknown steps and fields -----------------------------------------------------------------

def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_unknown_step_ids_and_field_paths_are_reported_where_they_are(
        grad: Lesson, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    title = fingerprint(text_at(grad, FieldKey("recap", "title")))
    write(tmp_path, f"""\
        translates: grad
        language: zh-CN
        lesson:
          titel: {{source: {title}, text: 标题}}
        steps:
          recap:
            title: {{source: {title}, text: 小结}}
            bdy: {{source: {title}, text: 正文}}
            code: {{source: {title}, text: 代码}}
          grad-atribute:
            title: {{source: {title}, text: 属性}}
          no-such-step-at-all:
            title: {{source: {title}, text: 无}}
        """)
    translation, problems = load_translation_file(Path("t.yaml"), use_cache=False)
    assert translation is not None, problems
    localized, report = localize(grad, translation, "zh-CN")
    assert localized.steps[-1].title == "小结"
    assert [line for line in report_lines(report) if ": unused: " in line] == [
        "t.yaml:4:3: unused: the lesson has no text 'titel'; did you mean 'title'?",
        "t.yaml:8:5: unused: step recap has no text 'bdy'; did you mean 'body'?",
        "t.yaml:9:5: unused: step recap has no text 'code'; delete the entry",
        "t.yaml:10:3: unused: lesson 'grad' has no step 'grad-atribute'; did you mean "
        "'grad-attribute'?",
        "t.yaml:12:3: unused: lesson 'grad' has no step 'no-such-step-at-all'; the step was "
        "removed or renamed; move its texts or delete them",
    ]


def test_a_translation_for_another_language_or_lesson_is_not_used(
        grad: Lesson, zh: Translation) -> None:
    for other, why in [(zh._replace(language="zh-TW"), "it translates into zh-TW, not zh-CN"),
                       (zh._replace(lesson_id="other"),
                        "it translates lesson 'other', not 'grad'")]:
        localized, report = localize(grad, other, "zh-CN")
        assert localized == grad
        assert report.mismatch == why
        assert report.translated == 0 and len(report.missing) == report.total
        assert f"{report.path}: not used: {why}" in report_lines(report)


def test_english_is_the_lesson_itself(grad: Lesson, zh: Translation) -> None:
    localized, report = localize(grad, zh, "en")
    assert localized is grad
    assert report.english == frozenset() and report.translated == report.total


def test_no_translation_file_means_every_text_is_english(grad: Lesson) -> None:
    localized, report = localize(grad, None, "fr")
    assert localized == grad
    assert report.missing == tuple(key for key, _ in lesson_texts(grad))  # in lesson order
    assert report.english == frozenset(report.missing)
    assert report.path is None


# --- code is never translated -----------------------------------------------------------------

def test_code_and_identifiers_never_change(grad: Lesson, zh: Translation) -> None:
    localized, _ = localize(grad, zh, "zh-CN")

    def kept(record: Any) -> list[Any]:
        out = []
        for f in dataclasses.fields(record):
            value = getattr(record, f.name)
            if f.name in KEPT.get(type(record), ()):
                out.append(value)
            elif dataclasses.is_dataclass(value):
                out += kept(value)
            elif isinstance(value, tuple):
                out += [kept(v) if dataclasses.is_dataclass(v) else None for v in value]
        return out

    assert [kept(s) for s in localized.steps] == [kept(s) for s in grad.steps]
    for before, after in zip(grad.steps, localized.steps, strict=True):
        code, shown = getattr(before, "code", None), getattr(after, "code", None)
        assert (code is None) == (shown is None)
        if code is not None:  # comments may differ
            assert shown is not None and same_code(code, shown), before.id
        if isinstance(before, Exercise):
            assert isinstance(after, Exercise)
            assert (after.solution, after.checker, after.function) == (
                before.solution, before.checker, before.function)
            assert same_code(before.starter, after.starter), before.id  # comments may differ


def test_a_starter_has_its_comments_translated_and_its_code_kept(grad: Lesson,
                                                                  zh: Translation) -> None:
    localized, report = localize(grad, zh, "zh-CN")
    exercise = next(s for s in localized.steps if isinstance(s, Exercise) and "#" in s.starter)
    comments = [line.split("#", 1)[1] for line in exercise.starter.splitlines() if "#" in line]
    assert comments and all(re.search("[\u4e00-\u9fff]", c) for c in comments)
    assert not isinstance(exercise.starter, Untranslated)
    assert report.recoded == ()


def test_a_translated_starter_that_changes_the_code_is_shown_in_english(
        grad: Lesson, zh: Translation) -> None:
    exercise = next(s for s in grad.steps if isinstance(s, Exercise) and "..." in s.starter)
    key = FieldKey(exercise.id, "starter")
    starter = zh.entries[key].text
    assert starter is not None
    cheat = zh.entries[key]._replace(text=starter.replace("...", "return 1"))
    localized, report = localize(grad, zh._replace(entries={**zh.entries, key: cheat}), "zh-CN")
    found = localized.steps[localized.index_of(exercise.id) or 0]
    assert isinstance(found, Exercise)
    assert found.starter == exercise.starter and isinstance(found.starter, Untranslated)
    assert report.recoded == (key,) and report.shows_english(exercise.id, "starter")
    lines = report_lines(report)
    assert "1 with changed code" in lines[0]
    assert any(f"step {exercise.id} starter" in line and "only its comments" in line
               for line in lines)


def with_entry(translation: Translation, key: FieldKey, english: str, text: str) -> Translation:
    """`translation` with a fresh entry for `key`: `text`, translated from `english`."""
    entry = next(iter(translation.entries.values()))._replace(source=fingerprint(english),
                                                               text=text)
    return translation._replace(entries={**translation.entries, key: entry})


def test_shown_code_has_its_comments_translated_and_its_code_kept(grad: Lesson,
                                                                  zh: Translation) -> None:
    slide = next(s for s in grad.steps if isinstance(s, Slide) and s.code and "  # " in s.code)
    assert slide.code is not None
    key = FieldKey(slide.id, "code")
    assert key in dict(lesson_texts(grad))  # a code sample with a comment is a text
    chinese = "".join(line.split("  # ")[0] + "  # 中文注释\n" if "  # " in line else line
                      for line in slide.code.splitlines(keepends=True))
    localized, report = localize(grad, with_entry(zh, key, slide.code, chinese), "zh-CN")
    shown = localized.steps[localized.index_of(slide.id) or 0]
    assert isinstance(shown, Slide) and shown.code == chinese
    assert not isinstance(shown.code, Untranslated) and key not in report.english

    cheat = chinese.replace("import torch", "import torch, os", 1)
    localized, report = localize(grad, with_entry(zh, key, slide.code, cheat), "zh-CN")
    shown = localized.steps[localized.index_of(slide.id) or 0]
    assert isinstance(shown, Slide) and shown.code == slide.code
    assert isinstance(shown.code, Untranslated) and report.recoded == (key,)


def test_code_without_a_comment_is_no_text_to_translate(grad: Lesson) -> None:
    texts = dict(lesson_texts(grad))
    coded = [s for s in grad.steps if isinstance(s, (Slide, Predict, Demo)) and s.code]
    for step in coded:
        assert (FieldKey(step.id, "code") in texts) == ("#" in (step.code or "")), step.id


def test_same_code_ignores_comments_and_nothing_else() -> None:
    code = "def f(x):\n    y = x  # keep it\n    # then\n    return y\n"
    assert same_code(code, "def f(x):\n    y = x  # 保留\n    # 然后\n    # 返回\n    return y\n")
    assert not same_code(code, code.replace("return y", "return x"))
    assert not same_code(code, code.replace("    return", "        return"))
    assert not same_code(code, code.replace("# then", "then"))


def test_an_entry_for_a_code_field_is_unused_and_the_code_stays(grad: Lesson,
                                                                zh: Translation) -> None:
    slide = next(s for s in grad.steps if isinstance(s, Slide) and s.code)
    grad = with_step(grad, slide.id, code="x = 1\nprint(x)\n")  # code with nothing to translate
    exercise = next(s for s in grad.steps if isinstance(s, Exercise))
    sneaky = {FieldKey(slide.id, "code"): Entry(fingerprint("x = 1\nprint(x)\n"), "print('x')"),
              FieldKey(exercise.id, "solution"): Entry(fingerprint(exercise.solution), "pass")}
    localized, report = localize(grad, zh._replace(entries={**zh.entries, **sneaky}), "zh-CN")
    assert {u.where for u in report.unused} == {str(key) for key in sneaky}
    found_slide = localized.steps[localized.index_of(slide.id) or 0]
    assert isinstance(found_slide, Slide) and found_slide.code == "x = 1\nprint(x)\n"
    found = localized.steps[localized.index_of(exercise.id) or 0]
    assert isinstance(found, Exercise) and found.solution == exercise.solution


def test_a_quiz_proof_is_code_kept_as_written_in_every_language() -> None:
    keys = load_lesson(ROOT / "tests" / "fixtures" / "proofs" / "keys.yaml", EXERCISE_RULES)
    assert [key for key, _ in lesson_texts(keys) if "proof" in key.path] == []
    assert "proof" not in skeleton(keys, "zh-CN", None, "keys.yaml")
    quiz = next(s for s in keys.steps if isinstance(s, Quiz))
    choice = quiz.questions[0].choices[2]
    assert choice.proof is not None
    why = FieldKey(quiz.id, "questions.clip-returns.choices.c.why")
    holds = FieldKey(quiz.id, "questions.clip-returns.choices.c.proof.holds")
    entries = {why: Entry(fingerprint(choice.why), "没有哪个分量能大于范数，而范数现在是 1。"),
               holds: Entry(fingerprint(choice.proof.holds), "biggest > 1.0")}
    localized, report = localize(keys, Translation("zh-CN/keys.yaml", keys.id, "zh-CN", entries,
                                                   {}), "zh-CN")
    found = next(s for s in localized.steps if isinstance(s, Quiz)).questions[0].choices[2]
    assert found.why == entries[why].text  # the choice's words are translated ...
    assert found.proof == choice.proof  # ... its proof is not
    assert [u.where for u in report.unused] == [str(holds)]


def model_records() -> list[type]:
    return [obj for obj in vars(model).values()
            if isinstance(obj, type) and dataclasses.is_dataclass(obj)
            and obj.__module__ == model.__name__]


def test_every_field_of_the_model_is_either_translated_or_kept() -> None:
    """A field added to the model must say in its metadata what a translation does with it
    (lessons/model.py's TRANSLATED, AS_WRITTEN, ...), and so lands in one of the tables
    translate/fields.py derives: as prose, items, a nested record, commented code, or kept."""
    unmarked = [f"{record.__name__}.{f.name}" for record in model_records()
                for f in dataclasses.fields(record) if f.metadata.get("translate") not in ROLES]
    assert unmarked == [], "give these a translation role in lessons/model.py"
    unlisted = []
    for record in model_records():
        listed = (set(PROSE.get(record, ())) | set(ITEMS.get(record, {}))
                  | set(NESTED.get(record, ())) | set(KEPT.get(record, ()))
                  | set(COMMENTED_CODE.get(record, ())))
        unlisted += [f"{record.__name__}.{f.name}" for f in dataclasses.fields(record)
                     if f.name not in listed]
    assert unlisted == [], "fields no table of translate/fields.py holds"


def test_prose_fields_are_text() -> None:
    for record in model_records():
        hints = typing.get_type_hints(record)
        for name in PROSE.get(record, ()):
            assert str in typing.get_args(hints[name]) or hints[name] is str, (record, name)


# --- markdown structure -----------------------------------------------------------------------

_MD = MarkdownIt("commonmark")


def structure(text: str) -> dict[str, Any]:
    """What markdown-it sees in a text, apart from its words."""
    tokens = _MD.parse(text)
    children = [c for t in tokens if t.type == "inline" for c in (t.children or [])]
    return {
        "blocks": [(t.type, t.markup if "list" in t.type else "") for t in tokens
                   if t.type != "inline"],
        "code blocks": [t.content for t in tokens if t.type in ("fence", "code_block")],
        "code spans": sorted(c.content for c in children if c.type == "code_inline"),
        "emphasis": Counter(c.type for c in children if c.type in ("em_open", "strong_open")),
    }


def test_each_translation_keeps_the_markdown_of_its_english(grad: Lesson,
                                                           zh: Translation) -> None:
    different = [key for key, (english, chinese) in prose_entries(grad, zh).items()
                 if structure(english) != structure(chinese)]
    assert different == []


def test_translated_paragraphs_are_not_wrapped(grad: Lesson, zh: Translation) -> None:
    """A line break inside a paragraph renders as a space, which Chinese does not use
    between words: each paragraph and list item of a translation is one line."""
    wrapped = [key for key, (_, chinese) in prose_entries(grad, zh).items()
               if any(c.type == "softbreak" for t in _MD.parse(chinese) if t.type == "inline"
                      for c in (t.children or []))]
    assert wrapped == []


@pytest.mark.parametrize(("english", "translated", "differences"), [
    ("Call `f()` then `g()`.", "先调用 `f()`，再调用 `g()`。", ()),
    ("Call `f()` then `g()`.", "先调用 f()，再调用 `g()`。",
     ("code spans differ: `f()` missing",)),
    ("- one\n- two\n", "- 一\n二\n", ("list items differ from the English",
                                     "1 paragraphs and list items, the English has 2")),
    ("Text.\n\n```\nx = 1\n```\n", "文字。\n\n```\nx = 2\n```\n",
     ("code fences differ from the English",)),
    ("One.\n\nTwo.", "一。二。", ("1 paragraphs and list items, the English has 2",)),
])
def test_shape_differences_name_what_changed(english: str, translated: str,
                                             differences: tuple[str, ...]) -> None:
    assert shape_differences(english, translated) == differences
    assert (structure(english) == structure(translated)) == (not differences)


def test_validate_warns_about_a_translation_that_lost_a_code_span(
        grad: Lesson, zh: Translation) -> None:
    key = FieldKey("read-grad", "hints.3")
    broken = zh.entries[key]._replace(text="调用一次 loss.backward()，然后 `return w.grad`。")
    report = check_translation(grad, zh._replace(entries={**zh.entries, key: broken}), "zh-CN")
    (shaped,) = report.reshaped
    assert shaped.key == key
    assert report_lines(report)[-1 - len({k.step for k in report.missing})].endswith(
        "markdown: step read-grad hints.3: code spans differ: `loss.backward()` missing")


# --- broken translation files -----------------------------------------------------------------

HEAD = "translates: grad\nlanguage: zh-CN\n"


@pytest.mark.parametrize(("text", "messages"), [
    (HEAD + "steps:\n  a:\n    title: {source: 0123456789ab, text: \"x}\n",
     ["5:41: YAML syntax error: this quoted text is never closed; add the closing quote"]),
    ("# nothing yet\n\n",
     ["1:1: the translation file is empty; start it with `translates:`, `language:` and "
      "`steps:`"]),
    ("- a\n- b\n",
     ["1:1: a translation file must be a mapping of keys (translates, language, lesson, "
      "steps), not a list"]),
    (HEAD + "step:\n  a: {}\n", ["3:1: unknown key 'step'; did you mean 'steps'?"]),
    ("steps: {}\n",
     ["1:1: missing required key 'language'; add a language tag such as `language: zh-CN`",
      "1:1: missing required key 'translates'; add `translates:` with the id of the lesson "
      "this file translates"]),
    ("translates: grad\nlanguage: zh_CN\n",
     ["2:11: 'language' must be a language tag such as `zh-CN`, not 'zh_CN'"]),
    ("translates: grad\nlanguage: en\n",
     ["2:11: 'language' is en, the language lessons are written in; name the language this "
      "file translates into"]),
    ("translates: Grad Lesson\nlanguage: zh-CN\n",
     ["1:13: 'translates' must be a lesson id such as `grad`, not 'Grad Lesson'"]),
    (HEAD + "steps:\n  recap:\n    title: 小结\n",
     ["5:12: 'title' must be a mapping with `source:` (the English fingerprint) and `text:`, "
      "not text; the `skeleton` and `update` tools write entries for you"]),
    (HEAD + "steps:\n  recap:\n    title:\n      text: 小结\n",
     ["6:7: missing required key 'source' in 'title'; add `source:` with the fingerprint of "
      "the English text"]),
    (HEAD + "steps:\n  recap:\n    title:\n      source: 123456789012\n      text: 小结\n",
     ["6:15: 'source' must be the 12-digit hex fingerprint of the English text, such as "
      "`3f2a9c0d1b7e`, not a number; quote a fingerprint of digits only, as in "
      "`source: \"012345678901\"`"]),
    (HEAD + "steps:\n  recap:\n    title:\n      source: abc\n      text: 小结\n",
     ["6:15: 'source' must be the 12-digit hex fingerprint of the English text, such as "
      "`3f2a9c0d1b7e`, not 'abc'"]),
    (HEAD + "steps:\n  recap:\n    title:\n      source: 0123456789AB\n      text: 小结\n",
     ["6:15: 'source' must be the 12-digit hex fingerprint of the English text, such as "
      "`3f2a9c0d1b7e`, not '0123456789AB'"]),
    (HEAD + "steps:\n  recap:\n    title:\n      source: 0123456789ab\n      text: 3\n",
     ["7:13: 'text' must be text, not a number (quote it if it is text)"]),
    (HEAD + "steps:\n  recap:\n    title:\n      source: 0123456789ab\n      txt: 小结\n",
     ["7:7: unknown key 'txt'; did you mean 'text'?"]),
    (HEAD + "steps:\n  - recap\n",
     ["4:3: 'steps' must be a mapping of step ids to their entries, not a list"]),
    (HEAD + "steps:\n  recap:\n", ["4:3: 'recap' is empty; add entries or remove it"]),
    (HEAD + "steps:\n  recap:\n    title:\n      source: 0123456789ab\n"
            "      text: !!python/name:os.system x\n",
     ["7:13: YAML tag '!!python/name:os.system' is not allowed in lessons; remove the tag"]),
    (HEAD + "steps:\n  recap:\n    title: {source: 0123456789ab, text: a}\n"
            "    title: {source: 0123456789ab, text: b}\n",
     ["6:5: duplicate key 'title'; keep only one of them"]),
])
def test_a_broken_translation_file_gives_located_one_line_messages(
        text: str, messages: list[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(text, encoding="utf-8")
    translation, problems = load_translation_file(Path("t.yaml"))
    assert translation is None
    assert [str(p) for p in problems] == [f"t.yaml:{m}" for m in messages]
    assert all("\n" not in str(p) for p in problems)


def test_an_unreadable_translation_file_is_a_located_problem(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_bytes(HEAD.encode() + b"steps:\n  a: \xff\n")
    _, problems = load_translation_file(Path("t.yaml"))
    assert [str(p) for p in problems] == ["t.yaml:4:6: the file is not UTF-8; save it as UTF-8"]


def test_a_cached_translation_is_the_same_translation(tmp_path: Path) -> None:
    path = tmp_path / "zh.yaml"
    # a text of its own: the shipped one may be in the cache already, from another test
    path.write_text(ZH.read_text(encoding="utf-8") + f"# {tmp_path.name}\n", encoding="utf-8")
    first, _ = load_translation_file(path)
    again, _ = load_translation_file(path)  # from the cache: positions are not known
    assert first is not None and again is not None
    assert {k: (e.source, e.text) for k, e in first.entries.items()} == {
        k: (e.source, e.text) for k, e in again.entries.items()}
    assert set(again.step_at) == set(first.step_at)
    assert first.entries[FieldKey(None, "title")].at != (0, 0)
    assert all(e.at == (0, 0) for e in again.entries.values())  # read from the cache


# --- where translations live ------------------------------------------------------------------

def test_translations_sit_in_a_language_folder_that_course_discovery_skips() -> None:
    assert translation_file(GRAD, "zh-CN") == ZH
    assert ZH not in lesson_files(GRAD.parent)
    assert all(path.parent == GRAD.parent for path in lesson_files(GRAD.parent))
    assert "zh-CN" in languages_in(GRAD.parent)


def test_load_translation_finds_the_file_beside_the_lesson() -> None:
    translation, problems = load_translation(GRAD, "zh-CN")
    assert translation is not None and problems == []
    assert load_translation(GRAD, "fr") == (None, [])
    assert load_translation(GRAD, "en") == (None, [])


# --- the author's tools -----------------------------------------------------------------------

def test_a_skeleton_lists_every_text_with_its_fingerprint_and_no_translation(
        grad: Lesson) -> None:
    text = skeleton(grad, "fr", None, "lessons/grad.yaml")
    translation, problems = parse_translation(text, "fr.yaml")
    assert translation is not None, problems
    english = dict(lesson_texts(grad))
    assert {k: e.source for k, e in translation.entries.items()} == {
        k: fingerprint(v) for k, v in english.items()}
    assert all(e.text is None for e in translation.entries.values())
    _, report = localize(grad, translation, "fr")
    assert report.translated == 0 and report.unused == () and report.stale == ()
    assert "    title:\n      # en: The .grad attribute\n" in text


def test_update_keeps_every_translation_exactly(grad: Lesson, zh: Translation) -> None:
    text = skeleton(grad, "zh-CN", zh, "lessons/grad.yaml")
    again, problems = parse_translation(text, "zh.yaml")
    assert again is not None, problems
    for key, entry in zh.entries.items():
        assert (again.entries[key].source, again.entries[key].text) == (entry.source,
                                                                        entry.text)
    assert skeleton(grad, "zh-CN", again, "lessons/grad.yaml") == text


def test_update_marks_stale_entries_and_keeps_unused_ones(grad: Lesson,
                                                          zh: Translation) -> None:
    key = FieldKey("habit", "title")
    edited = with_step(grad, "habit", title="A habit to form")
    extra = zh._replace(
        entries={**zh.entries, FieldKey("gone", "title"): Entry("0" * 12, "旧的"),
                 FieldKey("habit", "bdy"): Entry("1" * 12, "拼错")},
        step_at={**zh.step_at, "gone": (1, 1)})
    text = skeleton(edited, "zh-CN", extra, "lessons/grad.yaml")
    now = fingerprint("A habit to form")
    assert ("    title:\n      # en: A habit to form\n      # stale: the English changed; "
            f"revise the text, then set `source: {now}`\n"
            f"      source: {zh.entries[key].source}\n      text: 一个值得养成的习惯\n") in text
    assert "  gone:\n    # unused: the lesson has no such step" in text
    again, _ = parse_translation(text, "zh.yaml")
    assert again is not None
    _, report = localize(edited, again, "zh-CN")
    assert [s.key for s in report.stale] == [key]
    assert {u.where for u in report.unused} == {"step gone", "step habit bdy"}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_translated_text_survives_the_file_round_trip(text: str) -> None:
    lesson = Lesson(id="tiny", title="Tiny", summary="A summary.", order=1,
                    steps=(Slide(kind="slide", id="only", title="Only", body="Body."),))
    key = FieldKey("only", "body")
    translation = Translation("x", "tiny", "fr", {key: Entry(fingerprint("Body."), text)}, {})
    written = skeleton(lesson, "fr", translation)
    read, problems = parse_translation(written, "fr.yaml")
    assert read is not None, (problems, written)
    assert read.entries[key].text == (text if text.strip() else None)


def run_tool(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:  # main() always exits
        main(["translate", *argv])
    code = int(exited.value.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_tools_write_report_and_update_a_translation(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("grad.yaml").write_text(GRAD.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = run_tool(capsys, "skeleton", "grad.yaml", "fr")
    assert code == 0 and out.startswith("# The fr translation of grad.yaml (lesson 'grad').")

    code, out, _ = run_tool(capsys, "update", "grad.yaml", "fr")
    total = len(list(lesson_texts(load_lesson(Path("grad.yaml"), EXERCISE_RULES))))
    assert (code, out) == (0, f"wrote fr/grad.yaml\nfr/grad.yaml: fr translation of lesson "
                              f"'grad': 0 of {total} texts translated ({total} missing)\n")
    assert Path("fr/grad.yaml").read_text(encoding="utf-8") == skeleton(
        load_lesson(Path("grad.yaml"), EXERCISE_RULES), "fr", None, "grad.yaml")

    code, out, _ = run_tool(capsys, "report", "grad.yaml", "fr")
    assert code == 1 and "missing (shown in English): lesson: title, summary" in out

    Path("fr/grad.yaml").write_text("translates: grad\n", encoding="utf-8")
    code, _, err = run_tool(capsys, "report", "grad.yaml", "fr")
    assert (code, err) == (2, "fr/grad.yaml:1:1: missing required key 'language'; add a "
                              "language tag such as `language: zh-CN`\n")


def test_the_report_of_the_shipped_translation(grad: Lesson, zh: Translation,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_tool(capsys, "report", str(GRAD), "zh-CN")
    first = out.splitlines()[0]
    assert f"zh-CN translation of lesson 'grad': {len(fresh_entries(grad, zh))} of " in first
    assert code == (0 if check_translation(grad, zh, "zh-CN").complete else 1)


def test_the_example_in_docs_translating_is_a_fresh_translation_of_grad(grad: Lesson) -> None:
    doc = (ROOT / "docs" / "translating.md").read_text(encoding="utf-8")
    example = next(b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S)
                   if b.startswith("translates:"))
    translation, problems = parse_translation(example, "docs/translating.md")
    assert translation is not None, problems
    _, report = localize(grad, translation, "zh-CN")
    assert report.stale == () and report.unused == ()
    assert report.translated == len(translation.entries) == 5


# --- what the tutor and validate do with the translations beside a course ----------------------

def test_english_and_fresh_translations_are_never_marked_untranslated(
        grad: Lesson, zh: Translation) -> None:
    english, _ = localize(grad, zh, "en")
    assert not any(isinstance(text, Untranslated) for _, text in lesson_texts(english))
    chinese, report = localize(grad, zh, "zh-CN")
    marked = {key for key, text in lesson_texts(chinese) if isinstance(text, Untranslated)}
    assert marked == set(report.english)


def test_without_a_usable_translation_every_text_is_untranslated(grad: Lesson) -> None:
    localized, _ = localize(grad, None, "zh-CN")
    assert all(isinstance(text, Untranslated) for _, text in lesson_texts(localized))


def test_check_translations_reports_each_language_and_a_lesson_it_lacks(
        grad: Lesson, tmp_path: Path) -> None:
    (tmp_path / "grad.yaml").write_text(GRAD.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "zh-CN").mkdir()
    (tmp_path / "zh-CN" / "gone.yaml").write_text(HEAD, encoding="utf-8")
    reports, unmatched, problems = check_translations([(grad, tmp_path / "grad.yaml")])
    assert problems == []
    (report,) = reports
    assert report.language == "zh-CN" and report.translated == 0
    assert report.path and report.path.endswith("zh-CN/grad.yaml (no such file)")
    (line,) = unmatched
    assert "zh-CN/gone.yaml: unused: there is no lesson" in line
    _, unmatched, _ = check_translations([(grad, tmp_path / "grad.yaml")], whole_folder=False)
    assert unmatched == []


def test_a_translation_path_names_its_lessons_and_language(tmp_path: Path) -> None:
    assert translation_target(ZH) == (GRAD, "zh-CN")
    assert translation_target(ZH.parent) == (GRAD.parent, "zh-CN")
    assert translation_target(GRAD) is None and translation_target(GRAD.parent) is None
    folder = tmp_path / "my-course"  # looks like a language tag, holds lessons
    folder.mkdir()
    (folder / "intro.yaml").write_text("id: intro\n", encoding="utf-8")
    assert translation_target(folder) is None and translation_target(folder / "intro.yaml") is None
