"""Many checks of *author* code in one process: the lesson author's safety net.

`gradtutor validate` proves each exercise (the starter fails, the solution passes, each mutant
fails on the check it names) and each snippet with an answer key. That code is the author's
own, so it runs in one worker process after one torch import, not one process per run.

    python -m gradtutor.checking.batch JOBS.json   # writes one JSON line per job to stdout
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from typing import Any


def run_snippet(code: str, show: str | None) -> dict[str, Any]:
    """Run a quiz or predict snippet; with `show`, the str() of that expression afterwards."""
    namespace: dict[str, Any] = {"__name__": "__snippet__"}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - author code
            shown = str(eval(show, namespace)) if show else None  # noqa: S307
    except BaseException as exc:  # noqa: BLE001 - every failure is reported to the author
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"shown": shown}


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch  # noqa: F401 - once, before any job

    from gradtutor.checking import trace
    from gradtutor.checking.worker import evaluate

    trace.install()
    jobs = json.loads(open(sys.argv[1], encoding="utf-8").read())  # noqa: SIM115
    for number, job in enumerate(jobs):
        if job["kind"] == "snippet":
            result: dict[str, Any] = run_snippet(job["code"], job.get("show"))
        else:
            messages: list[dict[str, Any]] = []
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                evaluate(job["checker"], job["function"], job["source"], job["filename"],
                         job["seed"], messages.append)
            result = {"messages": messages}
        sys.stdout.write(json.dumps({"job": number, **result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
