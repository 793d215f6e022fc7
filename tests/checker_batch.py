"""Run many checks of learner files in one process, for the checker tests.

    python tests/checker_batch.py JOBS.json RESULTS.json

Each job is {"checker" (a name, or a declared exercise's spec), "function", "source", "seed"}
and, optionally, "timeout" (seconds; past it the job's messages are [{"type": "job-timeout"}]);
the results file gets, per job, the
messages `worker.evaluate` sent; `checks_from` turns them into the checks the tutor shows, and
`untranslated` lists what of those a learner reading Chinese would see in English.

Unlike `gradtutor.runtime.batch` (which runs authors' own code), the files here include
hostile ones that replace torch functions, so whatever a job rebinds on torch's classes and
modules is bound back before the next job runs; and results go to a file, so nothing a
learner file prints can forge them.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from gradtutor.checking.protocol import ResultMessage


def checks_from(judge: Any, function: str, messages: list[dict[str, Any]]) -> list[Any]:
    """The checks the tutor shows for one run, decided exactly as after a real check: the
    messages as the bytes of a worker's result channel, through `outcome.decide` (an error
    in the learner's code becomes a `loads` or `runs` check; else the exercise's judge,
    `checkers.judge_of`)."""
    from gradtutor.checking.outcome import WorkerRun, decide

    data = b"".join(json.dumps(m).encode() + b"\n" for m in messages)
    run = WorkerRun(results=data, results_overflow=False, returncode=0, timed_out=False,
                    startup_timed_out=False)
    return list(decide(run, judge, function=function, timeout=10.0,
                       startup_allowance=60.0, results_cap=len(data) + 1))


def run_in_batch(jobs: list[dict[str, Any]], folder: Path) -> list[list[dict[str, Any]]]:
    """Each job's worker messages, from one batch process of this module run in `folder`
    (a folder the test owns)."""
    import os
    import subprocess
    from pathlib import Path

    here = Path(__file__).parent
    (folder / "jobs.json").write_text(json.dumps(jobs))
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(here.parent), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(here / "checker_batch.py"),
                           str(folder / "jobs.json"), str(folder / "results.json")],
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results: list[list[dict[str, Any]]] = json.loads((folder / "results.json").read_text())
    return results


def lesson_catalog(language: str) -> dict[str, str]:
    """English -> translation of every text of the course's lessons that `language`
    translates: the words of the checks a lesson declares are said from these, as the
    lesson loaded in that language gives them."""
    from gradtutor.checking.exercise_rules import EXERCISE_RULES
    from gradtutor.i18n import Untranslated
    from gradtutor.lessons.course import load_course
    from gradtutor.lessons.translate import lesson_texts

    english = load_course(rules=EXERCISE_RULES)
    translated = load_course(lang=language, rules=EXERCISE_RULES)
    return {text: said for lesson, there in zip(english.lessons, translated.lessons,
                                                 strict=True)
            for (_, text), (_, said) in zip(lesson_texts(lesson), lesson_texts(there),
                                             strict=True)
            if not isinstance(said, Untranslated)}


# Evidence columns that are code, the same in every language.
CODE_COLUMNS = frozenset({"w", "loss_fn(w)", "#", ""})


def untranslated(checks: list[Any], catalog: dict[str, str]) -> list[str]:
    """Every text of these checks that a learner reading `catalog`'s language would see in
    English: a message or hint that is not a `msg()` message, a message (or a message in its
    fields) missing from the catalog, an evidence column that is neither a message nor code."""
    from gradtutor.i18n import Msg

    problems: list[str] = []

    def known(where: str, text: Any) -> None:
        if not isinstance(text, Msg):
            return
        if text.template not in catalog:
            problems.append(f"{where}: {text.template!r} has no translation")
        for value in text.fields.values():
            known(where, value)

    for check in checks:
        where = f"{check.name}={check.status}"
        for part, text in (("message", check.message), ("help", check.help),
                           ("note", getattr(check, "note", ""))):
            if text and not isinstance(text, Msg):
                problems.append(f"{where} {part}: {text!r} is not a message")
            known(f"{where} {part}", text)
        if check.evidence is not None:
            for column in check.evidence.columns:
                if not isinstance(column, Msg) and column not in CODE_COLUMNS:
                    problems.append(f"{where} column {column!r} is not a message")
                known(f"{where} column", column)
            for row in check.evidence.rows:
                for cell in row:
                    known(f"{where} cell", cell)
    return problems


def snapshot(namespaces: list[Any]) -> list[tuple[Any, dict[str, Any]]]:
    return [(ns, dict(vars(ns))) for ns in namespaces]


def restore(saved: list[tuple[Any, dict[str, Any]]]) -> None:
    """Put back every name that was rebound or deleted, and remove names added to classes
    (a `grad` property, say). Names added to modules stay: torch adds some itself as it
    lazily imports its parts."""
    for ns, before in saved:
        now = dict(vars(ns))
        if isinstance(ns, type):
            for name in now.keys() - before.keys():
                delattr(ns, name)
        for name, value in before.items():
            if name not in now or now[name] is not value:
                setattr(ns, name, value)


class JobTimeout(BaseException):
    """A job ran past its `timeout` (a generated mutant's endless loop, say): a BaseException,
    so that no `except Exception` of the code under check swallows it."""


@contextlib.contextmanager
def _time_limit(seconds: float | None) -> Any:
    """Raise JobTimeout in this (main) thread after `seconds` of wall time, if given."""
    if not seconds:
        yield
        return
    import signal

    def expire(signum: int, frame: Any) -> None:
        raise JobTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch

    from gradtutor.checking import trace
    from gradtutor.checking.protocol import Expected, checker_key
    from gradtutor.runtime.learner import evaluate
    from gradtutor.runtime.references import reference_message
    from gradtutor.runtime.sender import Send

    # The reference results depend only on the checker and the seed, and many jobs share
    # both (every style, mutant and mistake of an exercise, on the same seeds): each is
    # computed once, by the first job that needs it, and kept as JSON text, so that no job
    # can change what a later one is sent. A declared checker is a dict: `checker_key`
    # names it.
    references: dict[tuple[str, int], str] = {}

    def reference(checker: Any, seed: int, send: Send) -> None:
        key = (checker_key(checker), seed)
        if key not in references:
            references[key] = json.dumps(reference_message(checker, seed))
        message: Expected = json.loads(references[key])
        send(message)

    trace.install()
    guarded = [torch.Tensor, torch.nn.Parameter, torch.autograd, torch.optim.Optimizer,
               torch.optim.SGD, torch.optim.Adam, torch.nn.Module]
    saved = snapshot(guarded)
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    results: list[list[ResultMessage]] = []
    for number, job in enumerate(jobs):
        messages: list[ResultMessage] = []
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                with _time_limit(job.get("timeout")):
                    evaluate(job["checker"], job["function"], job["source"],
                             f"job{number}.py", job["seed"], messages.append, reference)
            except JobTimeout:
                messages = [{"type": "job-timeout"}]  # type: ignore[typeddict-item]
        restore(saved)
        results.append(messages)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(json.dumps(results))


if __name__ == "__main__":
    main()
