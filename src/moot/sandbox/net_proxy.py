"""The session's network proxy: the one way out for a sandboxed command's connections.

A command's sandbox has no network of its own (bubblewrap's `--unshare-net`, Docker's
`none`); its `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` name a port on its own loopback,
where a small relay (`net_relay`) hands each connection over a Unix socket to this proxy, in
moot's process. It speaks HTTP (`CONNECT host:port` for TLS and anything else, and plain
`http://` requests in absolute form) and SOCKS5 (`CONNECT` only), decides by host name
(`net_rules`: denied, allowed, else the person is asked, or refused where nobody answers),
connects, and copies bytes both ways, counting them. Each connection, refused ones too, is
reported once it ends (`ConnectionRecord`), which the session records as an event.

Hand-written on asyncio rather than a proxy library (proxy.py, mitmproxy, aiohttp's server):
what is needed is small (a request line and headers, or SOCKS5's two short messages, then a
byte pipe), moot must own the decision and the accounting at the moment a connection is made,
and none of those is light enough to import in moot's process for it. No TLS is terminated:
a `CONNECT` tunnel is decided by the host name the command named, never by what it sends.

It starts lazily (`start`), at the first command that may use the network, listening on a
Unix socket in a private directory (the relays' way in) and on a loopback TCP port (for a
backend that shares the host's network, with rules that let only that port through).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Literal

import msgspec

from moot.sandbox.net_rules import NetworkRules, canonical, named, normal
from moot.sandbox.sentinel import private_dir, remove_dir

Grant = Literal["once", "session", "always", "deny"]
"""A person's answer to a host on neither list: "always" is kept in the settings by whoever
asked; the proxy keeps "session" and "always" for the rest of the session."""
Asker = Callable[[str, int], Awaitable[Grant]]
"""Asks the person about a connection to (host, port)."""

_HEAD_LIMIT = 64 * 1024
"""The longest request head read (request line and headers)."""
_CHUNK = 256 * 1024
MOST_OPEN = 512
"""Connections open at once, beyond which a new one is closed as it comes: each holds a
descriptor or two in moot's process, which a command opening thousands would run out of."""
MOST_ASKING = 8
"""Hosts waiting for the person's answer at once; a host past them is refused unasked (a
command naming a thousand hosts must not bury the person in questions)."""
_DROPPED = {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}
"""Request headers meant for the proxy (or this hop), not for the server."""


class ConnectionRecord(msgspec.Struct, frozen=True):
    """One connection a command made (or tried) through the proxy, once it ended."""

    host: str
    port: int
    allowed: bool
    how: Literal["connect", "http", "socks5"]
    reason: str
    """Why it was allowed or refused (which list, the person's answer, a failure)."""
    bytes_up: int = 0
    """From the command to the server."""
    bytes_down: int = 0


class ProxyAddress(msgspec.Struct, frozen=True):
    """Where the proxy listens: what a backend hands its sandbox."""

    socket: Path
    """A Unix socket (its directory is private): bind it into the sandbox for a relay."""
    port: int = 0
    """A TCP port on 127.0.0.1 of the host; 0: none (`NetworkProxy.start(tcp=True)`)."""


class Refused(Exception):
    """A connection the rules or the person refuse; the message says why and how to allow it."""


