"""The session's network proxy from the host's side: real servers on 127.0.0.x under names
the proxy resolves, real clients speaking HTTP, CONNECT and SOCKS5 to it."""

from __future__ import annotations

import asyncio

import pytest

from moot.sandbox.net_proxy import ConnectionRecord, Grant, NetworkProxy, Refused
from moot.sandbox.net_rules import NetworkRules
from net_servers import HOSTS, servers, serving

RULES = NetworkRules(allowed=("*.allowed.test", "allowed.test"), denied=("denied.test",))


@pytest.fixture
def port() -> object:
    with servers() as port:
        yield port


@pytest.fixture
def records() -> list[ConnectionRecord]:
    return []


async def _exchange(proxy_port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(data)
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


async def get(proxy_port: int, host: str, port: int, path: str = "/x") -> bytes:
    request = f"GET http://{host}:{port}{path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    return await _exchange(proxy_port, request.encode())


async def tunnel(proxy_port: int, host: str, port: int, path: str = "/t") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    if b" 200 " not in head:
        writer.close()
        return head + await reader.read()
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


async def socks(proxy_port: int, host: str, port: int) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(b"\x05\x01\x00")
    assert await reader.readexactly(2) == b"\x05\x00"
    name = host.encode()
    writer.write(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + port.to_bytes(2, "big"))
    reply = await asyncio.wait_for(reader.readexactly(10), 10)
    if reply[1] != 0:
        writer.close()
        return reply[1], b""
    writer.write(f"GET /s HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return 0, answer


async def until(condition: object, seconds: float = 10.0) -> None:
    """Bounded polling: the proxy reports a connection as its copying ends."""
    for _ in range(int(seconds / 0.01)):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never held")


async def test_an_allowed_host_gets_through_by_http_connect_and_socks5(
    port: int, records: list[ConnectionRecord]
) -> None:
    proxy = NetworkProxy(RULES, record=records.append, hosts=HOSTS)
    address = await proxy.start(tcp=True)
    try:
        assert f"hello allowed.test:{port} /x".encode() in await get(
            address.port, "allowed.test", port
        )
        answer = await tunnel(address.port, "files.allowed.test", port)
        assert f"hello files.allowed.test:{port} /t".encode() in answer
        code, answer = await socks(address.port, "allowed.test", port)
        assert code == 0 and b"hello allowed.test /s" in answer
        await until(lambda: len(records) == 3)
    finally:
        await proxy.close()
    assert [(r.host, r.how, r.allowed) for r in records] == [
        ("allowed.test", "http", True),
        ("files.allowed.test", "connect", True),
        ("allowed.test", "socks5", True),
    ]
    assert all(r.bytes_up > 30 and r.bytes_down > 100 for r in records)
    assert "allowedDomains" in records[0].reason


async def test_a_denied_host_is_refused_with_a_message_saying_why(
    port: int, records: list[ConnectionRecord]
) -> None:
    proxy = NetworkProxy(RULES, record=records.append, hosts=HOSTS)
    address = await proxy.start(tcp=True)
    try:
        answer = await get(address.port, "denied.test", port)
        assert answer.startswith(b"HTTP/1.1 403 Forbidden")
        assert b"denied.test is denied by sandbox.network.deniedDomains" in answer
        assert b" 403 " in await tunnel(address.port, "denied.test", port)
        assert (await socks(address.port, "denied.test", port))[0] == 2  # not allowed by ruleset
    finally:
        await proxy.close()
    assert [(r.host, r.allowed, r.bytes_up, r.bytes_down) for r in records] == [
        ("denied.test", False, 0, 0)
    ] * 3


async def test_where_nobody_answers_a_host_on_neither_list_is_refused(port: int) -> None:
    proxy = NetworkProxy(RULES, ask=None, hosts=HOSTS)
    address = await proxy.start(tcp=True)
    try:
        answer = await get(address.port, "asked.test", port)
    finally:
        await proxy.close()
    assert answer.startswith(b"HTTP/1.1 403")
    assert b"not in sandbox.network.allowedDomains and nobody can be asked" in answer


@pytest.mark.parametrize("grant", ["once", "session", "deny"])
async def test_a_host_on_neither_list_is_asked_about_once_for_its_waiting_connections(
    port: int, grant: Grant
) -> None:
    asked: list[tuple[str, int]] = []
    answer_now = asyncio.Event()

    async def ask(host: str, at: int) -> Grant:
        asked.append((host, at))
        await answer_now.wait()
        return grant

    proxy = NetworkProxy(RULES, ask=ask, hosts=HOSTS)
    address = await proxy.start(tcp=True)
    try:
        both = asyncio.gather(
            get(address.port, "asked.test", port, "/1"), tunnel(address.port, "asked.test", port)
        )
        await until(lambda: len(asked) == 1)
        answer_now.set()
        first, second = await both
        later = await get(address.port, "asked.test", port, "/2")
    finally:
        await proxy.close()
    if grant == "deny":
        assert b" 403 " in first and b" 403 " in second and b"the person said no" in first
    else:
        assert b"hello asked.test" in first and b"hello asked.test" in second
    # One question for the connections that waited on it; a "session" answer is kept.
    assert len(asked) == (1 if grant == "session" else 2)
    assert (b"hello asked.test" in later) == (grant != "deny")


async def test_a_host_that_does_not_answer_is_a_bad_gateway_not_a_hang(
    records: list[ConnectionRecord],
) -> None:
    with servers() as port:
        pass  # gone: nothing listens there now
    proxy = NetworkProxy(RULES, record=records.append, hosts=HOSTS)
    address = await proxy.start(tcp=True)
    try:
        answer = await get(address.port, "allowed.test", port)
    finally:
        await proxy.close()
    assert answer.startswith(b"HTTP/1.1 502") and b"cannot reach allowed.test" in answer
    assert records[0].allowed and "cannot reach" in records[0].reason


async def test_a_wildcard_never_leads_to_this_machines_own_addresses() -> None:
    with serving("127.0.0.1") as port:
        anything = NetworkProxy(NetworkRules(allowed=("*",)))
        by_name = NetworkProxy(NetworkRules(allowed=("localhost", "127.0.0.1")))
        try:
            tcp = (await anything.start(tcp=True)).port
            for host in (
                "localhost",
                "127.0.0.1",
                "169.254.169.254",
                "[fd00:ec2::254]",  # AWS's metadata over IPv6
                "100.100.100.200",  # Alibaba's
                "[64:ff9b::a9fe:a9fe]",  # 169.254.169.254 through NAT64
                "[2002:7f00:1::]",  # 127.0.0.1 in 6to4
            ):
                answer = await get(tcp, host, port)
                assert answer.startswith(b"HTTP/1.1 403"), answer
                assert b"this machine's own or its link's" in answer
            assert (await socks(tcp, "localhost", port))[0] == 2
            tcp = (await by_name.start(tcp=True)).port
            assert b"hello localhost" in await get(tcp, "localhost", port)
            assert b"hello 127.0.0.1" in await get(tcp, "127.0.0.1", port)
        finally:
            await anything.close()
            await by_name.close()


async def test_the_tcp_port_listens_only_when_asked() -> None:
    proxy = NetworkProxy(RULES)
    try:
        assert (await proxy.start()).port == 0
        port = (await proxy.start(tcp=True)).port
        assert port and (await proxy.start()).port == port
    finally:
        await proxy.close()


async def test_a_denied_host_is_refused_however_it_is_spelt() -> None:
    """The resolver maps IDNA (a soft hyphen vanishes, fullwidth letters fold) and reads
    `10.1` as 10.0.0.1: each spelling is decided as the host it leads to."""
    rules = NetworkRules(allowed=("*",), denied=("denied.test", "10.0.0.1", "::1"))
    proxy = NetworkProxy(rules)
    address = await proxy.start(tcp=True)
    try:
        for host in ("den\xadied.test", "DENIED.TEST.", "167772161", "0xa.0.0.1", "10.1"):
            for request in (f"GET http://{host}/ HTTP/1.1", f"CONNECT {host}:443 HTTP/1.1"):
                head = f"{request}\r\nHost: {host}\r\n\r\n".encode("latin-1")
                answer = await _exchange(address.port, head)
                assert answer.startswith(b"HTTP/1.1 403"), (host, answer)
                assert b"is denied by sandbox.network.deniedDomains" in answer
        for host in ("ｄｅｎｉｅｄ.test", "::ffff:10.0.0.1"):
            assert (await socks(address.port, host, 443))[0] == 2, host
        assert b" 400 " in await tunnel(address.port, "a@denied.test", 443)
    finally:
        await proxy.close()


async def test_connections_past_the_most_open_are_closed_and_the_proxy_serves_on(
    port: int,
) -> None:
    """A command opening thousands of idle connections must not run moot out of descriptors."""
    proxy = NetworkProxy(RULES, hosts=HOSTS, most_open=20)
    address = await proxy.start(tcp=True)
    idle = [await asyncio.open_connection("127.0.0.1", address.port) for _ in range(20)]
    try:
        await until(lambda: len(proxy._open) == 20)
        reader, writer = await asyncio.open_connection("127.0.0.1", address.port)
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed at once
        writer.close()
        for _, idle_writer in idle:
            idle_writer.close()
        await until(lambda: not proxy._open)
        assert b"hello allowed.test" in await get(address.port, "allowed.test", port)
    finally:
        await proxy.close()


async def test_a_plain_request_reaches_the_host_it_named_not_its_host_header(port: int) -> None:
    proxy = NetworkProxy(RULES, hosts=HOSTS)
    address = await proxy.start(tcp=True)
    try:
        request = (
            f"GET http://allowed.test:{port}/x HTTP/1.1\r\nHost: denied.test\r\n"
            "HOST: denied.test\r\n\r\n"
        )
        answer = await _exchange(address.port, request.encode())
    finally:
        await proxy.close()
    assert f"hello allowed.test:{port} /x".encode() in answer, answer


async def test_past_the_most_hosts_waiting_for_an_answer_a_host_is_refused_unasked() -> None:
    asked: list[str] = []
    never = asyncio.Event()

    async def ask(host: str, at: int) -> Grant:
        asked.append(host)
        await never.wait()
        return "deny"

    proxy = NetworkProxy(RULES, ask=ask)
    waiting = [asyncio.ensure_future(proxy.decide(f"h{i}.test", 80)) for i in range(8)]
    try:
        await until(lambda: len(asked) == 8)
        with pytest.raises(Refused, match="8 other hosts are waiting"):
            await asyncio.wait_for(proxy.decide("one-more.test", 80), 10)
        assert len(asked) == 8
    finally:
        never.set()
        await asyncio.gather(*waiting, return_exceptions=True)
