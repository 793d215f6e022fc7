"""A lesson in another language: every text that has a fresh translation swapped in, the rest
left English as `i18n.Untranslated` (which renderers mark `[EN]`), and the report of what fell
back to English and why, field by field, for `validate` and the tools. `localize` is pure.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from gradtutor.errors import Problem
from gradtutor.i18n import Untranslated
from gradtutor.lessons.model import Lesson
from gradtutor.lessons.translate.fields import (
    COMMENTED_CODE,
    KEPT,
    FieldKey,
    lesson_texts,
    rebuild,
)
from gradtutor.lessons.translate.files import (
    SOURCE_LANGUAGE,
    At,
    Translation,
    languages_in,
    load_translation,
    translation_file,
)
from gradtutor.lessons.translate.fingerprint import fingerprint
from gradtutor.lessons.translate.shape import same_code, shape_differences


def in_language(lesson: Lesson, lesson_path: Path,
                language: str) -> tuple[Lesson, list[Problem]]:
    """The lesson as the tutor shows it in `language`, and the problems of a translation file
    that could not be used; then every text stays English (`Untranslated`)."""
    translation, problems = load_translation(lesson_path, language)
    localized, _ = localize(lesson, translation, language)
    return localized, problems


class Stale(NamedTuple):
    """A translation made from English that has changed since."""

    key: FieldKey
    at: At
    was: str  # the fingerprint the file holds
    now: str  # the fingerprint of the English today


class Unused(NamedTuple):
    """An entry, or a whole step, of the translation file that the lesson has no place for."""

    where: str  # `step grad-atribute` or `step grad-attribute bdy`
    at: At
    hint: str


class Reshaped(NamedTuple):
    """A fresh translation whose markdown does not match its English: different code fences,
    code spans, list items or paragraphs. It is still shown; `validate` warns."""

    key: FieldKey
    at: At
    differences: tuple[str, ...]


class TranslationReport(NamedTuple):
    """What `localize` did: the texts still in English (`english`; the renderer reads the
    same from the lesson itself, where each is an `i18n.Untranslated`); for `validate`, each
    missing, stale or unused entry, field by field."""

    lesson_id: str
    language: str
    path: str | None  # the translation file, if there is one
    total: int  # translatable texts in the lesson
    translated: int  # of them, shown translated
    missing: tuple[FieldKey, ...] = ()
    stale: tuple[Stale, ...] = ()
    unused: tuple[Unused, ...] = ()
    reshaped: tuple[Reshaped, ...] = ()
    mismatch: str | None = None  # why the whole file could not be used
    english: frozenset[FieldKey] = frozenset()
    recoded: tuple[FieldKey, ...] = ()  # translated code that is not the English code

    def shows_english(self, step: str | None, path: str) -> bool:
        """Whether this text fell back to English (for tools; the renderer reads it from the
        lesson's own text, an `i18n.Untranslated`)."""
        return FieldKey(step, path) in self.english

    @property
    def complete(self) -> bool:
        return self.translated == self.total and not self.unused and self.mismatch is None


def localize(lesson: Lesson, translation: Translation | None,
             language: str) -> tuple[Lesson, TranslationReport]:
    """The lesson with every text that has a fresh translation into `language` replaced by
    it, and the report of the rest, which stays English as `Untranslated` text, so renderers
    can mark it. Code and identifiers never change."""
    if language == SOURCE_LANGUAGE:
        total = sum(1 for _ in lesson_texts(lesson))
        return lesson, TranslationReport(lesson.id, language, None, total, total)
    mismatch = None
    if translation is not None and translation.language != language:
        mismatch = f"it translates into {translation.language}, not {language}"
    elif translation is not None and translation.lesson_id != lesson.id:
        mismatch = f"it translates lesson '{translation.lesson_id}', not '{lesson.id}'"
    path = translation.path if translation is not None else None
    entries = translation.entries if translation is not None and mismatch is None else {}

    keys: dict[FieldKey, str] = {}
    missing: list[FieldKey] = []
    stale: list[Stale] = []
    recoded: list[FieldKey] = []
    kinds: dict[str, type] = {step.id: type(step) for step in lesson.steps}

    def is_commented_code(step: str | None, field_path: str) -> bool:
        return step is not None and field_path in COMMENTED_CODE.get(kinds[step], ())

    def pick(step: str | None) -> Callable[[str, str], str]:
        def choose(field_path: str, english: str) -> str:
            key = FieldKey(step, field_path)
            keys[key] = english
            entry = entries.get(key)
            if entry is None or entry.text is None:
                missing.append(key)
                return Untranslated(english)
            now = fingerprint(english)
            if entry.source != now:
                stale.append(Stale(key, entry.at, entry.source, now))
                return Untranslated(english)
            if is_commented_code(step, field_path) and not same_code(english, entry.text):
                recoded.append(key)
                return Untranslated(english)
            return entry.text
        return choose

    localized = rebuild(lesson, "", pick(None))
    steps = tuple(rebuild(step, "", pick(step.id)) for step in lesson.steps)
    if any(new is not old for new, old in zip(steps, lesson.steps, strict=True)):
        localized = dataclasses.replace(localized, steps=steps)
    unused = _unused(lesson, keys, translation) if translation and mismatch is None else []
    english = frozenset(missing) | {s.key for s in stale} | set(recoded)
    return localized, TranslationReport(
        lesson.id, language, path, len(keys), len(keys) - len(english), tuple(missing),
        tuple(stale), tuple(unused), (), mismatch, english, tuple(recoded))


def check_translations(found: Sequence[tuple[Lesson, Path]], only: str | None = None,
                       whole_folder: bool = True, shown: Callable[[Path], str] = str,
                       ) -> tuple[list[TranslationReport], list[str], list[Problem]]:
    """Every translation beside each lesson file (into `only`, or every language there is), as
    `validate` reports them: a report per lesson and language (a missing file: every text
    missing), a line per translation file with no lesson to translate (when a whole folder is
    checked), and the problems of the files that cannot be used. The lines name a file as
    `shown` writes it (`validate`: relative to its working directory)."""
    reports: list[TranslationReport] = []
    problems: list[Problem] = []
    folders = {path.parent for _, path in found}
    for lesson, path in found:
        for language in [only] if only else languages_in(path.parent):
            translation, broken = load_translation(path, language, use_cache=False)
            problems += broken
            if broken:
                continue
            report = check_translation(lesson, translation, language)
            if translation is None:
                report = report._replace(path=f"{shown(translation_file(path, language))} "
                                              f"(no such file)")
            reports.append(report)
    unmatched = []
    if whole_folder:
        names = {path.name for _, path in found}
        for folder in sorted(folders):
            for language in [only] if only else languages_in(folder):
                for path in sorted((folder / language).glob("*.y*ml")):
                    if path.name not in names:
                        unmatched.append(f"{shown(path)}: unused: there is no lesson "
                                         f"{shown(folder / path.name)} to translate")
    return reports, unmatched, problems


def check_translation(lesson: Lesson, translation: Translation | None,
                      language: str) -> TranslationReport:
    """`localize`'s report plus the markdown check of every translation it used: what
    `validate` prints. Kept out of `localize`, which runs on every start."""
    _, report = localize(lesson, translation, language)
    if translation is None or report.mismatch is not None:
        return report
    reshaped = []
    kinds: dict[str, type] = {step.id: type(step) for step in lesson.steps}
    for key, english in lesson_texts(lesson):
        entry = translation.entries.get(key)
        if entry is None or entry.text is None or key in report.english:
            continue
        if key.step in kinds and key.path in COMMENTED_CODE.get(kinds[key.step], ()):
            continue  # code, not markdown: `same_code` has checked it
        differences = shape_differences(english, entry.text)
        if differences:
            reshaped.append(Reshaped(key, entry.at, differences))
    return report._replace(reshaped=tuple(reshaped))


def _unused(lesson: Lesson, keys: Mapping[FieldKey, str],
            translation: Translation) -> list[Unused]:
    """Entries for steps or fields the lesson does not have, with the likely intended one."""
    step_ids = [step.id for step in lesson.steps]
    paths: dict[str | None, list[str]] = {}
    for key in keys:
        paths.setdefault(key.step, []).append(key.path)
    out: list[Unused] = []
    for step_id, at in translation.step_at.items():
        if step_id not in paths:
            close = difflib.get_close_matches(step_id, step_ids, n=1)
            hint = (f"did you mean '{close[0]}'?" if close
                    else "the step was removed or renamed; move its texts or delete them")
            out.append(Unused(f"step {step_id}", at,
                              f"lesson '{lesson.id}' has no step '{step_id}'; {hint}"))
    kinds: dict[str, type] = {step.id: type(step) for step in lesson.steps}
    for key, entry in translation.entries.items():
        if key.step in paths and key not in keys:
            owner = "the lesson" if key.step is None else f"step {key.step}"
            kept = KEPT.get(kinds.get(key.step or "", Lesson), ())
            close = difflib.get_close_matches(key.path, paths[key.step], n=1)
            if key.path.rsplit(".", 1)[-1] in kept:
                hint = "it is code or an identifier, which stays as written; delete the entry"
            elif close:
                hint = f"did you mean '{close[0]}'?"
            else:
                hint = "delete the entry"
            out.append(Unused(str(key), entry.key_at, f"{owner} has no text '{key.path}'; "
                                                      f"{hint}"))
    return sorted(out, key=lambda u: (u.at, u.where))
