"""The network allowlist in a session: `sandbox.network` settings, a real bubblewrap sandbox,
real servers on 127.0.0.x under names the proxy resolves (`SessionOptions.network_hosts`).
Every connection is a `network_connection` event; a host on neither list is a
`network_access_requested` that `AnswerNetworkAccess` settles, or refused where nobody
answers; a repository's allowlist waits for the person's approval, its denials do not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import sandbox_contract
from moot.client.local import LocalClient, SessionOptions, open_client
from moot.protocol import events as ev
from moot.protocol import ops
from moot.settings.review import SettingsApprovals, digest
from moot.testing import drive_turn
from net_servers import HOSTS, servers

NETWORK = {"allowedDomains": ["allowed.test"], "deniedDomains": ["denied.test"]}


@pytest.fixture
def port() -> Iterator[int]:
    require = sandbox_contract.require
    require(sandbox_contract.BACKENDS["bubblewrap"])
    with servers() as port:
        yield port


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    return root


def session(
    workspace: Path, port: int, hosts: list[str], settings: object = None, **fields: object
) -> SessionOptions:
    """A session whose turns each fetch the `hosts` with curl, in one bash call each."""
    calls = [
        {"name": "bash", "arguments": {"command": f"curl -sS http://{host}:{port}/{host}"}}
        for host in hosts
    ]
    turns = [{"tool_calls": [c]} for c in calls] + [{"text": "ok"}]
    script = workspace.parent / "script.yaml"
    script.write_text(json.dumps({"turns": turns * int(str(fields.pop("turns", 1)))}))
    layer = None if settings is None else json.dumps({"sandbox": {"network": settings}})
    return SessionOptions(
        cwd=workspace,
        model=f"scripted:{script}",
        permission_mode="bypassPermissions",
        settings=layer,
        network_hosts=HOSTS,
        **fields,  # type: ignore[arg-type]
    )


async def recorded(client: LocalClient, count: int) -> list[ev.Event]:
    """The session's `network_connection` events, once there are `count` (bounded polling)."""
    for _ in range(1000):
        found = client.query.events(client.session_id, kinds=("network_connection",))
        if len(found) >= count:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"fewer than {count} connections recorded")


def outputs(events: list[ev.Event]) -> list[str]:
    return [e.content for e in events if isinstance(e, ev.ToolFinished)]


async def test_where_nobody_answers_the_allowed_gets_through_and_the_rest_is_refused(
    workspace: Path, port: int
) -> None:
    hosts = ["allowed.test", "denied.test", "asked.test"]
    client = open_client(session(workspace, port, hosts, NETWORK, can_ask=False))
    try:
        outcome = await drive_turn(client, "fetch")
        # An allowed connection is recorded as its copying ends, a moment after curl's.
        connections = await recorded(client, 3)
    finally:
        await client.close()
    allowed, denied, asked = outputs(outcome.events)
    assert f"hello allowed.test:{port} /allowed.test" in allowed
    assert "denied.test is denied by sandbox.network.deniedDomains" in denied
    assert "not in sandbox.network.allowedDomains and nobody can be asked" in asked
    assert [(c.host, c.allowed) for c in connections] == [  # type: ignore[attr-defined]
        ("allowed.test", True),
        ("denied.test", False),
        ("asked.test", False),
    ]
    first = connections[0]
    assert isinstance(first, ev.NetworkConnection) and first.port == port
    assert first.bytes_up > 50 and first.bytes_down > 50 and first.run_id == ""


@pytest.mark.parametrize("approved", [True, False])
async def test_a_host_on_neither_list_is_asked_about_and_the_answer_holds(
    workspace: Path, port: int, approved: bool
) -> None:
    options = session(workspace, port, ["asked.test"], {}, asks_about_network=True)
    client = open_client(options)
    answers: list[str] = []

    def react(event: ev.Event) -> ops.Op | None:
        if isinstance(event, ev.NetworkAccessRequested):
            assert (event.host, event.port) == ("asked.test", port)
            return ops.AnswerNetworkAccess(request_id=event.request_id, approved=approved)
        if isinstance(event, ev.NetworkAccessDecided):
            answers.append(event.submission_id)
        return None

    try:
        outcome = await drive_turn(client, "fetch", react=react)
        await recorded(client, 1)
        logged = client.query.events(client.session_id)
    finally:
        await client.close()
    (fetched,) = outputs(outcome.events)
    assert (f"hello asked.test:{port}" in fetched) == approved
    if not approved:
        assert "the person said no" in fetched
    kinds = [e.kind for e in logged if e.kind.startswith("network_")]
    assert kinds == ["network_access_requested", "network_access_decided", "network_connection"]
    assert answers and answers[0]  # the answer carries the op's submission


