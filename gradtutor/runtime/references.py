"""A check's reference results, computed where learner code never runs: by the fork
server's reference process (`serve_references`), by a process the tutor starts for the check
(`worker --reference`, `reference_main`), or, for the author's own code in `gradtutor
validate` only, in the very process (`reference_here`). A learner's worker never computes them,
nor forks a process that does: whatever it wrote on the result pipe, learner code could read
back through /proc/self/fd before the tutor did.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from gradtutor.checking import protocol
from gradtutor.checking.checkers import worker_checker
from gradtutor.checking.protocol import CheckerRef
from gradtutor.runtime import wire
from gradtutor.runtime.prepare import hide_internal_warnings, import_torch_quietly
from gradtutor.runtime.sender import (
    ReferenceFailed,
    ResultSender,
    Send,
    report_failures,
)


def reference_message(checker_name: CheckerRef, seed: int) -> protocol.Expected:
    """The checker's cases and reference results for `seed`."""
    checker = worker_checker(checker_name)
    cases = checker.cases(seed)
    return protocol.expected(cases, [checker.expected(case) for case in cases])


Reference = Callable[[CheckerRef, int, Send], None]


def reference_here(checker_name: CheckerRef, seed: int, send: Send) -> None:
    """The reference computed in this very process: only for code that is not a learner's
    (the author's own, in `gradtutor validate`)."""
    send(reference_message(checker_name, seed))


def reference_by_tutor(checker_name: CheckerRef, seed: int, send: Send) -> None:
    """The tutor has the references already, from the fork server's reference process
    (`serve_references`): this process only says that learner code starts now, which starts
    the learner's clock. Nothing of the references ever reaches this process."""
    send(protocol.started())


def refuse_reference(checker_name: CheckerRef, seed: int, send: Send) -> None:
    """A learner's check whose request does not say the tutor has its references: refused,
    as a fault of the tutor's (never computed here, where learner code runs next)."""
    raise ReferenceFailed("a check's references must come from the tutor")


def warm_up() -> None:
    """One tiny backward pass, so that torch's first-use costs (autograd's engine, the
    operators' caches) are paid while the reference process works, not after it. Nothing of
    it is traced: no case has started."""
    import torch

    with contextlib.suppress(Exception):
        (torch.ones(2, dtype=torch.float64, requires_grad=True) * 2).sum().backward()  # type: ignore[no-untyped-call]


def reference_main() -> NoReturn:
    """`--reference`: not dumpable first (so that another process of the user, learner code
    beside it, can read neither its memory nor its descriptors through /proc), import torch,
    then read the checker and the seed from stdin (the tutor's pipe, or a Windows worker's),
    send the reference results on stdout (the result pipe), and end."""
    from gradtutor.runtime.signals import not_dumpable

    not_dumpable()
    send = ResultSender(sys.stdout.fileno())

    def body() -> None:
        import_torch_quietly()
        question = json.loads(sys.stdin.buffer.read())
        checker = protocol.checker_ref(question, "checker")
        send(reference_message(checker, int(question["seed"])))

    os._exit(report_failures(send, body))


def serve_references(channel: Any) -> None:
    """The fork server's reference process: for each `ReferenceRequest` line from the
    tutor, one line back, the checker's cases and reference results for that seed
    (`reference_message`), or a `WorkerError`. It ends when the tutor closes the socket.

    It is the fork server's child, never an ancestor of learner code, so the references it
    computes never exist where learner code runs; and learner code cannot reach it: it is not
    dumpable (no /proc/<pid>/mem, no ptrace for the same user), and where Landlock confines
    learner code (sandbox.py), a confined process can neither trace nor signal it, root
    included. The references are computed while the check's child is forked and starts, so a
    warm check does not wait for them (nor pay for a second fork)."""
    from gradtutor.runtime.signals import not_dumpable

    not_dumpable()
    hide_internal_warnings()
    warm_up()
    stream = channel.makefile("rwb")
    for line in stream:
        try:
            stream.write(protocol.line(_reference_reply(line)))
            stream.flush()
        except OSError:
            break


def _reference_reply(line: bytes) -> protocol.Expected | protocol.WorkerError:
    """The reference process's answer to one request line."""
    replies: list[protocol.Expected | protocol.WorkerError] = []

    def body() -> None:
        request = wire.decode_reference_request(line)
        replies.append(reference_message(request["checker"], request["seed"]))

    report_failures(replies.append, body)
    return replies[-1] if replies else protocol.worker_error(
        protocol.raised("MemoryError", "", ""))
