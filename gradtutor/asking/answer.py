"""A learner's question, and the moment it is asked in (the step on screen, the exercise,
the learner's file and its latest verdict), to an answer from the course: one or two of the
course's own sentences, and the 1-3 steps that teach it, each with its key passage and
snippet; or, where the course does not teach it, a plain "not in this course" that names the
topic when it is recognisable and points at nothing. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gradtutor.asking import guard, pasted
from gradtutor.asking.index import Doc, Index, Ranked, rank
from gradtutor.asking.topics import topic_of
from gradtutor.asking.words import terms
from gradtutor.i18n import ENGLISH_CODE, Msg, msg
from gradtutor.lessons.model import Exercise
from gradtutor.records import record

# The course answers a question when its best step covers this share of the question's
# rarity (idf) and scores this much; below, "not in this course". Measured on the
# benchmark's questions (benchmarks/ask.py).
COVER_MIN = 0.25
SCORE_MIN = 5.0
# ... or covers this much of it: a short question ("why is my grad None?") scores little.
WHOLE = 0.9
# ... or, naming no outside topic, scores this much: a long question, whose many words the
# course never uses (the learner's setting, numbers, thanks) cover little of it.
LONG_SCORE = 9.0
# A named outside topic needs a stronger match to be answered from the course all the same:
# this much of the question, or this score (a topic named in passing, "my GPU memory climbs
# ... I keep epoch_loss += loss"; above the benchmark's off-course questions' best, 24.7).
TOPIC_COVER_MIN = 0.6
TOPIC_SCORE = 30.0
# A further step is cited when it scores this share of the best one.
ALSO = 0.6
MAX_STEPS = 3
PASSAGE_CHARS = 320

# A question about the learner's own failing file ("why does this fail?").
_ABOUT_FAILURE = re.compile(
    r"\b(fail\w*|wrong|not pass\w*|(doesn.?t|does not|won.?t|didn.?t) (pass|work)|error|"
    r"broken|mistake|what.?s (up|wrong)|why not|my (code|file|function|solution))\b|"
    r"失败|不通过|没通过|没过|不过|哪里错|错在|错了|不对|报错|问题在|我的代码|我的文件",
    re.IGNORECASE)


@record
class Moment:
    """Where the learner is when asking: the lesson and step on screen, the exercise there
    (or named), the learner's file, and its latest verdict's failing checks as (name,
    message), as the learner reads them."""

    lesson: str | None = None
    step: str | None = None
    exercise: Exercise | None = None
    code: str | None = None
    failing: tuple[tuple[str, str], ...] = ()


NOWHERE = Moment()  # a question asked from the command line, about no exercise


@record
class Cited:
    """A step that teaches the answer: its key passage, and its snippet (None when it has
    none, or when it is held back because it would solve the exercise on screen)."""

    doc: Doc
    passage: str
    snippet: str | None
    held: bool = False


@record
class Answer:
    question: str
    covered: bool
    lead: Msg | None  # what the tutor says first, in its own words (to be translated)
    sentences: str  # the course's own sentences that answer, in the learner's language
    steps: tuple[Cited, ...]
    topic: Msg | None = None  # the outside topic, where the course does not cover it
    lang: str = ENGLISH_CODE


def declared_errors(index: Index) -> list[tuple[int, str]]:
    return [(doc, message) for doc, messages in enumerate(index.errors)
            for message in messages]


def asks_why_it_fails(question: str) -> bool:
    """Whether the question, were the learner's file failing, would be about that: it
    says so ("why does this fail?"), or says too little to be about anything else."""
    return _ABOUT_FAILURE.search(question) is not None or len(set(terms(question))) < 2


def about_failure(question: str, moment: Moment) -> bool:
    """Whether the question asks about the learner's own failing file."""
    return bool(moment.failing) and asks_why_it_fails(question)


