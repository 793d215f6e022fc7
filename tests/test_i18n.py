"""Messages in the learner's language: lazy messages, catalogs, and the choice of language."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

import gradtutor
from gradtutor.i18n import (
    ENGLISH,
    CatalogError,
    Translator,
    choose_language,
    find_messages,
    language_code,
    load_catalog,
    messages_in,
    msg,
    parse_catalog,
    placeholders,
)

PACKAGE = Path(gradtutor.__file__).parent
ZH = Translator("zh-CN", {"Step {step} used {grad:.2f}": "第 {step} 步用了 {grad:.2f}",
                          "the gradient": "梯度", "{what} is None": "{what} 是 None"})


def test_a_message_is_its_english_text_everywhere_but_a_translator() -> None:
    m = msg("Step {step} used {grad:.2f}", step=2, grad=0.5)
    assert m == "Step 2 used 0.50"
    assert json.dumps({"message": m}) == '{"message": "Step 2 used 0.50"}'
    assert ENGLISH(m) == "Step 2 used 0.50"
    assert ZH(m) == "第 2 步用了 0.50"


def test_nested_messages_are_translated_and_data_fields_are_not() -> None:
    m = msg("{what} is None", what=msg("the gradient"))
    assert m == "the gradient is None"
    assert ZH(m) == "梯度 是 None"
    assert ZH(msg("{what} is None", what="w.grad")) == "w.grad 是 None"


def test_a_template_missing_from_the_catalog_stays_english() -> None:
    assert ZH(msg("Nothing like this {n}", n=3)) == "Nothing like this 3"
    assert ZH("plain text") == "plain text"
    assert ZH("the gradient") == "梯度"


def test_a_message_survives_pickling_and_copying_with_its_template() -> None:
    m = msg("Step {step} used {grad:.2f}", step=1, grad=2.0)
    again = pickle.loads(pickle.dumps(m))
    assert again == m and ZH(again) == "第 1 步用了 2.00"


def test_placeholders_ignore_format_specs_and_escaped_braces() -> None:
    assert placeholders("{a:.3f} {b!r} {{not}} {c.real} {d[0]}") == {"a", "b", "c", "d"}


@pytest.mark.parametrize(("value", "code"), [
    ("zh", "zh-CN"), ("zh_CN.UTF-8", "zh-CN"), ("zh-Hans", "zh-CN"), ("ZH_cn", "zh-CN"),
    ("en_GB.UTF-8", "en"), ("C.UTF-8", "en"), ("POSIX", "en"), ("en", "en"),
    ("zh_TW.UTF-8", None), ("fr_FR.UTF-8", None), ("", None),
])
def test_language_codes(value: str, code: str | None) -> None:
    assert language_code(value) == code


def test_the_option_beats_the_variable_which_beats_the_locale() -> None:
    env = {"GRADTUTOR_LANG": "en", "LANG": "zh_CN.UTF-8"}
    assert choose_language("zh", env).lang == "zh-CN"
    assert choose_language(None, env).lang == "en"
    assert choose_language(None, {"LANG": "zh_CN.UTF-8"}).lang == "zh-CN"
    assert choose_language(None, {"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}).lang == "en"
    assert choose_language(None, {"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US"}).lang == "zh-CN"
    assert choose_language(None, {}).lang == "en"
    assert choose_language(None, {}, system_locale=lambda: "zh_CN").lang == "zh-CN"

    def never() -> str:
        raise AssertionError("the system locale is asked only when no variable is set")

    assert choose_language(None, {"LANG": "en_US"}, system_locale=never).lang == "en"
    assert choose_language("zh", {}, system_locale=never).lang == "zh-CN"


def test_an_output_that_cannot_show_chinese_gets_english_with_a_note_when_asked() -> None:
    asked = choose_language("zh", {}, utf8=False)
    assert asked.lang == "en" and "cannot show" in asked.note
    from_locale = choose_language(None, {"LANG": "zh_CN.GB2312"}, utf8=False)
    assert from_locale.lang == "en" and from_locale.note == ""


def test_an_unknown_language_is_named() -> None:
    assert "unknown language 'klingon'" in choose_language("klingon", {}).note
    choice = choose_language(None, {"GRADTUTOR_LANG": "fr"})
    assert choice.lang == "en" and "GRADTUTOR_LANG='fr'" in choice.note


def test_a_catalog_entry_must_keep_the_fields_of_its_template() -> None:
    with pytest.raises(CatalogError, match=r"must use the fields \['step'\]"):
        parse_catalog({"Step {step}": "第 {n} 步"}, "x.yaml")
    with pytest.raises(CatalogError, match="both sides must be text"):
        parse_catalog({"Step": ["第"]}, "x.yaml")
    with pytest.raises(CatalogError, match="mapping"):
        parse_catalog(["Step"], "x.yaml")
    pairs = {"Step {step}": "第 {step} 步"}
    assert parse_catalog(pairs, "x.yaml") == pairs


def test_catalog_files_merge_and_must_agree(tmp_path: Path) -> None:
    (tmp_path / "zh-CN").mkdir()
    (tmp_path / "zh-CN" / "a.yaml").write_text('"one": "一"\n', encoding="utf-8")
    (tmp_path / "zh-CN" / "b.yaml").write_text('"two": "二"\n', encoding="utf-8")
    assert load_catalog("zh-CN", tmp_path) == {"one": "一", "two": "二"}
    (tmp_path / "zh-CN" / "c.yaml").write_text('"one": "壹"\n', encoding="utf-8")
    with pytest.raises(CatalogError, match="translated differently"):
        load_catalog("zh-CN", tmp_path)
    (tmp_path / "zh-CN" / "c.yaml").write_text('"one": [\n', encoding="utf-8")
    with pytest.raises(CatalogError, match="cannot be read"):
        load_catalog("zh-CN", tmp_path)


def test_templates_are_found_in_source_and_expressions_are_refused() -> None:
    source = 'x = msg("Hello {name}", name=n)\ny = msg(f"bad {n}")\nz = other("no")\n'
    found = list(find_messages(source, "m.py"))
    assert [getattr(f, "template", f) for f in found] == [
        "Hello {name}", "m.py:2: msg() needs a literal template, not an expression"]


# The shipped catalog: every message gradtutor can show has a zh-CN translation, and the
# catalog holds nothing that the code no longer says.

def test_every_message_in_gradtutor_is_a_literal_template() -> None:
    _found, problems = messages_in(PACKAGE)
    assert problems == []


def test_the_zh_catalog_translates_every_message_and_nothing_else() -> None:
    found, _problems = messages_in(PACKAGE)
    catalog = load_catalog("zh-CN")
    missing = sorted({f"{f.path}:{f.line}: {f.template!r}" for f in found
                      if f.template not in catalog})
    assert missing == []
    unused = sorted(set(catalog) - {f.template for f in found})
    assert unused == []


def test_untranslated_text_is_still_its_text() -> None:
    from gradtutor.i18n import Untranslated

    text = Untranslated("Gradients start as None")
    assert text == "Gradients start as None" and isinstance(text, str)
    assert ZH(text) == "Gradients start as None"
