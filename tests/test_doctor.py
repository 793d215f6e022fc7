"""`gradtutor doctor`: the judge's rules on event lists written by hand (no torch), the report
and its JSON, and the command run for real on small scripts (exit codes, the script's output
and arguments, torch imported by the script first, the one-line errors).

tests/test_doctor_corpus.py runs the probe on the whole corpus of training scripts.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from rich.console import Console

from gradtutor.doctor.evaluation import evaluation_lines
from gradtutor.doctor.judge import LESSON_STEPS, PROBLEM_IDS, diagnose, to_json
from gradtutor.i18n import translator
from gradtutor.ui.doctor_view import report_view
from gradtutor.ui.render import Look

if TYPE_CHECKING:
    from conftest import Cli

ROOT = Path(__file__).parent.parent
CORPUS = Path(__file__).parent / "doctor_corpus"


class Script:
    """Events as the probe sends them, written step by step: one optimizer (0) over the
    parameters 0 and 1 of a Linear layer (module 1, inside model 0) unless told otherwise."""

    def __init__(self, pids: Iterable[int] = (0, 1)) -> None:
        self.pids = list(pids)
        self.events: list[dict[str, Any]] = [{"e": "torch"}]
        for pid in self.pids:
            self.add({"e": "leaf", "pid": pid, "shape": [4, 3], "param": True,
                      "requires_grad": True})
        self.add({"e": "optimizer", "opt": 0, "cls": "SGD", "line": "train.py:5",
                  "pids": self.pids})
        self.add({"e": "module", "mod": 0, "cls": "Sequential", "direct": [],
                  "tree": self.pids, "modal": False})
        self.add({"e": "module", "mod": 1, "cls": "Linear", "direct": self.pids,
                  "tree": self.pids, "modal": False})
        self.backwards = 0
        self.steps = 0
        self.contrib: dict[int, list[int]] = {pid: [] for pid in self.pids}
        self.updated: dict[int, int] = {}  # the event after which the step moved it

    def add(self, event: dict[str, Any]) -> dict[str, Any]:
        event["n"] = len(self.events) + 1
        self.events.append(event)
        return event

    def clear(self, pids: Iterable[int] | None = None, line: str = "train.py:8") -> None:
        chosen = self.pids if pids is None else list(pids)
        for pid in chosen:
            self.contrib[pid] = []
        self.add({"e": "clear", "how": "optimizer", "owner": 0, "pids": chosen,
                  "set_to_none": True, "line": line})

    def backward(self, norm: float = 1.0, div: float | None = 1.0,
                 line: str = "train.py:10") -> None:
        self.add({"e": "forward", "mod": 0, "training": True, "grad": True,
                  "line": "train.py:9"})
        self.backwards += 1
        pre = {str(p): ("none" if not self.contrib[p] else
                        "stale" if self.stale(p) else "kept") for p in self.pids}
        event = self.add({"e": "backward", "i": self.backwards, "line": line, "pre": pre,
                          "moved": [], "ran": [0, 1], "used": [0], "loss": 0.5, "div": div,
                          "reached": self.pids, "norm": {str(p): norm for p in self.pids}})
        for pid in self.pids:
            self.contrib[pid].append(event["n"])

    def step(self, norm: float | None = 1.0, units: tuple[int, int] | None = None,
             closure: bool = False) -> None:
        self.steps += 1
        grads = {}
        for pid in self.pids:
            state = ("none" if not self.contrib[pid] else
                     "stale" if self.stale(pid) else "fresh")
            grads[str(pid)] = [state, None if state == "none" else norm,
                               list(self.contrib[pid]) if state != "none" else [],
                               *(units or ())]
        event = self.add({"e": "step", "i": self.steps, "opt": 0, "cls": "SGD", "closure": closure,
                  "line": "train.py:11", "g": grads})
        for pid in self.pids:
            if self.contrib[pid]:  # a step moves what has a gradient
                self.updated[pid] = event["n"]

    def stale(self, pid: int) -> bool:
        return any(c < self.updated.get(pid, 0) for c in self.contrib[pid])

    def judged(self, reason: str = "steps") -> set[str]:
        self.add({"e": "names", "params": {"0": "model.0.weight", "1": "model.0.bias"},
                  "modules": {"0": "model", "1": "model.0"}})
        self.add({"e": "end", "reason": reason})
        return {finding.id for finding in diagnose(self.events).findings}


def loop(iterations: int = 5, clear: bool = True, **step: Any) -> Script:
    script = Script()
    for _ in range(iterations):
        if clear:
            script.clear()
        script.backward()
        script.step(**step)
    return script


def test_a_right_loop_has_no_problem() -> None:
    assert loop().judged() == set()


def test_a_loop_that_never_clears_piles_up() -> None:
    assert loop(clear=False).judged() == {"never-cleared"}


def test_clearing_only_once_is_a_pile_up_too_and_says_so() -> None:
    script = Script()
    script.clear()
    for _ in range(4):
        script.backward()
        script.step()
    script.judged()
    finding = diagnose(script.events).findings[0]
    assert finding.id == "never-cleared"
    assert "only once" in finding.summary
    assert ("cleared", "1 times, last at train.py:8") in finding.evidence


def test_clearing_between_backward_and_step_is_found_where_it_clears() -> None:
    script = Script()
    for _ in range(4):
        script.backward()
        script.clear(line="train.py:12")
        script.step()
    assert script.judged() == {"cleared-before-step"}
    assert diagnose(script.events).findings[0].where == "train.py:12"


def test_a_dead_layer_is_not_mistaken_for_a_cleared_one() -> None:
    script = Script()
    for _ in range(4):
        script.clear()
        script.backward(norm=0.0)
        script.step(norm=0.0, units=(4, 4))
    assert script.judged() == {"dead-units"}


def test_embeddings_are_never_dead_units() -> None:
    script = Script()
    script.events[5]["cls"] = "Embedding"
    for _ in range(4):
        script.clear()
        script.backward()
        script.step(units=(3, 4))
    assert script.judged() == set()


def accumulating(k: int, div: float | None) -> Script:
    script = Script()
    for _ in range(3):
        script.clear()
        for _ in range(k):
            script.backward(div=div)
        script.step()
    return script


@pytest.mark.parametrize(("div", "found"), [(4.0, set()), (1.0, {"accumulation-scale"}),
                                            (16.0, {"accumulation-scale"})])
def test_accumulation_is_judged_by_what_the_loss_was_divided_by(div: float,
                                                                found: set[str]) -> None:
    assert accumulating(4, div).judged() == found


def test_an_unreadable_scale_is_said_to_be_unknown_not_guessed() -> None:
    script = accumulating(4, 3.0)
    assert script.judged() == set()
    notes = [note for note in diagnose(script.events).notes if note.id != "eval-graph"]
    assert [note.id for note in notes] == ["accumulation-scale"]
    assert "cannot tell" in notes[0].summary


def test_a_run_stopped_before_the_script_s_evaluation_says_it_was_not_checked() -> None:
    stopped, ended = loop(), loop()
    for script in (stopped, ended):
        script.add({"e": "evals", "at": ["train.py:20", "train.py:31"]})
    stopped.judged("steps")
    ended.judged("finished")
    (note,) = diagnose(stopped.events).notes
    assert (note.id, note.where, note.certain) == ("eval-graph", "train.py:20", False)
    assert ("evaluation", "train.py:20, not reached") in note.evidence
    assert diagnose(ended.events).notes == ()


def test_a_stopped_run_of_a_script_without_evaluation_has_no_note() -> None:
    """The script has no `.eval()` anywhere: there is no evaluation the run did not reach."""
    stopped = loop()
    stopped.judged("steps")
    assert diagnose(stopped.events).notes == ()


@pytest.mark.parametrize(("source", "lines"), [
    ("model.eval()\n", [1]),
    ("for e in range(3):\n    train()\n    net.module.eval()\n", [3]),
    ("model.train(False)\nmodel.train(mode=False)\nmodel.train()\nmodel.train(True)\n", [1, 2]),
    ("result = eval('1 + 1')\nexpr.eval(x)\n", []),  # the builtin, and a call with arguments
    ("def evaluate(\n", []),  # not Python: nothing read
])
def test_the_evaluation_a_script_has_is_read_from_its_source(source: str,
                                                             lines: list[int]) -> None:
    assert evaluation_lines(source) == lines


def cut_loop(*cuts: tuple[str, str, list[int]]) -> Script:
    """A loop whose backward passes never reach the Linear layer that runs (its graph is cut),
    with the probe's `cut` events: (line, how, the leaves the cut tensor had reached)."""
    script = loop(3)
    for event in script.events:
        if event["e"] == "backward":
            event["reached"], event["norm"], event["pre"] = [], {}, {}
    for line, how, reached in cuts:
        script.add({"e": "cut", "how": how, "line": line, "reached": reached})
    script.judged()
    return script


