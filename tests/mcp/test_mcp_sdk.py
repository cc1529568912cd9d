"""MCP servers attached from the Python API (`moot.run(..., mcp_servers={...})`): defined as in
`.mcp.json`, their tools are there for the first model request, and they stop with the run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mcp_helpers import call, server
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
