"""Which sandbox runs shell commands, from the `sandbox` setting, and why.

| setting | picks |
| --- | --- |
| `auto` (default) | bubblewrap, else Landlock, else Docker (macOS: Seatbelt, else Docker) |
| `bubblewrap`, `landlock`, `seatbelt`, `docker` | that backend if it works, else nothing |
| `none` | the host, on purpose |

`auto` with none of them working gets nothing. "Nothing" means shell commands are refused
with a message saying how to get a sandbox or how to opt into the host. Running on the host
is never a fallback for a sandbox that does not work, with one exception the person chose:
in bypass mode (`bypassPermissions`), `auto` with no working sandbox runs on the host, and
the choice says so. An explicit `bubblewrap`, `landlock` or `docker` never falls back, not
even then.

Bubblewrap comes first: its mounts and namespaces hold more of the policy than Landlock's
rules can (`moot.sandbox.landlock` says what differs), and Landlock next, where containers
and CI runners refuse the namespaces bubblewrap needs; Docker last, being the slowest to
start and the one that shows only the workspace. What `auto` chose says why each backend
before it was passed over.

Docker lives in `moot.sandbox.docker`, imported only when it is wanted (docker-py is heavy);
it provides `docker_unavailable() -> str | None` and `DockerSandbox(policy, session_id=...)`.

A session's sandbox is chosen as it opens (its backend shows on the status line and in the
system prompt), but a local backend is built at its first command (`deferred=True`,
`DeferredSandbox`): its modules and its set-up (~3 ms for bubblewrap) are no part of opening
a session, and a session that runs no command never pays them.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, get_args

import msgspec

from moot.sandbox.base import Sandbox, SandboxPolicy

if TYPE_CHECKING:
    from moot.sandbox.base import BackgroundProcess, CommandResult, OutputCallback

SandboxSetting = Literal["auto", "bubblewrap", "landlock", "seatbelt", "docker", "none"]
SETTINGS: tuple[str, ...] = get_args(SandboxSetting)
SETTING_VARIABLE = "MOOT_SANDBOX"

HOW_TO_ENABLE = (
    "To run shell commands, enable a sandbox: install bubblewrap (e.g. `apt-get install "
    "bubblewrap`), run on a Linux kernel with Landlock (6.12 or later), or start a Docker "
    "engine. Or run them on the host, uncontained, on purpose: "
    'set `"sandbox": "none"` in settings or MOOT_SANDBOX=none.'
)


class SandboxChoice(msgspec.Struct, frozen=True):
    """The sandbox a setting chose (None: none works) and why, for people to read."""

    setting: str
    sandbox: Sandbox | None
    reason: str
    """Why this backend, or why none: each backend tried and what it answered."""

    @property
    def backend(self) -> str:
        """ "bubblewrap", "landlock", "docker", "host" or "none"."""
        return self.sandbox.name if self.sandbox is not None else "none"

    def describe(self) -> str:
        """A few lines for `moot sandbox status` and for the refusal of a command."""
        if self.sandbox is None:
            return f"no sandbox: shell commands are refused. {self.reason}\n{HOW_TO_ENABLE}"
        if self.sandbox.name == "host":
            return f"host (NO sandbox): commands run uncontained, as you. {self.reason}"
        return f"{self.sandbox.name}: {self.reason}"


def choose_sandbox(
    setting: SandboxSetting | str,
    policy: SandboxPolicy,
    *,
    bypass: bool = False,
    session_id: str | None = None,
    deferred: bool = False,
) -> SandboxChoice:
    """Pick and build the sandbox for `setting` (see the module docstring).

    Args:
        setting: "auto", "bubblewrap", "landlock", "docker" or "none".
        policy: What commands may touch; handed to the backend.
        bypass: The permission mode is bypassPermissions: `auto` may then use the host.
        session_id: Labels the session's Docker container (so a later start can remove it
            after a crash); a fresh id when None.
        deferred: Build a local backend (bubblewrap, Landlock, Seatbelt) at its first use
            (`DeferredSandbox`); Docker and the host are built at once.

    Raises:
        ValueError: `setting` is none of `SETTINGS`.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown sandbox setting {setting!r}; use one of {', '.join(SETTINGS)}")
    if setting == "none":
        return SandboxChoice(setting, _host(policy), 'the setting is "none": chosen on purpose')
    tried: list[str] = []
    for backend in auto_order() if setting == "auto" else (setting,):
        why_not = _unavailable(backend)
        if why_not is None:
            if deferred and backend in _LOCAL:
                build = partial(_build, backend, policy, bwrap=_probed_bwrap(backend))
                sandbox: Sandbox = DeferredSandbox(backend, build)
            else:
                sandbox = _build(backend, policy, session_id)
            how = "the first that works" if setting == "auto" else "as set"
            passed = "".join(f"{why}; " for why in tried)
            reason = f"{passed}{_works(backend)} (setting {setting}: {how})"
            return SandboxChoice(setting, sandbox, reason)
        tried.append(why_not if why_not.startswith(backend) else f"{backend}: {why_not}")
    reason = "; ".join(tried)
    if bypass and setting == "auto":
        return SandboxChoice(setting, _host(policy), f"bypass mode and no sandbox works ({reason})")
    end = "" if reason.endswith((".", "?", "!")) else "."
    return SandboxChoice(setting, None, f"setting {setting}: {reason}{end}")


