"""The sandbox contract's backends and fixture, shared by `test_sandbox_contract.py`.

Each backend is a `Backend` in `BACKENDS`; the `harness` fixture is parametrised over all of
them, so every contract test runs against every backend. To add one, `register` it below:

    register(Backend("docker", make=..., unavailable=docker_unavailable,
                     install="start a Docker engine and build the test image (.ci/run)"))

A backend that cannot run here skips its tests with a reason naming it, except with `CI=true`,
where that fails them: CI must install every backend. The host backend contains nothing by
design, so the containment tests skip for it (`require_containment`); everything else (kills,
output, environment, background commands) holds for it too.

Each harness's sandbox masks what its deny rules cover (`Harness.deny`), asking before every
command as a session's sandbox does; a harness starts with none.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from moot.permissions.masks import sandbox_masks
from moot.permissions.rules import RuleSet
from moot.sandbox.base import CommandResult, OutputCallback, Sandbox, SandboxMasks, SandboxPolicy
from moot.sandbox.bubblewrap import BubblewrapSandbox
from moot.sandbox.bwrap_probe import bwrap_unavailable
from moot.sandbox.host import HostSandbox
from moot.sandbox.landlock import LandlockSandbox, landlock_unavailable

KILL_GRACE = 0.5
"""Seconds from SIGTERM to SIGKILL in the tests: short, so that kill tests stay quick."""


@dataclass(frozen=True)
class Backend:
    """A sandbox backend the contract runs against."""

    name: str
    """What the contract's tests are parametrised by; what the sandbox calls itself unless
    `reports` says otherwise."""
    make: Callable[[SandboxPolicy], Sandbox]
    """A new sandbox for a policy; the fixture closes it."""
    unavailable: Callable[[], str | None]
    """Why it cannot run here, naming it (None: it can)."""
    install: str
    """What CI does so that it can; quoted when a CI run finds it missing."""
    contained: bool = True
    """False for the host: the containment tests do not apply."""
    refusal: str = "Read-only file system"
    """What a refused write says (Landlock: "Permission denied")."""
    unreachable: str = "Network is unreachable"
    """What a connection to an outside address says (Landlock: "Permission denied")."""
    masks_read_empty: bool = True
    """A `Read(...)`-denied file reads as empty and a denied directory lists nothing. False
    (Landlock): reading either is refused, and the names in a denied directory show."""
    fixed_guards: bool = False
    """A directory above a masked or protected path (the workspace root, which holds `.git`
    and `.moot`, among them) takes no new entries and loses none (Landlock: rules cannot take
    rights away below where they give them). Tests make new files in `Harness.scratch`."""
    namespaces: bool = True
    """The host's processes and sockets are out of sight. False (Landlock): processes show
    but cannot be signalled or read; Unix sockets cannot be made, so none is reached."""
    reports: str = ""
    """What `Sandbox.name` and `CommandResult.backend` say, when not `name` (Docker reached
    over TLS is still "docker")."""

    @property
    def sandbox_name(self) -> str:
        return self.reports or self.name


BACKENDS: dict[str, Backend] = {}


def register(backend: Backend) -> None:
    BACKENDS[backend.name] = backend


def _bwrap_unavailable() -> str | None:
    reason = bwrap_unavailable()
    return None if reason is None else f"bubblewrap: {reason}"


register(
    Backend(
        "bubblewrap",
        make=lambda policy: BubblewrapSandbox(policy, kill_grace=KILL_GRACE),
        unavailable=_bwrap_unavailable,
        install="apt-get install bubblewrap (and allow user namespaces)",
    )
)
register(
    Backend(
        "landlock",
        make=lambda policy: LandlockSandbox(policy, kill_grace=KILL_GRACE),
        unavailable=landlock_unavailable,
        install="a Linux kernel with Landlock ABI 6 or later (6.12+), Landlock enabled",
        refusal="Permission denied",
        unreachable="Permission denied",
        masks_read_empty=False,
        fixed_guards=True,
        namespaces=False,
    )
)
register(
    Backend(
        "host",
        make=lambda policy: HostSandbox(policy, kill_grace=KILL_GRACE),
        unavailable=lambda: None,
        install="",
        contained=False,
    )
)


def _docker(policy: SandboxPolicy) -> Sandbox:
    from moot.sandbox.docker import DockerSandbox  # docker-py is heavy: only when used

    return DockerSandbox(policy, session_id=f"test-{uuid.uuid4().hex[:12]}", kill_grace=KILL_GRACE)


def _docker_unavailable() -> str | None:
    from moot.sandbox.docker import docker_unavailable

    return docker_unavailable()


DOCKER = Backend(
    "docker",
    make=_docker,
    unavailable=_docker_unavailable,
    install="apt-get install docker.io, start dockerd, then scripts/sandbox-image",
)
"""Not registered here: `test_sandbox_docker.py` registers it, so the contract runs on Docker
there (this module's contract run stays fast); other tests may `require` it."""


def require(backend: Backend) -> None:
    """Skip when `backend` cannot run here; in CI (`CI` set) fail instead."""
    reason = backend.unavailable()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason}; CI must provide the {backend.name} backend: {backend.install}")
    pytest.skip(reason)


