"""An answer of `ask` (`gradtutor.asking.answer`) -> Rich: the question, the tutor's lead, the
course's own sentences, then each step that teaches it with how to go there, its key passage
and its snippet. The same for the command line and for the walkthrough's `a`, where a step
of the lesson on screen is reached by its number key. Pure: nothing here prints.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from gradtutor.asking.answer import Answer, Cited
from gradtutor.i18n import msg
from gradtutor.ui.linebreak import Prose
from gradtutor.ui.render import Look, code_block, inline

MAX_SNIPPET_LINES = 12  # a longer snippet is left to the step itself


def answer_parts(found: Answer, look: Look, lesson_on_screen: str | None = None,
                 walking: bool = False) -> list[RenderableType]:
    """The answer as a list of parts (the full screen scrolls them). `walking`: shown in the
    walkthrough, where a step of `lesson_on_screen` is one key away."""
    tr = look.tr
    parts: list[RenderableType] = [
        Prose(tr(msg("You asked: {question}", question=_short(found.question))),
              style="" if look.plain else "bold")]
    if found.lead is not None:
        parts += [Text(""), inline(tr(found.lead), look, "" if found.covered else "yellow")]
    if found.sentences:
        parts += [Text(""), inline(found.sentences, look)]
    if not found.covered:
        parts += [Text(""), inline(tr(msg(
            "Try other words, or name the PyTorch call or the message you see; `gradtutor "
            "list` shows what the course teaches.")), look, "" if look.plain else "dim")]
        return parts
    parts += [Text(""), Prose(tr(msg("Where the course teaches it:")),
                              style="" if look.plain else "bold")]
    for number, cited in enumerate(found.steps, start=1):
        # the first step's words are the answer above: its passage only where it says more,
        # and a snippet only for it, so that the answer stays about one screen
        quoted = cited.passage and not (number == 1 and _squeezed(found.sentences)
                                        in _squeezed(cited.passage) and
                                        len(cited.passage) < 2 * len(found.sentences))
        parts += _cited(number, cited, found.lang, look, lesson_on_screen, walking,
                        passage=bool(quoted), snippet=number == 1)
    return parts


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _cited(number: int, cited: Cited, lang: str, look: Look, lesson_on_screen: str | None,
           walking: bool, passage: bool, snippet: bool) -> list[RenderableType]:
    tr, doc = look.tr, cited.doc
    title = doc.title.get(lang) or doc.title["en"]
    lesson_title = doc.lesson_title.get(lang) or doc.lesson_title["en"]
    if walking and doc.lesson == lesson_on_screen:
        go = msg("press {number} to go there", number=number)
    else:
        go = msg("`gradtutor show {lesson} --step {step}`", lesson=doc.lesson, step=doc.step)
    head = Prose(f"{number}. ", style="" if look.plain else "bold cyan")
    head.append(f"{lesson_title} · {title}", style="" if look.plain else "bold")
    out: list[RenderableType] = [Text(""), head, inline("   " + tr(go), look,
                                                               "" if look.plain else "dim")]
    if passage:
        out.append(inline(f"   “{cited.passage}”", look))
    if snippet and cited.snippet and len(cited.snippet.splitlines()) <= MAX_SNIPPET_LINES:
        out.append(code_block(cited.snippet, look))
    if cited.held:
        out.append(inline(tr(msg("   (its code is held back here: it would solve the "
                                 "exercise on screen; h gives a hint)")), look,
                          "" if look.plain else "dim"))
    return out


def _short(question: str, room: int = 300) -> str:
    flat = " ".join(question.split())
    return flat if len(flat) <= room else flat[:room] + "…"


def answer_view(found: Answer, look: Look) -> RenderableType:
    """The answer as the command line prints it."""
    return Group(*answer_parts(found, look))