class NetworkProxy:
    """The session's proxy; see the module docstring."""

    def __init__(
        self,
        rules: NetworkRules,
        *,
        ask: Asker | None = None,
        record: Callable[[ConnectionRecord], None] | None = None,
        hosts: Mapping[str, str] | None = None,
        refresh: Callable[[], None] | None = None,
        most_open: int = MOST_OPEN,
    ) -> None:
        """Args:
        rules: The lists; replace `rules` when the settings change.
        ask: Asks the person about a host on neither list; None: nobody can answer, such a
            host is refused.
        record: Told of every connection once it ends.
        hosts: Names resolved to these addresses instead of by the system (tests name their
            servers on 127.0.0.x so).
        refresh: Called before each decision: may replace `rules` (the settings changed).
        most_open: Connections open at once (`MOST_OPEN`).
        """
        self.rules = rules
        self.refresh = refresh
        self.ask = ask
        self.record = record
        self.hosts = {normal(name): address for name, address in (hosts or {}).items()}
        self.granted: list[str] = []
        """Hosts the person allowed for the session."""
        self._asking: dict[str, asyncio.Future[bool]] = {}
        self._starting = asyncio.Lock()
        self._servers: list[asyncio.Server] = []
        self._address: ProxyAddress | None = None
        self._directory: Path | None = None
        self._open: set[asyncio.Task[None]] = set()
        self._most_open = most_open

    @property
    def address(self) -> ProxyAddress | None:
        """Where it listens; None before `start`."""
        return self._address

    async def start(self, *, tcp: bool = False) -> ProxyAddress:
        """Listen (on the first call) and say where.

        Args:
            tcp: Listen on a loopback TCP port too (once), for a backend that shares the
                host's network and lets its commands reach that port only (Landlock,
                Seatbelt). Off unless asked: any local user can reach a loopback port, and
                would then use the allowlist and make the person be asked.
        """
        async with self._starting:
            if self._address is None:
                directory = private_dir("moot-net-")  # 0700: this user's
                path = directory / "proxy.sock"
                unix = await asyncio.start_unix_server(self._serve, path=str(path))
                # Whoever the sandbox maps this user to may connect; the directory keeps
                # everyone else out.
                os.chmod(path, 0o666)
                self._servers, self._directory = [unix], directory
                self._address = ProxyAddress(path)
            if tcp and not self._address.port:
                server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
                self._servers.append(server)
                port = server.sockets[0].getsockname()[1]
                self._address = msgspec.structs.replace(self._address, port=port)
            return self._address

    async def close(self) -> None:
        """Stop listening, end the open connections and remove the socket's directory."""
        for server in self._servers:
            server.close()
        for task in list(self._open):
            task.cancel()
        await asyncio.gather(*self._open, return_exceptions=True)
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers, self._address = [], None
        if self._directory is not None:
            remove_dir(self._directory)
            self._directory = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._open) >= self._most_open:
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._open.add(task)
        try:
            first = await reader.read(1)
            if first == b"\x05":
                await self._socks(reader, writer)
            elif first:
                await self._http(first, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._open.discard(task)
            writer.close()

    # ---- deciding ---------------------------------------------------------------------------

    async def decide(self, host: str, port: int) -> str:
        """Why a connection to (host, port) may go ahead.

        Raises:
            Refused: It may not; the message says why and how to allow it.
        """
        if self.refresh is not None:
            self.refresh()
        verdict, reason = self.rules.verdict(host, self.granted)
        if verdict == "allow":
            return reason
        if verdict == "deny":
            raise Refused(f"moot's sandbox refused {host}:{port}: {reason}")
        if self.ask is None:
            raise Refused(
                f"moot's sandbox refused {host}:{port}: it is not in sandbox.network."
                "allowedDomains and nobody can be asked here (moot -p, or a front end that "
                "does not ask about hosts); add it there to allow it"
            )
        name = normal(host)
        waiting = self._asking.get(name)
        if waiting is None and len(self._asking) >= MOST_ASKING:
            raise Refused(
                f"moot's sandbox refused {host}:{port}: {MOST_ASKING} other hosts are waiting"
                " for the person's answer; add it to sandbox.network.allowedDomains to allow it"
            )
        if waiting is None:  # one question per host, however many connections wait on it
            waiting = asyncio.get_running_loop().create_future()
            self._asking[name] = waiting
            try:
                grant = await self.ask(host, port)
            except Exception as error:
                grant = "deny"
                reason = f"the question failed ({error})"
            finally:
                self._asking.pop(name, None)
            if grant in ("session", "always"):
                self.granted.append(name)
            waiting.set_result(grant != "deny")
            if grant != "deny":
                return f"allowed by the person ({grant})"
        elif await waiting:
            return "allowed by the person (asked for another connection)"
        raise Refused(f"moot's sandbox refused {host}:{port}: the person said no")

    async def _open_upstream(
        self, host: str, port: int
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Resolve `host`, check where it leads, and connect to what was checked (so a name
        cannot resolve one way for the check and another for the connection).

        Raises:
            Refused: It leads to this machine or its link (`LOCAL`), allowed by a wildcard only.
            ConnectionRefusedError: It cannot be resolved or reached.
        """
        addresses = [self.hosts[normal(host)]] if normal(host) in self.hosts else []
        try:
            if not addresses:
                found = await asyncio.get_running_loop().getaddrinfo(
                    host, port, type=socket.SOCK_STREAM
                )
                addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
                local = [a for a in addresses if _local(a)]
                if local and not named(host, self.rules, self.granted):
                    raise Refused(
                        f"moot's sandbox refused {host}:{port}: it resolves to {local[0]}, "
                        "this machine's own or its link's (cloud metadata); only a host "
                        "listed by its own name in sandbox.network.allowedDomains may"
                    )
            failure: OSError | None = None
            for address in addresses:
                try:
                    return await asyncio.open_connection(address, port, limit=_CHUNK)
                except OSError as error:
                    failure = error
            raise failure or OSError("no address")
        except OSError as error:
            raise ConnectionRefusedError(f"cannot reach {host}:{port}: {error}") from None

    # ---- HTTP -------------------------------------------------------------------------------

    async def _http(
        self, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        head = first + await reader.readuntil(b"\r\n\r\n")
        if len(head) > _HEAD_LIMIT:
            return await _answer(writer, 431, "request head too large")
        line, *headers = head[:-4].decode("latin-1").split("\r\n")
        method, _, rest = line.partition(" ")
        target, _, version = rest.partition(" ")
        if method.upper() == "CONNECT":
            host, port = _host_port(target, 443)
            how: Literal["connect", "http"] = "connect"
        elif target.lower().startswith("http://"):
            authority, slash, path = target[7:].partition("/")
            host, port = _host_port(authority, 80)
            how = "http"
        else:
            return await _answer(writer, 400, "moot's proxy takes CONNECT or http:// requests")
        try:
            host = canonical(host)  # decided and connected to in the same spelling
        except ValueError as error:
            return await _answer(writer, 400, str(error))
        try:
            reason = await self.decide(host, port)
        except Refused as refused:
            self._report(ConnectionRecord(host, port, False, how, str(refused)))
            return await _answer(writer, 403, str(refused))
        try:
            up_reader, up_writer = await self._open_upstream(host, port)
        except Refused as refused:
            self._report(ConnectionRecord(host, port, False, how, str(refused)))
            return await _answer(writer, 403, str(refused))
        except ConnectionRefusedError as error:
            self._report(ConnectionRecord(host, port, True, how, f"{reason}; {error}"))
            return await _answer(writer, 502, str(error))
        if how == "connect":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            sent = b""
        else:
            # One request per connection (`Connection: close`): the next request on a kept
            # connection may name another host, which must be decided again.
            # The server is told the host that was decided, not one the command wrote in a
            # `Host` header (another site behind the same address: a CDN's, a virtual host's).
            kept = [
                h for h in headers if h.partition(":")[0].strip().lower() not in (*_DROPPED, "host")
            ]
            request = [
                f"{method} {slash}{path} {version}",
                f"Host: {authority}",
                *kept,
                "Connection: close",
            ]
            sent = ("\r\n".join(request) + "\r\n\r\n").encode("latin-1")
        await self._pipe(
            reader,
            writer,
            up_reader,
            up_writer,
            ConnectionRecord(host, port, True, how, reason, bytes_up=len(sent)),
            sent,
        )

    # ---- SOCKS5 -----------------------------------------------------------------------------

    async def _socks(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        count = (await reader.readexactly(1))[0]
        methods = await reader.readexactly(count)
        if 0 not in methods:
            writer.write(b"\x05\xff")  # only "no authentication"
            return
        writer.write(b"\x05\x00")
        version, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
        elif kind == 4:
            host = canonical(socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16)))
        elif kind == 3:
            name = await reader.readexactly((await reader.readexactly(1))[0])
            try:
                host = canonical(name.decode("utf-8"))
            except ValueError:
                writer.write(_socks_reply(4))  # "host unreachable": no such name
                return
        else:
            writer.write(_socks_reply(8))
            return
        port = int.from_bytes(await reader.readexactly(2), "big")
        if version != 5 or command != 1:
            writer.write(_socks_reply(7))  # CONNECT only: no BIND, no UDP
            return
        try:
            reason = await self.decide(host, port)
        except Refused as refused:
            self._report(ConnectionRecord(host, port, False, "socks5", str(refused)))
            writer.write(_socks_reply(2))  # "connection not allowed by ruleset"
            return
        try:
            up_reader, up_writer = await self._open_upstream(host, port)
        except Refused as refused:
            self._report(ConnectionRecord(host, port, False, "socks5", str(refused)))
            writer.write(_socks_reply(2))
            return
        except ConnectionRefusedError as error:
            self._report(ConnectionRecord(host, port, True, "socks5", f"{reason}; {error}"))
            writer.write(_socks_reply(5))
            return
        writer.write(_socks_reply(0))
        record = ConnectionRecord(host, port, True, "socks5", reason)
        await self._pipe(reader, writer, up_reader, up_writer, record, b"")

    # ---- copying ----------------------------------------------------------------------------

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        record: ConnectionRecord,
        first: bytes,
    ) -> None:
        """Copy both ways until both ends are done, then report the connection."""
        counts = [record.bytes_up, 0]
        if first:
            up_writer.write(first)
        try:
            await asyncio.gather(
                _copy(reader, up_writer, counts, 0), _copy(up_reader, writer, counts, 1)
            )
        finally:
            up_writer.close()
            self._report(msgspec.structs.replace(record, bytes_up=counts[0], bytes_down=counts[1]))

    def _report(self, record: ConnectionRecord) -> None:
        if self.record is not None:
            self.record(record)


async def _copy(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, counts: list[int], side: int
) -> None:
    try:
        while data := await source.read(_CHUNK):
            counts[side] += len(data)
            sink.write(data)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except (ConnectionError, OSError):
        sink.close()


async def _answer(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    words = {400: "Bad Request", 403: "Forbidden", 431: "Too Large", 502: "Bad Gateway"}
    body = (why + "\n").encode()
    writer.write(
        f"HTTP/1.1 {status} {words[status]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nX-Moot-Refused: {why}\r\nConnection: close\r\n\r\n".encode(
            "latin-1", "replace"
        )
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()


def _local(address: str) -> bool:
    """Whether `address` is this machine's or its link's: loopback, unspecified, link-local
    (169.254.169.254 is the clouds' metadata service), multicast or another cloud metadata
    address (`LOCAL`), also inside an IPv6 one (mapped, 6to4, NAT64)."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return True  # not an address: keep out
    if isinstance(ip, ipaddress.IPv6Address):  # an IPv4 address carried in an IPv6 one
        if ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        else:
            ip = ip.ipv4_mapped or ip.sixtofour or ip
    return (
        ip.is_loopback
        or ip.is_unspecified
        or ip.is_link_local
        or ip.is_multicast
        or str(ip) in _METADATA
    )


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_METADATA = {"fd00:ec2::254", "100.100.100.200"}
"""Clouds' metadata services outside the link-local range: AWS's over IPv6, Alibaba's."""


LOCAL = "loopback, unspecified, link-local, multicast and cloud metadata addresses"
"""Where a host allowed only by a wildcard (`*`, `*.corp.example`) may not lead: a command
must not reach the host's own services, nor the cloud's metadata, through a name."""


def _host_port(authority: str, default: int) -> tuple[str, int]:
    """(host, port) of `host:port`, `[v6]:port` or a bare host."""
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, colon, port = authority.rpartition(":")
        if not colon:
            host, port = authority, ""
    return host, int(port) if port.isdigit() else default


def _socks_reply(code: int) -> bytes:
    return bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0])
