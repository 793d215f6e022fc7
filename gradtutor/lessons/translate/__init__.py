"""Translations of lesson text, kept in `<lessons>/<language>/<lesson file>` beside the lesson.

Each translated text carries the fingerprint of the English it was made from, so a text whose
English changed afterwards is noticed (stale) and shown in English instead. The parts:
`fields` (which texts are translated, and their names), `fingerprint`, `files` (reading a
translation file), `localize` (the lesson in another language, and the report of what stayed
English), `shape` (what a translation must keep of its English), `reporting` (the report in
words) and `skeleton` (writing translation files). The author's tools are `gradtutor
translate`, also run as `python -m gradtutor.lessons.translate` (docs/translating.md).
"""

from gradtutor.lessons.translate.fields import (
    COMMENTED_CODE,
    ITEMS,
    KEPT,
    NESTED,
    PROSE,
    FieldKey,
    lesson_texts,
    texts_of,
)
from gradtutor.lessons.translate.files import (
    SOURCE_LANGUAGE,
    Entry,
    Translation,
    is_target_language,
    languages_in,
    load_translation,
    load_translation_file,
    parse_translation,
    read_translation,
    translation_file,
    translation_target,
)
from gradtutor.lessons.translate.fingerprint import FINGERPRINT_CHARS, fingerprint, normalize
from gradtutor.lessons.translate.localize import (
    Reshaped,
    Stale,
    TranslationReport,
    Unused,
    check_translation,
    check_translations,
    in_language,
    localize,
)
from gradtutor.lessons.translate.reporting import report_lines, summary_line
from gradtutor.lessons.translate.shape import markdown_shape, same_code, shape_differences
from gradtutor.lessons.translate.skeleton import skeleton

__all__ = [
    "COMMENTED_CODE", "FINGERPRINT_CHARS", "ITEMS", "KEPT", "NESTED", "PROSE",
    "SOURCE_LANGUAGE", "Entry", "FieldKey", "Reshaped", "Stale", "Translation",
    "TranslationReport", "Unused", "check_translation", "check_translations", "fingerprint",
    "in_language", "is_target_language", "languages_in", "lesson_texts", "load_translation",
    "load_translation_file", "localize", "markdown_shape", "normalize", "parse_translation",
    "read_translation", "report_lines", "same_code", "shape_differences", "skeleton",
    "summary_line", "texts_of", "translation_file", "translation_target",
]
