"""The walls around learner code (Linux Landlock): it may write only beneath its check's own
folder, and may signal or reach (abstract Unix sockets) no process outside its check.

`confine` is called in the worker just before learner code runs, once torch and the checkers
are imported. It needs no privilege: `PR_SET_NO_NEW_PRIVS`, then a Landlock ruleset that
handles every write-side file right the kernel knows and grants them beneath the check's
folder (and on /dev/null) only; reading stays allowed everywhere. From Landlock ABI 6 on, the
ruleset also scopes signals and abstract Unix sockets to the check's own processes, so
`os.kill(os.getppid(), SIGKILL)` fails with EPERM. Where the kernel has no Landlock, nothing is
confined and the tutor says so once (`unavailable_notice`). Pure ctypes, no dependency.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, Mapping

from gradtutor.i18n import Msg, msg
from gradtutor.runtime.seccomp import refuse_calls

# The Landlock system calls have the same numbers on every architecture but alpha (x86_64,
# aarch64, arm, riscv, ppc, s390: include/uapi/asm-generic/unistd.h, arch/*/syscall.tbl).
SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights (include/uapi/linux/landlock.h), by the ABI that added them: the read
# side (walled in only for `grade`, see READ_ENV), then the write side.
EXECUTE = 1 << 0
READ_FILE = 1 << 2
READ_DIR = 1 << 3
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: link or rename across folders
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5: ioctl on a device (a terminal's TIOCSTI, say)
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_WRITE_V1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
             | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)
_FILE_RIGHTS = WRITE_FILE | TRUNCATE | IOCTL_DEV  # what a rule on a file (not a folder) may hold

# Extra folders learner code may write to, separated by os.pathsep: set by whoever runs the
# tutor (the tests use it for the notes hostile files leave), never reachable by learner code.
WRITABLE_ENV = "GRADTUTOR_SANDBOX_WRITABLE"


# GRADTUTOR_SANDBOX=0 leaves learner code unconfined: a way out, should the walls stop
# something a lesson needs, and how the tests see the unconfined path on a kernel with Landlock.
SWITCH_ENV = "GRADTUTOR_SANDBOX"

# GRADTUTOR_SANDBOX_READ=walled walls reading in too: learner code may then read only what
# Python, torch, NumPy and gradtutor are made of (the standard library, the folders holding
# those packages, gradtutor's own package folder), the system's folders and its own check's
# folder, never another folder of the user. `gradtutor grade` sets it, so that no student's
# code can read another's submission; a learner's own checks leave reading open (their files
# are theirs). Never a whole prefix (a venv can hold the class), nor a source checkout (only
# gradtutor's package inside it), nor /opt or /dev (TMPDIR=/dev/shm holds the run's copies).
READ_ENV = "GRADTUTOR_SANDBOX_READ"
_READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
_SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys",
           "/nix", "/run/current-system")
_DEVICES = ("/dev/urandom", "/dev/random", "/dev/zero", "/dev/full")  # files: no READ_DIR
# The packages whose folder (site-packages, or wherever they are installed) learner code may
# read: torch imports lazily from its neighbours (sympy, typing_extensions, filelock, ...).
_PACKAGES = ("torch", "numpy")


def readable_roots() -> list[str]:
    """Where walled-in learner code may still read: what this interpreter's standard library,
    torch, NumPy and gradtutor are made of, and the system's folders. Not a prefix, a source
    checkout, the current folder, the home folder or the temporary folder, where submissions
    and the run's copies live."""
    import importlib.util
    import sysconfig

    import gradtutor

    # the base interpreter's library, not a venv's lib/ (whose site-packages is added below)
    paths = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
                                      "installed_base": sys.base_prefix,
                                      "installed_platbase": sys.base_exec_prefix})
    roots = {path for name in ("stdlib", "platstdlib") if (path := paths.get(name))}
    roots.add(os.path.dirname(sys.executable))  # the venv's bin: the interpreter, scripts
    for name in _PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # a module without a spec
            continue
        if spec is not None and spec.origin:  # the folder holding the package
            roots.add(os.path.dirname(os.path.dirname(spec.origin)))
    roots.add(os.path.dirname(os.path.abspath(gradtutor.__file__)))
    return sorted({os.path.realpath(root) for root in roots} | set(_SYSTEM))


def beneath(path: str, roots: Iterable[str]) -> str | None:
    """The first of `roots` that `path` lies beneath (or is), if any."""
    real = os.path.realpath(path)
    return next((root for root in roots
                 if real == root or real.startswith(root.rstrip(os.sep) + os.sep)), None)


