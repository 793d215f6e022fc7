"""Every code sample in the shipped lessons runs as shown.

A sample must run on its own without an error or a warning, and each line written as
`print(expr)  # -> text` must print exactly `text`, once.
"""

from __future__ import annotations

import io
import sys
import tokenize
import warnings
from typing import Any

import pytest

from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Quiz, Slide

CLAIM = "# -> "


def shipped_samples() -> list[Any]:
    """One pytest param per code sample: a slide's `code`, or a quiz question's `code`."""
    samples: list[tuple[str, str]] = []
    for lesson in load_course().lessons:
        for step in lesson.steps:
            if isinstance(step, Slide) and step.code:
                samples.append((f"{lesson.id}/{step.id}", step.code))
            elif isinstance(step, Quiz):
                samples += [(f"{lesson.id}/{step.id}/{question.id}", question.code)
                            for question in step.questions if question.code]
    return [pytest.param(name, code, id=name) for name, code in samples]


def claimed_output(code: str) -> dict[int, str]:
    """The text each `# -> ` comment claims, by line number; real comments only, not strings."""
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return {token.start[0]: token.string[len(CLAIM):]
            for token in tokens
            if token.type == tokenize.COMMENT and token.string.startswith(CLAIM)}


def run_sample(code: str, name: str) -> dict[int, list[str]]:
    """Run `code` in a fresh namespace, warnings as errors; what each of its lines printed.

    `print` is the real one, writing into a buffer, so the recorded text is exactly what
    the learner would see; the caller's line number says which line printed it.
    """
    filename = f"<sample {name}>"
    printed: dict[int, list[str]] = {}

    def recording_print(*args: Any, **kwargs: Any) -> None:
        buffer = io.StringIO()
        print(*args, **{**kwargs, "file": buffer})
        caller = sys._getframe(1)
        if caller.f_code.co_filename == filename:
            printed.setdefault(caller.f_lineno, []).append(buffer.getvalue())

    namespace = {"__name__": "__main__", "print": recording_print}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exec(compile(code, filename, "exec"), namespace)
    return printed


def check_sample(code: str, name: str) -> None:
    """Fail unless the sample runs cleanly and every `# -> ` claim is what that line printed."""
    printed = run_sample(code, name)
    lines = code.splitlines()
    for number, claim in claimed_output(code).items():
        got = printed.get(number, [])
        shown = [text.removesuffix("\n") for text in got]
        assert got == [claim + "\n"], (
            f"line {number}: {lines[number - 1].strip()}\n"
            f"  claims {claim!r}, but that line printed {shown!r}"
        )


@pytest.mark.parametrize(("name", "code"), shipped_samples())
def test_sample_runs_as_shown(name: str, code: str) -> None:
    check_sample(code, name)


def test_grad_lesson_has_samples_with_claims() -> None:
    samples = [param.values[1] for param in shipped_samples() if param.id.startswith("grad/")]
    assert len(samples) >= 10
    assert sum(len(claimed_output(code)) for code in samples) >= 10


# The checker itself must be able to fail, or the tests above prove nothing.

def test_a_wrong_claim_fails() -> None:
    code = "import torch\nprint(torch.tensor([2.0]) * 2)  # -> tensor([5.])\n"
    with pytest.raises(AssertionError, match=r"claims 'tensor\(\[5\.\]\)'.*tensor\(\[4\.\]\)"):
        check_sample(code, "wrong")


def test_a_claim_on_a_line_that_prints_nothing_fails() -> None:
    with pytest.raises(AssertionError, match="printed \\[\\]"):
        check_sample("x = 1  # -> 1\n", "no-print")


def test_a_claim_on_a_line_that_prints_twice_fails() -> None:
    code = "for i in range(2):\n    print(1)  # -> 1\n"
    with pytest.raises(AssertionError, match=r"printed \['1', '1'\]"):
        check_sample(code, "loop")


def test_a_sample_that_warns_fails() -> None:
    # Reading .grad of a non-leaf tensor without retain_grad() warns: a learner would see it.
    code = ("import torch\n"
            "w = torch.tensor([1.0], requires_grad=True)\n"
            "h = w * 2\n"
            "h.sum().backward()\n"
            "print(h.grad)  # -> None\n")
    with pytest.raises(UserWarning, match="not a leaf Tensor"):
        check_sample(code, "warns")


def test_claims_are_read_from_comments_only() -> None:
    code = 's = "# -> not a claim"\nprint(s)  # -> # -> not a claim\n'
    assert claimed_output(code) == {2: "# -> not a claim"}
    check_sample(code, "string")
