"""MCP and ACP: what configured servers cost start-up, a tool call's overhead, ACP's start.

- `moot --version`, and `moot -p` process start to its first model request (a real HTTP
  server on 127.0.0.1 answering instantly), with no MCP server and with three configured (the
  SDK's `good` test server, `tests/mcp_servers.py`; their tool lists cached by an earlier run,
  so the first request carries their tools). The servers start in the background, in moot's
  host process: nothing should wait for them.
- An MCP tool call through moot (`McpManager`, the host process, stdio) against the same call
  made by the SDK's own client straight to the same server: the difference is moot's overhead
  beyond the server's own time.
- `moot acp`: process start to `initialize` answered (the interpreter and the ACP SDK's
  import), then `session/new` answered (ready for a prompt).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from report import Row, ms
from timing import VENV_BIN, median, percentile, time_processes

TESTS = Path(__file__).resolve().parents[1] / "tests"
SERVERS = TESTS / "mcp_servers.py"

NAME = "mcp"


def _servers(count: int) -> dict[str, object]:
    return {
        f"s{i}": {"command": sys.executable, "args": [str(SERVERS), "good"]} for i in range(count)
    }


def _home(root: Path, servers: int) -> Path:
    home = root / f"home{servers}"
    (home / "config").mkdir(parents=True, exist_ok=True)
    settings = {"mcpServers": _servers(servers)} if servers else {}
    (home / "config" / "settings.json").write_text(json.dumps(settings))
    return home


def _versions(runs: int, homes: dict[str, Path]) -> list[Row]:
    rows = []
    for label, home in homes.items():
        os.environ["MOOT_HOME"] = str(home)
        try:
            (result,) = time_processes(
                {"v": [str(VENV_BIN / "moot"), "--version"]}, runs=runs
            ).values()
        finally:
            os.environ.pop("MOOT_HOME", None)
        walls = result.walls
        rows.append(
            Row(
                f"moot --version, {label}: wall p50 / p90 ({runs} runs)",
                f"{ms(median(walls))} / {ms(percentile(walls, 90))}",
                "unchanged",
            )
        )
    return rows


def _first_requests(runs: int, root: Path) -> list[Row]:
    """Both set-ups taking turns, so drift in the machine's load hits them alike."""
    import subprocess

    from model_server import ModelServer, Reply
    from provider_speed import _env, _moot  # puts tests/ on sys.path for the two below
    from wire_builders import anthropic

    works = {}
    for servers in (0, 3):
        work = root / f"work{servers}"
        settings = work / "home" / "config"  # provider_speed's MOOT_HOME is work/home
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "settings.json").write_text(
            json.dumps({"mcpServers": _servers(servers)} if servers else {})
        )
        if servers:
            _warm_cache(work)
        works[servers] = work
    times: dict[int, list[float]] = {0: [], 3: []}
    command = [*_moot("hi"), "--output-format", "json"]
    with ModelServer() as server:
        for round_number in range(runs + 2):
            for servers, work in works.items():
                server.reply(Reply(body=anthropic("ok")))
                seen = len(server.requests)
                started = time.perf_counter()
                proc = subprocess.Popen(
                    command, cwd=work, env=_env(server, work / "home"), stdout=subprocess.DEVNULL
                )
                while len(server.requests) == seen and proc.poll() is None:
                    time.sleep(0.0005)
                if round_number >= 2:
                    times[servers].append(time.perf_counter() - started)
                proc.wait()
    rows = []
    for servers, label in ((0, "no MCP server"), (3, "3 MCP servers (tool lists cached)")):
        found = times[servers]
        rows.append(
            Row(
                f"moot -p, {label}: start to first model request, p50 / p90 ({runs} runs)",
                f"{ms(median(found))} / {ms(percentile(found, 90))}",
                "unchanged",
            )
        )
    return rows


def _warm_cache(work: Path) -> None:
    """One session that waits for the servers, so later runs find their tool lists cached."""
    code = (
        "import asyncio, time\n"
        "from pathlib import Path\n"
        "from moot.client.local import SessionOptions, open_client\n"
        "async def main():\n"
        f"    client = open_client(SessionOptions(cwd=Path({str(work)!r}), model='scripted:x'))\n"
        "    client.subscribe().close()\n"
        "    for _ in range(1200):\n"
        "        if all(s.state in ('ready', 'failed') for s in client.mcp_servers()): break\n"
        "        await asyncio.sleep(0.05)\n"
        "    await client.close()\n"
        "asyncio.run(main())\n"
    )
    import subprocess

    script = work / "warm.yaml"
    script.write_text("- text: ok\n")
    code = code.replace("scripted:x", f"scripted:{script}")
    env = {**os.environ, "MOOT_HOME": str(work / "home")}
    subprocess.run([sys.executable, "-c", code], cwd=work, env=env, check=True, timeout=120)


