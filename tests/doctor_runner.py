"""Runs many scripts under the doctor's probe at the cost of one torch import: this process
imports torch and makes one optimizer step (which loads torch._dynamo), then forks a child per
script, two at a time. Each child is a fresh process for its script, as `gradtutor doctor`
starts one: it runs `probe.main` (which finds torch imported and hooks it at once), its output
thrown away. The events each child sends are printed as one JSON line per script:
{"script": PATH, "events": [...]}.

    python tests/doctor_runner.py STEPS SCRIPT...

Only the corpus test uses it, to keep 28 scripts within seconds; the command-line tests start
`gradtutor doctor` itself, where torch is imported by the script first.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import torch

from gradtutor.doctor import probe

PARALLEL = 2


def warm_up() -> None:
    weight = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.1)
    weight.sum().backward()  # type: ignore[no-untyped-call]
    optimizer.step()


def start(script: str, steps: str) -> tuple[int, int]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the script's own process
        os.close(read_end)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.chdir(os.path.dirname(os.path.abspath(script)))
        code = 1
        try:
            code = probe.main([str(write_end), steps, script])
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def collect(read_end: int) -> list[Any]:
    with os.fdopen(read_end, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def main(argv: list[str]) -> None:
    steps, *scripts = argv
    warm_up()
    waiting = [os.path.abspath(script) for script in scripts]
    running: list[tuple[str, int, int]] = []
    while waiting or running:
        while waiting and len(running) < PARALLEL:
            script = waiting.pop(0)
            running.append((script, *start(script, steps)))
        script, pid, read_end = running.pop(0)
        events = collect(read_end)  # the other child runs meanwhile
        os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"script": script, "events": events}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
