"""No secrets, no network for learner code (issue 25.4): its environment is built from an
allowlist (no token, agent socket, proxy or cloud credential of the tutor's), it holds no
descriptor of the tutor's beyond its pipes, and it reaches neither a TCP port listening on
loopback nor a fake ssh-agent socket in a folder outside its check's (it may make no Unix
socket: the seccomp filter of sandbox.py), through a cold check and the warm fork server."""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from isolation_support import exercise

from gradtutor.runtime.cold import ColdEngine
from gradtutor.runtime.netns import leave_network
from gradtutor.runtime.run import run_check
from gradtutor.runtime.seccomp import filter_machine
from gradtutor.runtime.spawn import kept, worker_environment
from gradtutor.runtime.warm import WarmWorker

LINUX = os.uname().sysname == "Linux" if hasattr(os, "uname") else False
SECRETS = {"FAKE_TEACHER_TOKEN": "s3cret-token", "GITHUB_TOKEN": "ghp_fake",
           "AWS_SECRET_ACCESS_KEY": "aws-fake", "HTTPS_PROXY": "http://proxy.invalid:3128",
           "http_proxy": "http://proxy.invalid:3128", "NPM_TOKEN": "npm-fake"}

PROBE = '''import json, os, socket

said = {{}}
def attempt(name, family, address):
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(address)
            s.sendall(b"learner was here")
        said[name] = "connected"
    except OSError as exc:
        said[name] = type(exc).__name__

attempt("tcp", socket.AF_INET, ("127.0.0.1", {port}))
attempt("agent", socket.AF_UNIX, {agent!r})
said["environ"] = sorted(os.environ)
said["secrets"] = [v for v in os.environ.values() if "fake" in v or "s3cret" in v]
fds = []
for fd in os.listdir("/proc/self/fd"):
    try:
        fds.append(os.readlink(f"/proc/self/fd/{{fd}}"))
    except OSError:
        pass  # the listing's own
said["fds"] = sorted(fds)
print("PROBE " + json.dumps(said))


def read_grad(w, loss_fn):
    loss_fn(w).backward()
    return w.grad
'''


@pytest.fixture
def listeners(tmp_path: Path) -> Iterator[tuple[socket.socket, socket.socket, Path]]:
    """A TCP port listening on loopback and a fake agent socket, outside any check's folder."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    agent_path = tmp_path / "ssh-agent" / "agent.1"
    agent_path.parent.mkdir()
    agent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    agent.bind(str(agent_path))
    agent.listen(4)
    for s in (tcp, agent):
        s.setblocking(False)
    try:
        yield tcp, agent, agent_path
    finally:
        tcp.close()
        agent.close()


def reached(listener: socket.socket) -> bool:
    try:
        conn, _ = listener.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def probe(engine_kind: str, listeners: tuple[socket.socket, socket.socket, Path],
          tmp_path: Path) -> dict[str, object]:
    tcp, _, agent_path = listeners
    path = tmp_path / "read-grad.py"
    path.write_text(PROBE.format(port=tcp.getsockname()[1], agent=str(agent_path)))
    environ = {**os.environ, **SECRETS, "SSH_AUTH_SOCK": str(agent_path)}
    if engine_kind == "cold":
        verdict = run_check(exercise(), path, seed=5, engine=ColdEngine(environ=environ))
    else:
        warm = WarmWorker(environ=environ)
        try:
            verdict = warm.check(exercise(), path, seed=5)
        finally:
            warm.close()
    found = re.search(r"^PROBE (.*)$", verdict.output, re.MULTILINE)
    assert found, (verdict.output, verdict.checks)
    assert verdict.passed, verdict  # the walls cost a correct file nothing
    said: dict[str, object] = json.loads(found.group(1))
    return said


def test_the_worker_environment_is_an_allowlist() -> None:
    env = worker_environment({**SECRETS, "SSH_AUTH_SOCK": "/tmp/agent", "PATH": "/usr/bin",
                              "LANG": "C.UTF-8", "LC_ALL": "C", "HOME": "/home/t",
                              "GRADTUTOR_SANDBOX": "1", "PYTHONHOME": "/py"})
    assert not set(SECRETS) & set(env) and "SSH_AUTH_SOCK" not in env
    assert {"PATH", "LANG", "LC_ALL", "HOME", "GRADTUTOR_SANDBOX", "PYTHONHOME"} <= set(env)
    assert not kept("PYTHONWARNINGS") and kept("OMP_NUM_THREADS")


@pytest.mark.slow
@pytest.mark.skipif(not LINUX, reason="the probe reads /proc/self/fd (Linux)")
@pytest.mark.parametrize("engine_kind", ["cold", "warm"])
def test_learner_code_finds_no_secret_and_reaches_no_listener(
        engine_kind: str, listeners: tuple[socket.socket, socket.socket, Path],
        tmp_path: Path) -> None:
    tcp, agent, _ = listeners
    said = probe(engine_kind, listeners, tmp_path)
    environ = said["environ"]
    assert isinstance(environ, list)
    assert not set(SECRETS) & set(environ) and "SSH_AUTH_SOCK" not in environ, environ
    assert said["secrets"] == []
    fds = said["fds"]
    assert isinstance(fds, list)
    assert not [fd for fd in fds if str(fd).startswith("socket:")], fds  # only its pipes
    assert said["tcp"] != "connected" and not reached(tcp), said
    if filter_machine() is None:  # pragma: no cover - another machine
        pytest.skip("the seccomp filter refusing Unix sockets knows x86_64 and aarch64 only; "
                    f"the probe got {said['agent']}")
    assert said["agent"] == "PermissionError" and not reached(agent), said


@pytest.mark.skipif(not LINUX, reason="network namespaces are Linux's")
def test_a_network_namespace_can_be_made_here_or_the_doc_says_where_not() -> None:
    """The mechanism the TCP test relies on where Landlock has no network rules (ABI < 4)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if leave_network() and socket.if_nameindex() == [(1, "lo")] else 1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        pytest.skip("no network namespace can be made here (docs/isolation.md says so)")
