"""The MCP client: real servers written with the SDK (`tests/mcp_servers.py`), each its own
process, reached through moot's host process, driven by scripted models through the client.

Well-behaved servers answer through `decide()` like every tool; servers that crash, hang, write
lines that are not JSON-RPC, flood or never start give clear tool errors and the session goes
on; a repository's server never starts before the person approves it.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path

import pytest

from mcp_helpers import (
    call,
    project_servers,
    script,
    server,
    user_servers,
    wait_for,
)
from moot.client.local import SessionOptions, open_client
from moot.protocol import events as ev
from moot.protocol import ops
from moot.testing import drive_turn
from moot.testing.drive import approve

pytestmark = pytest.mark.timeout(240)


def finished(outcome_events: list[ev.Event]) -> list[ev.ToolFinished]:
    return [e for e in outcome_events if isinstance(e, ev.ToolFinished)]


async def test_a_servers_tools_run_through_decide_and_their_results_reach_the_model(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    model = script(
        tmp_path / "s.json",
        call("mcp__good__echo", text="hi there"),
        call("mcp__good__add", a=2, b=3),
        call("mcp__good__picture"),
        {"text": "done"},
    )
    client = open_client(
        SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__good__add"])
    )
    client.subscribe().close()  # the session's first use starts its servers
    ready = await wait_for(client, "good")
    assert ready.state == "ready", ready.error
    assert {"mcp__good__echo", "mcp__good__add"} <= {t.name for t in ready.tools}

    outcome = await drive_turn(client, "go", answer=approve)
    await client.close()

    asked = [e.tool for e in outcome.of(ev.ApprovalRequested)]
    assert asked == ["mcp__good__echo", "mcp__good__picture"]  # add is allowed by a rule
    echo, add, picture = finished(outcome.events)
    assert (echo.content, echo.is_error) == ("hi there", False)
    assert add.content == "5"
    assert picture.content == "a red dot"
    assert [a.mime_type for a in picture.attachments] == ["image/png"]
    assert outcome.finished.output == "done"


async def test_a_deny_rule_removes_a_servers_tools_and_a_plan_mode_refuses_them(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    model = script(tmp_path / "s.json", {"text": "nothing"})
    client = open_client(
        SessionOptions(cwd=workspace, model=model, disallowed_tools=["mcp__good__echo"])
    )
    client.subscribe().close()
    await wait_for(client, "good")
    tools = client.status().tools
    await client.close()
    assert "mcp__good__add" in tools and "mcp__good__echo" not in tools

    denied_all = open_client(
        SessionOptions(cwd=workspace, model=model, disallowed_tools=["mcp__good__*"])
    )
    assert not [t for t in denied_all.status().tools if t.startswith("mcp__good")]
    await denied_all.close()

    planning = open_client(
        SessionOptions(
            cwd=workspace,
            model=script(tmp_path / "p.json", call("mcp__good__echo", text="x"), {"text": "ok"}),
            permission_mode="plan",
        )
    )
    outcome = await drive_turn(planning, "go")
    await planning.close()
    refused = outcome.of(ev.ApprovalDecided)
    assert len(refused) == 1 and not refused[0].approved
    assert "Plan mode" in refused[0].feedback


async def test_a_crash_is_a_tool_error_and_the_next_use_restarts_the_server(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"crashy": server("crash")})
    model = script(
        tmp_path / "s.json",
        call("mcp__crashy__crash"),
        call("mcp__crashy__echo", text="again"),
        {"text": "survived"},
    )
    client = open_client(
        SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__crashy__*"])
    )
    client.subscribe().close()
    await wait_for(client, "crashy")

    outcome = await drive_turn(client, "go")
    status = {s.name: s for s in client.mcp_servers()}["crashy"]
    await client.close()

    crashed, again = finished(outcome.events)
    assert crashed.is_error
    assert "MCP server crashy" in crashed.content and "boom" in crashed.content
    assert (again.content, again.is_error) == ("again", False)
    assert status.restarts == 1 and status.state == "ready"
    assert outcome.finished.output == "survived"


async def test_a_hang_and_lines_that_are_not_json_rpc_time_out_with_a_clear_error(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(
        private_moot_home,
        {
            "stuck": server("hang", timeout=2),
            "garbled": server("malformed", timeout=2),
        },
    )
    model = script(
        tmp_path / "s.json",
        call("mcp__stuck__hang"),
        call("mcp__garbled__garble"),
        {"text": "still here"},
    )
    client = open_client(
        SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__stuck", "mcp__garbled"])
    )
    client.subscribe().close()
    await asyncio.gather(wait_for(client, "stuck"), wait_for(client, "garbled"))

    outcome = await drive_turn(client, "go")
    states = {s.name: s for s in client.mcp_servers()}
    await client.close()

    hung, garbled = finished(outcome.events)
    assert hung.is_error and "did not answer hang within 2 s" in hung.content
    assert garbled.is_error and "not JSON-RPC" in garbled.content
    assert "this is not json" in garbled.content
    assert states["stuck"].state == "failed"  # restarted at its next use
    assert outcome.finished.output == "still here"


async def test_a_flood_is_capped_like_command_output_and_saved_whole(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"loud": server("flood")})
    model = script(tmp_path / "s.json", call("mcp__loud__flood"), {"text": "ok"})
    client = open_client(SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__loud"]))
    client.subscribe().close()
    await wait_for(client, "loud")
    outcome = await drive_turn(client, "go")
    await client.close()

    (flood,) = finished(outcome.events)
    assert len(flood.content) < 31_000
    assert flood.content.startswith("flood line 00000000")
    assert flood.content.rstrip().endswith("flood line 00159999")
    saved = re.search(r"the full output is in (\S+) \.\.\.", flood.content)
    assert saved is not None
    whole = Path(saved.group(1)).read_text()  # noqa: ASYNC240 - a test
    assert len(whole) == 160_000 * 20


async def test_a_server_that_does_not_start_says_why_and_the_session_goes_on(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(
        private_moot_home,
        {
            "broken": server("dies"),
            "missing": {"command": str(tmp_path / "no-such-program")},
            "unset": {"command": "${MOOT_TEST_NO_SUCH_VARIABLE}"},
        },
    )
    model = script(tmp_path / "s.json", {"text": "fine"})
    client = open_client(SessionOptions(cwd=workspace, model=model))
    client.subscribe().close()
    broken = await wait_for(client, "broken")
    missing = await wait_for(client, "missing")
    unset = await wait_for(client, "unset")
    outcome = await drive_turn(client, "go")
    await client.close()

    assert broken.state == "failed" and "cannot open the database" in broken.error
    assert missing.state == "failed" and "no-such-program" in missing.error
    assert unset.state == "failed" and "${MOOT_TEST_NO_SUCH_VARIABLE} is not set" in unset.error
    assert outcome.finished.output == "fine"


async def test_a_repository_server_never_starts_without_the_persons_approval(
    workspace: Path, tmp_path: Path
) -> None:
    started = tmp_path / "started.log"
    project_servers(workspace, {"proj": server("good", env={"MOOT_TEST_MCP_LOG": str(started)})})
    model = script(tmp_path / "s.json", call("mcp__proj__echo", text="x"), {"text": "ok"})

    first = open_client(SessionOptions(cwd=workspace, model=model))
    (notice,) = first.status().notices
    assert "proj" in notice and "/mcp approve proj" in notice
    outcome = await drive_turn(first, "go")
    waiting = {s.name: s for s in first.mcp_servers()}["proj"]
    (unknown,) = finished(outcome.events)
    assert unknown.is_error and "mcp__proj__echo" in unknown.content
    assert waiting.state == "needs_approval" and waiting.tools == ()
    assert not started.exists()  # nothing ran

    approved = first.submit(ops.ApproveMcpServer(name="proj"))
    (answer,) = [e for e in first.query.events(first.session_id) if e.submission_id == approved]
    assert isinstance(answer, ev.McpServerApproved) and "approved proj" in answer.note
    assert (await wait_for(first, "proj")).state == "ready"
    await first.close()
    assert started.read_text().startswith("started good")

    second = open_client(SessionOptions(cwd=workspace, model=model))  # remembered here
    assert second.status().notices == ()
    assert "mcp__proj__echo" in second.status().tools  # the cached list, at once
    await second.close()

    project_servers(  # the repository changes what the server runs: asked again
        workspace,
        {"proj": server("good", env={"MOOT_TEST_MCP_LOG": str(started), "X": "1"})},
    )
    third = open_client(SessionOptions(cwd=workspace, model=model))
    assert {s.name: s.state for s in third.mcp_servers()} == {"proj": "needs_approval"}
    await third.close()


async def test_approving_and_restarting_a_server_are_ops_answered_by_events(
    workspace: Path, tmp_path: Path
) -> None:
    """Fails on the old code: there were no such ops; the client changed the servers outside
    the contract, and raised `KeyError` across it for a server the session lacks."""
    project_servers(workspace, {"proj": server("good")})
    client = open_client(SessionOptions(cwd=workspace, model=script(tmp_path / "s.json")))
    client.subscribe().close()  # the session is used: its servers may start
    unknown = client.submit(ops.ApproveMcpServer(name="nope"))
    early = client.submit(ops.RestartMcpServer(name="proj"))
    approve_it = client.submit(ops.ApproveMcpServer(name="proj"))
    again = client.submit(ops.ApproveMcpServer(name="proj"))
    assert (await wait_for(client, "proj")).state == "ready"
    restart = client.submit(ops.RestartMcpServer(name="proj"))
    assert (await wait_for(client, "proj")).state == "ready"
    answers = {e.submission_id: e for e in client.query.events(client.session_id)}
    await client.close()

    def refusal(submission: str) -> str:
        event = answers[submission]
        assert isinstance(event, ev.OpRefused), event
        return event.reason

    assert refusal(unknown) == "no MCP server 'nope' in this session"
    assert "has not been approved to run" in refusal(early)
    assert refusal(again).startswith("proj needs no approval")
    approved, restarted = answers[approve_it], answers[restart]
    assert isinstance(approved, ev.McpServerApproved) and approved.server == "proj"
    assert isinstance(restarted, ev.McpServerRestarted) and restarted.note == "restarting proj"


async def test_a_session_without_mcp_servers_refuses_their_ops(tmp_path: Path) -> None:
    """Fails on the old code: there were no such ops (the client raised `KeyError`)."""
    client = open_client(SessionOptions(cwd=tmp_path, model=script(tmp_path / "s.json")))
    restart = client.submit(ops.RestartMcpServer(name="any"))
    (refused,) = client.query.events(client.session_id)
    await client.close()
    assert isinstance(refused, ev.OpRefused) and refused.submission_id == restart
    assert refused.reason == "this session has no MCP servers"


async def test_cached_tools_are_offered_before_the_server_is_up_and_the_call_waits_for_it(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    warm = open_client(SessionOptions(cwd=workspace, model=script(tmp_path / "w.json")))
    warm.subscribe().close()
    await wait_for(warm, "good")
    await warm.close()

    model = script(tmp_path / "s.json", call("mcp__good__echo", text="early"), {"text": "ok"})
    client = open_client(SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__good"]))
    assert client.mcp_servers()[0].state == "starting"
    assert "mcp__good__echo" in client.status().tools
    outcome = await drive_turn(client, "go")  # no wait: the host starts the server meanwhile
    await client.close()
    (echo,) = finished(outcome.events)
    assert (echo.content, echo.is_error) == ("early", False)


async def test_streamable_http_servers_work_like_stdio_ones(
    workspace: Path, private_moot_home: Path, tmp_path: Path, unused_tcp_port: int
) -> None:
    import sys

    from mcp_helpers import SERVERS

    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SERVERS), "http", "--port", str(unused_tcp_port),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{unused_tcp_port}/mcp"
        user_servers(private_moot_home, {"remote": {"type": "http", "url": url}})
        model = script(
            tmp_path / "s.json", call("mcp__remote__echo", text="over http"), {"text": "ok"}
        )
        for _ in range(200):  # the server process binds its port (bounded polling)
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", unused_tcp_port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        client = open_client(
            SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__remote"])
        )
        client.subscribe().close()
        ready = await wait_for(client, "remote")
        assert ready.state == "ready", ready.error
        outcome = await drive_turn(client, "go")
        await client.close()
        (echo,) = finished(outcome.events)
        assert (echo.content, echo.is_error) == ("over http", False)
    finally:
        process.terminate()
        await process.wait()


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _host_pids() -> list[int]:
    """This test process's MCP host children (from /proc)."""
    found = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as file:
            for pid in file.read().split():
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                        if b"moot.mcp.host" in cmdline.read():
                            found.append(int(pid))
                except OSError:
                    continue
    return found