def select_sandbox(
    setting: SandboxSetting | str,
    policy: SandboxPolicy,
    *,
    bypass: bool = False,
    session_id: str | None = None,
) -> Sandbox | None:
    """The sandbox `choose_sandbox` picks; None when none works (commands are then refused)."""
    return choose_sandbox(setting, policy, bypass=bypass, session_id=session_id).sandbox


def auto_order(platform: str = sys.platform) -> tuple[str, ...]:
    """The backends `auto` tries, first to last: on macOS Seatbelt, then Docker (Docker
    Desktop); elsewhere bubblewrap, then Landlock, then Docker."""
    if platform == "darwin":
        return ("seatbelt", "docker")
    return ("bubblewrap", "landlock", "docker")


def _unavailable(backend: str) -> str | None:
    if backend == "seatbelt":
        from moot.sandbox.seatbelt import seatbelt_unavailable

        return seatbelt_unavailable()
    if backend == "bubblewrap":
        from moot.sandbox.bwrap_probe import bwrap_unavailable

        return bwrap_unavailable()
    if backend == "landlock":
        from moot.sandbox import landlock

        return landlock.landlock_unavailable()
    try:
        docker = _docker_module()
    except ModuleNotFoundError as exc:
        if exc.name == "moot.sandbox.docker":
            return "moot's Docker backend is not part of this build"
        if exc.name == "docker":
            return "the Docker SDK for Python is not installed (pip install docker)"
        raise
    probe = getattr(docker, "docker_unavailable", None)
    if probe is None:
        return "moot.sandbox.docker has no docker_unavailable()"
    answer: str | None = probe()
    return answer


def _works(backend: str) -> str:
    if backend == "seatbelt":
        return "sandbox-exec (Seatbelt) is here"
    if backend == "bubblewrap":
        from moot.sandbox.bwrap_probe import bwrap_version

        return f"{bwrap_version() or 'bwrap'} works here"
    if backend == "landlock":
        from moot.sandbox.landlock import landlock_works

        return landlock_works()
    from moot.sandbox.docker_image import engine_is_remote

    if engine_is_remote():
        return (
            f"a remote Docker engine answers (DOCKER_HOST={os.environ.get('DOCKER_HOST')}):"
            " the workspace is copied into a volume there, and back after each command"
        )
    return "a Docker engine answers"


_LOCAL = ("bubblewrap", "landlock", "seatbelt")
"""The backends `deferred` builds at their first use: nothing starts with them (Docker's
container is looked for, and orphans removed, as the session opens)."""


class DeferredSandbox:
    """A backend that works here (its probe said so), built at its first use.

    `name` is known from the start; `run`, `start` and every other attribute (`launch`,
    `command_env`, ... which the language servers read) are the built backend's. `close`
    builds nothing.

    Args:
        name: The backend ("bubblewrap", "landlock", "seatbelt").
        build: Builds it.
    """

    def __init__(self, name: str, build: Callable[[], Sandbox]) -> None:
        self.name = name
        self._build = build
        self._built: Sandbox | None = None
        self._lock = threading.Lock()  # a language server's thread may be the first to ask

    @property
    def built(self) -> Sandbox:
        """The backend, built now if it was not yet."""
        with self._lock:
            if self._built is None:
                self._built = self._build()
            return self._built

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        built = self.built
        return await built.run(command, cwd=cwd, env=env, timeout=timeout, on_output=on_output)

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        return await self.built.start(command, cwd=cwd, env=env)

    async def close(self) -> None:
        if self._built is not None:
            await self._built.close()

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") or attribute in ("_build", "_built", "_lock"):
            raise AttributeError(attribute)  # copy and pickle ask before `__init__` has run
        return getattr(self.built, attribute)


def _probed_bwrap(backend: str) -> str | None:
    """The `bwrap` the probe just tried, for a backend built later: what runs the commands is
    what was probed, whatever the PATH leads to by the first command."""
    if backend != "bubblewrap":
        return None
    from moot.sandbox.bwrap_probe import find_bwrap

    return find_bwrap()


def _build(
    backend: str,
    policy: SandboxPolicy,
    session_id: str | None = None,
    *,
    bwrap: str | None = None,
) -> Sandbox:
    if backend == "seatbelt":
        from moot.sandbox.seatbelt import SeatbeltSandbox

        return SeatbeltSandbox(policy)
    if backend == "bubblewrap":
        from moot.sandbox.bubblewrap import BubblewrapSandbox

        return BubblewrapSandbox(policy, bwrap=bwrap)
    if backend == "landlock":
        from moot.sandbox.landlock import LandlockSandbox

        return LandlockSandbox(policy)
    sandbox: Sandbox = _docker_module().DockerSandbox(policy, session_id=session_id)
    return sandbox


def _host(policy: SandboxPolicy) -> Sandbox:
    from moot.sandbox.host import HostSandbox

    return HostSandbox(policy)


def _docker_module() -> ModuleType:
    """`moot.sandbox.docker`, imported only when Docker is wanted (docker-py is heavy)."""
    return importlib.import_module("moot.sandbox.docker")
