"""Attack (a): no function of its own. It looks for the checker's reference results in memory
(its own process, then its ancestors': the worker it was forked from, the tutor; then their
other children: the fork server's reference process), builds a well-formed result from them,
writes it into every pipe it holds and exits: a pass without the work. The reference must
never be where learner code can read it."""
import json
import os
import re
from pathlib import Path


def ancestors(pid, depth=4):
    found = []
    for _ in range(depth):
        found.append(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                data = stat.read()
        except OSError:
            break
        pid = int(data[data.rfind(b")") + 2:].split()[1])
        if pid <= 1:
            break
    return found


def scan(pid, budget=1 << 30):
    """The first reference message found in the writable memory of `pid`."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)  # noqa: SIM115 - closed below
    except OSError:
        return None
    pattern = re.compile(rb'\{"type":\s?"expected",.{0,200000}?\]\}\n', re.DOTALL)
    with mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if not fields[1].startswith("rw") or end - start > 256 << 20 or budget <= 0:
                continue
            if len(fields) > 5 and not fields[5].startswith("[heap"):
                continue  # a mapped file: not where a message lives
            budget -= end - start
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            for hit in pattern.finditer(chunk):
                try:
                    message = json.loads(hit.group(0))
                except ValueError:
                    continue
                cases = message.get("cases")
                if isinstance(cases, list) and cases and all("loss" in c for c in cases):
                    return message  # read-grad's cases name a loss
    return None


def forge(reference):
    observed = [{"returned": e["grad"], "returned_is_grad": True, "grad_after": e["grad"],
                 "events": [{"event": "accumulate", "param": "w", "grad": e["grad"]}],
                 "returns_backward": False} for e in reference["expected"]]
    return (json.dumps({"type": "observed", "observed": observed}) + "\n").encode()


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            return [int(child) for child in listing.read().split()]
    except OSError:
        return []


line_of_descent = ancestors(os.getpid())
reference = None
for pid in line_of_descent + [c for a in line_of_descent[1:] for c in children(a)
                              if c not in line_of_descent]:
    reference = scan(pid)
    if reference is not None:
        break
if reference is not None:
    line = forge(reference)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                os.write(fd, line)
        except OSError:
            pass
    os._exit(0)
