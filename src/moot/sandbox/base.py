"""The sandbox seam: run a command somewhere contained, or start one in the background.

Backends (bubblewrap, Docker, host) implement `Sandbox`; `select_sandbox` in `select.py` picks
one from settings. Running on the host is never a silent fallback.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import msgspec

from moot.workspace.absent import AbsentPaths
from moot.workspace.protected import DEFAULT_PROTECTED

if TYPE_CHECKING:
    from moot.sandbox.net_proxy import NetworkProxy

OutputCallback = Callable[[str], None]


class SandboxMasks(msgspec.Struct, frozen=True):
    """Workspace paths a sandbox shows differently from the host, because deny rules say so.

    Paths are workspace-relative and `/`-joined, none a symlink, none inside a hidden
    directory; a denied symlink's target outside the workspace is given absolute instead
    (only a backend that shows the host's files, as bubblewrap does, needs it).
    `moot.permissions.masks.sandbox_masks` works them out from the rules.
    """

    hidden_files: tuple[str, ...] = ()
    """Files shown as an empty read-only file (`Read(...)` deny rules)."""
    hidden_dirs: tuple[str, ...] = ()
    """Directories shown as an empty read-only directory (`Read(...)` deny rules)."""
    read_only: tuple[str, ...] = ()
    """Files and directories shown as they are but read-only (`Edit(...)`, `Write(...)`)."""

    def __bool__(self) -> bool:
        return bool(self.hidden_files or self.hidden_dirs or self.read_only)


MaskSource = Callable[[], SandboxMasks]
"""What a backend calls before each command for the masks in force now: files that rules
cover appear and disappear during a session, so a set computed once would go stale."""


def make_empty_file() -> Path:
    """A new empty file in a private temporary directory, for a backend to bind read-only over
    hidden files; the caller removes its directory (`sentinel.remove_dir`).

    Its mode lets the owner write, so that a write through the read-only bind fails with
    "Read-only file system" (which `moot.tools.bash` explains to the model) rather than
    "Permission denied"; the bind, not the mode, keeps it empty.
    """
    from moot.sandbox.sentinel import private_dir  # lazy: opening a session starts no sentinel

    empty = private_dir("moot-sandbox-empty-") / "empty"
    empty.touch(mode=0o644)
    return empty


def rename_guards(masks: SandboxMasks | None, protected: Iterable[str]) -> list[str]:
    """The workspace directories a backend binds onto themselves, writable, so that a command
    cannot rename them (a mount point cannot be renamed: EBUSY).

    Only a masked or protected path itself is mounted on, and Linux renames a directory that
    holds mounts: `mv conf conf.old && mkdir conf` would leave the mask behind in `conf.old`
    and a writable `conf/app.toml` in its place. So every directory between the workspace
    root and a masked or protected path is made a mount point too; none at or below one
    (nothing there can be renamed, being read-only or hidden, and Docker mounts parents
    first: a writable bind below a read-only one would make it writable again).

    Args:
        masks: What deny rules mask now; absolute paths (outside the workspace) are skipped.
        protected: Workspace-relative paths the backend binds read-only.

    Returns:
        Workspace-relative directories, sorted: parents before what lies below them.
    """
    targets = set(protected)
    if masks:
        targets.update(masks.hidden_files, masks.hidden_dirs, masks.read_only)
    targets = {t.strip("/") for t in targets if t and not t.startswith("/")}
    guards: set[str] = set()
    for target in targets:
        parts = target.split("/")[:-1]
        guards.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return sorted(g for g in guards if not any(g == t or g.startswith(t + "/") for t in targets))


def masks_below(masks: SandboxMasks | None, root: Path) -> SandboxMasks:
    """The absolute paths of `masks` below `root` (an added directory, `--add-dir`), relative
    to it: what its `rename_guards` are worked out from."""
    prefix = str(root).rstrip("/") + "/"

    def below(paths: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p[len(prefix) :] for p in paths if p.startswith(prefix))

    if not masks:
        return SandboxMasks()
    return SandboxMasks(below(masks.hidden_files), below(masks.hidden_dirs), below(masks.read_only))


def protected_in(protected: Iterable[str], root: Path) -> tuple[str, ...]:
    """What an added directory (`--add-dir`) keeps read-only, relative to it: its own `.git`
    and `.moot`, and the absolute paths of `protected` below it (scripts hooks run)."""
    prefix = str(root).rstrip("/") + "/"
    return (*DEFAULT_PROTECTED, *(p[len(prefix) :] for p in protected if p.startswith(prefix)))


async def sweep_absent(policy: SandboxPolicy) -> tuple[str, ...]:
    """Sweep `policy.absent` (off the event loop); what was moved away, one line each."""
    if not policy.absent:
        return ()
    return tuple(await asyncio.to_thread(policy.absent.sweep))


def make_missing_dirs(policy: SandboxPolicy, workspace: Path) -> None:
    """Make the missing directories of `policy.made_when_missing` (a blocking call).

    Only names that are in `policy.protected` too; nothing is made through a symlink (a
    dangling `.moot` link stays as it is), and a directory that cannot be made is left to
    the sandbox, whose commands could not make it either.
    """
    for name in policy.made_when_missing:
        if name not in policy.protected:
            continue
        path = workspace / name
        try:
            os.mkdir(path, 0o755)
            made = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue  # there already (or a link), or not ours to make
        try:
            os.fchmod(made, 0o755)  # the mode, whatever the umask
        finally:
            os.close(made)


class SandboxPolicy(msgspec.Struct, frozen=True):
    """What a sandboxed command may touch."""

    workspace: Path
    """Writable, mounted at the same path inside the sandbox."""
    network: bool = False
    """True: the host's whole network (no backend but the host's is given it by the session
    today). False: none, or only through `proxy`."""
    proxy: NetworkProxy | None = None
    """The session's network proxy (`net_proxy`): commands reach the network only through
    it, which lets through what `sandbox.network` allows (and what the person approves).
    None (with `network` false): no network at all. Started at the first command."""
    connect_ports: tuple[int, ...] = ()
    """With `network` off, TCP ports commands may still connect to: a local proxy's, the only
    way out. Landlock's rules name a port, not an address: under Landlock the port is open on
    every address (`moot.sandbox.landlock`). Only the Landlock backend reads it so far."""
    protected: tuple[str, ...] = DEFAULT_PROTECTED
    """Workspace-relative paths that stay read-only inside the sandbox."""
    made_when_missing: tuple[str, ...] = (".moot",)
    """Protected directories (names in `protected`) the backends make, empty with mode 0755,
    before a command when they are missing, so that they are read-only from the start:
    a command that made `.moot/settings.json` would configure hooks that the next moot run
    executes on the host. Not `.git`: a command could then no longer `git init` a new
    repository (what a command can write into a `.git` it makes is not contained)."""
    output_dir: Path | None = None
    """Where the full output of a command longer than the cap is saved, on the host; None:
    `<data dir>/outputs/<time>-<random>/` (see `output.py`). Commands see it read-only, the
    only part of moot's own directories they see (`private`)."""
    masks: MaskSource | None = None
    """The workspace paths deny rules hide or make read-only, asked for before each command;
    None: nothing is masked (`moot.permissions.masks.mask_source` builds one from the
    rules). The host backend ignores it: it contains nothing."""
    absent: AbsentPaths | None = None
    """Protected paths that did not exist when the session began (a hooks directory the git
    config names): no mount can keep a command from making one, so the backends sweep away
    what appears there before and after each command and as they close, and say so in the
    command's result (`CommandResult.swept`). The host backend ignores it."""
    added: tuple[Path, ...] = ()
    """More directories commands may write, real paths (`--add-dir`), each with its own
    `.git` and `.moot` read-only; bubblewrap binds them at their own paths. The session
    refuses them with Docker, which mounts the workspace only."""
    env_names: tuple[str, ...] = ()
    """Variables commands get besides `moot.sandbox.env.PASSED`: those the settings' `env`
    names (`client.environment.sandbox_policy`). One that looks secret is dropped all the same
    (`env.scrub_env`)."""


