"""Many checks of *author* code in one process: the lesson author's safety net.

`gradtutor validate` proves each exercise (the starter fails, the solution passes, each mutant
fails on the check it names) and each snippet with an answer key. That code is the author's
own, so it runs in one worker process after one torch import, not one process per run; but
each check and snippet runs as a learner's worker runs it (`worker.serve_request`: the same
limits, and the same walls, `worker.confine_learner`), so a proof cannot pass where a learner's
check would not. A snippet's result is {"shown", "series"} or {"error"}. A quiz choice's proof
runs after its question's code (`snippet.run_proof`), under the same limits: {"holds"} or
{"error", "in"}.

    python -m gradtutor.runtime.batch JOBS.json [PID]  # {"ready": true}, then a line per job

With PID (the tutor's), the worker dies with that process (Linux), so a tutor killed during
`validate` leaves no author proof running.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any


def main() -> None:
    from gradtutor.checking import protocol
    from gradtutor.checking.snippet import run_proof
    from gradtutor.runtime.prepare import (
        confine_learner,
        import_torch_quietly,
        limit_files,
        limit_memory,
    )
    from gradtutor.runtime.sender import report_failures
    from gradtutor.runtime.signals import die_with

    if len(sys.argv) > 2:
        die_with(int(sys.argv[2]))
    import_torch_quietly()  # once, before any job; the same quiet import as a check's worker
    jobs = json.loads(open(sys.argv[1], encoding="utf-8").read())  # noqa: SIM115
    confine_learner(os.getcwd())  # the walls of a learner's check: writes only beneath here
    sys.stdout.write(json.dumps({"ready": True}) + "\n")  # each job's time counts from here
    sys.stdout.flush()
    for number, job in enumerate(jobs):
        messages: list[protocol.ResultMessage] = []
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if job["kind"] == "proof":  # a quiz choice's proof, after its question's code
                limit_files(job["file_bytes"])  # as `serve_request` limits a snippet
                limit_memory(job["memory_bytes"])
                result: dict[str, Any] = run_proof(job["code"], job["proof"], job["holds"])
            else:  # a learner's check or a lesson's snippet, run as the worker runs them
                report_failures(messages.append, functools.partial(_serve, job, messages.append))
                result = (_snippet_result(messages) if job["kind"] == "snippet"
                          else {"messages": messages})
        sys.stdout.write(json.dumps({"job": number, **result}) + "\n")
        sys.stdout.flush()


def _serve(job: dict[str, Any], send: Callable[[Any], None]) -> None:
    from gradtutor.checking import protocol
    from gradtutor.runtime.references import reference_here
    from gradtutor.runtime.worker import serve_request

    serve_request(protocol.decode_request(job), send, reference_here)  # the author's code


def _snippet_result(messages: list[Any]) -> dict[str, Any]:
    """A snippet's run as {"shown", "series"} or {"error"}, from the messages it sent."""
    final = messages[-1] if messages else None
    if final is None or final["type"] != "snippet":  # the worker's own failure, if any
        error = final["error"] if final is not None else {"type": "Error", "message": "?"}
        return {"error": f"{error['type']}: {error['message']}"}
    return {key: value for key, value in final.items() if key != "type"}


if __name__ == "__main__":
    main()
