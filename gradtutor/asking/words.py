"""Text to search terms, the same for a step and a question: English words lower-cased,
stemmed (Snowball) and mapped to the course's own word where a beginner says another
("reset" for "clear", "derivative" for "gradient"); code names kept whole and in parts
(`zero_grad`, `zero`, `grad`; an in-place `zero_` also whole); question fillers ("vs",
"better", "exactly") dropped or mapped; Chinese as overlapping character pairs, which need
no dictionary and match a word however a learner segments it. Pure.
"""

from __future__ import annotations

import re
from functools import cache

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[\u3400-\u4dbf\u4e00-\u9fff]+|\b\d{1,2}\b")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")

# Words that say nothing about what is asked.
_STOP_WORDS = """
a about above again all also am an and any are as at be because been being below
between both but by can could did do does doing done down during each even ever every few for
from further get gets getting got had has have having he her here hers him his how i if in into
is it its itself just me more most my myself no nor not now of off on once only or other our out
over own same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself im ive dont doesnt isnt cant wont didnt thing things something
anyone someone please thanks thank help question pytorch torch use using used way really also
one like want need know see seems seem still happen happens happening happened
better best exactly actually basically simply properly ok okay hi hello guys everyone
"""
STOP = frozenset(_STOP_WORDS.split())
# Chinese pairs that carry no meaning of their own (particles, "I", "why", "what").
_STOP_PAIRS = """
什么 为什 么我 我的 的时 时候 一个 这个 那个 是不 不是 怎么 么办 如何 请问 吗？ 我们 你们 他们
可以 就是 但是 然后 因为 所以 这样 那么 的话 有没 没有 一下 还是 是否 么样 怎样 为何
"""
STOP_PAIRS = frozenset(_STOP_PAIRS.split())
# A beginner's word -> the word the course uses (after stemming).
SAME = {
    "reset": "clear", "wipe": "clear", "eras": "clear", "flush": "clear", "empti": "clear",
    "deriv": "gradient", "slope": "gradient", "backprop": "backward",
    "backpropag": "backward", "param": "paramet", "weight": "weight", "optim": "optim",
    "accum": "accumul", "increas": "grow", "bigger": "grow", "larger": "grow",
    "explod": "explod", "nan": "nan", "inf": "inf", "vs": "differ", "versus": "differ",
}


@cache
def _stemmer() -> object:
    from snowballstemmer import english_stemmer  # type: ignore[import-untyped]

    return english_stemmer.EnglishStemmer()


@cache
def stem(word: str) -> str:
    """One English word's term: stemmed, then mapped to the course's word."""
    stemmed = str(_stemmer().stemWord(word))  # type: ignore[attr-defined]
    return SAME.get(stemmed, stemmed)


def terms(text: str) -> list[str]:
    """The search terms of `text`, in order, repeats kept (a term's count matters)."""
    out: list[str] = []
    for token in _TOKEN.findall(text):
        if _CJK.match(token):
            out += _pairs(token)
            continue
        if token.isdigit():
            out.append(token)  # "lesson 3", "第 3 课"
            continue
        word = token.lower().strip("_")
        if not word or word in STOP:
            continue
        parts = [p for p in word.split("_") if p]
        if token.endswith("_") and not token.startswith("_"):
            out.append(token.lower())  # an in-place method: zero_, requires_grad_
        if len(parts) > 1:
            out.append(word)  # the code name whole: zero_grad, requires_grad
        out += [stem(p) for p in parts if p not in STOP and len(p) > 1 and not p.isdigit()]
    return out


def _pairs(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [pair for pair in (run[i:i + 2] for i in range(len(run) - 1))
            if pair not in STOP_PAIRS]


def is_chinese(text: str) -> bool:
    """Whether a question is asked in Chinese: any Chinese character in it."""
    return _CJK.search(text) is not None