def sandbox_enabled(environ: Mapping[str, str]) -> bool:
    """Whether learner code is to be confined: yes, unless GRADTUTOR_SANDBOX is 0 (false, no,
    off)."""
    return environ.get(SWITCH_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def write_rights(abi: int) -> int:
    """Every write-side filesystem right Landlock ABI `abi` knows."""
    rights = _WRITE_V1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def scopes(abi: int) -> int:
    """The scopes ABI `abi` knows: signals and abstract Unix sockets stay inside the check."""
    return SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0


ACCESS_NET_BIND_TCP = 1 << 0
ACCESS_NET_CONNECT_TCP = 1 << 1


def net_rights(abi: int) -> int:
    """The network rights ABI `abi` knows (4 on), all handled and none granted: no TCP port
    can be bound or connected to."""
    return ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP if abi >= 4 else 0


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 where there is none (not Linux, an old
    kernel, Landlock left out of the boot's LSM list, or a seccomp filter that refuses it)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def restrict(writable: Iterable[str], abi: int | None = None,
             readable: Iterable[str] | None = None) -> int:
    """Confine this process (and whatever it starts from now on) for good: writes only beneath
    the folders `writable` and on /dev/null; signals and abstract sockets only within; no TCP
    (ABI 4 on). The ABI
    used; 0 if the kernel has no Landlock (nothing was done). OSError if it has one but
    refused; the process may be half-way (no_new_privs set), never less confined than before.
    With `readable`, reading and executing are walled in too: allowed beneath those folders
    and the writable ones only."""
    abi = landlock_abi() if abi is None else abi
    if abi <= 0:
        return 0
    libc = _libc()
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    handled = write_rights(abi)
    walls_reads = readable is not None
    attr = _RulesetAttr(handled | (_READ_RIGHTS if walls_reads else 0), net_rights(abi),
                        scopes(abi))
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8  # the struct as this ABI knows it
    ruleset = _check(libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                                  ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        read = _READ_RIGHTS if walls_reads else 0
        for path, rights in [*((p, handled | read) for p in writable),
                             (os.devnull, (handled & _FILE_RIGHTS) | (read & READ_FILE)),
                             *((p, read) for p in (readable or ())),
                             *((p, read & READ_FILE) for p in (_DEVICES if walls_reads else ()))]:
            _allow(libc, ruleset, path, rights)
        _check(libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    """Grant `rights` beneath `path`; a path that does not exist is skipped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        rule = _PathBeneathAttr(rights, fd)
        _check(libc.syscall(SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                            ctypes.byref(rule), ctypes.c_uint32(0)), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def confine(folder: str, work: str) -> int:
    """In the worker, just before learner code runs: temporary files go to `work` (the
    learner's working folder, inside the check's `folder`, so they are removed with it), and
    the process is confined to write only beneath `folder`. The ABI used, 0 when nothing could
    be confined (the check goes on unconfined; the tutor has said so once)."""
    import tempfile

    env = os.environ
    for name in ("TMPDIR", "TEMP", "TMP"):
        env[name] = work
    tempfile.tempdir = work
    if not sandbox_enabled(env):
        return 0
    extra = [p for p in env.get(WRITABLE_ENV, "").split(os.pathsep) if p]
    walled = env.get(READ_ENV, "").strip().lower() == "walled"
    refuse_calls()
    try:
        return restrict([folder, *extra], readable=readable_roots() if walled else None)
    except OSError:
        return 0


def unavailable_notice(abi: int, environ: Mapping[str, str]) -> Msg | None:
    """The one line the tutor shows when learner code will not be confined (None when it
    will), given the kernel's Landlock ABI `abi`: said once, as a fact, not an alarm."""
    if not sys.platform.startswith("linux"):
        return None  # what holds on macOS and Windows is in docs/isolation.md
    if not sandbox_enabled(environ):
        return msg("Note: GRADTUTOR_SANDBOX=0, so checked code can write wherever you can; the "
                   "tutor still judges it in a separate process.")
    if abi <= 0:
        return msg("Note: this Linux kernel has no Landlock, so checked code can write wherever "
                   "you can; the tutor still judges it in a separate process.")
    if abi < 6:
        return msg("Note: this Linux kernel's Landlock is version {abi}, so checked code is kept "
                   "to its own folder for writing but could still signal other processes.",
                   abi=abi)
    return None

