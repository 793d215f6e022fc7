"""Every code sample in the shipped lessons runs as shown.

A sample must run on its own without an error or a warning, and each line written as
`print(expr)  # -> text` must print exactly `text`, once.
"""

from __future__ import annotations

import io
import sys
import tokenize
import warnings
from itertools import pairwise
from typing import Any

import pytest

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Demo, Parsons, Predict, Quiz, Slide
from gradtutor.lessons.parsons import assembled

CLAIM = "# -> "


def shipped_samples() -> list[Any]:
    """One pytest param per code sample: a slide's, predict's or demo's `code`, a Parsons
    step's assembled loop, or a quiz question's `code`."""
    samples: list[tuple[str, str]] = []
    for lesson in load_course(rules=EXERCISE_RULES).lessons:
        for step in lesson.steps:
            if isinstance(step, (Slide, Predict, Demo)) and step.code:
                samples.append((f"{lesson.id}/{step.id}", step.code))
            elif isinstance(step, Parsons) and step.run is not None:
                samples.append((f"{lesson.id}/{step.id}", assembled(step, step.solution_order)))
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


# The stories the practice steps tell about what their code does, checked against torch.

def step_of(step_id: str) -> Any:
    return next(step for step in load_course(rules=EXERCISE_RULES).find("grad").steps
                if step.id == step_id)


def test_the_hidden_bug_demo_shows_what_its_text_says() -> None:
    namespace: dict[str, Any] = {}
    exec(step_of("hidden-bug-demo").code, namespace)
    cleared, piled = namespace["with_zeroing"], namespace["without_zeroing"]
    assert len(cleared) == len(piled) == 30 and cleared[0] == piled[0]  # the same start
    assert all(later < earlier for earlier, later in pairwise(cleared))  # settles down
    assert piled[2] < cleared[2]  # "at first falls faster"
    assert max(piled[10:]) > 0.9 * piled[0]  # "climbs back up"
    rises = sum(1 for earlier, later in pairwise(piled) if later > earlier)
    assert rises >= 10  # "again and again"


def test_the_momentum_demo_prints_what_its_text_says() -> None:
    output = io.StringIO()
    namespace = {"print": lambda *a, **k: print(*a, **{**k, "file": output})}
    exec(step_of("momentum-demo").code, namespace)
    # None: the optimizer skips w; zeros: momentum moves it again
    assert output.getvalue() == "set_to_none=True: w = 0.80\nset_to_none=False: w = 0.62\n"


def test_predict_snippets_show_their_answers_text() -> None:
    for step_id in ("predict-two-backwards", "predict-zero-grad"):
        step = step_of(step_id)
        namespace: dict[str, Any] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exec(step.code, namespace)
        answer = step.choices[ord(step.answer) - ord("a")].text
        assert str(eval(step.show, namespace)) == answer, step_id


# The hint ladders: code of the solution appears only on the last rung, before `s`.

def solution_lines(solution: str) -> set[str]:
    """The solution's statements, each as written, without comments, `def` and `return`
    lines of a single name (which any starter has too)."""
    lines = {line.split("#")[0].strip() for line in solution.splitlines()}
    return {line for line in lines if line and not line.startswith(("def ", "import ", "from "))
            and line not in ("return", "pass")}


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_no_hint_before_the_last_gives_a_line_of_the_solution(lang: str) -> None:
    from gradtutor.lessons.model import Exercise

    exercises = [step for lesson in load_course(lang=lang, rules=EXERCISE_RULES).lessons
                 for step in lesson.steps if isinstance(step, Exercise)]
    assert len(exercises) >= 8
    for step in exercises:
        code = solution_lines(step.solution)
        for rung, hint in enumerate(step.hints[:-1], start=1):
            spans = set(hint.split("`")[1::2])
            given = sorted(spans & code)
            assert not given, f"{step.id} hint {rung} gives {given}"
