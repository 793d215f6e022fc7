"""The course as searchable documents, one a step: its title, its teaching text (a slide's
or demo's body and notes, a prompt, a quiz's intro), its code, and what it declares it
answers (`asks`, `errors`), in English and in each translation given, so that a question in
either language finds it. Ranked by BM25 (Robertson and Zaragoza), its fields weighted, with
how well the question matches one of the step's declared questions on top. Never indexed: an
exercise's solution, hints and "why it works", a quiz's or prediction's answers. Pure.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from gradtutor.asking.words import terms
from gradtutor.lessons.exercise_rules import ExerciseRules
from gradtutor.lessons.model import Demo, Exercise, Lesson, Predict, Quiz, Slide, Step
from gradtutor.records import record

# How much a term counts in each part of a step (BM25F's field weights).
WEIGHTS = {"title": 2.0, "asks": 1.0, "errors": 1.0, "text": 1.0, "code": 0.5}
K1, B = 1.2, 0.75
# How much matching one declared question well adds to a step's score, at most.
ASK_BONUS = 6.0


@record
class Doc:
    """One step as the index knows it: where it is, and its texts by language."""

    lesson: str
    lesson_title: dict[str, str]
    step: str
    position: int  # from 1, as `show --step` counts
    kind: str
    title: dict[str, str]
    text: dict[str, str]  # the teaching text, paragraphs apart by blank lines
    code: str | None  # a snippet that runs as shown (a slide's or demo's), if any
    asks: dict[str, tuple[str, ...]]


@record
class Index:
    docs: tuple[Doc, ...]
    weights: tuple[dict[str, float], ...]  # each doc's weighted term counts
    lengths: tuple[float, ...]
    idf: dict[str, float]
    asks: tuple[tuple[frozenset[str], ...], ...]  # each doc's declared questions, as terms
    ask_idf: tuple[tuple[float, ...], ...]  # the idf of each declared question's terms, summed
    errors: tuple[tuple[str, ...], ...]  # each doc's declared messages

    def idf_of(self, term: str) -> float:
        """A term's rarity; a term the course never uses counts as the rarest."""
        return self.idf.get(term, self.top_idf)

    @property
    def top_idf(self) -> float:
        return math.log(1 + (len(self.docs) - 0.5) / 1.5)


def teaching_text(step: Step) -> str:
    """What a step teaches in words, as the learner reads it on its screen."""
    if isinstance(step, (Slide, Demo)):
        parts = [step.body, getattr(step, "notes", None)]
    elif isinstance(step, Quiz):  # what it asks, never its answers
        parts = [step.intro, *(q.prompt for q in step.questions)]
    else:
        parts = [step.prompt]
    return "\n\n".join(p.strip() for p in parts if p)


def snippet(step: Step) -> str | None:
    """The step's own runnable code, if it shows any outside an exercise or a question."""
    return step.code if isinstance(step, (Slide, Demo)) else None


def _code(step: Step) -> str:
    return step.code if isinstance(step, (Slide, Demo, Predict)) and step.code else ""


def make_doc(lessons: dict[str, Lesson], position: int) -> Doc:
    """The step at `position` (from 1) of one lesson, given in each language it is read in."""
    english = lessons["en"]
    step = english.steps[position - 1]
    by_lang = {lang: lesson.steps[position - 1] for lang, lesson in lessons.items()}
    return Doc(english.id, {lang: lesson.title for lang, lesson in lessons.items()}, step.id,
               position, step.kind, {lang: s.title for lang, s in by_lang.items()},
               {lang: teaching_text(s) for lang, s in by_lang.items()}, snippet(step),
               {lang: s.asks for lang, s in by_lang.items()})


def _fields(lessons: dict[str, Lesson], position: int) -> dict[str, list[str]]:
    steps = [lesson.steps[position - 1] for lesson in lessons.values()]
    english = steps[0]
    return {
        "title": [t for s in steps for t in terms(s.title)],
        "asks": [t for s in steps for a in s.asks for t in terms(a)],
        "errors": [t for e in english.errors for t in terms(e)],
        "text": [t for s in steps for t in terms(teaching_text(s))],
        "code": terms(_code(english)),
    }