class CommandResult(msgspec.Struct, frozen=True):
    """How a command ended and what it printed (capped; see `truncated`)."""

    exit_code: int | None
    """None when the command was killed (timeout or interrupt)."""
    stdout: str
    stderr: str
    duration_ms: float
    backend: str
    """Which sandbox ran it: "bubblewrap", "landlock", "docker" or "host"."""
    truncated: bool = False
    """Output was longer than the cap: head and tail kept, the middle elided with a marker."""
    timed_out: bool = False
    output_file: Path | None = None
    """When truncated: a file holding the full output, which the model may read."""
    swept: tuple[str, ...] = ()
    """What was moved away from paths no command may make (`SandboxPolicy.absent`), before
    or after this command ran, one line each."""


@runtime_checkable
class BackgroundProcess(Protocol):
    """A command started with `Sandbox.start`."""

    id: str

    def read(self) -> str:
        """Output produced since the last read."""
        ...

    @property
    def exit_code(self) -> int | None:
        """None while it runs."""
        ...

    async def kill(self) -> None:
        """Kill it and everything it started."""
        ...


@runtime_checkable
class Sandbox(Protocol):
    name: str
    """"bubblewrap", "landlock", "docker" or "host"."""

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run `command` with a shell, stdin closed; on timeout kill its whole process tree."""
        ...

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        """Start `command` in the background."""
        ...

    async def close(self) -> None:
        """Kill background processes and release the backend (a container, say)."""
        ...