@dataclass
class DenyRules:
    """The deny rules a harness's sandbox masks; a test sets them with `Harness.deny`."""

    rules: RuleSet = field(default_factory=RuleSet)

    def masks(self, workspace: Path) -> SandboxMasks:
        return sandbox_masks(self.rules, workspace)


@dataclass
class Harness:
    """A sandbox of one backend over a fresh workspace holding `.git/` and `.moot/`."""

    backend: Backend
    sandbox: Sandbox
    workspace: Path
    outside: Path
    """A directory beside the workspace, on the host."""
    moot_home: Path
    """`MOOT_HOME`, outside /tmp; the sandbox was made with it set."""
    denied: DenyRules = field(default_factory=DenyRules)
    """What the sandbox masks; from the next command on when changed."""

    @property
    def rel(self) -> str:
        """Where, relative to the workspace, commands make new files: "" (the root), or
        "scratch/" where the root takes no new entries (`Backend.fixed_guards`)."""
        return "scratch/" if self.backend.fixed_guards else ""

    @property
    def scratch(self) -> Path:
        """`rel` as a directory on the host."""
        return self.workspace / self.rel

    def deny(self, *rules: str) -> None:
        """Make these the deny rules in force (`Read(./.env)`, `Edit(locked/**)`)."""
        self.denied.rules = RuleSet(deny=rules)

    async def run(
        self,
        command: str,
        *,
        timeout: float = 30,
        cwd: Path | None = None,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        return await self.sandbox.run(
            command,
            cwd=cwd or self.workspace,
            env=os.environ,
            timeout=timeout,
            on_output=on_output,
        )


def require_containment(harness: Harness) -> None:
    if not harness.backend.contained:
        pytest.skip(f"{harness.backend.name} contains nothing, by design")


@pytest.fixture
def moot_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`MOOT_HOME` outside /tmp: bubblewrap shows a command the host's files but not its
    /tmp, so moot's files must lie elsewhere for a test to see what the sandbox hides."""
    home = Path(tempfile.mkdtemp(prefix="moot-contract-home-", dir="/var/tmp"))
    monkeypatch.setenv("MOOT_HOME", str(home))
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(params=list(BACKENDS))
async def harness(
    request: pytest.FixtureRequest, tmp_path: Path, moot_home: Path
) -> AsyncIterator[Harness]:
    backend = BACKENDS[request.param]
    require(backend)
    workspace = tmp_path / "ws"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / ".moot").mkdir()
    (workspace / ".moot" / "settings.json").write_text("{}\n")
    if backend.fixed_guards:
        (workspace / "scratch").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    denied = DenyRules()
    policy = SandboxPolicy(workspace=workspace, masks=lambda: denied.masks(workspace))
    sandbox = backend.make(policy)
    try:
        yield Harness(backend, sandbox, workspace.resolve(), outside, moot_home, denied)
    finally:
        await sandbox.close()


def on_host(path: Path) -> bool:
    """Whether `path` exists on the host (a dangling symlink counts)."""
    return os.path.lexists(path)


def marker() -> str:
    """A `sleep` argument no other process has: the test finds its processes by it."""
    return f"{4000 + secrets.randbelow(1000)}.{secrets.randbelow(10**6):06d}"


def processes_with(text: str) -> list[str]:
    """Command lines of the processes on this machine whose arguments contain `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(f"{entry.name}: {cmdline}")
    return found


async def gone(text: str, within: float = 5.0) -> list[str]:
    """Polls until no process has `text` in its arguments; returns those left at the end."""
    deadline = time.monotonic() + within
    while (left := processes_with(text)) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    return left


async def until(condition: Callable[[], bool], within: float = 10.0) -> None:
    """Polls (another process's progress) until `condition()` holds.

    Raises:
        AssertionError: It did not within `within` seconds.
    """
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        await asyncio.sleep(0.02)
