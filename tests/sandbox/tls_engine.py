"""A second Docker engine for the tests, reached over TCP with TLS on a loopback port, as a
remote engine would be: its own data root, exec root and pid file, a bridge of its own, no
iptables rules and no forwarding, certificates made for the occasion (a CA, the server's for
127.0.0.1, the client's), and the sandbox image loaded from the main engine
(`docker save | docker load`).

Not `--bridge=none`: a dockerd told so deletes the interface `docker0` as it starts
(`removeDefaultBridgeInterface`), the main engine's, which breaks its bridge networks until
it restarts. So the engine gets a bridge made for it (`moottls<hex>`), deleted as it stops.

Its disk is this machine's, but moot cannot know that (`docker_image.engine_is_remote`): the
Docker backend syncs the workspace into a volume as with any engine over TCP.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

READY_WITHIN = 60.0
"""Seconds the engine has to answer after it starts."""


@dataclass
class TlsEngine:
    """A running second engine and the variables that name it."""

    root: Path
    process: subprocess.Popen[bytes]
    bridge: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.root / "dockerd.log").read_text(errors="replace")[-3000:]
        return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        subprocess.run(["ip", "link", "delete", self.bridge], capture_output=True, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def unavailable() -> str | None:
    """Why a second engine cannot be started here (naming it), or None."""
    for tool in ("dockerd", "docker", "openssl", "ip"):
        if shutil.which(tool) is None:
            return f"docker over TLS: {tool} is not installed"
    if os.geteuid() != 0:
        return "docker over TLS: starting a second dockerd needs root"
    return None


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(directory: Path) -> None:
    """`ca.pem`, `server.pem`/`server-key.pem` (127.0.0.1) and the client's `cert.pem`/`key.pem`
    (the names docker-py and the CLI look for in DOCKER_CERT_PATH)."""
    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl("req", "-x509", *curve, "-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "1",
             "-subj", "/CN=moot-test-ca", cwd=directory)  # fmt: skip
    for name, subject, usage in (
        ("server", "/CN=localhost", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
        ("client", "/CN=moot-test-client", "extendedKeyUsage=clientAuth\n"),
    ):
        (directory / f"{name}.ext").write_text(usage)
        _openssl("req", *curve, "-keyout", f"{name}-key.pem", "-out", f"{name}.csr",
                 "-subj", subject, cwd=directory)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", "1",
                 "-extfile", f"{name}.ext", cwd=directory)  # fmt: skip
    os.replace(directory / "client.pem", directory / "cert.pem")
    os.replace(directory / "client-key.pem", directory / "key.pem")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(image: str) -> TlsEngine:
    """Start the engine, wait until it answers (bounded), load `image` into it.

    Raises:
        RuntimeError: It did not start or answer, or the image could not be loaded; the
            message holds the end of its log.
    """
    # Short: dockerd's exec root holds Unix sockets, whose paths are bounded.
    root = Path(tempfile.mkdtemp(prefix="moot-tls-", dir="/var/tmp"))
    certs = root / "certs"
    certs.mkdir()
    make_certificates(certs)
    (root / "daemon.json").write_text("{}\n")
    port = _free_port()
    bridge = f"moottls{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], check=True, capture_output=True)
    argv = [
        "dockerd", "--config-file", str(root / "daemon.json"),
        "--data-root", str(root / "data"), "--exec-root", str(root / "x"),
        "--pidfile", str(root / "dockerd.pid"), "-H", f"tcp://127.0.0.1:{port}",
        "--tlsverify", "--tlscacert", str(certs / "ca.pem"),
        "--tlscert", str(certs / "server.pem"), "--tlskey", str(certs / "server-key.pem"),
        f"--bridge={bridge}", "--iptables=false", "--ip6tables=false", "--ip-forward=false",
        "--ip-masq=false",
    ]  # fmt: skip
    try:
        with (root / "dockerd.log").open("wb") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
    except OSError:
        subprocess.run(["ip", "link", "delete", bridge], capture_output=True, check=False)
        raise
    engine = TlsEngine(root, process, bridge)
    engine.env = {
        "DOCKER_HOST": f"tcp://127.0.0.1:{port}",
        "DOCKER_TLS_VERIFY": "1",
        "DOCKER_CERT_PATH": str(certs),
    }
    try:
        _wait_until_ready(engine)
        _load(image, engine)
    except BaseException:
        engine.stop()
        raise
    return engine


def _cli_env(engine: TlsEngine | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
    return {**env, **(engine.env if engine is not None else {})}


def _wait_until_ready(engine: TlsEngine) -> None:
    deadline = time.monotonic() + READY_WITHIN
    pause = 0.05
    while time.monotonic() < deadline:
        if engine.process.poll() is not None:
            raise RuntimeError(f"dockerd over TLS exited:\n{engine.log}")
        answered = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            env=_cli_env(engine),
            capture_output=True,
            check=False,
        )
        if answered.returncode == 0:
            return
        time.sleep(pause)  # polling another process until it is ready
        pause = min(pause * 2, 0.5)
    raise RuntimeError(f"dockerd over TLS did not answer in {READY_WITHIN:.0f} s:\n{engine.log}")


def _load(image: str, engine: TlsEngine) -> None:
    save = subprocess.Popen(["docker", "save", image], env=_cli_env(None), stdout=subprocess.PIPE)
    try:
        loaded = subprocess.run(
            ["docker", "load", "-q"],
            env=_cli_env(engine),
            stdin=save.stdout,
            capture_output=True,
            check=False,
        )
    finally:
        if save.stdout is not None:
            save.stdout.close()
        saved = save.wait()
    if saved != 0 or loaded.returncode != 0:
        raise RuntimeError(
            f"could not load {image} into the engine over TLS (is it built? scripts/sandbox-"
            f"image): {loaded.stderr.decode(errors='replace')[-500:]}"
        )