async def test_a_dead_host_process_takes_its_servers_along_and_starts_again_at_next_use(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    started = tmp_path / "started.log"
    user_servers(
        private_moot_home, {"good": server("good", env={"MOOT_TEST_MCP_LOG": str(started)})}
    )
    model = script(tmp_path / "s.json", call("mcp__good__echo", text="back"), {"text": "ok"})
    client = open_client(SessionOptions(cwd=workspace, model=model, allowed_tools=["mcp__good"]))
    client.subscribe().close()
    await wait_for(client, "good")
    (host,) = _host_pids()
    first_server = int(started.read_text().split("pid=")[1].split()[0])

    os.kill(host, signal.SIGKILL)
    dead = await wait_for(client, "good", states=("failed",))
    assert "the MCP host process exited" in dead.error
    for _ in range(200):  # the orphaned server is ended too (bounded polling)
        if not alive(first_server):
            break
        await asyncio.sleep(0.05)
    assert not alive(first_server)

    outcome = await drive_turn(client, "go")
    await client.close()
    (echo,) = finished(outcome.events)
    assert (echo.content, echo.is_error) == ("back", False)
    assert started.read_text().count("started good") == 2


async def test_a_repository_cannot_shadow_the_host_processs_modules(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    """The host runs in the workspace with `python -m moot.mcp.host`; a `moot/` package the
    repository brings must not be what it imports (it would run on the host, unasked)."""
    planted = tmp_path / "planted"
    (workspace / "moot" / "mcp").mkdir(parents=True)
    trap = f"open({str(planted)!r}, 'w').write('ran')\n"
    (workspace / "moot" / "__init__.py").write_text(trap)
    (workspace / "moot" / "mcp" / "__init__.py").write_text(trap)
    (workspace / "moot" / "mcp" / "host.py").write_text(trap)
    user_servers(private_moot_home, {"good": server("good")})
    client = open_client(SessionOptions(cwd=workspace, model=script(tmp_path / "s.json")))
    client.subscribe().close()
    ready = await wait_for(client, "good")
    await client.close()
    assert ready.state == "ready", ready.error
    assert not planted.exists()
