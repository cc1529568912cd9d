"""What a stdio MCP server leaves (helpers orphaned, which the host adopts as their child
subreaper) is reaped as it exits, while the session runs: before, each stayed a zombie under
the host until the host ended (`moot.mcp.transport.reap_orphans`). The server's own exit stays
the SDK's to see."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from mcp_helpers import call, script, server, user_servers, wait_for
from moot.client.local import SessionOptions, open_client
from moot.protocol import events as ev
from moot.testing import drive_turn


def _zombie_children(pid: int) -> list[int]:
    """The children of process `pid` that exited and nobody reaped."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                stat = Path(f"/proc/{child}/stat").read_text()
            except FileNotFoundError:
                continue
            if stat.rpartition(")")[2].split()[0] == "Z":
                found.append(int(child))
    return found


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def _host_log(home: Path) -> str:
    (log,) = home.rglob("host.log")
    return log.read_text()


async def test_the_orphans_a_server_leaves_are_reaped_while_the_session_runs(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    user_servers(
        private_moot_home, {"forky": server("orphans", env={"MOOT_TEST_MCP_LOG": str(log)})}
    )
    model = script(
        tmp_path / "s.json",
        call("mcp__forky__orphans", count=5),
        {"text": "left"},
        call("mcp__forky__crash"),
        call("mcp__forky__echo", text="again"),
        {"text": "survived"},
    )
    client = open_client(
        SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__forky__*"])
    )
    try:
        client.subscribe().close()
        assert (await wait_for(client, "forky")).state == "ready"
        first = await drive_turn(client, "go")
        (started,) = [e for e in first.of(ev.ToolFinished)]
        assert len(started.content.split()) == 5, started.content
        server_pid = int(log.read_text().split("pid=")[1].split()[0])
        host = _parent(server_pid)
        deadline = time.monotonic() + 30
        while zombies := _zombie_children(host):
            assert time.monotonic() < deadline, f"the host kept zombies: {zombies}"
            await asyncio.sleep(0.05)
        # The server itself is the SDK's to wait for: its exit is seen, and it starts again.
        second = await drive_turn(client, "again")
        crashed, again = second.of(ev.ToolFinished)
        assert crashed.is_error and "boom" in crashed.content
        assert (again.content, again.is_error) == ("again", False)
    finally:
        await client.close()
    # Had the host reaped the server, the SDK's child watcher would have said so in its log.
    assert "will report returncode 255" not in _host_log(private_moot_home)
