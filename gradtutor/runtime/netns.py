"""No network for learner code (Linux): the process that is about to run it moves to a network
namespace of its own, where only a loopback interface exists, and it is down: no TCP, UDP or
abstract Unix socket of the computer's is reachable. As root that is `unshare(CLONE_NEWNET)`;
as an ordinary user, a user namespace is made with it, mapping the user to itself (so files
it makes are still the user's). Landlock's network rules (sandbox.py, ABI 4 on) refuse TCP
as well, where the kernel has them. A named Unix socket (ssh-agent's, a session bus) is a
file, reached whatever the namespace: the seccomp filter of sandbox.py refuses making one.
"""

from __future__ import annotations

import contextlib
import os
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


def leave_network() -> bool:
    """Move this process (and whatever it starts from now on) to a network namespace of its
    own; whether it could. Before Landlock confines it: the user namespace's maps are written
    in /proc."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) == 0:  # root (CAP_SYS_ADMIN)
        return True
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:  # no user namespaces, or threads
        return False
    with contextlib.suppress(OSError):
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as file:
                file.write(text)
    return True


def network_walled() -> bool:
    """Whether a check here gets a network namespace of its own: tried in a child that ends
    at once (a few milliseconds), so that `grade` can say so before it starts."""
    if not sys.platform.startswith("linux"):
        return False
    from gradtutor.runtime.signals import fork_child

    try:
        pid = fork_child(lambda: 0 if leave_network() else 1)
    except OSError:
        return False
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
