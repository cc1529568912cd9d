"""Diagnostics after edits in a real session: a scripted model edits, a real basedpyright (or
typescript-language-server) checks, and the edit's result says what the edit broke."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from lsp_servers import path_with, python_server_dir, typescript_server_dir, use_sandbox
from moot.client.local import SessionOptions, open_client
from moot.commands.answers import run_tool
from moot.lsp.session import COLD_WAIT
from moot.protocol import events as ev
from moot.protocol import ops
from moot.sandbox.process import descendants
from moot.testing.drive import drive_turn

UTIL = "def helper() -> int:\n    return 1\n"
MAIN = "from pkg.util import helper\n\n\ndef run() -> int:\n    return helper()\n"


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit", "arguments": {"path": path, "old": old, "new": new}}]}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text(UTIL)
    (root / "pkg" / "main.py").write_text(MAIN)
    return root


def script(root: Path, turns: list[dict[str, Any]]) -> str:
    path = root.parent / "script.yaml"
    path.write_text(yaml.safe_dump([*turns, {"text": "done"}]))
    return f"scripted:{path}"


async def results(
    root: Path,
    turns: list[dict[str, Any]],
    settings: dict[str, Any] | None = None,
    seen: set[int] | None = None,
) -> list[ev.ToolFinished]:
    """The turn's tool results; `seen` gets the processes it started that ran as a tool
    finished (the servers, their helpers)."""
    ours_before = descendants(os.getpid())
    client = open_client(
        SessionOptions(
            cwd=root,
            model=script(root, turns),
            permission_mode="acceptEdits",
            settings=json.dumps(settings) if settings else None,
        )
    )

    def react(event: ev.Event) -> None:
        if seen is not None and isinstance(event, ev.ToolFinished):
            seen.update(descendants(os.getpid()) - ours_before)

    try:
        outcome = await drive_turn(client, "go", react=react)
        return outcome.of(ev.ToolFinished)
    finally:
        await client.close()


@pytest.mark.parametrize("sandbox", ["bubblewrap", "landlock", "none"])
async def test_an_edit_that_breaks_an_import_gets_the_error_and_the_fix_reports_none(
    project: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    use_sandbox(monkeypatch, sandbox)
    broken = "from pkg.utils import helper"
    turns = [
        edit("pkg/main.py", "from pkg.util import helper", broken),
        edit("pkg/main.py", broken, "from pkg.util import helper"),
    ]

    breaking, fixing = await results(project, turns)

    assert not breaking.is_error, breaking.content
    assert 'pkg/main.py:1:6: error: Import "pkg.utils" could not be resolved' in breaking.content
    assert "1 new error in pkg/main.py" in breaking.display["diagnostics"]
    assert not fixing.is_error, fixing.content
    assert "no new errors in pkg/main.py" in fixing.content
    assert "error:" not in fixing.content


async def test_errors_that_were_there_before_the_edit_are_not_reported(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    (project / "pkg" / "main.py").write_text("import nosuch\n\n" + MAIN)
    turns = [edit("pkg/main.py", "def run() -> int:", "def run() -> int:  # run it")]

    (result,) = await results(project, turns)

    assert "no new errors in pkg/main.py" in result.content, result.content


async def test_a_server_off_in_settings_adds_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    turns = [edit("pkg/main.py", "pkg.util", "pkg.utils")]

    (result,) = await results(project, turns, {"lsp": {"python": {"off": True}}})

    assert result.content.startswith("Edited pkg/main.py") and "\n[" not in result.content
    assert "diagnostics" not in result.display


@pytest.mark.parametrize("sandbox", ["bubblewrap", "landlock"])
async def test_a_typescript_edit_that_breaks_an_import_gets_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    root = tmp_path / "web"
    root.mkdir()
    (root / "util.ts").write_text("export function helper(): number {\n  return 1;\n}\n")
    (root / "main.ts").write_text(
        'import { helper } from "./util";\n\nexport const x = helper();\n'
    )
    monkeypatch.setenv("PATH", path_with(typescript_server_dir()))
    use_sandbox(monkeypatch, sandbox)
    turns = [edit("main.ts", '"./util"', '"./utils"'), edit("main.ts", '"./utils"', '"./util"')]

    seen: set[int] = set()

    breaking, fixing = await results(root, turns, seen=seen)

    assert "1 new error in main.ts" in breaking.content, breaking.content
    assert "Cannot find module './utils'" in breaking.content
    assert "no new errors in main.ts" in fixing.content, fixing.content
    assert len(seen) >= 2  # typescript-language-server and its tsserver: none is left
    assert not left_running(seen)


CRASHING = {
    "command": sys.executable,
    "args": ["-c", "import sys; sys.stderr.write('boom: cannot start\\n'); sys.exit(3)"],
}
HANGING = {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"]}
"""Servers that run where the sandbox shows them (moot's Python, not the host's `/tmp`)."""
LABEL = Path(sys.executable).name


async def test_a_crashing_server_leaves_the_edit_done_with_a_note(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    turns = [edit("pkg/main.py", "pkg.util", "pkg.utils"), edit("pkg/main.py", "run", "go")]

    first, second = await results(project, turns, {"lsp": {"python": CRASHING}})

    assert first.content.startswith("Edited pkg/main.py"), first.content
    assert f"{LABEL} stopped (exit code 3): boom: cannot start" in first.content
    assert second.content.startswith("Edited pkg/main.py")
    assert "none for python files this session" in second.content
    assert (project / "pkg" / "main.py").read_text().startswith("from pkg.utils import helper")


@pytest.mark.parametrize("sandbox", ["bubblewrap", "landlock"])
async def test_a_hanging_server_never_holds_the_edit_past_the_bound(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    use_sandbox(monkeypatch, sandbox)
    turns = [edit("pkg/main.py", "pkg.util", "pkg.utils")]
    started = time.monotonic()
    seen: set[int] = set()

    (result,) = await results(project, turns, {"lsp": {"python": HANGING}}, seen=seen)

    assert time.monotonic() - started < COLD_WAIT + 5
    assert result.content.startswith("Edited pkg/main.py")
    assert f"{LABEL} did not answer within {COLD_WAIT:g} s; the edit is done" in (result.content)
    assert seen, "the server was running after the edit"
    assert not left_running(seen)  # none is left


@pytest.mark.parametrize("sandbox", ["bubblewrap", "landlock"])
async def test_a_sessions_servers_stop_with_it_and_leave_no_process(
    project: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    use_sandbox(monkeypatch, sandbox)
    ours_before = descendants(os.getpid())
    seen: set[int] = set()
    client = open_client(
        SessionOptions(
            cwd=project,
            model=script(project, [edit("pkg/main.py", "run", "go")]),
            permission_mode="acceptEdits",
        )
    )
    try:

        def react(event: ev.Event) -> None:
            if isinstance(event, ev.ToolFinished):
                seen.update(descendants(os.getpid()) - ours_before)

        outcome = await drive_turn(client, "go", react=react)
        assert "no new errors" in outcome.of(ev.ToolFinished)[0].content
        assert seen, "the server was running after the edit"
    finally:
        await client.close()

    assert not left_running(seen)


def left_running(pids: set[int]) -> list[int]:
    """Those of `pids` still alive 5 s on (polled: a process SIGKILLed a moment ago, bwrap's
    init among them, can still show as sleeping with the signal pending)."""
    deadline = time.monotonic() + 5
    while (running := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running


def alive(pid: int) -> bool:
    """Running, or stopped: not gone and not a zombie (bubblewrap's init inside the sandbox is
    reparented to this machine's init when bwrap dies, which reaps it in its own time)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


async def test_the_diagnostics_tool_lists_a_files_errors_and_the_changed_files(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's `diagnostics` and the person's `/diagnostics` (the same tool, `RunTool`)."""
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    (project / "pkg" / "util.py").write_text("import nosuch\n\n" + UTIL)
    turns = [
        edit("pkg/main.py", "return helper()", "return helper() + missing"),
        {"tool_calls": [{"name": "diagnostics", "arguments": {}}]},
    ]
    client = open_client(
        SessionOptions(cwd=project, model=script(project, turns), permission_mode="acceptEdits")
    )
    try:
        _, listed = (await drive_turn(client, "go")).of(ev.ToolFinished)
        by_person = await run_tool(client, "diagnostics", {"path": "pkg/util.py"})
    finally:
        await client.close()

    assert 'pkg/main.py:5:23: error: "missing" is not defined' in listed.content, listed.content
    assert "pkg/util.py" not in listed.content  # not changed by this session
    assert 'pkg/util.py:1:8: error: Import "nosuch" could not be resolved' in by_person.content
    assert not by_person.is_error


@pytest.mark.parametrize("sandbox", ["none", "bubblewrap", "landlock"])
async def test_a_server_the_repository_ships_on_path_is_never_run(
    project: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """A hostile repository's own `basedpyright-langserver` (in its `.venv/bin`, or found
    through a relative PATH entry) is passed over for the one outside the workspace, and the
    server does not find the repository's `python` either (on the host, where nothing
    contains it, and in each sandbox: the marker lies where its commands may write)."""
    marker = project / "pkg" / "ran.log"
    for where in (project / ".venv" / "bin", project / "node_modules" / ".bin"):
        where.mkdir(parents=True)
        for name in ("basedpyright-langserver", "python", "python3"):  # what pyright runs too
            fake = where / name
            fake.write_text(f"#!/bin/sh\necho $0 >> {marker}\nexec sleep 600\n")
            fake.chmod(0o755)
    monkeypatch.chdir(project)
    monkeypatch.setenv(
        "PATH",
        path_with(Path("node_modules/.bin"), project / ".venv" / "bin", python_server_dir()),
    )
    use_sandbox(monkeypatch, sandbox)

    (result,) = await results(project, [edit("pkg/main.py", "pkg.util", "pkg.utils")])

    assert not marker.exists(), marker.read_text()
    assert 'Import "pkg.utils" could not be resolved' in result.content, result.content


async def test_write_and_multi_edit_report_the_errors_they_bring_too(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    made = "from pkg.util import helper, nothing\n"
    edits = [{"old": "helper\n", "new": "helper, absent\n"}, {"old": "run", "new": "go"}]
    turns = [
        {"tool_calls": [{"name": "write", "arguments": {"path": "pkg/new.py", "content": made}}]},
        {
            "tool_calls": [
                {"name": "multi_edit", "arguments": {"path": "pkg/main.py", "edits": edits}}
            ]
        },
    ]

    written, edited = await results(project, turns)

    assert written.content.startswith("Created pkg/new.py"), written.content
    assert '"nothing" is unknown import symbol' in written.content
    assert "1 new error in pkg/new.py" in written.content
    assert '"absent" is unknown import symbol' in edited.content, edited.content


async def test_an_interrupt_while_diagnostics_are_awaited_keeps_the_edit_and_its_result(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edit is written before the wait: an interrupt then ends the wait, and the edit's
    result stands (not "interrupted"), saying the diagnostics were skipped."""
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    main = project / "pkg" / "main.py"
    turns = [edit("pkg/main.py", "pkg.util", "pkg.utils")]
    client = open_client(
        SessionOptions(
            cwd=project,
            model=script(project, turns),
            permission_mode="acceptEdits",
            settings=json.dumps({"lsp": {"python": HANGING}}),
        )
    )
    waits: list[asyncio.Task[None]] = []

    async def interrupt_once_written() -> None:
        for _ in range(500):  # bounded polling: until the server the wait is for has started
            if "pkg.utils" in main.read_text() and hanging_server_started():
                break
            await asyncio.sleep(0.02)
        client.submit(ops.Interrupt())

    def react(event: ev.Event) -> None:
        if isinstance(event, ev.ToolStarted):
            waits.append(asyncio.ensure_future(interrupt_once_written()))

    started = time.monotonic()
    try:
        outcome = await drive_turn(client, "go", react=react)
    finally:
        await client.close()
        await asyncio.gather(*waits)

    (result,) = outcome.of(ev.ToolFinished)
    assert time.monotonic() - started < COLD_WAIT
    assert outcome.finished.stop_reason == "user_cancelled"
    assert not result.interrupted and not result.is_error, result.content
    assert result.content.startswith("Edited pkg/main.py"), result.content
    assert "diagnostics: skipped, the wait for them was interrupted" in result.content
    assert result.display["diagnostics"].startswith("[diagnostics: skipped")


