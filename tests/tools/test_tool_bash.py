"""The `bash`, `shell_output` and `kill_shell` tools, through `invoke` as the runtime calls them.

The tool's own logic (timeouts, notes, hints, violations, refusal) is pinned with a scripted
sandbox; what only real commands show runs on the host backend, and the sandbox rules on
bubblewrap (skipped without it, failed in CI).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import BackgroundProcess, CommandResult, OutputCallback
from moot.sandbox.bubblewrap import BubblewrapSandbox
from moot.sandbox.host import HostSandbox
from moot.sandbox.select import HOW_TO_ENABLE
from moot.tools.base import SideEffect, ToolContext
from moot.tools.bash import INPUT_HINT, MAX_TIMEOUT, bash_tool
from moot.tools.shell_tools import shell_tools
from moot.workspace import Workspace
from sandbox_contract import BACKENDS, gone, marker, on_host, require


@dataclass
class ScriptedSandbox:
    """Answers every command with `result`, streaming `chunks` first; records what it got."""

    result: CommandResult
    chunks: tuple[str, ...] = ()
    name: str = "bubblewrap"
    timeouts: list[float] = field(default_factory=list)
    fail_with: Exception | None = None

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        if self.fail_with is not None:
            raise self.fail_with
        self.timeouts.append(timeout)
        for chunk in self.chunks:
            if on_output is not None:
                on_output(chunk)
        return self.result

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        raise OSError("cannot start")

    async def close(self) -> None:
        pass


def result(
    exit_code: int | None = 0,
    stdout: str = "",
    stderr: str = "",
    *,
    backend: str = "bubblewrap",
    **more: object,
) -> CommandResult:
    return CommandResult(exit_code, stdout, stderr, 12.5, backend, **more)  # type: ignore[arg-type]


class Emitted:
    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.ctx = ToolContext("s", "r", "c", "main", "t", emit=self.pieces.append)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "ws").mkdir()
    return Workspace(tmp_path / "ws", read_roots=(tmp_path / "outputs",))


@pytest.fixture
async def shells() -> AsyncIterator[BackgroundShells]:
    made = BackgroundShells()
    yield made
    await made.close()


async def call(tool_sandbox: object, ws: Workspace, shells: BackgroundShells, **arguments: object):  # type: ignore[no-untyped-def]
    emitted = Emitted()
    tool = bash_tool(tool_sandbox, ws, shells)  # type: ignore[arg-type]
    answer = await tool.invoke(dict(arguments), emitted.ctx)
    return answer, emitted.pieces


# ---- the tool's own logic, with a scripted sandbox ---------------------------------------


def test_bash_runs_commands_and_shell_output_only_reads(ws: Workspace) -> None:
    tools = {t.name: t for t in shell_tools(None, ws, BackgroundShells())}

    assert tools["bash"].side_effect is SideEffect.RUNS_COMMANDS
    assert tools["kill_shell"].side_effect is SideEffect.RUNS_COMMANDS
    assert tools["shell_output"].side_effect is SideEffect.READ_ONLY
    assert set(tools["bash"].parameters["properties"]) == {
        "command",
        "timeout",
        "run_in_background",
    }


def test_the_description_says_where_commands_run(ws: Workspace) -> None:
    shells = BackgroundShells()

    def told(sandbox: object) -> str:
        return bash_tool(sandbox, ws, shells).description  # type: ignore[arg-type]

    assert "only the workspace and /tmp are writable" in told(ScriptedSandbox(result()))
    assert "on the host, uncontained" in told(ScriptedSandbox(result(), name="host"))
    landlock = told(ScriptedSandbox(result(), name="landlock"))
    assert "$TMPDIR are writable (not /tmp)" in landlock
    assert "workspace root takes no new file" in landlock
    assert "refused" in told(None)


async def test_without_a_sandbox_commands_are_refused_saying_how_to_get_one(
    ws: Workspace, shells: BackgroundShells
) -> None:
    answer, _ = await call(None, ws, shells, command="ls")
    background, _ = await call(None, ws, shells, command="ls", run_in_background=True)

    assert answer.is_error and background.is_error
    assert HOW_TO_ENABLE in answer.content
    assert "bubblewrap" in answer.content and "MOOT_SANDBOX=none" in answer.content


async def test_the_timeout_defaults_to_two_minutes_and_is_capped_at_ten(
    ws: Workspace, shells: BackgroundShells
) -> None:
    sandbox = ScriptedSandbox(result(0, "ok\n"))

    default, _ = await call(sandbox, ws, shells, command="true")
    capped, _ = await call(sandbox, ws, shells, command="true", timeout=5000)
    short, _ = await call(sandbox, ws, shells, command="true", timeout=1.5)
    refused, _ = await call(sandbox, ws, shells, command="true", timeout=0)

    assert sandbox.timeouts == [120, MAX_TIMEOUT, 1.5]
    assert "capped at 600 s" in capped.content and "capped" not in default.content
    assert not short.is_error
    assert refused.is_error and "timeout" in refused.content


async def test_the_model_sees_exit_code_stdout_and_stderr(
    ws: Workspace, shells: BackgroundShells
) -> None:
    sandbox = ScriptedSandbox(result(2, "out\n", "err\n"), chunks=("out\n", "err\n"))

    answer, emitted = await call(sandbox, ws, shells, command="x")

    assert answer.content == "Exit code: 2\n--- stdout ---\nout\n--- stderr ---\nerr"
    assert not answer.is_error, "a failing command is an answer, not a tool failure"
    assert emitted == ["out\n", "err\n"]
    assert answer.display["exit_code"] == 2 and answer.display["backend"] == "bubblewrap"


async def test_no_output_says_so(ws: Workspace, shells: BackgroundShells) -> None:
    answer, _ = await call(ScriptedSandbox(result(0)), ws, shells, command="true")

    assert answer.content == "Exit code: 0\n(no output)"


async def test_a_timeout_is_an_error_that_says_what_happened(
    ws: Workspace, shells: BackgroundShells
) -> None:
    timed_out = result(None, "working\n", timed_out=True)

    answer, _ = await call(
        ScriptedSandbox(timed_out, chunks=("working\n",)), ws, shells, command="x", timeout=3
    )

    assert answer.is_error
    assert answer.content.startswith("Exit code: killed (timeout)")
    assert "Timed out after 3 s" in answer.content and "run_in_background" in answer.content
    assert INPUT_HINT not in answer.content  # it ended its line: no sign of a prompt


@pytest.mark.parametrize(
    ("chunks", "code", "timed_out"),
    [
        (("Do you want to continue? [Y/n] ", "Abort.\n"), 1, False),
        (("Proceed (y/n)? ",), None, True),
        (("Password: ",), None, True),
        (("name = input()\n", "EOFError: EOF when reading a line\n"), 1, False),
        (("Enter a value: ",), None, True),  # stopped mid-line at the timeout
    ],
)
async def test_a_command_waiting_for_input_gets_a_hint(
    ws: Workspace,
    shells: BackgroundShells,
    chunks: tuple[str, ...],
    code: int | None,
    timed_out: bool,
) -> None:
    sandbox = ScriptedSandbox(result(code, "".join(chunks), timed_out=timed_out), chunks=chunks)

    answer, _ = await call(sandbox, ws, shells, command="x")

    assert INPUT_HINT in answer.content
    assert "--yes" in answer.content and "pipe" in answer.content


async def test_a_successful_command_that_mentions_a_prompt_gets_no_hint(
    ws: Workspace, shells: BackgroundShells
) -> None:
    sandbox = ScriptedSandbox(
        result(0, "use [y/N] to confirm\n"), chunks=("use [y/N] to confirm\n",)
    )

    answer, _ = await call(sandbox, ws, shells, command="x")

    assert INPUT_HINT not in answer.content


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("touch: cannot touch '/etc/x': Read-only file system\n", "read-only"),
        ("curl: (6) Could not resolve host: pypi.org\n", "no network"),
        ("OSError: [Errno 101] Network is unreachable\n", "no network"),
    ],
)
async def test_a_sandbox_violation_is_an_error_naming_the_rule(
    ws: Workspace, shells: BackgroundShells, output: str, expected: str
) -> None:
    # A long first chunk: the message is found even when it is not in the output's tail.
    chunks = (output, "x" * 5000 + "\n")
    sandbox = ScriptedSandbox(result(1, "", "".join(chunks)), chunks=chunks)

    answer, _ = await call(sandbox, ws, shells, command="x")

    assert answer.is_error
    assert expected in answer.display["sandbox_violation"]
    assert f"Note: Sandbox: {answer.display['sandbox_violation']}" in answer.content


async def test_no_violation_on_the_host_or_when_the_command_succeeded(
    ws: Workspace, shells: BackgroundShells
) -> None:
    text = "Read-only file system\n"
    on_host, _ = await call(
        ScriptedSandbox(result(1, text, backend="host"), chunks=(text,), name="host"),
        ws,
        shells,
        command="x",
    )
    succeeded, _ = await call(
        ScriptedSandbox(result(0, text), chunks=(text,)), ws, shells, command="x"
    )

    assert "sandbox_violation" not in on_host.display and not on_host.is_error
    assert "sandbox_violation" not in succeeded.display and not succeeded.is_error


async def test_a_command_that_cannot_start_is_an_error(
    ws: Workspace, shells: BackgroundShells
) -> None:
    sandbox = ScriptedSandbox(result(), fail_with=FileNotFoundError("no bash"))

    answer, _ = await call(sandbox, ws, shells, command="x")
    background, _ = await call(sandbox, ws, shells, command="x", run_in_background=True)

    assert answer.is_error and "no bash" in answer.content
    assert background.is_error and "cannot start" in background.content


# ---- real commands on the host backend ------------------------------------------------


@pytest.fixture
async def host(ws: Workspace) -> AsyncIterator[HostSandbox]:
    from moot.sandbox.base import SandboxPolicy

    sandbox = HostSandbox(SandboxPolicy(ws.root, output_dir=ws.read_roots[0]), kill_grace=0.5)
    yield sandbox
    await sandbox.close()


async def test_output_streams_through_emit_and_long_output_names_its_file(
    ws: Workspace, shells: BackgroundShells, host: HostSandbox
) -> None:
    answer, emitted = await call(host, ws, shells, command="seq 1 20000")

    assert "".join(emitted) == "".join(f"{i}\n" for i in range(1, 20001))
    assert answer.display["truncated"] is True
    where = answer.display["output_file"]
    assert Path(where).parent == ws.read_roots[0]  # outside the project
    assert f"All of it is in {where}" in answer.content
    assert not (ws.root / ".moot").exists()


async def test_the_read_tool_reads_the_saved_output(
    ws: Workspace, shells: BackgroundShells, host: HostSandbox
) -> None:
    from moot.tools.read import read_tool

    answer, _ = await call(host, ws, shells, command="seq 1 20000")
    where = answer.display["output_file"]

    read = await read_tool(ws).invoke({"path": where, "offset": 12345, "limit": 1}, Emitted().ctx)

    assert not read.is_error, read.content
    assert read.content.startswith("12345\t12345")


async def test_a_real_prompt_on_closed_stdin_gets_the_hint(
    ws: Workspace, shells: BackgroundShells, host: HostSandbox
) -> None:
    answer, _ = await call(
        host, ws, shells, command='printf "Overwrite config? [y/N] "; read -r answer || exit 1'
    )

    assert answer.display["exit_code"] == 1
    assert INPUT_HINT in answer.content


async def test_background_shells_through_the_tools(
    ws: Workspace, shells: BackgroundShells, host: HostSandbox
) -> None:
    tools = {t.name: t for t in shell_tools(host, ws, shells)}
    ctx = Emitted().ctx
    child = marker()

    started = await tools["bash"].invoke(
        {"command": f"echo ready; sleep {child}", "run_in_background": True}, ctx
    )
    shell_id = started.display["shell_id"]
    first = await tools["shell_output"].invoke({"shell_id": shell_id, "wait": 10}, ctx)
    again = await tools["shell_output"].invoke({"shell_id": shell_id}, ctx)
    killed = await tools["kill_shell"].invoke({"shell_id": shell_id}, ctx)
    unknown = await tools["shell_output"].invoke({"shell_id": "shell_99"}, ctx)

    assert shell_id in started.content and "shell_output" in started.content
    assert first.content == f"{shell_id}: running\nready"
    assert again.content == f"{shell_id}: running\n(no new output)"
    assert killed.content.startswith(f"{shell_id}: killed (signal 15)")
    assert unknown.is_error and shell_id in unknown.content
    assert await gone(child) == []


async def test_closing_the_sessions_shells_ends_them(ws: Workspace, host: HostSandbox) -> None:
    shells = BackgroundShells()
    child = marker()
    answer, _ = await call(host, ws, shells, command=f"sleep {child}", run_in_background=True)
    assert not answer.is_error

    await shells.close()
    after, _ = await call(host, ws, shells, command="true", run_in_background=True)

    assert await gone(child) == []
    assert after.is_error and "session has ended" in after.content


async def test_a_background_shell_that_exits_reports_its_code(
    ws: Workspace, shells: BackgroundShells, host: HostSandbox
) -> None:
    tools = {t.name: t for t in shell_tools(host, ws, shells)}
    ctx = Emitted().ctx
    started = await tools["bash"].invoke(
        {"command": "echo bye; exit 4", "run_in_background": True}, ctx
    )
    shell_id = started.display["shell_id"]

    text = ""
    for _ in range(50):  # bounded: wait=1 each, until it has ended
        answer = await tools["shell_output"].invoke({"shell_id": shell_id, "wait": 1}, ctx)
        text += answer.content
        if answer.display["exit_code"] is not None:
            break

    assert "bye" in text
    assert answer.content.startswith(f"{shell_id}: exited with code 4")


# ---- sandbox rules, for real in bubblewrap -----------------------------------------------


@pytest.fixture
async def bwrap(ws: Workspace) -> AsyncIterator[BubblewrapSandbox]:
    from moot.sandbox.base import SandboxPolicy

    require(BACKENDS["bubblewrap"])
    sandbox = BubblewrapSandbox(SandboxPolicy(ws.root), kill_grace=0.5)
    yield sandbox
    await sandbox.close()


async def test_a_write_outside_the_workspace_is_a_clear_violation(
    ws: Workspace, shells: BackgroundShells, bwrap: BubblewrapSandbox
) -> None:
    target = Path("/var/tmp") / f"moot-bash-{uuid.uuid4().hex}"

    answer, _ = await call(bwrap, ws, shells, command=f"echo x > {target}")

    assert not on_host(target)
    assert answer.is_error
    assert "read-only" in answer.display["sandbox_violation"]
    assert str(ws.root) in answer.content


async def test_a_network_attempt_is_a_clear_violation(
    ws: Workspace, shells: BackgroundShells, bwrap: BubblewrapSandbox
) -> None:
    answer, _ = await call(bwrap, ws, shells, command="exec 3<>/dev/tcp/192.0.2.1/80", timeout=20)

    assert answer.is_error
    assert "no network" in answer.display["sandbox_violation"]
    assert answer.display["backend"] == "bubblewrap"


async def test_a_timeout_in_bubblewrap_leaves_nothing_behind(
    ws: Workspace, shells: BackgroundShells, bwrap: BubblewrapSandbox
) -> None:
    child = marker()

    answer, _ = await call(bwrap, ws, shells, command=f"sleep {child} & wait", timeout=0.5)

    assert answer.display["timed_out"] is True
    assert await gone(child) == []


async def test_a_write_landlock_refuses_is_explained_to_the_model(
    ws: Workspace, shells: BackgroundShells
) -> None:
    """Landlock refuses with "Permission denied" where bubblewrap says "Read-only file
    system"; the model is told what Landlock allows, its fixed workspace root included."""
    require(BACKENDS["landlock"])
    from moot.sandbox.base import SandboxPolicy
    from moot.sandbox.landlock import LandlockSandbox

    sandbox = LandlockSandbox(SandboxPolicy(workspace=ws.root))
    try:
        answer, _ = await call(sandbox, ws, shells, command="touch made-at-root")
    finally:
        await sandbox.close()

    assert answer.is_error
    violation = answer.display["sandbox_violation"]
    assert "Landlock" in violation and "make new files in a subdirectory" in violation
    assert not (ws.root / "made-at-root").exists()
