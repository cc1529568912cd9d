"""The network allowlist inside real sandboxes: bubblewrap and Docker keep a network of their
own with nothing on it but the relay to the session's proxy, so what the proxy allows gets
through, what it refuses is refused with a message, and nothing else gets out.

Test servers listen on 127.0.0.x of the host under names only the proxy resolves
(`net_servers.HOSTS`); the sandbox has no route to any of them. The Docker image has a shell
and busybox, whose static `wget` cannot resolve names: there the requests are written by hand
through bash's `/dev/tcp` to the relay's port. Without bwrap or Docker these tests skip; with
`CI=true` they fail (`sandbox_contract.require`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import sandbox_contract
from moot.sandbox.base import Sandbox, SandboxPolicy
from moot.sandbox.net_proxy import ConnectionRecord, NetworkProxy
from moot.sandbox.net_relay import PORT_INSIDE
from moot.sandbox.net_rules import NetworkRules
from net_servers import HOSTS, servers
from sandbox_contract import DOCKER, require

RULES = NetworkRules(allowed=("allowed.test", "*.allowed.test"), denied=("denied.test",))
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root"}


@pytest.fixture
def port() -> Iterator[int]:
    with servers() as port:
        yield port


class Proxied:
    """A sandbox behind a proxy, and what the proxy recorded."""

    def __init__(self, sandbox: Sandbox, proxy: NetworkProxy, records: list[ConnectionRecord]):
        self.sandbox, self.proxy, self.records = sandbox, proxy, records


def _make(backend: str, policy: SandboxPolicy) -> Sandbox:
    if backend == "landlock":
        require(sandbox_contract.BACKENDS["landlock"])
        from moot.sandbox.landlock import LandlockSandbox

        return LandlockSandbox(policy)
    if backend == "bubblewrap":
        require(sandbox_contract.BACKENDS["bubblewrap"])
        from moot.sandbox.bubblewrap import BubblewrapSandbox

        return BubblewrapSandbox(policy)
    require(DOCKER)
    from moot.sandbox.docker import DockerSandbox

    return DockerSandbox(policy, session_id=f"test-net-{uuid.uuid4().hex[:8]}")


@pytest.fixture(params=["bubblewrap", "landlock", "docker"])
async def proxied(
    request: pytest.FixtureRequest, tmp_path: Path, moot_home: Path
) -> AsyncIterator[Proxied]:
    records: list[ConnectionRecord] = []
    proxy = NetworkProxy(RULES, record=records.append, hosts=HOSTS)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    sandbox = _make(request.param, SandboxPolicy(workspace, proxy=proxy))
    try:
        yield Proxied(sandbox, proxy, records)
    finally:
        await sandbox.close()


moot_home = sandbox_contract.moot_home


def raw_get(host: str, port: int, via: str = f"127.0.0.1/{PORT_INSIDE}") -> str:
    """A shell line that sends a proxy request by hand (bash's `/dev/tcp`) and prints the
    answer: the one HTTP client every image has."""
    request = f"GET http://{host}:{port}/raw HTTP/1.1\\r\\nHost: {host}:{port}\\r\\n\\r\\n"
    return f"exec 3<>/dev/tcp/{via} && printf '{request}' >&3 && cat <&3"


async def via(proxied: Proxied) -> str:
    """Where a command reaches the proxy: the relay's port inside bubblewrap's and Docker's
    own network, the proxy's loopback port itself under Landlock (which shares the host's)."""
    if proxied.sandbox.name == "landlock":
        return f"127.0.0.1/{(await proxied.proxy.start(tcp=True)).port}"
    return f"127.0.0.1/{PORT_INSIDE}"


async def run(proxied: Proxied, command: str) -> tuple[int | None, str]:
    workspace = proxied.sandbox.policy.workspace  # type: ignore[attr-defined]
    result = await proxied.sandbox.run(command, cwd=workspace, env=ENV, timeout=30)
    return result.exit_code, result.stdout + result.stderr


async def test_an_allowed_host_gets_through_and_is_recorded(proxied: Proxied, port: int) -> None:
    code, out = await run(proxied, raw_get("allowed.test", port, await via(proxied)))
    assert code == 0 and f"hello allowed.test:{port} /raw" in out, out
    if proxied.sandbox.name != "docker":  # the tools people run, through the variables
        code, out = await run(
            proxied,
            f"curl -sS http://allowed.test:{port}/curl && "
            f"curl -sS --proxytunnel http://files.allowed.test:{port}/tunnel && "
            "python3 -c 'import urllib.request as u; "
            f'print(u.urlopen("http://allowed.test:{port}/py").read().decode())\'',
        )
        assert code == 0, out
        assert f"hello allowed.test:{port} /curl" in out
        assert f"hello files.allowed.test:{port} /tunnel" in out
        assert f"hello allowed.test:{port} /py" in out
    allowed = [r for r in proxied.records if r.allowed]
    assert allowed and all(r.host.endswith("allowed.test") and r.port == port for r in allowed)
    assert all(r.bytes_down > 50 for r in allowed)


async def test_a_denied_host_is_refused_with_a_message_saying_why(
    proxied: Proxied, port: int
) -> None:
    code, out = await run(proxied, raw_get("denied.test", port, await via(proxied)))
    assert "403 Forbidden" in out and "denied.test is denied by sandbox.network" in out, out
    if proxied.sandbox.name != "docker":
        code, out = await run(proxied, f"curl -sS https://denied.test:{port}/")
        assert code != 0 and "CONNECT tunnel failed, response 403" in out, out
    assert {(r.host, r.allowed) for r in proxied.records} == {("denied.test", False)}


async def test_nothing_gets_out_but_through_the_proxy(proxied: Proxied, port: int) -> None:
    address = await proxied.proxy.start(tcp=True)
    # The servers' own addresses, and the proxy's TCP port on the host's loopback: the
    # sandbox's loopback is its own, so none of them is there. Under Landlock, which shares
    # the host's network, that port is the way out; its rules open no other.
    places = [f"127.0.0.2/{port}", "1.1.1.1/80"]
    if proxied.sandbox.name != "landlock":
        places.append(f"127.0.0.1/{address.port}")
    for place in places:
        line = f"timeout 5 bash -c 'exec 3<>/dev/tcp/{place}' && echo CONNECTED || echo REFUSED"
        code, out = await run(proxied, line)
        assert "REFUSED" in out and "CONNECTED" not in out, (place, out)
    if proxied.sandbox.name != "docker":
        code, out = await run(proxied, f"curl -sS --noproxy '*' http://127.0.0.2:{port}/")
        assert code == 7, out  # couldn't connect
    assert proxied.records == []


async def test_a_background_command_goes_through_the_proxy_too(proxied: Proxied, port: int) -> None:
    workspace = proxied.sandbox.policy.workspace  # type: ignore[attr-defined]
    (workspace / "out").mkdir()  # Landlock's workspace root takes no new entries
    line = raw_get("allowed.test", port, await via(proxied)) + " > out/got.txt"
    background = await proxied.sandbox.start(line, cwd=workspace, env=ENV)
    for _ in range(1000):  # bounded polling of the background command
        if background.exit_code is not None:
            break
        await asyncio.sleep(0.01)
    assert f"hello allowed.test:{port}" in (workspace / "out" / "got.txt").read_text()


async def test_without_a_proxy_there_is_no_network_and_no_relay(tmp_path: Path) -> None:
    require(sandbox_contract.BACKENDS["bubblewrap"])
    from moot.sandbox.bubblewrap import BubblewrapSandbox

    sandbox = BubblewrapSandbox(SandboxPolicy(tmp_path))
    try:
        line = f"echo [$HTTP_PROXY]; exec 3<>/dev/tcp/127.0.0.1/{PORT_INSIDE} || echo REFUSED"
        result = await sandbox.run(line, cwd=tmp_path, env=ENV, timeout=30)
    finally:
        await sandbox.close()
    assert "[]" in result.stdout and "REFUSED" in result.stdout


async def test_the_docker_relay_goes_with_its_container(tmp_path: Path, port: int) -> None:
    require(DOCKER)
    from moot.sandbox.docker import DockerSandbox

    proxy = NetworkProxy(RULES, hosts=HOSTS)
    sandbox = DockerSandbox(SandboxPolicy(tmp_path, proxy=proxy), session_id="test-net-relay")
    try:
        result = await sandbox.run(raw_get("allowed.test", port), cwd=tmp_path, env=ENV, timeout=30)
        assert "hello allowed.test" in result.stdout
        container = sandbox.container
        assert container is not None
        relay = container.client.containers.get(f"{container.name}-net")
        assert relay.labels == container.labels  # an orphan is removed with its sandbox's
        assert relay.attrs["HostConfig"]["NetworkMode"] == f"container:{container.id}"
        assert container.attrs["HostConfig"]["NetworkMode"] == "none"
    finally:
        await sandbox.close()
    import docker.errors

    with pytest.raises(docker.errors.NotFound):
        relay.reload()
