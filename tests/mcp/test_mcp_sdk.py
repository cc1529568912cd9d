"""MCP servers attached from the Python API (`moot.run(..., mcp_servers={...})`): defined as in
`.mcp.json`, their tools are there for the first model request, and they stop with the run."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from mcp_helpers import call, server
from mcp_reference import everything, require
from moot import Agent, FunctionProvider, async_run, run
from moot.protocol import events as ev
from moot.providers.base import ModelRequest

pytestmark = pytest.mark.timeout(120)


def echo_model(offered: list[list[str]]) -> FunctionProvider:
    def model(request: ModelRequest) -> object:
        offered.append([t.name for t in request.tools])
        if len(offered) == 1:
            return call("mcp__good__echo", text="from the sdk")
        return {"text": "done"}

    return FunctionProvider(model)


async def test_a_runs_mcp_servers_serve_its_first_request_and_stop_with_it(
    private_moot_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    offered: list[list[str]] = []
    good = server("good", env={"MOOT_TEST_MCP_LOG": str(log)})

    result = await async_run(
        "say it", Agent("main", model=echo_model(offered)), mcp_servers={"good": good}
    )

    assert "mcp__good__echo" in offered[0]
    (finished,) = [e for e in result.events if isinstance(e, ev.ToolFinished)]
    assert finished.content == "from the sdk" and result.output == "done"
    started = log.read_text().splitlines()[0]
    pid = int(started.rpartition("pid=")[2])
    assert gone(pid)  # the server ended with the run


async def test_what_a_server_started_in_its_process_group_stops_with_the_run(
    private_moot_home: Path, tmp_path: Path
) -> None:
    """The SDK signals a server's group only when the server outlives its closed stdin: a
    server that ended by itself left its helpers running for good."""
    log = tmp_path / "server.log"
    offered: list[list[str]] = []
    good = server("parent", env={"MOOT_TEST_MCP_LOG": str(log)})

    result = await async_run(
        "say it", Agent("main", model=echo_model(offered)), mcp_servers={"good": good}
    )

    assert result.output == "done"
    (helper,) = [line for line in log.read_text().splitlines() if line.startswith("helper")]
    pid = int(helper.rpartition("pid=")[2])
    try:
        assert gone(pid)  # the helper ended with its server
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def gone(pid: int, limit: float = 10) -> bool:
    """Whether process `pid` is gone (or a zombie), polled for `limit` seconds at most."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][:1]
        except (ProcessLookupError, FileNotFoundError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_definition_that_cannot_start_is_refused_before_the_run(
    private_moot_home: Path,
) -> None:
    with pytest.raises(ValueError, match="cannot start: broken: unknown type"):
        run("hi", Agent("main", model="scripted:x"), mcp_servers={"broken": {"args": ["x"]}})


async def test_a_servers_question_goes_to_the_programs_on_elicit(private_moot_home: Path) -> None:
    """server-everything offers its elicitation tool only to a client that can answer."""
    modules = require()
    asked: list[tuple[str, str]] = []
    offered: list[list[str]] = []
    trigger = "mcp__everything__trigger-elicitation-request"

    async def on_elicit(server: str, message: str, schema: dict[str, object]) -> object:
        asked.append((server, message))
        return "accept", {"name": "Ada Lovelace"}

    def model(request: ModelRequest) -> object:
        offered.append([t.name for t in request.tools])
        if trigger in offered[0] and len(offered) == 1:
            return call(trigger)
        return {"text": "done"}

    servers = {"everything": everything(modules)}
    agent = Agent("main", model=FunctionProvider(model))
    result = await async_run("ask me", agent, mcp_servers=servers, on_elicit=on_elicit)
    answering, offered = offered, []
    await async_run("ask me", Agent("main", model=FunctionProvider(model)), mcp_servers=servers)

    (finished,) = [e for e in result.events if isinstance(e, ev.ToolFinished)]
    assert "User provided the requested information" in finished.content
    assert "Ada Lovelace" in finished.content
    assert asked and asked[0][0] == "everything"
    assert trigger in answering[0] and trigger not in offered[0]
