"""Run many checks of learner files in one process, for the checker tests.

    python tests/checker_batch.py JOBS.json RESULTS.json

Each job is {"checker", "function", "source", "seed"}; the results file gets, per job, the
messages `worker.evaluate` sent. Unlike `gradtutor.checking.batch` (which runs authors' own
code), the files here include hostile ones that replace torch functions, so whatever a job
rebinds on torch's classes and modules is bound back before the next job runs; and results go to
a file, so nothing a learner file prints can forge them.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from typing import Any


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


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch

    from gradtutor.checking import trace
    from gradtutor.checking.worker import evaluate

    trace.install()
    guarded = [torch.Tensor, torch.nn.Parameter, torch.autograd, torch.optim.Optimizer,
               torch.optim.SGD, torch.optim.Adam, torch.nn.Module]
    saved = snapshot(guarded)
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    results: list[list[dict[str, Any]]] = []
    for number, job in enumerate(jobs):
        messages: list[dict[str, Any]] = []
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            evaluate(job["checker"], job["function"], job["source"], f"job{number}.py",
                     job["seed"], messages.append)
        restore(saved)
        results.append(messages)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(json.dumps(results))


if __name__ == "__main__":
    main()