def graph_broken(script: Script) -> Any:
    (finding,) = [f for f in diagnose(script.events).findings if f.id == "graph-broken"]
    return finding


def test_a_cut_graph_is_found_at_the_line_that_cut_it_not_at_backward() -> None:
    finding = graph_broken(cut_loop(("train.py:7", ".detach()", [0, 1]),
                                    ("train.py:12", ".item()", [5])))  # a loss logged: not it
    assert finding.where == "train.py:7"
    assert finding.evidence[0] == ("graph cut at", "train.py:7 (.detach())")


def test_several_lines_that_could_have_cut_it_are_named_and_none_is_chosen() -> None:
    finding = graph_broken(cut_loop(("train.py:7", ".detach()", [0]),
                                    ("train.py:8", ".item()", [1])))
    assert finding.where == "train.py:9"  # the forward pass, as where no cut was seen
    assert finding.evidence[0] == ("graph cut at one of",
                                   "train.py:7 (.detach()), train.py:8 (.item())")


def test_a_cut_no_watched_call_made_is_said_to_be_unseen() -> None:
    finding = graph_broken(cut_loop(("train.py:12", ".item()", [5])))
    assert finding.where == "train.py:9"
    assert finding.evidence[0] == ("graph cut at",
                                   "not seen (.data, or a call the doctor does not watch)")


