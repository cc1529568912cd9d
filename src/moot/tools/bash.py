"""The `bash` tool: run a shell command in the session's sandbox, or start it in the background.

The command runs with `bash -c` in the workspace root, stdin closed, through whatever sandbox
settings chose (`moot.sandbox.select`); with none, it is refused with a message saying how to
get one. Output streams to front ends as it arrives (`ToolContext.emit`); the model gets the
exit code, stdout and stderr capped at 30,000 characters (head and tail, the full output in a
file it can `read`), and notes: a timeout, a sandbox rule the command ran into (also in
`ToolResult.display["sandbox_violation"]` for front ends; a path no command may make that the
sandbox moved away is one), or a hint when it seems to have waited for input that can never
come.

Before a command runs, the workspace files its command line writes (`> F`, `tee F`, `sort -o
F`, `git log --output=F`, `rm F`, ...: `moot.permissions.targets.command_writes`) are kept in
the run's file snapshots, as the file tools keep what they change, so a rewind restores them.
What a program writes by its own choosing is not known beforehand and is not kept.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated

import msgspec
from pydantic import Field

from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import CommandResult, Sandbox
from moot.sandbox.select import HOW_TO_ENABLE
from moot.tools.base import FunctionTool, SideEffect, ToolContext, ToolResult, tool
from moot.workspace.no_follow import PathRefused
from moot.workspace.paths import Workspace

CommandWrites = Callable[[str, Path], list[Path]]
"""The workspace files a command line writes (given the line and the workspace root)."""


def command_writes(command: str, workspace_root: Path) -> list[Path]:
    """The workspace files a command line writes (`moot.permissions.targets.command_writes`)."""
    # Lazy: the shell parser loads at the first command, not at start-up.
    from moot.permissions.targets import command_writes as writes

    return writes(command, workspace_root)


DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
_TAIL_CHARS = 2000

DESCRIPTION = (
    "Run a bash command in the workspace root (a fresh shell each time; stdin is closed, so "
    "pass flags like --yes instead of answering prompts). {where} timeout is in seconds "
    "(default 120, at most 600); the command and all it started are killed at the timeout, "
    "and nothing it starts with & outlives it. For servers and watchers use "
    "run_in_background, then shell_output and kill_shell."
)
SANDBOXED = (
    "It runs in a sandbox: only the workspace and /tmp are writable, .git and .moot are "
    "read-only, and there is no network unless the user allowed it. The home directory holds "
    "only toolchains, and what a command writes there does not last."
)
LANDLOCKED = (
    "It runs in a Landlock sandbox: only the workspace and $TMPDIR are writable (not /tmp),"
    " .git and .moot are read-only, and there is no network unless the user allowed it. The"
    " workspace root takes no new file or directory (make them in a subdirectory; files"
    " already there can be rewritten in place). The home directory holds only toolchains,"
    " read-only."
)
ON_HOST = "It runs on the host, uncontained: the user chose no sandbox."
UNAVAILABLE = "No sandbox works here, so commands are refused for now."


def description(sandbox: Sandbox | None) -> str:
    """What the model is told about `bash`, including where its commands run."""
    if sandbox is None:
        return DESCRIPTION.format(where=UNAVAILABLE)
    where = {"host": ON_HOST, "landlock": LANDLOCKED}.get(sandbox.name, SANDBOXED)
    return DESCRIPTION.format(where=where)


WAITS_FOR_INPUT = re.compile(
    r"\[y/n\]|\(y/n\)|\[yes/no\]|\(yes/no\)|\by/n\?"
    r"|(?:password|passphrase|username)[^\n]{0,40}:\s*$"
    r"|press (?:any key|enter|return)|EOF when reading a line|EOFError"
    r"|inappropriate ioctl for device|is not a (?:terminal|tty)|input device is not a TTY"
    r"|(?:continue|proceed|overwrite)[^\n]{0,40}\?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
"""Signs that a command asked a question; matched against the end of its output."""
INPUT_HINT = (
    "The command seems to wait for input, but stdin is closed (/dev/null), so no answer can "
    "come. Run it non-interactively: pass a flag such as --yes, -y, --non-interactive, "
    "--no-input or --batch, or pipe the answer in (e.g. `printf 'y\\n' | command`). Commands "
    "that ask for a password cannot be run this way; ask the user."
)

READ_ONLY_FS = re.compile(r"read-only file system", re.IGNORECASE)
DENIED = re.compile(r"permission denied", re.IGNORECASE)
"""How Landlock refuses a write (or a read of a denied path); meant as a rule only there."""
NO_NETWORK = re.compile(
    r"network is unreachable|temporary failure in name resolution|could not resolve host"
    r"|name or service not known|no address associated with hostname"
    r"|nodename nor servname|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|failed to resolve",
    re.IGNORECASE,
)


def bash_tool(
    sandbox: Sandbox | None,
    workspace: Workspace,
    shells: BackgroundShells,
    *,
    unavailable: str = HOW_TO_ENABLE,
    env: Mapping[str, str] | None = None,
    writes: CommandWrites | None = command_writes,
) -> FunctionTool:
    """The `bash` tool for one session.

    Args:
        sandbox: Where commands run; None refuses every command with `unavailable`.
        workspace: Commands start in its root; full outputs inside it are named relative to it.
        shells: The session's background shells (`shell_output` and `kill_shell` share them).
        unavailable: What a refusal says when there is no sandbox (`SandboxChoice.describe()`).
        env: The environment commands start from (the sandbox scrubs it); `os.environ` when
            None, read at each call.
        writes: The files a command line writes, kept in the workspace's snapshots before it
            runs (see the module docstring); None keeps nothing.
    """

    @tool(name="bash", side_effect=SideEffect.RUNS_COMMANDS, description=description(sandbox))
    async def bash(
        command: Annotated[str, Field(min_length=1, description="The bash command line")],
        ctx: ToolContext,
        timeout: Annotated[float, Field(gt=0, description="Seconds; at most 600")] = (
            DEFAULT_TIMEOUT
        ),
        run_in_background: Annotated[
            bool, Field(description="Start it and return a shell id at once")
        ] = False,
    ) -> ToolResult:
        if sandbox is None:
            return ToolResult.error(f"Shell commands are refused: no sandbox. {unavailable}")
        environ = os.environ if env is None else env
        kept = keep_for_rewind(command, workspace, ctx.run_id, writes)
        try:
            if run_in_background:
                if shells.closed:
                    return ToolResult.error("The session has ended; no more background shells.")
                process = await sandbox.start(command, cwd=workspace.root, env=environ)
                shells.add(process, command)
                return _with_notes(_started(process.id, sandbox.name), kept)
            watch = OutputWatch(ctx)
            limit = min(timeout, MAX_TIMEOUT)
            result = await sandbox.run(
                command, cwd=workspace.root, env=environ, timeout=limit, on_output=watch
            )
        except OSError as exc:
            return ToolResult.error(f"Could not run the command ({sandbox.name}): {exc}")
        described = describe_result(result, workspace, watch, asked_timeout=timeout, limit=limit)
        return _with_notes(described, kept)

    return bash


def keep_for_rewind(
    command: str, workspace: Workspace, run_id: str, writes: CommandWrites | None
) -> list[str]:
    """Keep what each file the command line writes holds now, in the run's snapshots.

    Returns:
        Notes for the result: the files that could not be kept (too large, a symlink, ...).
    """
    if writes is None or workspace.snapshots is None or not run_id:
        return []
    notes: list[str] = []
    for path in writes(command, workspace.root):
        if not _a_file_could_be_there(path, workspace.root):
            continue  # a directory (`cp a dir`), or below a file: no file of its own to keep
        try:
            note = workspace.snapshots.before_change(run_id, path)
        except (PathRefused, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            note = f"{workspace.relative(path)} was not kept for a rewind ({reason})"
        if note:
            notes.append(note)
    return notes


def _a_file_could_be_there(path: Path, root: Path) -> bool:
    """Whether `path` is a file, a symlink or nothing yet, below directories (or nothing)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False  # below a file (ENOTDIR), or not to be looked at: nothing will be made
    for parent in path.parents:
        if parent == root:
            return True
        try:
            return stat.S_ISDIR(os.lstat(parent).st_mode)
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return False


