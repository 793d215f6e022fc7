"""What the tutor owns for one run: a fresh folder, the output pipe and the private result
pipe, and their drains.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from gradtutor.checking import protocol
from gradtutor.checking.check import RESULTS_CAP
from gradtutor.runtime.channel import Drain
from gradtutor.runtime.lifetime import claim, owned_prefix, release, remove_tree

OUTPUT_CAP = 64 * 1024  # learner output kept, stdout and stderr together


class Slot:
    """What the tutor owns for one run: a fresh folder (the learner's working directory is
    `work` inside it, the request is written beside it), the output pipe and the private
    result pipe, and the drains that read them. `close` leaves nothing of it behind."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix=owned_prefix()))  # names the tutor owning it
        self._held = claim(self.base)  # and it is this tutor's while the tutor lives
        self.work = self.base / "work"
        self.request_path = self.base / "request.json"
        self._unowned: list[int] = []  # fds no drain has taken over yet
        try:
            self.work.mkdir()
            self.output_r, self.output_w = self._pipe()
            self.results_r, self.results_w = self._pipe()
        except BaseException:
            self.close()
            raise
        self.output = Drain(self.output_r, OUTPUT_CAP)
        self.results = Drain(self.results_r, RESULTS_CAP)

    def _pipe(self) -> tuple[int, int]:
        pair = os.pipe()
        self._unowned.extend(pair)
        return pair

    def write_request(self, request: protocol.Request) -> None:
        """The request file the worker reads, which learner code can read too: sealed (no
        declared exercise's solution in it)."""
        self.request_path.write_text(json.dumps(protocol.sealed(request)), encoding="utf-8")

    @property
    def learner_started(self) -> bool:
        """The worker's first message came: learner code was about to start."""
        return self.results.first_line.is_set()

    def handed_over(self) -> None:
        """The worker has its copies of the write ends: close ours (EOF needs that) and start
        draining."""
        for fd in (self.output_w, self.results_w):
            os.close(fd)
            self._unowned.remove(fd)
        for drain in (self.output, self.results):
            drain.start()
            self._unowned.remove(drain.fd)

    def close(self) -> None:
        for fd in self._unowned:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._unowned.clear()
        remove_tree(self.base)
        release(self._held)
        self._held = None