def test_a_loss_with_no_graph_is_found_at_the_cut_before_its_backward() -> None:
    """`.item()` on the loss, then backward() on the float: the error is at backward(), the cut
    before it (an older cut, before the last backward that worked, is not this one's)."""
    script = loop(2)
    script.add({"e": "cut", "how": ".detach()", "line": "train.py:3", "reached": [0, 1]})
    script.clear()
    script.backward()
    script.step()
    script.add({"e": "cut", "how": ".item()", "line": "train.py:9", "reached": [0, 1]})
    script.add({"e": "end", "reason": "error", "line": "train.py:10",
                "error": "AttributeError: 'float' object has no attribute 'backward'"})
    finding = graph_broken(script)
    assert finding.where == "train.py:9"
    assert ("graph cut at", "train.py:9 (.item())") in finding.evidence
    assert ("backward", "train.py:10") in finding.evidence  # where it was found out


def test_several_losses_from_different_lines_are_a_sum_on_purpose() -> None:
    script = Script()
    for _ in range(3):
        script.clear()
        script.backward(line="train.py:10")
        script.backward(line="train.py:11")
        script.step()
    assert script.judged() == set()


def test_growing_and_non_finite_norms() -> None:
    growing = Script()
    for norm in (1.0, 30.0, 900.0, 27000.0):
        growing.clear()
        growing.backward(norm=norm)
        growing.step(norm=norm)
    assert growing.judged() == {"exploding"}
    slow_start = Script()  # from a zero-initialised layer: large growth, small norms
    for norm in (1e-5, 1e-3, 0.1, 2.0):
        slow_start.clear()
        slow_start.backward(norm=norm)
        slow_start.step(norm=norm)
    assert slow_start.judged() == set()
    broken = loop(3)
    broken.clear()
    broken.backward(norm=float("nan"))
    broken.step(norm=float("nan"))
    assert broken.judged() == {"nan"}


def test_a_first_step_before_any_backward() -> None:
    script = Script()
    for _ in range(3):
        script.clear()
        script.step()
        script.backward()
    assert script.judged() == {"step-before-backward"}


def test_closures_are_judged_by_their_backward_passes() -> None:
    script = Script()
    for _ in range(3):
        script.clear()
        script.step(closure=True)
        script.backward()
    assert script.judged() == set()


def test_every_problem_names_a_step_of_the_course() -> None:
    steps = {}
    for lesson in ("tensors", "backward", "grad", "training"):
        data = yaml.safe_load((ROOT / "lessons" / f"{lesson}.yaml").read_text("utf-8"))
        steps[lesson] = {step["id"] for step in data["steps"]}
    assert set(LESSON_STEPS) == set(PROBLEM_IDS)
    for lesson, step in LESSON_STEPS.values():
        assert step in steps[lesson], (lesson, step)


def test_the_json_and_the_report_say_the_same_problem() -> None:
    script = loop(clear=False)
    script.judged()
    diagnosis = diagnose(script.events)
    payload = to_json(diagnosis, str)
    assert payload["steps"] == 5 and payload["ended"] == "steps"
    [problem] = payload["problems"]
    assert problem["id"] == "never-cleared" and problem["where"] == "train.py:11"
    assert problem["lesson"] == {"lesson": "grad", "step": "hidden-bug",
                                 "command": "gradtutor show grad --step hidden-bug"}
    assert {"label": "parameters", "value": "model.0.bias, model.0.weight"} in (
        problem["evidence"])
    out = io.StringIO()
    Console(file=out, width=80, no_color=True).print(report_view(diagnosis, Look(True)))
    text = out.getvalue()
    assert "[X] never-cleared  train.py:11" in text
    assert "gradtutor show grad --step hidden-bug" in text
    assert "1 gradient problem found." in text
    zh = io.StringIO()
    Console(file=zh, width=80, no_color=True).print(
        report_view(diagnosis, Look(True, translator("zh-CN"))))
    assert "Gradients are never cleared" not in zh.getvalue()


