"""The sandbox seam: run a command somewhere contained, or start one in the background.

Backends (bubblewrap, Docker, host) implement `Sandbox`; `select_sandbox` in `select.py` picks
one from settings. Running on the host is never a silent fallback.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

OutputCallback = Callable[[str], None]


@dataclass(frozen=True)
class SandboxMasks:
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
    hidden files; the caller removes its directory.

    Its mode lets the owner write, so that a write through the read-only bind fails with
    "Read-only file system" (which `moot.tools.bash` explains to the model) rather than
    "Permission denied"; the bind, not the mode, keeps it empty.
    """
    empty = Path(tempfile.mkdtemp(prefix="moot-sandbox-empty-")) / "empty"
    empty.touch(mode=0o644)
    return empty


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed command may touch."""

    workspace: Path
    """Writable, mounted at the same path inside the sandbox."""
    network: bool = False
    """False: no network at all (the default)."""
    protected: tuple[str, ...] = (".git", ".moot")
    """Workspace-relative paths that stay read-only inside the sandbox."""
    output_dir: Path | None = None
    """Where the full output of a command longer than the cap is saved, on the host; None:
    `<workspace>/.moot/outputs/<time>-<random>/`. Keep it inside the workspace: the model
    reads these files with the `read` tool, which never leaves it (see `output.py`)."""
    masks: MaskSource | None = None
    """The workspace paths deny rules hide or make read-only, asked for before each command;
    None: nothing is masked (`moot.permissions.masks.mask_source` builds one from the
    rules). The host backend ignores it: it contains nothing."""


@dataclass(frozen=True)
class CommandResult:
    """How a command ended and what it printed (capped; see `truncated`)."""

    exit_code: int | None
    """None when the command was killed (timeout or interrupt)."""
    stdout: str
    stderr: str
    duration_ms: float
    backend: str
    """Which sandbox ran it: "bubblewrap", "docker" or "host"."""
    truncated: bool = False
    """Output was longer than the cap: head and tail kept, the middle elided with a marker."""
    timed_out: bool = False
    output_file: Path | None = None
    """When truncated: a file holding the full output, which the model may read."""


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
    """"bubblewrap", "docker" or "host"."""

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
