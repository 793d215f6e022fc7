"""PyTorch's messages as learners paste them: found in a question whatever the names,
numbers, shapes and quoting in it, in English or inside a Chinese question. A message
matches when enough of its runs of three words appear in the question, names and numbers
set aside; a learner who pastes only the first line of a long message is matched too. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gradtutor.records import record

_QUOTED = re.compile(r"'[^'\n]{0,80}'|\"[^\"\n]{0,80}\"|`[^`\n]{0,80}`")
_NUMBERISH = re.compile(r"\[[\d,\s]*\]|\([\d,\s]*\)|torch\.Size\(\[[\d,\s]*\]\)|\b\d+(\.\d+)?\b")
_WORD = re.compile(r"[a-z_][a-z0-9_]*|[#@]")
# What a match needs: this share of the message's word runs (of the first SPAN of them), and
# at least MIN_RUNS of them.
SHARE, SPAN, MIN_RUNS = 0.6, 10, 3


def _words(text: str) -> list[str]:
    text = _QUOTED.sub(" @ ", text)
    text = _NUMBERISH.sub(" # ", text)
    return _WORD.findall(text.lower())


def runs(text: str) -> list[tuple[str, ...]]:
    """The message's runs of three words, in order, names and numbers as placeholders."""
    words = _words(text)
    return [tuple(words[i:i + 3]) for i in range(len(words) - 2)]


@record
class Pasted:
    """A declared message found in a question: the step (an index's doc number) and how
    much of the message was there (0 to 1)."""

    doc: int
    share: float


def find(question: str, declared: Iterable[tuple[int, str]]) -> list[Pasted]:
    """The declared messages (doc, message) the question quotes, best first."""
    asked = set(runs(question))
    found: dict[int, float] = {}
    for doc, message in declared:
        wanted = runs(message)
        if not wanted:
            continue
        hits = sum(1 for run in wanted if run in asked)
        share = hits / min(len(wanted), SPAN)
        if hits >= min(MIN_RUNS, len(wanted)) and share >= SHARE:
            found[doc] = max(found.get(doc, 0.0), min(share, 1.0))
    return sorted((Pasted(doc, share) for doc, share in found.items()),
                  key=lambda p: (-p.share, p.doc))