def _with_notes(result: ToolResult, notes: list[str]) -> ToolResult:
    if not notes:
        return result
    content = result.content + "".join(f"\nNote: {note}" for note in notes)
    return msgspec.structs.replace(result, content=content)


class OutputWatch:
    """Streams a command's output to front ends, looking for sandbox rules it ran into and
    keeping its tail for the input hint."""

    def __init__(self, ctx: ToolContext | None = None) -> None:
        self._emit = ctx.emit if ctx is not None else None
        self.tail = ""
        """The last 2,000 characters."""
        self.rules: set[str] = set()
        """"read_only", "denied" and/or "network": what the output said it ran into, anywhere
        in it."""

    def __call__(self, text: str) -> None:
        if self._emit is not None:
            self._emit(text)
        window = self.tail[-100:] + text  # a message split across two pieces still matches
        if READ_ONLY_FS.search(window):
            self.rules.add("read_only")
        if DENIED.search(window):
            self.rules.add("denied")
        if NO_NETWORK.search(window):
            self.rules.add("network")
        self.tail = (self.tail + text)[-_TAIL_CHARS:]


def describe_result(
    result: CommandResult,
    workspace: Workspace,
    watch: OutputWatch,
    *,
    asked_timeout: float,
    limit: float,
) -> ToolResult:
    """What the model reads about a finished command, and what front ends get in `display`."""
    notes: list[str] = []
    display: dict[str, object] = {
        "backend": result.backend,
        "exit_code": result.exit_code,
        "duration_ms": round(result.duration_ms, 1),
        "timed_out": result.timed_out,
        "truncated": result.truncated,
    }
    if asked_timeout > limit:
        notes.append(f"The timeout was capped at {limit:g} s (the most a command may take).")
    if result.timed_out:
        notes.append(
            f"Timed out after {limit:g} s: the command and everything it started were killed."
            " Give it a longer timeout (at most 600 s), or use run_in_background for a server"
            " or a watcher."
        )
    if result.output_file is not None:
        where = _name(result.output_file, workspace)
        display["output_file"] = str(result.output_file)
        notes.append(
            f"The output was too long: the middle is elided. All of it is in {where}; read it"
            " with `read` (offset and limit) or search it with `grep`."
        )
    elif result.truncated:
        notes.append("The output was too long: the middle is elided (it could not be saved).")
    failed = result.exit_code != 0
    violation = sandbox_violation(watch.rules, result.backend, workspace) if failed else None
    if result.swept:
        violation = "; ".join(result.swept)
    if violation is not None:
        display["sandbox_violation"] = violation
        notes.append(f"Sandbox: {violation}")
    tail = watch.tail
    if failed and WAITS_FOR_INPUT.search(tail[-500:]):
        notes.append(INPUT_HINT)
    elif result.timed_out and tail and not tail.endswith("\n"):
        notes.append(INPUT_HINT)  # it stopped mid-line: most likely at a prompt
    content = _format(result, notes)
    return ToolResult(content, is_error=result.timed_out or violation is not None, display=display)