async def test_the_persons_edit_interrupted_in_the_wait_is_answered_with_its_result(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for an edit the person runs (`RunTool`): its `tool_ran` holds the result."""
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    main = project / "pkg" / "main.py"
    client = open_client(
        SessionOptions(
            cwd=project,
            model=script(project, []),
            permission_mode="acceptEdits",
            settings=json.dumps({"lsp": {"python": HANGING}}),
        )
    )
    try:
        arguments = {"path": "pkg/main.py", "old": "pkg.util", "new": "pkg.utils"}
        running = asyncio.ensure_future(run_tool(client, "edit", arguments))
        for _ in range(500):  # bounded polling: until the server the wait is for has started
            if "pkg.utils" in main.read_text() and hanging_server_started():
                break
            await asyncio.sleep(0.02)
        client.submit(ops.Interrupt())
        ran = await asyncio.wait_for(running, 10)
    finally:
        await client.close()

    assert not ran.interrupted and not ran.is_error, ran.content
    assert ran.content.startswith("Edited pkg/main.py"), ran.content
    assert "diagnostics: skipped, the wait for them was interrupted" in ran.content


def hanging_server_started() -> bool:
    """`HANGING` runs (a process of this one's, bubblewrap's inside it too)."""
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            if b"time.sleep(600)" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
    return False


async def test_under_docker_the_diagnostics_tool_says_why_there_are_none(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox image holds no language server, and none runs outside it."""
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    use_sandbox(monkeypatch, "docker")
    client = open_client(
        SessionOptions(cwd=project, model=script(project, []), permission_mode="acceptEdits")
    )
    try:
        result = await run_tool(client, "diagnostics", {"path": "pkg/main.py"})
    finally:
        await client.close()

    assert result.content.startswith("pkg/main.py: no language server for it here."), result.content
    assert "python: the session's sandbox is Docker, whose image has no language servers" in (
        result.content
    ), result.content


async def test_under_docker_the_first_edit_says_once_why_it_gets_no_diagnostics(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with(python_server_dir()))
    use_sandbox(monkeypatch, "docker")
    turns = [edit("pkg/main.py", "pkg.util", "pkg.utils"), edit("pkg/main.py", "run", "go")]

    first, second = await results(project, turns)

    note = "[diagnostics: none this session: the session's sandbox is Docker, whose image has"
    assert first.content.startswith("Edited pkg/main.py") and note in first.content, first.content
    assert first.display["diagnostics"].startswith(note)
    assert second.content.startswith("Edited pkg/main.py") and "\n[" not in second.content