def _query(question: str, moment: Moment) -> list[str]:
    """The question's terms, and the failing check's own words when it is about that."""
    query = terms(question)
    if about_failure(question, moment):
        query += [t for _, message in moment.failing[:1] for t in terms(message)]
    return query


def find_steps(index: Index, question: str, moment: Moment = NOWHERE,
               query: list[str] | None = None) -> list[Ranked]:
    """The steps that answer, best first: a pasted message's own step first, then the
    ranking by words (the failing check's own words added, when the question is about it;
    `query`, those terms, when the caller has them already)."""
    ranked = rank(index, _query(question, moment) if query is None else query)
    found = pasted.find(question, declared_errors(index))
    if not found:
        return ranked
    first = [Ranked(p.doc, float("inf"), 1.0) for p in found]
    return first + [r for r in ranked if r.doc not in {p.doc for p in found}]


def answer(index: Index, question: str, moment: Moment = NOWHERE,
           lang: str = ENGLISH_CODE, exercises: Iterable[Exercise] = ()) -> Answer:
    """The course's answer to `question`, in `lang`, at `moment`. `exercises` are the
    course's, none of whose solution an answer may show."""
    question = question.strip()
    query = _query(question, moment)
    ranked = find_steps(index, question, moment, query)
    failing = about_failure(question, moment)
    topic = topic_of(question)
    best = ranked[0] if ranked else None
    covered = best is not None and (
        best.score == float("inf") or failing
        or (best.cover >= (TOPIC_COVER_MIN if topic else COVER_MIN)
            and (best.score >= SCORE_MIN or best.cover >= WHOLE))
        or best.score >= (TOPIC_SCORE if topic else LONG_SCORE))
    if not covered or best is None:
        refusal = (msg("That is not in this course: it is about {topic}, which the course does "
                    "not teach.", topic=topic) if topic else
                msg("That is not in this course, as far as I can tell: no step of it "
                    "answers this."))
        return Answer(question, False, refusal, "", (), topic, lang)
    chosen = [r for r in ranked[:MAX_STEPS]
              if r is best or r.score >= ALSO * best.score]
    cited = tuple(_cite(index.docs[r.doc], query, lang, moment, tuple(exercises))
                  for r in chosen)
    sentences = _sentences(cited[0].doc, query, lang, moment)
    cited = _no_solution_together(cited, sentences, tuple(exercises))
    lead = None
    if failing:
        name, message = moment.failing[0]
        lead = msg("Your file fails the check {check}: {message}", check=name,
                   message=message)
    return Answer(question, True, lead, sentences, cited, None, lang)


# --- choosing the course's words -----------------------------------------------------------