# --- the command, for real ------------------------------------------------------------------

def doctor(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GRADTUTOR_LANG")}
    return subprocess.run([sys.executable, "-m", "gradtutor", "doctor", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_a_problem_found_in_json_with_the_script_s_output_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import sys\n"
        "print('torch before me:', 'torch' in sys.modules, 'args:', sys.argv[1:])\n"
        + (CORPUS / "never_cleared.py").read_text(encoding="utf-8"), encoding="utf-8")
    result = doctor("--json", "--steps", "5", "train.py", "--", "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    payload = json.loads(result.stdout)
    assert [p["id"] for p in payload["problems"]] == ["never-cleared"]
    assert payload["problems"][0]["where"] == "train.py:16"
    assert payload["steps"] == 5 and payload["ended"] == "steps"
    assert payload["unsure"] == []  # stopped early, but it has no evaluation to reach
    assert "torch before me: False args: ['--epochs', '1']" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["train.py"]  # nothing written beside it


@pytest.mark.slow
def test_a_cut_graph_is_reported_where_the_script_cut_it(tmp_path: Path) -> None:
    """The script imports torch itself, as a learner's does: its `.detach()` is watched from
    the first line, and the report names that line, not the backward() that failed."""
    (tmp_path / "train.py").write_text((CORPUS / "detached_output.py").read_text("utf-8"),
                                       encoding="utf-8")
    result = doctor("--json", "train.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (problem,) = json.loads(result.stdout)["problems"]
    assert problem["id"] == "graph-broken" and problem["where"] == "train.py:13"
    assert {"label": "graph cut at", "value": "train.py:13 (.detach())"} in problem["evidence"]
    assert {"label": "backward", "value": "train.py:15"} in problem["evidence"]


@pytest.mark.slow
def test_a_right_script_passes_and_its_output_passes_through(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text((CORPUS / "manual_sgd.py").read_text("utf-8"),
                                       encoding="utf-8")
    result = doctor("--plain", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "[OK] No gradient problem seen" in result.stdout
    quiet = doctor("--plain", "--quiet", "--steps", "3", "train.py", cwd=tmp_path)
    assert quiet.returncode == 0 and "w:" not in quiet.stdout
    assert "stopped after 3 backward passes, as asked" in " ".join(quiet.stdout.split())


@pytest.mark.parametrize(("source", "said"), [
    ("print('no torch here')\n", "never imported torch: nothing to observe"),
    ("def load():\n    raise FileNotFoundError('data.csv')\nload()\n",
     "stopped before its first backward pass: FileNotFoundError: data.csv"),
    ("import time\ntime.sleep(60)\n", "made no backward pass in 1 seconds"),
])
def test_a_script_that_cannot_be_observed_is_one_line_and_exit_2(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str,
        said: str) -> None:
    (tmp_path / "script.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("doctor", "--quiet", "--timeout", "1", "script.py")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and said in err and "(hint: " in err


@pytest.mark.parametrize(("source", "shown"), [
    ("def load():\n    raise FileNotFoundError('data.csv')\nload()\n",
     ['File "train.py", line 3, in <module>', 'File "train.py", line 2, in load',
      "FileNotFoundError: data.csv"]),
    ("for i in range(3)\n    pass\n", ['File "train.py", line 1', "SyntaxError"]),
])
def test_the_script_s_own_error_shows_as_python_shows_it(tmp_path: Path, source: str,
                                                         shown: list[str]) -> None:
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    result = doctor("train.py", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    for line in shown:
        assert line in result.stderr
    assert "gradtutor/" not in result.stderr and "runpy" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith("gradtutor: error: train.py stopped "
                                                     "before its first backward pass")


def test_a_missing_script_and_a_script_option_before_the_dashes(cli: Cli) -> None:
    code, _, err = cli("doctor", "no_such_script.py")
    assert code == 2 and err.startswith("gradtutor: error: no such script: no_such_script.py")
    code, _, err = cli("doctor", "train.py", "--lr", "1")
    assert code == 2 and "your script's own options go after `--`" in err
