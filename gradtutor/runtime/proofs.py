"""Running validate's proofs: the author's code in one batch worker (batch.py), started
as a learner's worker is (spawn.py) and read with the same deadline reader.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gradtutor.checking.lesson_proofs import Job, jobs_for, problem_text
from gradtutor.errors import Problem
from gradtutor.lessons.load import Loc, locate
from gradtutor.lessons.model import (
    Lesson,
)
from gradtutor.runtime.channel import LineReader
from gradtutor.runtime.resources import release
from gradtutor.runtime.spawn import BATCH, start, worker_environment

STARTUP_LIMIT_S = 180.0  # the batch worker's Python and torch import, before the first proof


Started = Callable[[int, Job], None]


def run_jobs(jobs: list[Job], started: Started | None = None, *,
             environ: Mapping[str, str]) -> list[dict[str, Any]]:
    """Run every job in a batch worker; one result per job. `started(n, job)` is told as
    each begins. A job that runs past its limit ends its worker with {"timeout": limit}; the
    jobs after it go on in a new one, except the other seeds of the same proof and the runs
    that run its code first (a quiz question's proofs). `environ`: the tutor's environment,
    which the batch worker's is made from, as a learner's worker's is."""
    results: dict[int, dict[str, Any]] = {}
    pending = list(range(len(jobs)))
    env = worker_environment(environ)
    while pending:
        stuck = _run_batch(jobs, pending, results, started or (lambda n, job: None), env)
        if stuck is None:
            break
        path, loc, what = jobs[stuck].lesson_path, jobs[stuck].loc, jobs[stuck].what
        pending = [n for n in pending if n not in results
                   and (jobs[n].lesson_path, jobs[n].loc, jobs[n].what) != (path, loc, what)
                   and (jobs[n].lesson_path, jobs[n].runs_first) != (path, loc)]
    # not run: another seed of the same proof, or the code this run runs first, ran past its
    # limit, and that is said once
    return [results.get(n, {"skipped": True}) for n in range(len(jobs))]


def _run_batch(jobs: list[Job], numbers: list[int], results: dict[int, dict[str, Any]],
               started: Started, env: Mapping[str, str]) -> int | None:
    """Run the jobs `numbers` in one batch worker, putting each result in `results`; the job
    that ran past its limit, if one did (the worker is then stopped)."""
    with tempfile.TemporaryDirectory(prefix="gradtutor-validate-") as folder:
        request = Path(folder) / "jobs.json"
        request.write_text(json.dumps([jobs[n].request for n in numbers]), encoding="utf-8")
        with open(Path(folder) / "stderr.txt", "w+b") as errors:
            # in the tutor's process group, so that Ctrl-C in the terminal reaches it too
            proc = start(BATCH, [str(request), str(os.getpid())], env=env, cwd=folder,
                         stdout=subprocess.PIPE, stderr=errors.fileno())
            assert proc.stdout is not None
            lines = LineReader(proc.stdout.fileno())
            try:
                ready = _record(lines, "ready", STARTUP_LIMIT_S) is not None
                if not ready and not lines.ended:
                    fault = f"the batch worker did not start within {STARTUP_LIMIT_S:g} s"
                    for n in numbers:
                        results[n] = {"error": fault, "messages": []}
                    return None
                for index, n in enumerate(numbers if ready else []):
                    started(n, jobs[n])
                    record = _record(lines, index, jobs[n].limit)
                    if record is None:
                        if lines.ended:
                            break
                        results[n] = {"timeout": jobs[n].limit}
                        return n
                    results[n] = record
            finally:
                _stop(proc)
                proc.stdout.close()
                release(folder, time.time() - 1)  # its pids cgroup and what it left in IPC
            errors.seek(0)
            said = errors.read().decode("utf-8", "replace").strip().splitlines()
    reason = (said or ["it stopped early"])[-1]
    for n in numbers:
        results.setdefault(n, {"error": f"the batch worker did not finish ({reason})",
                               "messages": []})
    return None


def _record(lines: LineReader, job: int | str, seconds: float) -> dict[str, Any] | None:
    """The batch worker's line for `job` (its number, or "ready"), awaited `seconds` at most;
    any other line (something the author's code wrote to the descriptor) is passed over."""
    deadline = time.monotonic() + seconds
    while (line := lines.next(deadline - time.monotonic())) is not None:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and (record.get("job") == job or job in record):
            record.pop("job", None)
            return record
    return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End the batch worker (it stays in the tutor's process group, so that Ctrl-C in the
    terminal reaches it too)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def prove(lessons: list[tuple[Lesson, Path]], started: Started | None = None, *,
          environ: Mapping[str, str]) -> list[Problem]:
    """Run every proof for these lessons; the located problems found. `started(n, job)` is
    told as the n-th (from 0) begins; `environ` is the tutor's environment."""
    jobs = [job for lesson, path in lessons for job in jobs_for(lesson, path)]
    results = run_jobs(jobs, started, environ=environ)
    found: list[tuple[Path, Loc, str]] = []
    seen: set[tuple[Path, Loc, str]] = set()
    for job, result in zip(jobs, results, strict=True):
        text = problem_text(job, result)
        if text is None or (job.lesson_path, job.loc, job.what) in seen:
            continue
        seen.add((job.lesson_path, job.loc, job.what))  # one line per thing, not per seed
        found.append((job.lesson_path, job.loc, text))
    return locate(found)