def sandbox_violation(rules: set[str], backend: str, workspace: Workspace) -> str | None:
    """The sandbox rule a failed command ran into (`OutputWatch.rules`), for the model; or None.

    Only for a sandbox: on the host a read-only file system or a dead network is the host's.
    """
    if backend == "host":
        return None
    if backend == "landlock" and "denied" in rules:
        return (
            "the Landlock sandbox refused it (Permission denied): commands write only inside"
            f" the workspace ({workspace.root}) and $TMPDIR, never .git or .moot; the workspace"
            " root, and any directory holding a protected or denied path, takes no new file and"
            " loses none (its files can be rewritten in place: make new files in a"
            " subdirectory); denied files cannot be read; there is no network. For more, ask the"
            " user."
        )
    if "read_only" in rules:
        return (
            f"the file system is read-only here except the workspace ({workspace.root}) and"
            " /tmp, and .git and .moot in the workspace are read-only too. Write inside the"
            " workspace; for a change to .git or .moot (a commit, say) ask the user."
        )
    if "network" in rules:
        return (
            f"commands have no network ({backend} sandbox). Work offline (local files, caches,"
            " vendored dependencies) or ask the user to allow network access."
        )
    return None


def _started(shell_id: str, backend: str) -> ToolResult:
    return ToolResult(
        f"Started in the background as {shell_id} ({backend}). Read its output with"
        f' shell_output(shell_id="{shell_id}"); stop it with kill_shell(shell_id="{shell_id}").'
        " It ends with the session.",
        display={"shell_id": shell_id, "backend": backend},
    )


def _format(result: CommandResult, notes: list[str]) -> str:
    status = "killed (timeout)" if result.exit_code is None else str(result.exit_code)
    parts = [f"Exit code: {status}"]
    if result.stdout:
        parts.append(f"--- stdout ---\n{result.stdout.rstrip(chr(10))}")
    if result.stderr:
        parts.append(f"--- stderr ---\n{result.stderr.rstrip(chr(10))}")
    if not result.stdout and not result.stderr:
        parts.append("(no output)")
    parts += [f"Note: {note}" for note in notes]
    return "\n".join(parts)


def _name(path: os.PathLike[str], workspace: Workspace) -> str:
    text = os.fspath(path)
    return workspace.relative(workspace.root.joinpath(text)) if workspace.contains(text) else text
