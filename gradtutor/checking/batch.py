"""Many checks of *author* code in one process: the lesson author's safety net.

`gradtutor validate` proves each exercise (the starter fails, the solution passes, each mutant
fails on the check it names) and each snippet with an answer key. That code is the author's
own, so it runs in one worker process after one torch import, not one process per run.
Snippets run through `snippet.run_code`, exactly as a lesson runs them, so a demo's series
are proved too: each result is {"shown", "series"} or {"error"}. A quiz choice's proof
runs after its question's code (`snippet.run_proof`): {"holds"} or {"error", "in"}.

    python -m gradtutor.checking.batch JOBS.json [PID]  # {"ready": true}, then a line per job

With PID (the tutor's), the worker dies with that process (Linux), so a tutor killed during
`validate` leaves no author proof running.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from typing import Any


def main() -> None:
    from gradtutor.checking import protocol
    from gradtutor.checking.lifetime import die_with
    from gradtutor.checking.snippet import run_code, run_proof
    from gradtutor.checking.worker import evaluate, import_torch_quietly

    if len(sys.argv) > 2:
        die_with(int(sys.argv[2]))
    import_torch_quietly()  # once, before any job; the same quiet import as a check's worker
    jobs = json.loads(open(sys.argv[1], encoding="utf-8").read())  # noqa: SIM115
    sys.stdout.write(json.dumps({"ready": True}) + "\n")  # each job's time counts from here
    sys.stdout.flush()
    for number, job in enumerate(jobs):
        if job["kind"] == "snippet":  # the same run as a lesson's snippet; stdout is ours
            with contextlib.redirect_stdout(io.StringIO()):
                result: dict[str, Any] = run_code(job["code"], job.get("show"),
                                                  tuple(job.get("series", ())))
        elif job["kind"] == "proof":  # a quiz choice's proof, after its question's code
            with contextlib.redirect_stdout(io.StringIO()):
                result = run_proof(job["code"], job["proof"], job["holds"])
        else:
            messages: list[protocol.ResultMessage] = []
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                evaluate(job["checker"], job["function"], job["source"], job["filename"],
                         job["seed"], messages.append)
            result = {"messages": messages}
        sys.stdout.write(json.dumps({"job": number, **result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