async def test_an_always_answer_is_kept_in_the_local_settings_for_the_next_session(
    workspace: Path, port: int
) -> None:
    options = session(workspace, port, ["asked.test"], {}, asks_about_network=True)
    client = open_client(options)

    def react(event: ev.Event) -> ops.Op | None:
        if isinstance(event, ev.NetworkAccessRequested):
            return ops.AnswerNetworkAccess(
                request_id=event.request_id, approved=True, scope="always"
            )
        return None

    try:
        await drive_turn(client, "fetch", react=react)
    finally:
        await client.close()
    local = json.loads((workspace / ".moot" / "settings.local.json").read_text())
    assert local["sandbox"]["network"]["allowedDomains"] == ["asked.test"]

    # The next session, where nobody answers, lets it through without asking.
    client = open_client(session(workspace, port, ["asked.test"], {}, can_ask=False))
    try:
        outcome = await drive_turn(client, "fetch again")
    finally:
        await client.close()
    assert f"hello asked.test:{port}" in outputs(outcome.events)[0]
    assert not any(isinstance(e, ev.NetworkAccessRequested) for e in outcome.events)


async def test_a_repositorys_allowlist_waits_for_approval_and_its_denials_do_not(
    workspace: Path, port: int
) -> None:
    shipped = workspace / ".moot" / "settings.json"
    shipped.parent.mkdir()
    network = {"allowedDomains": ["asked.test"], "deniedDomains": ["allowed.test"]}
    shipped.write_text(json.dumps({"sandbox": {"network": network}}))
    hosts = ["asked.test", "allowed.test"]
    client = open_client(session(workspace, port, hosts, can_ask=False))
    try:
        outcome = await drive_turn(client, "fetch")
        held = client.status()
    finally:
        await client.close()
    asked, allowed = outputs(outcome.events)
    assert "nobody can be asked" in asked  # held: not allowed yet
    assert "allowed.test is denied" in allowed  # a denial applies at once
    assert any("network access for shell commands to asked.test" in str(n) for n in held.notices)

    SettingsApprovals().approve(workspace, (str(shipped), digest(shipped.read_bytes())))
    client = open_client(session(workspace, port, hosts, can_ask=False))
    try:
        outcome = await drive_turn(client, "fetch")
    finally:
        await client.close()
    asked, allowed = outputs(outcome.events)
    assert f"hello asked.test:{port}" in asked and "allowed.test is denied" in allowed


async def test_an_answer_no_question_waits_for_is_refused(workspace: Path, port: int) -> None:
    with_network = open_client(session(workspace, port, [], {}, asks_about_network=True))
    without = open_client(session(workspace, port, []))
    try:
        for client, why in (
            (with_network, "no network question 'net_x' waits"),
            (without, "this session asks nothing about the network"),
        ):
            subscription = client.subscribe()
            sent = client.submit(ops.AnswerNetworkAccess(request_id="net_x", approved=True))
            async for event in subscription:
                if isinstance(event, ev.OpRefused):
                    assert event.submission_id == sent and why in event.reason
                    break
    finally:
        await with_network.close()
        await without.close()


async def test_the_lists_follow_the_settings_files_during_the_session(
    workspace: Path, port: int
) -> None:
    client = open_client(
        session(workspace, port, ["allowed.test"], NETWORK, can_ask=False, turns=2)
    )
    try:
        first = await drive_turn(client, "fetch")
        # A denial the person adds by hand applies from the next connection on.
        local = workspace / ".moot" / "settings.local.json"
        local.parent.mkdir(exist_ok=True)
        denied = {"sandbox": {"network": {"deniedDomains": ["allowed.test"]}}}
        local.write_text(json.dumps(denied))
        second = await drive_turn(client, "fetch again")
    finally:
        await client.close()
    assert f"hello allowed.test:{port}" in outputs(first.events)[0]
    assert "allowed.test is denied by sandbox.network.deniedDomains" in outputs(second.events)[0]
