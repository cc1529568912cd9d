"""The real Claude Agent SDK (Python) gives moot more directories to work in (`add_dirs`,
`--add-dir`): the file tools read and write them, sandboxed commands write them, and each keeps
the workspace's containment (real `moot` processes, the real bubblewrap sandbox)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ClaudeSDKClient,
    PermissionResultAllow,
    ToolPermissionContext,
    UserMessage,
)

from agent_sdk_options import collect, sdk_options


async def _allow(tool: str, arguments: dict[str, Any], context: ToolPermissionContext) -> Any:
    return PermissionResultAllow()


async def _run(where: Path, turns: list[dict[str, Any]], **more: Any) -> list[Any]:
    options = sdk_options(where, turns, can_use_tool=_allow, **more)
    async with ClaudeSDKClient(options) as client:
        await client.query("work there")
        return await collect(client.receive_response())


def _results(messages: list[Any]) -> list[tuple[bool, str]]:
    return [
        (bool(b.is_error), str(b.content))
        for m in messages
        if isinstance(m, UserMessage)
        for b in m.content
    ]


def _content(path: str) -> dict[str, str]:
    return {"path": path, "content": "x"}


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    (other / ".git").mkdir(parents=True)
    (other / "notes.txt").write_text("kept elsewhere\n")
    return work, other


async def test_the_file_tools_and_the_sandbox_work_in_an_added_directory(tmp_path: Path) -> None:
    work, other = _setup(tmp_path)
    turns = [
        {"tool_calls": [{"name": "read", "arguments": {"path": f"{other}/notes.txt"}}]},
        {"tool_calls": [{"name": "write", "arguments": _content(f"{other}/new.txt")}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"echo hi > {other}/said.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"touch {other}/.git/hooks"}}]},
        {"text": "done"},
    ]  # fmt: skip

    messages = await _run(work, turns, add_dirs=[str(other)])

    results = _results(messages)
    assert not results[0][0] and "kept elsewhere" in results[0][1]
    assert not results[1][0] and (other / "new.txt").read_text() == "x"
    assert not results[2][0] and (other / "said.txt").read_text() == "hi\n"
    assert results[3][0] and not (other / ".git" / "hooks").exists()  # read-only, as ours
    assert messages[-1].result == "done"


async def test_without_it_the_directory_stays_out_of_reach(tmp_path: Path) -> None:
    work, other = _setup(tmp_path)
    turns = [
        {"tool_calls": [{"name": "read", "arguments": {"path": f"{other}/notes.txt"}}]},
        {"tool_calls": [{"name": "write", "arguments": _content(f"{other}/new.txt")}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"echo hi > {other}/said.txt"}}]},
        {"text": "done"},
    ]  # fmt: skip

    messages = await _run(work, turns)

    read, write, _ = _results(messages)
    assert read[0] and "outside" in read[1] and write[0] and "outside" in write[1]
    assert sorted(p.name for p in other.iterdir()) == [".git", "notes.txt"]  # bash's too


async def test_an_added_directory_keeps_its_own_protected_paths(tmp_path: Path) -> None:
    work, other = _setup(tmp_path)
    write = {"path": f"{other}/.moot/settings.json", "content": "{}"}
    linked = other / "out"
    linked.symlink_to(tmp_path)  # a way out of the added directory
    turns = [
        {"tool_calls": [{"name": "write", "arguments": write}]},
        {"tool_calls": [{"name": "write", "arguments": _content(f"{linked}/x.txt")}]},
        {"text": "done"},
    ]  # fmt: skip

    messages = await _run(work, turns, add_dirs=[str(other)])

    assert [error for error, _ in _results(messages)] == [True, True]
    assert not (other / ".moot").exists() and not (tmp_path / "x.txt").exists()


def test_moots_own_directories_cannot_be_added(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "script.json").write_text('[{"text": "never"}]')
    result = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", "scripted:script.json",
         "--add-dir", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env={**_env(), "MOOT_HOME": str(home)},
        timeout=30,
    )  # fmt: skip

    assert result.returncode == 2
    assert "--add-dir" in result.stderr and "moot's own" in result.stderr


def test_the_docker_sandbox_refuses_an_added_directory(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "script.json").write_text('[{"text": "never"}]')
    environ = {**_env(), "MOOT_HOME": str(tmp_path / "home"), "MOOT_SANDBOX": "docker"}
    result = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", "scripted:script.json",
         "--add-dir", "other"],
        capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=30,
    )  # fmt: skip

    assert result.returncode == 2
    assert "--add-dir: the docker sandbox mounts the workspace only" in result.stderr


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}


async def _bash_only(tool: str, arguments: dict[str, Any], context: ToolPermissionContext) -> Any:
    from claude_agent_sdk import PermissionResultDeny

    if tool == "bash":
        return PermissionResultAllow()
    return PermissionResultDeny(message=f"{tool} was asked for")


async def test_accept_edits_search_and_deny_masks_reach_an_added_directory(
    tmp_path: Path,
) -> None:
    work, other = _setup(tmp_path)
    (other / "src").mkdir()
    (other / "src" / "a.py").write_text("needle = 1\n")
    (other / "secret.txt").write_text("hush-hush\n")
    turns = [
        {"tool_calls": [{"name": "write", "arguments": _content(f"{other}/src/b.py")}]},
        {"tool_calls": [{"name": "grep", "arguments": {"pattern": "needle", "path": str(other)}}]},
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.py", "path": str(other)}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"grep -r hush {other}; true"}}]},
        {"text": "done"},
    ]  # fmt: skip
    options = sdk_options(
        work,
        turns,
        can_use_tool=_bash_only,  # an edit that asked would be refused
        permission_mode="acceptEdits",
        disallowed_tools=[f"Read(/{other}/secret.txt)"],
        add_dirs=[str(other)],
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("work there")
        messages = await collect(client.receive_response())

    wrote, grepped, globbed, shell = _results(messages)
    assert not wrote[0] and (other / "src" / "b.py").read_text() == "x", wrote
    assert grepped == (False, f"{other}/src/a.py:1:needle = 1"), grepped
    assert not globbed[0] and f"{other}/src/a.py" in globbed[1], globbed
    assert not shell[0] and "hush" not in shell[1], shell


async def test_a_script_a_hook_runs_in_an_added_directory_stays_protected(tmp_path: Path) -> None:
    work, other = _setup(tmp_path)
    script = other / "tools" / "check.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    hooks = {
        "PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": str(script)}]}]
    }
    turns = [
        {"tool_calls": [{"name": "read", "arguments": {"path": str(script)}}]},
        {"tool_calls": [{"name": "write", "arguments": _content(str(script))}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"echo evil >> {script}"}}]},
        {"text": "done"},
    ]  # fmt: skip
    options = sdk_options(
        work,
        turns,
        can_use_tool=_bash_only,  # the write asks (firm): refused; the command is allowed
        permission_mode="acceptEdits",
        settings=json.dumps({"hooks": hooks}),
        add_dirs=[str(other)],
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("work there")
        messages = await collect(client.receive_response())

    _, wrote, shell = _results(messages)
    assert wrote == (True, "write was asked for"), wrote
    assert shell[0], shell
    assert script.read_text() == "#!/bin/sh\nexit 0\n"  # read-only in the sandbox too
