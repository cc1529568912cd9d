"""The main Docker engine reached over ssh, as a remote engine would be: a real `sshd` on a
loopback port, with a host key and an authorized client key made for the occasion in a
directory of its own, logging in the user running the tests (root in CI), whose `docker
system dial-stdio` speaks to the machine's engine through its socket.

docker-py reaches `ssh://` engines with the `ssh` program (moot asks for that: the person's
ssh config and agent apply), which reads only the real home's `~/.ssh/config`, whatever HOME
says. So the test's config is given with `-F` by an `ssh` put first on PATH
(`SshEngine.path`), a two-line script that runs the real one.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

READY_WITHIN = 30.0
"""Seconds sshd has to accept a login after it starts."""


@dataclass
class SshEngine:
    """A running sshd and the variables that reach the engine through it."""

    root: Path
    process: subprocess.Popen[bytes]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        """PATH with the `ssh` that uses the test's config first."""
        return f"{self.root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"

    @property
    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.root / "sshd.log").read_text(errors="replace")[-3000:]
        return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


def unavailable() -> str | None:
    """Why the engine cannot be reached over ssh here (naming it), or None."""
    if shutil.which("sshd") is None and not Path("/usr/sbin/sshd").exists():
        return "docker over ssh: sshd is not installed (apt-get install openssh-server)"
    for tool in ("ssh", "ssh-keygen", "docker"):
        if shutil.which(tool) is None:
            return f"docker over ssh: {tool} is not installed"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "moot-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return Path(f"{path}.pub").read_text().strip()


def start() -> SshEngine:
    """Start sshd and wait until the engine answers through it (bounded).

    Raises:
        RuntimeError: sshd did not start, or no login reached the engine; the message holds
            the end of its log and of ssh's.
    """
    root = Path(tempfile.mkdtemp(prefix="moot-ssh-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    host_public = _keygen(root / "host.key")
    client_public = _keygen(root / "client.key")
    (root / "authorized_keys").write_text(client_public + "\n")
    port = _free_port()
    user = getpass.getuser()
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host.key'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nPidFile {root / 'sshd.pid'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        # The engine's streams are long-lived and idle between commands.
        "ClientAliveInterval 0\nMaxStartups 100\nMaxSessions 100\n"
    )
    (root / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_public}\n")
    (root / "ssh_config").write_text(
        f"Host 127.0.0.1\n  IdentityFile {root / 'client.key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {root / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        "  BatchMode yes\n  LogLevel ERROR\n"
        # One login, many channels: docker-py opens a connection (an ssh) per request, and a
        # handshake each made the module take minutes (the README advises the same).
        f"  ControlMaster auto\n  ControlPath {root / 'cm-%C'}\n  ControlPersist 120\n"
    )
    (root / "bin").mkdir()
    wrapper = root / "bin" / "ssh"
    real = shutil.which("ssh") or "/usr/bin/ssh"
    wrapper.write_text(
        f'#!/bin/sh\necho "$*" >>{root / "ssh-calls"}\nexec {real} -F {root / "ssh_config"} "$@"\n'
    )
    wrapper.chmod(0o755)
    # sshd wants its privilege separation directory, which a package's service makes.
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    with (root / "sshd.log").open("wb") as log:
        process = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(root / "sshd_config")],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    engine = SshEngine(root, process)
    engine.env = {"DOCKER_HOST": f"ssh://{user}@127.0.0.1:{port}"}
    try:
        _wait_until_ready(engine, user, port)
    except BaseException:
        engine.stop()
        raise
    return engine


def _wait_until_ready(engine: SshEngine, user: str, port: int) -> None:
    deadline = time.monotonic() + READY_WITHIN
    pause = 0.05
    said = ""
    env = {**os.environ, "PATH": engine.path}
    while time.monotonic() < deadline:
        if engine.process.poll() is not None:
            raise RuntimeError(f"sshd exited:\n{engine.log}")
        answered = subprocess.run(
            ["ssh", "-p", str(port), "-l", user, "127.0.0.1", "docker", "version", "-f",
             "{{.Server.Version}}"],
            env=env,
            capture_output=True,
            check=False,
        )  # fmt: skip
        if answered.returncode == 0:
            return
        said = answered.stderr.decode(errors="replace")[-1000:]
        time.sleep(pause)  # polling another process until it is ready
        pause = min(pause * 2, 0.5)
    raise RuntimeError(
        f"no login through sshd reached the engine in {READY_WITHIN:.0f} s: {said}\n{engine.log}"
    )