async def _tool_calls(calls: int, root: Path) -> list[Row]:
    from mcp import Client, StdioServerParameters

    from moot.mcp.approvals import Approvals
    from moot.mcp.config import load_servers
    from moot.mcp.manager import McpManager
    from moot.tools.base import ToolContext

    context = ToolContext("ses_bench", "run_bench", "call_bench", "bench", "tool_bench")

    home = _home(root, 1)
    os.environ["MOOT_HOME"] = str(home)
    try:
        loaded = load_servers(root, dict(os.environ))
        manager = McpManager(loaded, Approvals(root), workspace=root, outputs_dir=root / "out")
        manager.start()
        await manager.wait_ready("s0", 120)
        (echo,) = [t for t in manager.tools() if t.name == "mcp__s0__echo"]
        through_moot = []
        for i in range(calls + 20):
            started = time.perf_counter()
            result = await echo.invoke({"text": f"x{i}"}, context)
            if i >= 20:
                through_moot.append(time.perf_counter() - started)
            assert result.content == f"x{i}", result.content
        await manager.close()
    finally:
        os.environ.pop("MOOT_HOME", None)

    params = StdioServerParameters(command=sys.executable, args=[str(SERVERS), "good"])
    direct = []
    async with Client(params) as client:
        for i in range(calls + 20):
            started = time.perf_counter()
            await client.call_tool("echo", {"text": f"x{i}"})
            if i >= 20:
                direct.append(time.perf_counter() - started)
    overhead = median(through_moot) - median(direct)
    return [
        Row(
            f"MCP tool call (echo over stdio), p50 through moot / SDK client direct ({calls} each)",
            f"{ms(median(through_moot))} / {ms(median(direct))}",
            "(reference)",
        ),
        Row("  moot's overhead beyond the server's own time, p50", ms(overhead), "<= 5 ms"),
    ]


async def _acp(runs: int, root: Path) -> list[Row]:
    from acp import PROTOCOL_VERSION, spawn_agent_process

    class Editor:
        async def session_update(self, *args: object, **kwargs: object) -> None: ...

        async def request_permission(self, *args: object, **kwargs: object) -> None: ...

        def on_connect(self, conn: object) -> None: ...

    script = root / "acp.yaml"
    script.write_text("- text: ok\n")
    work = root / "acp-work"
    work.mkdir(exist_ok=True)
    env = {**os.environ, "MOOT_HOME": str(root / "acp-home"), "MOOT_SANDBOX": "none"}
    command = [str(VENV_BIN / "moot"), "acp", "--model", f"scripted:{script}"]
    to_init, to_ready = [], []
    for round_number in range(runs + 2):
        started = time.perf_counter()
        async with spawn_agent_process(Editor(), *command, env=env, cwd=work) as (conn, _):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            initialized = time.perf_counter()
            await conn.new_session(cwd=str(work), mcp_servers=[])
            ready = time.perf_counter()
        if round_number >= 2:
            to_init.append(initialized - started)
            to_ready.append(ready - initialized)
    return [
        Row(
            f"moot acp: process start to initialize answered, p50 / p90 ({runs} runs)",
            f"{ms(median(to_init))} / {ms(percentile(to_init, 90))}",
            "(interpreter + ACP SDK import)",
        ),
        Row(
            "moot acp: initialize answered to session ready for a prompt, p50 / p90",
            f"{ms(median(to_ready))} / {ms(percentile(to_ready, 90))}",
            "<= 300 ms",
        ),
    ]


def run(*, quick: bool) -> list[Row]:
    runs = 5 if quick else 20
    with tempfile.TemporaryDirectory(prefix="moot-bench-mcp-") as tmp:
        root = Path(tmp)
        rows = _versions(runs, {"no MCP server": _home(root, 0), "3 MCP servers": _home(root, 3)})
        rows += _first_requests(runs, root)
        rows += asyncio.run(_tool_calls(50 if quick else 300, root))
        rows += asyncio.run(_acp(3 if quick else 10, root))
    return rows
