"""The system calls learner code may not make at all (Linux, a seccomp filter): what Landlock
has no right for, and what a process that was root (its capabilities dropped, privilege.py)
or a kernel without Landlock or namespaces would otherwise still let through.

Refused with EPERM, as root too, in every thread of the worker and whatever it starts:
- a file's mode, owner, times and extended attributes (Landlock has no right for chmod,
  chown, utime or setxattr, so a walled-in process could make a file outside its folder
  unreadable, or world-readable); `FS_IOC_SETFLAGS`/`FS_IOC_FSSETXATTR` ioctls and
  `file_setattr` (`chattr +i`, `nodump` on any file it can read); io_uring, which has its own
  xattr operations;
- the machine's own: reboot, kexec, loading or removing kernel modules, sethostname and
  setdomainname, the kernel log (syslog), bpf, perf_event_open, fanotify (one mark on a file
  system blocks every open on it), setns (joining another process's namespaces), mknod (a
  device node opened past the read walls; a FIFO has no use in a check), inotify_add_watch
  (a watch on any folder it can read tells the names and times of the files the teacher
  touches there);
- every socket family but IPv4, IPv6 and netlink: AF_UNIX (Landlock before RESOLVE_UNIX cannot
  keep learner code from a named socket it can reach by path: the teacher's ssh-agent behind
  SSH_AUTH_SOCK, a Docker daemon), AF_VSOCK (the virtual machine's host), AF_PACKET and the
  rest. socketpair(2) stays allowed: a connected pair reaches no one else;
- every system call of another ABI (x32, the 32-bit `int 0x80`), which the numbers here would
  not match.
No path can be tested in a filter, and nothing learner code does in its own folder needs these
(every lesson's solution and snippet runs under it; `open`, `mkdir`, `tempfile`, `torch.save`
pass a mode when they create, which is not a chmod). Pure ctypes, no dependency: the
`seccomp`/`pyseccomp` bindings need libseccomp's shared library, which a pip install does not
bring, for a program of some 60 instructions.
"""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1  # every thread of the process, not only the caller
_SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# The calls refused outright, by name (arch/x86/entry/syscalls/syscall_64.tbl; the generic
# table, include/uapi/asm-generic/unistd.h, for aarch64, which has no chmod, chown, lchown,
# utime, utimes, futimesat nor mknod). Calls newer than a kernel are ENOSYS there anyway.
REFUSED = {
    "x86_64": {
        # a file's metadata
        "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "utime": 132,
        "utimes": 235, "futimesat": 261, "fchownat": 260, "fchmodat": 268, "utimensat": 280,
        "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197,
        "lremovexattr": 198, "fremovexattr": 199, "io_uring_setup": 425, "fchmodat2": 452,
        "setxattrat": 463, "removexattrat": 466, "file_setattr": 469,
        # the machine's own
        "reboot": 169, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
        "finit_module": 313, "delete_module": 176, "sethostname": 170, "setdomainname": 171,
        "syslog": 103, "bpf": 321, "perf_event_open": 298, "fanotify_init": 300, "setns": 308,
        "mknod": 133, "mknodat": 259, "inotify_add_watch": 254,
    },
    "aarch64": {
        "fchmod": 52, "fchown": 55, "fchownat": 54, "fchmodat": 53, "utimensat": 88,
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
        "fremovexattr": 16, "io_uring_setup": 425, "fchmodat2": 452, "setxattrat": 463,
        "removexattrat": 466, "file_setattr": 469,
        "reboot": 142, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
        "finit_module": 273, "delete_module": 106, "sethostname": 161, "setdomainname": 162,
        "syslog": 116, "bpf": 280, "perf_event_open": 241, "fanotify_init": 262, "setns": 268,
        "mknodat": 33, "inotify_add_watch": 27,
    },
}
SOCKET_CALL = {"x86_64": 41, "aarch64": 198}
IOCTL_CALL = {"x86_64": 16, "aarch64": 29}
AF_INET, AF_INET6, AF_NETLINK = 2, 10, 16
SOCKET_FAMILIES = (AF_INET, AF_INET6, AF_NETLINK)  # the families learner code may open
# FS_IOC_SETFLAGS (and its 32-bit twin) and FS_IOC_FSSETXATTR: the ioctls of chattr
SETATTR_IOCTLS = (0x40086602, 0x40046602, 0x401C5820)

