"""What `moot mcp serve` offers besides running tools, read by the `mcp` SDK's client over
stdio: tool annotations (a client can run the read-only ones unasked) and `moot_task`'s
structured result, the workspace's skills and custom commands as prompts, and the files the
session may read as resources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from mcp_reference import inspector
from skill_files import skill

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def workspace(tmp_path: Path, private_moot_home: Path) -> Path:
    root = tmp_path / "work"
    (root / ".moot" / "commands").mkdir(parents=True)
    (root / "notes.txt").write_text("hello world\n")
    (root / "secret.txt").write_text("the key is 42\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.txt").write_text("made\n")
    (root / ".moot" / "commands" / "review.md").write_text(
        "---\ndescription: Review some code\nargument-hint: <path>\n---\n"
        "Review $ARGUMENTS carefully.\n"
    )
    skill(root / ".moot" / "skills" / "tidy", description="Tidy the imports. Use when asked.")
    return root


@asynccontextmanager
async def served(workspace: Path, *flags: str) -> AsyncIterator[Client]:
    keep = ("MOOT_HOME", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["MOOT_SANDBOX"] = "none"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "moot.cli", "mcp", "serve", *flags],
        cwd=str(workspace),
        env=env,
    )
    async with Client(params) as client:
        yield client


async def test_every_tool_says_how_it_behaves(workspace: Path) -> None:
    async with served(workspace) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert all(tool.annotations is not None and tool.annotations.title for tool in tools.values())
    read, edit, bash = (
        tools["read"].annotations,
        tools["edit"].annotations,
        tools["bash"].annotations,
    )
    assert read is not None and edit is not None and bash is not None
    assert (read.read_only_hint, read.destructive_hint, read.open_world_hint) == (
        True,
        False,
        False,
    )
    assert (edit.read_only_hint, edit.destructive_hint) == (False, True)
    assert bash.open_world_hint is True and bash.read_only_hint is False
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert {"read", "grep", "glob", "ls", "git_status", "git_diff"} <= read_only
    assert read_only.isdisjoint({"edit", "write", "multi_edit", "bash", "git_commit", "moot_task"})
    schema = tools["moot_task"].output_schema
    assert schema is not None and {"answer", "session_id"} <= set(schema["properties"])


async def test_moot_task_answers_with_structure(workspace: Path, tmp_path: Path) -> None:
    model = tmp_path / "agent.json"
    model.write_text(json.dumps({"turns": [{"text": "Done."}]}))
    async with served(workspace, "--model", f"scripted:{model}") as client:
        result = await client.call_tool("moot_task", {"task": "do it"})

    assert result.structured_content is not None
    assert result.structured_content["answer"] == "Done."
    assert result.structured_content["session_id"].startswith("ses_")
    assert result.structured_content["state"] == "completed"


async def test_skills_and_custom_commands_are_prompts(workspace: Path) -> None:
    async with served(workspace) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        review = await client.get_prompt("review", {"arguments": "src/parser.py"})
        tidy = await client.get_prompt("tidy", {"arguments": "app.py"})
        with pytest.raises(MCPError, match="no command /nope"):
            await client.get_prompt("nope", {})

    assert {"review", "tidy"} <= set(prompts)
    assert prompts["review"].description.startswith("Review some code")
    (message,) = review.messages
    assert message.role == "user" and "Review src/parser.py carefully." in message.content.text
    assert "Do the thing with app.py." in tidy.messages[0].content.text


async def test_resources_are_the_files_the_session_may_read(workspace: Path) -> None:
    async with served(workspace, "--disallowedTools", "Read(./secret.txt)") as client:
        listed = {r.name: r for r in (await client.list_resources()).resources}
        notes = await client.read_resource(listed["notes.txt"].uri)
        templates = await client.list_resource_templates()
        with pytest.raises(MCPError, match="refused"):
            await client.read_resource((workspace / "secret.txt").as_uri())
        with pytest.raises(MCPError, match="outside"):
            await client.read_resource("file:///etc/passwd")

    assert "notes.txt" in listed and "secret.txt" not in listed
    assert "build/out.txt" not in listed  # gitignored
    assert notes.contents[0].text == "hello world\n"
    assert templates.resource_templates == []


def test_the_mcp_inspector_cli_reads_annotations_prompts_and_resources(workspace: Path) -> None:
    launcher = inspector()

    def ask(method: str, *more: str) -> Any:
        env = {"MOOT_SANDBOX": "none"}
        if os.environ.get("PYTHONPATH"):  # the inspector refuses an empty value
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        server = [sys.executable, "-m", "moot.cli", "mcp", "serve"]
        flags = [f for k, v in env.items() for f in ("-e", f"{k}={v}")]
        done = subprocess.run(
            [str(launcher), "--cli", *flags, "--cwd", str(workspace), *server,
             "--method", method, *more],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "HOME": str(workspace.parent)},  # its catalog goes there
        )  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout
        return json.loads(done.stdout)

    tools = {t["name"]: t for t in ask("tools/list")["tools"]}
    resources = ask("resources/list")["resources"]
    read = ask("resources/read", "--uri", (workspace / "notes.txt").as_uri())
    prompts = ask("prompts/list")["prompts"]
    review = ask("prompts/get", "--prompt-name", "review", "--prompt-args", "arguments=app.py")

    assert tools["read"]["annotations"]["readOnlyHint"] is True
    assert tools["write"]["annotations"]["destructiveHint"] is True
    assert "outputSchema" in tools["moot_task"]
    assert "notes.txt" in {r["name"] for r in resources}
    assert read["contents"][0]["text"] == "hello world\n"
    assert {"review", "tidy"} <= {p["name"] for p in prompts}
    assert "Review app.py carefully." in review["messages"][0]["content"]["text"]