def build(courses: Sequence[dict[str, Lesson]]) -> Index:
    """The index of every step of `courses`: each a lesson by language, English first."""
    docs, weights, lengths, asks, errors = [], [], [], [], []
    for lessons in courses:
        english = lessons["en"]
        for position, step in enumerate(english.steps, start=1):
            docs.append(make_doc(lessons, position))
            counted: dict[str, float] = {}
            for name, found in _fields(lessons, position).items():
                for term in found:
                    counted[term] = counted.get(term, 0.0) + WEIGHTS[name]
            weights.append(counted)
            lengths.append(sum(counted.values()))
            asks.append(tuple(frozenset(terms(a)) for lesson in lessons.values()
                              for a in lesson.steps[position - 1].asks))
            errors.append(step.errors)
    df: Counter[str] = Counter(term for counted in weights for term in counted)
    n = len(docs)
    idf = {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}
    index = Index(tuple(docs), tuple(weights), tuple(lengths), idf, tuple(asks), (),
                  tuple(errors))
    ask_idf = tuple(tuple(sum(index.idf_of(t) for t in ask) for ask in doc_asks)
                    for doc_asks in asks)
    return dataclasses.replace(index, ask_idf=ask_idf)


@record
class Ranked:
    """A step's score for a question, and how much of the question it covers (the share of
    the question's rarity, by idf, found in the step: 1.0 when every term is)."""

    doc: int
    score: float
    cover: float


def rank(index: Index, query: Iterable[str]) -> list[Ranked]:
    """Every step with a positive score, best first."""
    wanted = Counter(query)
    if not wanted:
        return []
    average = sum(index.lengths) / len(index.lengths)
    total = sum(index.idf_of(t) for t in wanted)
    query_idf = {t: index.idf_of(t) for t in wanted}
    out = []
    for doc, counted in enumerate(index.weights):
        norm = K1 * (1 - B + B * index.lengths[doc] / average)
        score = sum(index.idf_of(t) * counted[t] * (K1 + 1) / (counted[t] + norm)
                    for t in wanted if t in counted)
        best_ask = max((_overlap(query_idf, total, ask, ask_total)
                        for ask, ask_total in zip(index.asks[doc], index.ask_idf[doc],
                                                  strict=True)), default=0.0)
        score += ASK_BONUS * best_ask
        if score > 0:
            found = sum(index.idf_of(t) for t in wanted if t in counted)
            out.append(Ranked(doc, score, found / total if total else 0.0))
    return sorted(out, key=lambda r: (-r.score, r.doc))


def _overlap(query_idf: dict[str, float], query_total: float, ask: frozenset[str],
             ask_total: float) -> float:
    """How alike a question and one declared question are: the idf of the terms they
    share over the idf of the terms either has (a weighted Jaccard), 0 to 1. `query_idf`
    holds the question's terms' idf, the totals each side's idf summed."""
    shared = sum(query_idf[t] for t in ask if t in query_idf)
    if not shared:
        return 0.0
    return shared / (query_total + ask_total - shared)


def from_lessons(by_lang: dict[str, Sequence[Lesson]]) -> Index:
    """The index of a course given in each language it is read in ("en" first, always
    there): its lessons matched by id, a translation lacking one left out of it."""
    courses = []
    for english in by_lang["en"]:
        lessons = {"en": english}
        for lang, translated in by_lang.items():
            match = next((lesson for lesson in translated if lesson.id == english.id), None)
            if lang != "en" and match is not None and len(match.steps) == len(english.steps):
                lessons[lang] = match
        courses.append(lessons)
    return build(courses)


def load(folder: Path | None, rules: ExerciseRules, languages: Sequence[str] = ("zh-CN",),
         prepare: Callable[[tuple[Lesson, ...]], tuple[Lesson, ...]] = lambda found: found,
         ) -> tuple[Index, tuple[Exercise, ...]]:
    """The index of the course in `folder` (default: the built-in one), read in English and
    in `languages` (a translation that cannot be read is left out), and its exercises. Reads
    the lesson files (their parsed form from the lesson cache, as every command does);
    `prepare` readies each language's lessons to be shown (the shell neutralises them)."""
    from gradtutor.errors import GradtutorError
    from gradtutor.lessons.course import load_course

    english = load_course(folder, rules=rules)
    by_lang: dict[str, Sequence[Lesson]] = {"en": prepare(english.lessons)}
    for lang in languages:
        try:
            by_lang[lang] = prepare(load_course(folder, lang, rules=rules).lessons)
        except GradtutorError:
            continue
    return from_lessons(by_lang), tuple(english.exercises().values())
