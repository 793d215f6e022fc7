"""The checkers' feedback in Chinese: what a learner reading zh-CN sees when their code does
not run (syntax errors, exceptions, exits, crashes, limits), when a Parsons order is wrong,
and on the check and exercise screens; escape codes in learner values stay neutralised and
the message still translates; `--json` says the messages in the learner's language.

Pure: every outcome is decided from plain data, as the tutor decides it after a real run.
(Every check of every exercise's solution, starter and mutants is covered by the checker
tests, `test_every_check_of_every_run_has_a_chinese_translation`.)
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import checker_batch
import pytest
from rich.cells import cell_len
from rich.console import Console

from gradtutor.checking.checkers import judge_of
from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.checking.feedback import joined, listed
from gradtutor.checking.outcome import Judge, WorkerRun, decide, source_problem
from gradtutor.checking.parsons import grade, grade_file, grade_text
from gradtutor.checking.protocol import (
    WorkerExit,
    no_function,
    not_callable,
    sys_exit,
    wrong_arity,
)
from gradtutor.checking.verdict import Check, CheckStatus, Table, Verdict, overall, say, to_json
from gradtutor.i18n import ENGLISH, Msg, load_catalog, msg, translator
from gradtutor.lessons.course import load_course
from gradtutor.lessons.model import Exercise
from gradtutor.lessons.parsons import initial_order, parsons_steps
from gradtutor.ui.check_view import verdict_view
from gradtutor.ui.render import Look
from gradtutor.ui.safe_text import neutralise, neutralise_verdict
from gradtutor.walk.exercise import ExerciseView

ZH = translator("zh-CN")
CATALOG = load_catalog("zh-CN")
HAN = re.compile(r"[\u4e00-\u9fff]")


def chinese(text: str) -> bool:
    return bool(HAN.search(text))


def assert_chinese(checks: list[Check] | tuple[Check, ...]) -> None:
    """Every text of these checks translates, and the translation reads Chinese."""
    assert checker_batch.untranslated(list(checks), CATALOG) == []
    for check in checks:
        assert chinese(ZH(check.message)), check.message
        if check.help:
            assert chinese(ZH(check.help)), check.help


def test_the_translation_check_finds_english_a_learner_would_see() -> None:
    check = Check("x", "fail", "plain English", msg("nothing like this {n}", n=1),
                  Table(("words here", msg("parameter")), ((msg("all zeros"), "1"),)))
    assert checker_batch.untranslated([check], CATALOG) == [
        "x=fail message: 'plain English' is not a message",
        "x=fail help: 'nothing like this {n}' has no translation",
        "x=fail column 'words here' is not a message"]


# --- the file cannot run at all ---------------------------------------------------------

@pytest.mark.parametrize(("raw", "english", "kept"), [
    (b"", "Your file is empty.", "read_grad"),
    (b"  \n\n", "Your file is empty.", "read_grad"),
    (b"def read_grad(w, loss_fn):\n    return w.grad  # \xff\n", "line 2 has the byte 0xff",
     "0xff"),
    (b"def read_grad(w, loss_fn):\n    return w.grad\x00\n", "Line 2 of your file", "2"),
    (b"def read_grad(w, loss_fn):\n    return w.grad +\n", "Line 2 of your file", "w.grad +"),
    (b"x = " + b"-" * 100_000 + b"1\n", "nested too deeply", "Python"),
    (b"#" * 300_000, "more than the 256 KiB", "256"),
])
def test_a_file_that_cannot_run_is_explained_in_chinese(raw: bytes, english: str,
                                                       kept: str) -> None:
    check = source_problem(raw, "answer.py", "read_grad", 256 * 1024 if raw[:1] == b"#"
                           else 10**6)
    assert check is not None and english in check.message
    assert_chinese([check])
    assert kept in ZH(check.message) + ZH(check.help)


def test_a_syntax_error_keeps_its_line_and_caret_in_chinese() -> None:
    check = source_problem(b"def read_grad(w, loss_fn):\n    return w.grad +\n", "a.py",
                           "read_grad", 10_000)
    assert check is not None
    english, said = check.message.splitlines(), ZH(check.message).splitlines()
    assert said[0].startswith("你的文件第 2 行不是合法的 Python")
    assert said[1:] == english[1:]  # the quoted line and the caret under it
    assert said[-1].strip() == "^"


# --- the code ran and went wrong -----------------------------------------------------------

def results(*messages: Mapping[str, Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


EXPECTED = {"type": "expected", "cases": [{"w": [1.0]}, {"w": [2.0]}],
            "expected": [{"grad": [2.0]}, {"grad": [4.0]}]}


def error(kind: str, message: str = "", traceback: str = "") -> dict[str, str]:
    return {"type": kind, "message": message, "traceback": traceback}


def run(data: bytes = b"", returncode: int | None = 0, **flags: Any) -> WorkerRun:
    return WorkerRun(results=data, results_overflow=flags.pop("overflow", False),
                     returncode=returncode, timed_out=flags.pop("timed_out", False),
                     startup_timed_out=flags.pop("startup_timed_out", False),
                     memory_limit=2 * 1024**3, file_limit=16 * 1024**2)


def passing(cases: list[Any], expected: list[Any], observed: list[Any]) -> list[Check]:
    return [Check("returns-grad", "pass", msg("you returned the gradient"))]


def broken(cases: list[Any], expected: list[Any], observed: list[Any]) -> list[Check]:
    raise ValueError("odd data")


TRACE = 'Traceback (most recent call last):\n  File "answer.py", line 2\nZeroDivisionError\n'
LOAD = {"type": "learner_error", "stage": "load"}
RUNS = [
    ("timeout", run(timed_out=True), "still running after 10 s"),
    ("segfault", run(results(EXPECTED), -11), "segmentation fault"),
    ("killed", run(results(EXPECTED), -9), "SIGKILL"),
    ("abort", run(results(EXPECTED), -6), "SIGABRT"),
    ("file-size", run(results(EXPECTED), -25), "larger than the 16 MiB limit"),
    ("other-signal", run(results(EXPECTED), -15), "stopped by SIGTERM"),
    ("windows-crash", run(results(EXPECTED), 0xC00000FD), "stack overflow"),
    ("exit", run(results(EXPECTED), 3), "exit code 3"),
    ("exit-unknown", run(results(EXPECTED), None), "exit code unknown"),
    ("channel", run(results(EXPECTED), WorkerExit.CHANNEL_LOST), "closed or broke the channel"),
    ("out-of-memory", run(results(EXPECTED), WorkerExit.OUT_OF_MEMORY), "ran out of memory"),
    ("memory-error", run(results(EXPECTED, {**LOAD, "error": error("MemoryError")})),
     "ran out of memory (the limit is 2 GiB)"),
    ("raises", run(results(EXPECTED, {**LOAD, "error": error("ZeroDivisionError",
                                                              "division by zero", TRACE)})),
     "raised ZeroDivisionError: division by zero"),
    ("interrupt", run(results(EXPECTED, {**LOAD, "error": error("KeyboardInterrupt")})),
     "raised KeyboardInterrupt"),
    ("sys-exit", run(results(EXPECTED, {**LOAD, "error": sys_exit("4", "")})),
     "called sys.exit(4)"),
    ("input", run(results(EXPECTED, {**LOAD, "error": error("EOFError")})), "read input"),
    ("no-function", run(results(EXPECTED, {
        "type": "learner_error", "stage": "function", "error": no_function("read_grad")})),
     "Your file does not define a function named `read_grad`."),
    ("not-callable", run(results(EXPECTED, {
        "type": "learner_error", "stage": "function", "error": not_callable("read_grad")})),
     "`read_grad` in your file is not a function."),
    ("signature", run(results(EXPECTED, {
        "type": "learner_error", "stage": "function",
        "error": wrong_arity("read_grad", 2, "(w)")})),
     "must take 2 arguments; yours is `read_grad(w)`."),
    ("case-raises", run(results(EXPECTED, {"type": "observed", "observed": [
        {}, {"error": error("RuntimeError", "element 0 of tensors does not require grad",
                            TRACE)}]})), "stopped on check case 2 of 2"),
    ("unreadable", run(b"not json\n"), "came back unreadable (a line that is not a result)"),
    ("out-of-order", run(results({"type": "observed", "observed": []})),
     "results out of order"),
    ("too-much", run(overflow=True), "more than 1 MiB of results"),
    ("start-up-slow", run(startup_timed_out=True), "not ready after 30 s"),
    ("start-up-failed", run(results({"type": "worker_error", "error": error(
        "ModuleNotFoundError", "No module named 'torch'")})), "install PyTorch"),
    ("start-up-exit", run(b"", 1), "could not start (exit code 1)"),
    ("worker-error", run(results(EXPECTED, {"type": "worker_error", "error": error(
        "RuntimeError", "internal")})), "unexpected error (RuntimeError: internal)"),
]


@pytest.mark.parametrize(("name", "worker", "english"), RUNS, ids=[r[0] for r in RUNS])
def test_code_that_went_wrong_is_explained_in_chinese(name: str, worker: WorkerRun,
                                                      english: str) -> None:
    checks = decide(worker, passing, function="read_grad", timeout=10, startup_allowance=30,
                    results_cap=1024**2)
    said = " ".join(f"{c.message} {c.help}" for c in checks)
    assert english in said
    assert_chinese(checks)


def test_numbers_names_and_tracebacks_stay_as_the_run_gave_them() -> None:
    (raised,) = decide(RUNS[12][1], passing, function="read_grad", timeout=10,
                       startup_allowance=30, results_cap=1024**2)
    said = ZH(raised.message)
    assert "ZeroDivisionError: division by zero" in said and said.endswith(TRACE.strip())
    (case,) = decide(RUNS[19][1], passing, function="read_grad", timeout=10,
                     startup_allowance=30, results_cap=1024**2)
    assert ZH(case.message).startswith("`read_grad` 在第 2 个检查用例（共 2 个）上停下了")
    (signature,) = decide(RUNS[18][1], passing, function="read_grad", timeout=10,
                          startup_allowance=30, results_cap=1024**2)
    assert ZH(signature.message) == "`read_grad` 必须接受 2 个参数；你的是 `read_grad(w)`。"
    assert ZH(signature.help).startswith("在文件的最外层定义 `def read_grad(...)`")


def test_a_judge_that_breaks_or_says_nothing_is_explained_in_chinese() -> None:
    data = run(results(EXPECTED, {"type": "observed", "observed": [{}, {}]}))
    judge: Judge
    for judge in (broken, lambda *_: []):
        checks = decide(data, judge, function="read_grad", timeout=10, startup_allowance=30,
                        results_cap=1024**2)
        assert checks[0].status == "error"
        assert_chinese(checks)


def test_a_problem_the_worker_never_sends_is_an_unreadable_result() -> None:
    # the worker sends problems as codes, never as words: an unknown one is not its own
    for error_ in (error("Signature", "something new"), {"problem": "something-new"},
                   {"problem": "sys-exit", "name": "read_grad"}):
        data = run(results(EXPECTED, {"type": "learner_error", "stage": "function",
                                      "error": error_}))
        (check,) = decide(data, passing, function="read_grad", timeout=10,
                          startup_allowance=30, results_cap=1024**2)
        assert (check.name, check.status) == ("results", "error")
        assert "a `learner_error` message of the wrong shape" in check.message
        assert_chinese([check])


# --- Parsons ---------------------------------------------------------------------------------

def parsons_verdicts() -> list[Verdict]:
    """Wrong answers of every kind, on every Parsons step of the shipped course."""
    found = []
    for step in parsons_steps(load_course(rules=EXERCISE_RULES).lessons).values():
        start = list(initial_order(step))
        found += [grade(step, start), grade(step, []), grade(step, start + start[:1]),
                  grade(step, start[1:]), grade(step, [*start, "no-such-line"]),
                  grade_text(step, "print('hello')\n"), grade_text(step, step.lines[0].code[:-1]),
                  grade_file(step, b"\xff\xfe", "order.txt"),
                  grade_file(step, b"x" * (1024 * 1024 + 1), "order.txt"),
                  grade(step, step.solution_order)]
    return found


def test_every_parsons_verdict_speaks_chinese() -> None:
    verdicts = parsons_verdicts()
    assert {v.status for v in verdicts} == {"pass", "fail", "error"}
    for verdict in verdicts:
        assert checker_batch.untranslated(list(verdict.checks), CATALOG) == []
        for check in verdict.checks:
            assert chinese(ZH(check.message)), check.message


def test_a_line_out_of_place_is_named_in_chinese_with_its_code() -> None:
    step = parsons_steps(load_course(rules=EXERCISE_RULES).lessons)["order-the-loop"]
    order = ("zero", "forward", "loss", "step", "backward")
    failed = grade(step, order).checks[1]
    said = ZH(failed.message)
    assert said.startswith("你把 `optimizer.step()` 排在了 `loss.backward()` 前面：")
    assert ZH(failed.help) == "`optimizer.step()` 必须排在 `loss.backward()` 之后"
    assert failed.evidence is not None
    assert [say(ZH, cell) for cell in failed.evidence.rows[3]] == ["4", "optimizer.step()",
                                                                   "位置不对"]


# --- words between messages ------------------------------------------------------------------

def test_lists_are_messages_so_their_words_translate() -> None:
    assert joined(["`a`"]) == "`a`" and joined([]) == ""
    assert joined(["`a`", "`b`"]) == "`a` and `b`"
    assert joined(["`a`", "`b`", "`c`"]) == "`a`, `b` and `c`"
    assert ZH(joined(["`a`", "`b`", "`c`"])) == "`a`、`b` 和 `c`"
    assert ZH(listed(["x", "y"])) == "x、y"


# --- neutralise keeps a message a message ----------------------------------------------------

ESCAPE = "\x1b[2J\x1b]0;owned\x07"


def test_neutralise_makes_a_messages_fields_safe_and_keeps_it_translatable() -> None:
    message = msg("a {kind} of {length} values", kind=ESCAPE, length=3)
    safe = neutralise(message)
    assert isinstance(safe, Msg) and safe.template == message.template
    assert "\x1b" not in safe and "\\x1b[2J" in safe
    said = ZH(safe)
    assert chinese(said) and "\x1b" not in said and "\\x1b[2J\\x1b]0;owned\\x07" in said


def test_neutralise_reaches_into_nested_messages() -> None:
    inner = msg("your code raised {kind}: {message}", kind="ValueError", message=ESCAPE)
    outer = msg("Your file could not be loaded: {what}.", what=inner)
    safe = neutralise(outer)
    assert isinstance(safe, Msg) and isinstance(safe.fields["what"], Msg)
    assert "\x1b" not in safe and "\x1b" not in ZH(safe) and chinese(ZH(safe))
    assert neutralise(msg("{n} of {total}", n=3, total=4)).fields == {"n": 3, "total": 4}
    # a field that is neither text nor a number (a path, say) is shown, so made safe, as text
    path = neutralise(msg("{file} is not UTF-8 text", file=Path(f"/tmp/{ESCAPE}.txt")))
    assert "\x1b" not in path and "\x1b" not in ZH(path) and "\\x1b[2J" in ZH(path)


def test_neutralise_verdict_keeps_messages_hints_and_evidence_translatable() -> None:
    check = Check("returns-dict", "fail", msg("You returned a {kind}, not a dict.", kind=ESCAPE),
                  msg("write the function `{function}` in it", function=ESCAPE),
                  Table((msg("parameter"), "w"), ((ESCAPE, msg("all zeros")),)))
    verdict = Verdict("grad-health", "fail", (check,), seed=1, duration_ms=2,
                      output=ESCAPE)
    safe = neutralise_verdict(verdict).checks[0]
    assert isinstance(safe.message, Msg) and isinstance(safe.help, Msg)
    assert safe.evidence is not None
    assert isinstance(safe.evidence.columns[0], Msg)
    assert isinstance(safe.evidence.rows[0][1], Msg)
    texts = [ZH(safe.message), ZH(safe.help), say(ZH, safe.evidence.rows[0][0])]
    assert all("\x1b" not in t and "\x07" not in t for t in texts)
    assert say(ZH, safe.evidence.columns[0]) == "参数"
    assert say(ZH, safe.evidence.rows[0][1]) == "全是零"


# --- --json in the learner's language --------------------------------------------------------

def failing_verdict(lang: str = "en") -> Verdict:
    """read-grad judged as the tutor judges it, in the course as `lang` shows it, on a run
    where backward ran twice and the function returned zeros."""
    step = load_course(lang=lang, rules=EXERCISE_RULES).find_exercise("read-grad")
    case = {"w": [1.0, 2.0], "loss": "squares"}
    reference = {"grad": [2.0, 4.0], "loss": 5.0, "solution": {
        "returned": [2.0, 4.0], "returned_is_grad": True, "grad_after": [2.0, 4.0],
        "events": [{"event": "accumulate", "grad": [2.0, 4.0]}], "returns_backward": False,
        "loss_calls": 1}}
    # two backward passes without retain_graph: two calls of loss_fn, each a graph of its own
    seen = {"returned": [0.0, 0.0], "returned_is_grad": False, "grad_after": [4.0, 8.0],
            "events": [{"event": "accumulate", "grad": [2.0, 4.0]},
                       {"event": "accumulate", "grad": [4.0, 8.0]}],
            "returns_backward": False, "loss_calls": 2}
    checks = tuple(judge_of(step)([case], [reference], [seen]))
    return Verdict("read-grad", overall(checks), checks, seed=7, duration_ms=12)


def test_to_json_says_messages_in_the_learners_language_and_keeps_names_and_status() -> None:
    verdict = failing_verdict()
    english, chinese_ = to_json(verdict), to_json(failing_verdict("zh-CN"), ZH)
    assert english == to_json(verdict, ENGLISH)
    assert english["checks"][1]["message"] == "You returned a tensor of zeros, not the gradient."
    assert chinese_["checks"][0]["help"] == "看看你的函数做了几次反向传播"
    zh_check = chinese_["checks"][1]
    assert zh_check["message"] == "你返回的是一个全零张量，而不是梯度。"
    assert zh_check["evidence"] == {"columns": ["w", "loss_fn(w)", "梯度", "你返回的"],
                                    "rows": [["[1, 2]", "(w ** 2).sum()", "[2, 4]", "[0, 0]"]],
                                    "failing": 1}
    assert chinese_["checks"][2]["message"] == "未判定：要等 returns-grad 通过后再判定"
    for key in ("exercise", "passed", "status", "seed", "duration_ms", "output"):
        assert chinese_[key] == english[key]
    assert [(c["name"], c["status"]) for c in chinese_["checks"]] == [
        (c["name"], c["status"]) for c in english["checks"]]
    json.dumps(chinese_, ensure_ascii=False)


def test_data_that_reads_like_a_message_is_not_translated() -> None:
    # a learner's value "parameter" in a cell is data, though "parameter" is in the catalog
    assert say(ZH, "parameter") == "parameter" and say(ZH, msg("parameter")) == "参数"


# --- the screens -----------------------------------------------------------------------------

def shown(renderable: Any, width: int = 60) -> str:
    buffer = io.StringIO()
    console = Console(width=width, file=buffer, force_terminal=False, color_system=None)
    console.print(renderable)
    return buffer.getvalue()


@pytest.mark.parametrize("plain", [True, False])
def test_the_check_screen_speaks_chinese_within_60_columns(plain: bool) -> None:
    verdict = failing_verdict("zh-CN")
    out = shown(verdict_view(verdict, Look(plain=plain, tr=ZH)))
    assert "read-grad：还没通过" in out
    assert "runs-backward：未通过" in out and "returns-grad：未通过" in out
    assert "grad-kept：未运行" in out
    assert "提示：" in out and "看看你的函数做了几次反向传播" in out
    assert ("种子 7，12 毫秒" if plain else "种子 7 · 12 毫秒") in out
    assert "[2, 4]" in out and "你返回的" in out
    assert all(cell_len(line) <= 60 for line in out.splitlines())
    assert not re.search(r"\b(passed|failed|hint|seed)\b", out)
    english = shown(verdict_view(failing_verdict(), Look(plain=plain)))
    assert "read-grad: Not yet" in english
    assert "hint: look at how many backward passes your function runs" in english


def test_the_check_screen_names_every_status_in_chinese() -> None:
    statuses: list[CheckStatus] = ["pass", "fail", "error", "timeout", "skip"]
    checks = tuple(Check(f"c-{s}", s, msg("not run")) for s in statuses)
    out = shown(verdict_view(Verdict("x", "timeout", checks, 0, 0, output="hi\n",
                                     output_truncated=True), Look(plain=True, tr=ZH)), 100)
    for word in ("c-pass：通过", "c-fail：未通过", "c-error：出错", "c-timeout：超时",
                 "c-skip：未运行", "x：超时", "你的代码输出了（已截断，原文更长）："):
        assert word in out


def test_the_exercise_screen_speaks_chinese(tmp_path: Path) -> None:
    from gradtutor.ui.exercise_view import exercise_body

    step = load_course(rules=EXERCISE_RULES).find_exercise("read-grad")
    assert isinstance(step, Exercise)
    look = Look(plain=True, tr=ZH)
    fresh = shown(exercise_body(step, ExerciseView(), tmp_path / "read-grad.py", look), 100)
    assert "你的文件：" in fresh and "还没检查：保存你的文件" in fresh
    kept = ExerciseView(kept=True, hints=1, checking=True, verdict=failing_verdict())
    out = shown(exercise_body(step, kept, tmp_path / "read-grad.py", look), 100)
    for words in ("你的文件（你之前的作业，原样保留）：", f"提示 1/{len(step.hints)}：",
                  "检查中……", "上一次的结果：", "read-grad：还没通过"):
        assert words in out
    asking = shown(exercise_body(step, ExerciseView(confirming=True), tmp_path / "f.py", look))
    assert "显示参考答案？" in asking


@pytest.mark.parametrize(("tr", "words"), [
    (ENGLISH, "loading PyTorch for the first check: a few seconds (7 s so far)"),
    (ZH, "第一次检查要先加载 PyTorch，需要几秒钟（已等 7 秒）"),
])
def test_a_check_waiting_for_pytorch_says_so_with_its_seconds(tr: Any, words: str,
                                                              tmp_path: Path) -> None:
    from gradtutor.ui.exercise_view import exercise_body

    step = load_course(rules=EXERCISE_RULES).find_exercise("read-grad")
    assert isinstance(step, Exercise)
    look = Look(plain=True, tr=tr)
    path = tmp_path / "read-grad.py"
    waiting = shown(exercise_body(step, ExerciseView(checking=True, loading=7), path, look), 100)
    checking = tr(msg("checking ..."))
    assert words in waiting and waiting.index(checking) < waiting.index(words)
    # before the shell says the check waits, and once it has ended: no word of it
    for view in (ExerciseView(checking=True), ExerciseView(loading=7, verdict=failing_verdict())):
        out = shown(exercise_body(step, view, path, look), 100)
        assert "PyTorch" not in out.split(tr(msg("Your file:")))[-1]



def test_a_copy_cut_at_the_cap_names_the_cap_not_the_copy_s_size() -> None:
    """A graded class's copies are read to the cap and a byte: the file handed in was larger
    than that, by how much is not known (the review: '1.0 MiB' for a 48 MiB file)."""
    cap = 1 << 20
    cut = source_problem(b"#" * (cap + 1), "answer.py", "read_grad", cap)
    whole = source_problem(b"#" * (cap + 1), "answer.py", "read_grad", cap, size=48 << 20)
    assert cut is not None and whole is not None
    assert cut.message == "Your file is more than the 1024 KiB a check accepts."
    assert whole.message.startswith("Your file is 48.0 MiB, more than the 1024 KiB")
    assert ZH(cut.message) == "你的文件超过了检查所接受的 1024 KiB。"