def _text(doc: Doc, lang: str) -> str:
    return doc.text.get(lang) or doc.text["en"]


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def sentences_of(paragraph: str) -> list[str]:
    flat = " ".join(line.strip() for line in paragraph.splitlines())
    if re.search(r"[\u4e00-\u9fff]", flat):
        flat = re.sub(r"(?<=[\u4e00-\u9fff，。：；！？]) (?=[\u4e00-\u9fff])", "", flat)
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z`(\"'*])|(?<=[。！？])", flat)
    return [p.strip() for p in parts if p.strip()]


def _weight(text: str, query: set[str]) -> int:
    return len(query & set(terms(text)))


def _safe(text: str, moment: Moment, exercises: tuple[Exercise, ...]) -> bool:
    """No piece of the fix of the exercise on screen; no solution of any."""
    if moment.exercise is not None and guard.carries_fix(text, moment.exercise):
        return False
    return not any(guard.shows_solution(text, e) for e in exercises)


def _passage(doc: Doc, query: list[str], lang: str, moment: Moment) -> str:
    wanted = set(query)
    exercises = (moment.exercise,) if moment.exercise else ()
    found = [p for p in paragraphs(_text(doc, lang)) if _safe(p, moment, exercises)]
    if not found:
        return ""
    best = max(found, key=lambda p: (_weight(p, wanted), -found.index(p)))
    if len(best) <= PASSAGE_CHARS:
        return best
    said = sentences_of(best)
    pairs = [" ".join(said[i:i + 2]) for i in range(max(1, len(said) - 1))]
    return max(pairs, key=lambda p: (_weight(p, wanted), -pairs.index(p)))


def _cite(doc: Doc, query: list[str], lang: str, moment: Moment,
          exercises: tuple[Exercise, ...]) -> Cited:
    code = doc.code
    held = code is not None and not _safe(code, moment, exercises)
    return Cited(doc, _passage(doc, query, lang, moment), None if held else code, held)


def _no_solution_together(cited: tuple[Cited, ...], sentences: str,
                          exercises: tuple[Exercise, ...]) -> tuple[Cited, ...]:
    """The steps as cited, but where all of them together would show an exercise's
    solution (each piece safe alone): snippets held back, then the further passages."""
    def shown(steps: tuple[Cited, ...]) -> str:
        return " ".join([sentences, *(c.passage for c in steps),
                         *(c.snippet or "" for c in steps)])

    if _safe(shown(cited), NOWHERE, exercises):
        return cited
    cited = tuple(Cited(c.doc, c.passage, None, c.held or c.snippet is not None)
                  for c in cited)
    if _safe(shown(cited), NOWHERE, exercises):
        return cited
    return (cited[0], *(Cited(c.doc, "", None, c.held) for c in cited[1:]))


def _sentences(doc: Doc, query: list[str], lang: str, moment: Moment) -> str:
    """The one or two sentences of the step that say most of what is asked, in order."""
    wanted = set(query)
    exercises = (moment.exercise,) if moment.exercise else ()
    said = [s for p in paragraphs(_text(doc, lang)) for s in sentences_of(p)
            if not s.startswith(("-", "*", "|")) and _safe(s, moment, exercises)]
    if not said:
        return ""
    # a sentence that says something, before one that asks (a prediction's question)
    scored = sorted(range(len(said)), key=lambda i: (
        said[i].rstrip().endswith(("?", "？")), -_weight(said[i], wanted), i))
    first = scored[0]
    picks = [first]
    second = scored[1] if len(scored) > 1 else None
    if (second is not None and _weight(said[second], wanted) > 0 and len(said[first]) < 160
            and not said[second].rstrip().endswith(("?", "？"))):
        picks.append(second)
    joiner = "" if lang.startswith("zh") else " "
    return joiner.join(said[i] for i in sorted(picks))


def to_json(found: Answer, tr: object = None) -> dict[str, object]:
    """The answer as `ask --json` prints it (`tr` translates the tutor's own words)."""
    say = tr if callable(tr) else str
    lead = say(found.lead) if found.lead is not None else ""
    text = " ".join(part for part in (lead, found.sentences) if part)
    out: dict[str, object] = {
        "question": found.question, "covered": found.covered,
        "steps": [{"lesson": c.doc.lesson, "step": c.doc.step,
                   "title": c.doc.title.get(found.lang) or c.doc.title["en"],
                   "passage": c.passage,
                   "show": f"gradtutor show {c.doc.lesson} --step {c.doc.step}",
                   **({"code": c.snippet} if c.snippet else {})}
                  for c in found.steps],
        "text": text, "source": "course"}
    if found.topic is not None:
        out["topic"] = say(found.topic)
    return out


def astray(index: Index, asks: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str, str]]:
    """The declared questions (lesson, step, question) that do not find their own step
    first, each with the step they find instead ("" for none): what `validate` reports."""
    out = []
    for lesson, step, question in asks:
        found = find_steps(index, question)
        first = index.docs[found[0].doc] if found else None
        if first is None or (first.lesson, first.step) != (lesson, step):
            out.append((lesson, step, question,
                        f"{first.lesson}/{first.step}" if first else ""))
    return out
