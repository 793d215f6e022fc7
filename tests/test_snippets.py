"""Lesson snippets (predict and demo steps): the author's code runs isolated and timed like a
check, and comes back as a SnippetResult: the value shown, the series for a chart, the output,
or one line that says what went wrong. Torch's warnings never reach the learner.

The decisions on plain data are tested without a process; the runs share one warm worker, and
one cold run shows the cold path gives the same result.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from typing import Any

import pytest
from waits import HANG_S

from gradtutor.checking.outcome import WorkerRun
from gradtutor.checking.snippet import (
    SnippetResult,
    checked_series,
    plain_series,
    run_code,
    snippet_result,
)
from gradtutor.runtime.cold import ColdEngine
from gradtutor.runtime.run import run_snippet
from gradtutor.runtime.warm import WarmWorker

DEMO = """
import torch

w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
losses = []
for step in range(3):
    loss = (w ** 2).sum()
    losses.append(loss.item())
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad = None
print("done")
"""


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmWorker]:
    with WarmWorker(environ=dict(os.environ)) as worker:
        yield worker


# ---- runs ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_demo_shows_its_value_its_series_and_its_output(warm: WarmWorker) -> None:
    result = warm.run_snippet(DEMO, show="w.detach()", series=("losses", "w"))
    assert result.ok and result.error is None
    assert result.shown == "tensor([ 0.5120, -1.0240,  1.5360])"
    (name, losses), (other, w) = result.series
    assert (name, other) == ("losses", "w")
    assert losses == pytest.approx((14.0, 8.96, 5.7344))
    assert w == pytest.approx((0.512, -1.024, 1.536))
    assert result.output == "done\n" and result.duration_ms > 0  # the first waits for torch


@pytest.mark.slow
def test_the_cold_path_gives_the_same_result(warm: WarmWorker) -> None:
    cold = run_snippet(DEMO, show="w.detach()", series=("losses", "w"),
                       engine=ColdEngine(environ=dict(os.environ)))
    hot = warm.run_snippet(DEMO, show="w.detach()", series=("losses", "w"))
    assert (cold.ok, cold.shown, cold.series, cold.output, cold.error) == (
        hot.ok, hot.shown, hot.series, hot.output, hot.error)


@pytest.mark.slow
@pytest.mark.parametrize(("code", "show", "error"), [
    ("y = x + 1", None, "NameError: name 'x' is not defined"),
    ("x = 1", "x +", "SyntaxError: invalid syntax (<string>, line 1)"),
    ("raise ValueError('first line\\nsecond line')", None, "ValueError: first line"),
    ("import sys\nsys.exit(3)", None, "SystemExit: 3"),
])
def test_an_error_is_one_line(warm: WarmWorker, code: str, show: str | None,
                              error: str) -> None:
    result = warm.run_snippet(code, show=show)
    assert not result.ok and result.error == error
    assert result.shown is None and result.series == ()


@pytest.mark.slow
def test_a_snippet_that_never_ends_is_stopped(warm: WarmWorker) -> None:
    result = warm.run_snippet("print('before')\nwhile True:\n    pass", timeout=0.5)
    assert not result.ok and result.error == "timed out after 0.5 s"
    assert result.output == "before\n"
    assert result.duration_ms < HANG_S * 1000  # stopped at its limit, not left to run


@pytest.mark.slow
def test_torch_warnings_never_reach_the_learner(warm: WarmWorker) -> None:
    code = ("import torch, warnings\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n"
            "g = y.grad\nwarnings.warn('from the author')\nprint('shown')")
    result = warm.run_snippet(code, show="g")
    assert result.ok and result.shown == "None"
    assert result.output == "shown\n"
    assert "Warning" not in result.output


@pytest.mark.slow
def test_a_missing_or_wrong_series_names_the_variable(warm: WarmWorker) -> None:
    result = warm.run_snippet("import torch\nm = torch.ones(2, 2)", series=("m",))
    assert result.error == "`m` is not a list of numbers or a 1-D tensor (it is a 2-D Tensor)"
    result = warm.run_snippet("a = [1.0]", series=("a", "b"))
    assert result.error == "the code left no variable named `b`"


@pytest.mark.slow
def test_a_snippet_cannot_touch_the_tutor(warm: WarmWorker, tmp_path: Any) -> None:
    """It runs in a fresh folder with no stdin, in a process of its own."""
    result = warm.run_snippet("import os\ncwd = os.getcwd()\nline = input()", show="cwd")
    assert result.error == "EOFError: EOF when reading a line"
    result = warm.run_snippet("import os\npid = os.getpid()", show="pid")
    assert result.ok and result.shown != str(os.getpid())


# ---- the child's side, in this process -----------------------------------------------------

def test_run_code_returns_plain_data() -> None:
    result = run_code("xs = (1, 2.5, float('nan'))\nn = 3", "n * 2", ("xs", "missing"))
    assert result["shown"] == "6"
    assert set(result["series"]) == {"xs"}
    assert result["series"]["xs"][:2] == [1.0, 2.5] and math.isnan(result["series"]["xs"][2])
    assert json.loads(json.dumps(result))["shown"] == "6"  # it travels as JSON
    assert run_code("1/0", None) == {"error": "ZeroDivisionError: division by zero"}


@pytest.mark.parametrize(("value", "plain"), [
    ([1, 2.5], [1.0, 2.5]),
    ((True, 3), [1.0, 3.0]),
    ([], []),
    ({"a": 1}, "a dict"),
    ("text", "a str"),
    ([1, "two"], "a list holding a str"),
])
def test_plain_series(value: Any, plain: Any) -> None:
    assert plain_series(value) == plain


def test_plain_series_reads_tensors() -> None:
    torch = pytest.importorskip("torch")
    assert plain_series(torch.tensor([1.0, 2.0], requires_grad=True)) == [1.0, 2.0]
    assert plain_series([torch.tensor(3.0), 4]) == [3.0, 4.0]
    assert plain_series(torch.ones(2, 2)) == "a 2-D Tensor"
    assert plain_series(torch.tensor(1.0)) == "a 0-D Tensor"


# ---- the tutor's side: decisions on plain data ---------------------------------------------

def run_of(*lines: Any, raw: bytes = b"", returncode: int | None = 0,
           **more: Any) -> WorkerRun:
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines) + raw
    fields = {"results_overflow": False, "timed_out": False, "startup_timed_out": False,
              **more}
    return WorkerRun(data, returncode=returncode, **fields)


def decided(run: WorkerRun, series: tuple[str, ...] = ()) -> SnippetResult:
    return snippet_result(run, "out", series=series, timeout=20, startup_allowance=120,
                          duration_ms=7)


STARTED = {"type": "started"}


@pytest.mark.parametrize(("run", "error"), [
    (run_of(STARTED, returncode=-9, timed_out=True), "timed out after 20 s"),
    (run_of(returncode=-9, startup_timed_out=True), "the worker was not ready after 120 s"),
    (run_of(STARTED, returncode=-11), "the snippet's process was killed by SIGSEGV"),
    (run_of(STARTED, returncode=71), "the snippet ran out of memory"),
    (run_of(STARTED, returncode=0), "ended before it finished (exit code 0)"),
    (run_of(returncode=None), "ended before it finished (exit code unknown)"),
    (run_of({"type": "worker_error", "error": {"type": "ImportError", "message": "no torch",
                                               "traceback": ""}}, returncode=70),
     "the worker failed: ImportError: no torch"),
    (run_of(STARTED, {"type": "snippet", "error": "NameError: x"}), "NameError: x"),
    (run_of(STARTED, raw=b"garbage\n"), "came back unreadable"),
    (run_of(STARTED, {"type": "snippet", "shown": 3, "series": {}}), "came back unreadable"),
    (run_of(STARTED, {"type": "snippet", "shown": None, "series": []}), "unreadable"),
    (run_of(STARTED, STARTED, STARTED), "came back unreadable"),
    (run_of(STARTED, results_overflow=True), "larger than"),
])
def test_every_ending_is_one_line(run: WorkerRun, error: str) -> None:
    result = decided(run)
    assert not result.ok and result.error is not None and error in result.error
    assert result.output == "out" and result.duration_ms == 7


def test_a_good_run_gives_the_values() -> None:
    run = run_of(STARTED, {"type": "snippet", "shown": "tensor(2.)",
                           "series": {"xs": [1, 2.5], "ys": []}}, raw=b'{"x')
    result = decided(run, ("xs", "ys"))
    assert result == SnippetResult(True, "tensor(2.)", (("xs", (1.0, 2.5)), ("ys", ())),
                                   "out", None, 7)


def test_non_finite_values_are_allowed() -> None:
    data = b'{"type": "started"}\n{"type": "snippet", "shown": null, ' \
           b'"series": {"xs": [NaN, Infinity, -Infinity]}}\n'
    result = decided(WorkerRun(data, False, 0, False, False), ("xs",))
    assert result.ok
    (_, values), = result.series
    assert math.isnan(values[0]) and values[1:] == (math.inf, -math.inf)


@pytest.mark.parametrize(("found", "error"), [
    ({}, "the code left no variable named `xs`"),
    ({"xs": "a dict"}, "`xs` is not a list of numbers or a 1-D tensor (it is a dict)"),
    ({"xs": [1, "a"]}, "(it is a list)"),
    ({"xs": [True]}, "(it is a list)"),
    ({"xs": {"a": 1}}, "(it is a dict)"),
    ([], "came back unreadable"),
])
def test_a_series_that_is_missing_or_not_numbers_names_the_variable(
        found: Any, error: str) -> None:
    values, problem = checked_series(found, ("xs",))
    assert values == () and problem is not None and error in problem
