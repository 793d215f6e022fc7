"""What a translation must keep of its English: code the same token for token (only its
comments translated), and markdown of the same shape (code fences, code spans, list items,
paragraphs). Pure.
"""

from __future__ import annotations

import re

from gradtutor.lessons.translate.fingerprint import FENCE


def same_code(english: str, translated: str) -> bool:
    """Whether two pieces of Python are the same code, token for token and indent for indent,
    whatever their comments say. Code that does not tokenize is the same only if identical."""
    import io
    import tokenize

    def tokens(code: str) -> list[tuple[int, str]]:
        skip = (tokenize.COMMENT, tokenize.NL)
        return [(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(code).readline)
                if t.type not in skip]

    try:
        return tokens(english) == tokens(translated)
    except (tokenize.TokenError, SyntaxError):
        return english == translated


def has_comment(code: str) -> bool:
    """Whether Python code holds a comment (a translator has something to translate in it)."""
    import io
    import tokenize

    try:
        return any(t.type == tokenize.COMMENT
                   for t in tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return "#" in code


_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_LIST_ITEM = re.compile(r" {0,3}([-*+]|\d+[.)])\s")


def markdown_shape(text: str) -> dict[str, tuple[str, ...]]:
    """What a translation must keep from its English: fenced code (verbatim), inline code
    spans, list markers in order, and the number of paragraphs and list items. Deliberately
    simple; lesson text uses only these markdown features."""
    fences: list[str] = []
    blocks = 0
    markers: list[str] = []
    prose: list[str] = []
    fence, current, blank = "", [], True
    for line in text.strip().splitlines():
        if fence:
            current.append(line)
            if line.strip().startswith(fence):
                fences.append("\n".join(current))
                fence, current = "", []
            continue
        opening = FENCE.match(line)
        if opening:
            fence, current, blank = opening.group(1), [line.strip()], True
            continue
        if not line.strip():
            blank = True
            continue
        item = _LIST_ITEM.match(line)
        if item:
            markers.append("1." if item.group(1)[0].isdigit() else item.group(1))
        if item or blank:
            blocks += 1
        blank = False
        prose.append(line)
    joined = "\n".join(prose)
    spans = sorted(" ".join(m.group(2).split()) for m in _CODE_SPAN.finditer(joined))
    return {"code fences": tuple(fences), "code spans": tuple(spans),
            "list items": tuple(markers), "paragraphs and items": (str(blocks),)}


def shape_differences(english: str, translated: str) -> tuple[str, ...]:
    """How the translation's markdown differs from the English, in words; () if it does not."""
    want, got = markdown_shape(english), markdown_shape(translated)
    out: list[str] = []
    for what in want:
        if want[what] == got[what]:
            continue
        if what == "code spans":
            lost = sorted(set(want[what]) - set(got[what]))
            extra = sorted(set(got[what]) - set(want[what]))
            parts = [f"`{s}` missing" for s in lost] + [f"`{s}` added" for s in extra]
            out.append("code spans differ: " + (", ".join(parts) or "a span repeats a "
                                                "different number of times"))
        elif what == "paragraphs and items":
            out.append(f"{got[what][0]} paragraphs and list items, the English has "
                       f"{want[what][0]}")
        else:
            out.append(f"{what} differ from the English")
    return tuple(out)
