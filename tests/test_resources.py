"""A check's processes, threads and IPC are its own (resources.py): a student who takes every
PID or leaves a 1 GiB System V segment costs only their own check, and nothing of it outlives
the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grading_support import make_class, run_cli

from gradtutor.runtime import resources

KEY = 0x25250525

# Takes every thread and process it can, keeps them, then answers right.
HOG = '''
import os, threading, time
threads = forks = 0
try:
    while True:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        threads += 1
except RuntimeError:
    pass
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        forks += 1
except OSError:
    pass
print("HOG", threads + forks, flush=True)
'''

SHM = f'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("SHM", libc.shmget({KEY}, 1 << 30, 0o1600), flush=True)
'''


def keys() -> set[int]:
    return {row["key"] for row in resources.segments(Path("/proc/sysvipc/shm").read_text())}


@pytest.mark.skipif(not Path("/proc/sysvipc/shm").exists(), reason="Linux System V IPC")
def test_a_pid_hog_and_a_shm_leak_cost_only_their_own_checks(tmp_path: Path) -> None:
    students = make_class(tmp_path / "class")
    solution = (students["alice"] / "read-grad.py").read_text()
    for name, attack in (("hog", HOG), ("shm", SHM)):
        (tmp_path / "class" / name).mkdir()
        (tmp_path / "class" / name / "read-grad.py").write_text(attack + solution)
    code, out, err = run_cli("grade", str(tmp_path / "class"), "--exercise=read-grad",
                             "--jobs", "2", "--seed", "3", "--timeout", "20", "--json",
                             home=tmp_path / "home")
    assert code == 0, err
    report = {s["student"]: s["exercises"][0] for s in json.loads(out)["students"]}
    assert report["alice"]["status"] == "pass" and report["bob"]["status"] == "fail"
    assert report["dave"]["status"] == "pass"  # every innocent graded
    if resources.pids_parent() is not None:  # a cgroup capped the hog, which then answered
        assert report["hog"]["status"] == "pass"
        held = int(report["hog"]["output"].split("HOG ")[1].split()[0])
        assert 0 < held < resources.MAX_TASKS
    assert "SHM" in report["shm"]["output"] and KEY not in keys()  # gone with its check


def test_the_pids_cgroup_is_found_in_v2_or_v1(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "cgroup.subtree_control").write_text("cpu pids\n")
    assert resources.pids_parents("0::/a/b\n", tmp_path) == [tmp_path / "a" / "b"]
    assert resources.pids_parents("3:pids:/x\n0::/\n", tmp_path) == [tmp_path / "pids" / "x"]


def test_only_ended_unattached_segments_of_the_user_made_since_the_start_are_stale() -> None:
    table = ("key shmid uid nattch cpid ctime\n"
             "1 10 0 0 999999999 100\n"   # ours, left: stale
             "2 11 0 1 999999999 100\n"   # still attached
             "3 12 5 0 999999999 100\n"   # another user's
             "4 13 0 0 999999999 10\n"    # made before the check
             f"5 14 0 0 {1} 100\n")      # its maker (init) lives
    assert resources.stale_segments(resources.segments(table), 0, 50) == [10]


def test_the_sweep_removes_empty_check_cgroups_only(tmp_path: Path) -> None:
    for name in ("gradtutor-check-1-a", "gradtutor-check-2-b", "other"):
        (tmp_path / name).mkdir()
    (tmp_path / "gradtutor-check-2-b" / "busy").write_text("")  # as a cgroup with a process
    resources.sweep_cgroups(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gradtutor-check-2-b", "other"]


def test_a_check_the_grader_could_not_make_is_that_checks_error_unless_none_was_judged(
        ) -> None:
    from gradtutor.checking.verdict import Check, Verdict
    from gradtutor.grading import GradingFailed, could_not_check_verdict, grader_problem
    from gradtutor.runtime.pool import _grader_broken
    from gradtutor.submissions import Submission

    students = [Submission("alice", Path("alice")), Submission("hog", Path("hog"))]
    judged = Verdict("read-grad", "pass", (Check("returns-grad", "pass", "ok"),), 1, 0)
    broken = could_not_check_verdict("read-grad", 1, "RuntimeError: can't start new thread")
    assert broken.status == "error" and grader_problem(broken) is not None
    assert _grader_broken({(0, 0): judged, (1, 0): broken}, students) == []
    [failed] = _grader_broken({(0, 0): broken, (1, 0): broken}, students)
    assert isinstance(failed, GradingFailed) and "alice's read-grad" in failed.message


# Holds memory RLIMIT_AS never sees: memfds filled and never mapped (the review's n04: 40 of
# 64 MiB held while one 2.5 GiB mmap was refused), 48 of them (3 GiB) if it can.
MEMFDS = '''
import os
fds = []
try:
    for i in range(48):
        fd = os.memfd_create(f"m{i}")
        fds.append(fd)
        os.posix_fallocate(fd, 0, 64 << 20)
except OSError:
    pass
print("MEMFD", 64 * (len(fds) - 1), flush=True)  # the MiB it holds for sure
'''


def shmem_mib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no Shmem line")


@pytest.mark.skipif(not Path("/proc/meminfo").exists() or not hasattr(__import__("os"),
                                                                         "memfd_create"),
                    reason="Linux memfds")
def test_memory_no_address_space_limit_counts_is_capped_with_the_check(tmp_path: Path) -> None:
    if resources.controller_parent("memory") is None:
        pytest.skip("no memory cgroup can be made here: RLIMIT_AS alone caps a check")
    make_class(tmp_path / "class")
    solution = (tmp_path / "class" / "alice" / "read-grad.py").read_text()
    (tmp_path / "class" / "memfd").mkdir()
    (tmp_path / "class" / "memfd" / "read-grad.py").write_text(MEMFDS + solution)
    before = shmem_mib()
    code, out, err = run_cli("grade", str(tmp_path / "class"), "--exercise=read-grad",
                             "--jobs", "2", "--seed", "3", "--timeout", "30", "--json",
                             home=tmp_path / "home")
    assert code == 0, err
    report = {s["student"]: s["exercises"][0] for s in json.loads(out)["students"]}
    assert report["alice"]["status"] == "pass" and report["dave"]["status"] == "pass"
    memfd = report["memfd"]
    held = [int(line.split()[1]) for line in memfd["output"].splitlines()
            if line.startswith("MEMFD ")]
    # capped: it got no further than the cap (killed at it, or refused past it)
    assert held == [] or held[0] <= resources.MEMORY_CAP >> 20, memfd
    if memfd["status"] != "pass":
        assert "memory" in json.dumps(memfd["checks"]).lower(), memfd
    assert shmem_mib() < before + 256  # nothing of it outlives the check


# Fills its folder with files each under the per-file cap (the review's n05: 1.1-1.4 GiB in
# 6 s), then waits for the tutor to notice.
DISK_FILL = '''
import os, time
for i in range(20):
    with open(f"fill{i}.bin", "wb") as f:
        f.write(os.urandom(1 << 20) * 32)
time.sleep(5)
'''


def test_a_check_that_fills_its_folder_is_stopped_at_the_disk_cap(tmp_path: Path) -> None:
    from gradtutor.runtime.supervise import DISK_CAP

    make_class(tmp_path / "class")
    solution = (tmp_path / "class" / "alice" / "read-grad.py").read_text()
    (tmp_path / "fill.py").write_text(DISK_FILL + solution)
    code, out, err = run_cli("check", "read-grad", str(tmp_path / "fill.py"), "--json",
                             home=tmp_path / "home")
    report = json.loads(out)
    assert report["passed"] is False, err
    [disk] = [c for c in report["checks"] if c["name"] == "disk"]
    assert f"more than {DISK_CAP >> 20} MiB" in disk["message"]


def test_the_disk_watch_counts_bytes_and_files(tmp_path: Path) -> None:
    from gradtutor.runtime.supervise import over_disk_cap

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "big.bin").write_bytes(b"x" * (3 << 20))
    for i in range(5):
        (tmp_path / f"f{i}").write_text("x")
    assert not over_disk_cap(str(tmp_path), cap=8 << 20, files=100)
    assert over_disk_cap(str(tmp_path), cap=2 << 20, files=100)  # the bytes, in a subfolder
    assert over_disk_cap(str(tmp_path), cap=8 << 20, files=5)  # 7 entries