_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_ARG0, _ARG1 = 16, 24  # offsetof(struct seccomp_data, args[0]), args[1]: their low words

Op = tuple[int, int, int, int]  # (code, jt, jf, k), as the kernel's struct sock_filter


def program(machine: str) -> list[Op]:
    """The BPF program: EPERM for REFUSED[machine], for a socket of a family not in
    SOCKET_FAMILIES, for an ioctl in SETATTR_IOCTLS and for another ABI's calls; else ALLOW.
    Jumps are written to labels and resolved at the end (a jump counts the instructions it
    skips)."""
    ops: list[tuple[int, str | int, str | int, int] | str] = []  # an op, or a label

    def op(code: int, k: int, yes: str | int = 0, no: str | int = 0) -> None:
        ops.append((code, yes, no, k))

    op(_LD_W_ABS, 4)  # seccomp_data.arch
    op(_JEQ_K, _AUDIT_ARCH[machine], 0, "deny")
    op(_LD_W_ABS, 0)  # seccomp_data.nr
    if machine == "x86_64":
        op(_JGE_K, _X32_BIT, "deny")
    for nr in sorted(REFUSED[machine].values()):
        op(_JEQ_K, nr, "deny")
    op(_JEQ_K, SOCKET_CALL[machine], "socket")
    op(_JEQ_K, IOCTL_CALL[machine], "ioctl")
    op(_RET_K, _RET_ALLOW)
    ops.append("socket")
    op(_LD_W_ABS, _ARG0)  # the family (the low word: both machines are little-endian)
    for family in SOCKET_FAMILIES:
        op(_JEQ_K, family, "allow")
    op(_RET_K, _RET_EPERM)
    ops.append("ioctl")
    op(_LD_W_ABS, _ARG1)  # the request
    for request in SETATTR_IOCTLS:
        op(_JEQ_K, request, "deny")
    ops.append("allow")
    op(_RET_K, _RET_ALLOW)
    ops.append("deny")
    op(_RET_K, _RET_EPERM)

    at: dict[str, int] = {}
    count = 0
    for item in ops:
        if isinstance(item, str):
            at[item] = count
        else:
            count += 1
    resolved: list[Op] = []
    for item in ops:
        if isinstance(item, str):
            continue
        code, yes, no, k = item
        here = len(resolved) + 1  # a jump's offset counts from the next instruction
        jt = at[yes] - here if isinstance(yes, str) else yes
        jf = at[no] - here if isinstance(no, str) else no
        resolved.append((code, jt, jf, k))
    assert all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in resolved)
    return resolved


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def filter_machine() -> str | None:
    """This machine's name as the seccomp filter knows it, or None where it has no filter
    (not Linux, or a machine whose system calls it does not know)."""
    machine = os.uname().machine.lower().replace("arm64", "aarch64")  # not `platform`: 10 ms
    return machine if sys.platform.startswith("linux") and machine in REFUSED else None


def refuse_calls() -> bool:
    """From now on no thread of this process, nor anything it starts, may make the calls this
    module's docstring lists (True), where the machine's system calls are known here (x86_64,
    aarch64) and the kernel has seccomp."""
    machine = filter_machine()
    if machine is None:
        return False
    ops = program(machine)
    filters = (_SockFilter * len(ops))(*(_SockFilter(*op) for op in ops))
    prog = _SockFprog(len(ops), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    done: int = libc.syscall(_SECCOMP_SYSCALL[machine], ctypes.c_long(SECCOMP_SET_MODE_FILTER),
                             ctypes.c_long(SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))
    return done == 0
