"""The `web_fetch` tool: read a public web page or text file as plain text.

Only http and https. Every hop (the URL and each redirect, followed by hand, at most five) is
checked before anything is sent: the host is resolved, every address it resolves to must be a
global one (not loopback, private, link-local, multicast, carrier-grade NAT, ...; IPv4 mapped,
6to4 and NAT64 forms are unwrapped), and the connection then goes to an address that was
checked, never to a second lookup of the name. The request keeps the name in its Host header
and, over TLS, in SNI and certificate checking, so virtual hosts and certificates work as they
would. That closes DNS rebinding (a name that answers a public address to the check and a
private one to the connect) at the cost of re-implementing a little of what a client does
itself: addresses are tried in the order the resolver gave them, without happy eyeballs, and
environment proxies are not used (a proxy would resolve the name itself, past the check).

A redirect to another host is also put to the session's permission rules, as the first URL
was (`WebFetch(domain:...)`), through a `RedirectCheck` the session hands the tool: a hop the
rules deny is refused, and one they would ask about is not followed; the result names the URL
so the model can fetch it with its own call, which asks the person (and in a headless run is
refused, with how to allow it). A hop to the host already settled needs no second decision:
`WebFetch` rules speak only of hosts.

Downloads stop at a byte cap and the whole fetch at a time cap. HTML becomes readable text
(scripts, styles, navigation and footers dropped; headings, paragraphs, list items and links
kept as text); other text is returned as is; binary content is refused without reading it.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from moot._version import __version__
from moot.tools.base import (
    OUTSIDE_A_RUN,
    FunctionTool,
    RedirectCheck,
    SideEffect,
    ToolContext,
    ToolResult,
    tool,
)
from moot.tools.html_text import html_to_text
from moot.workspace.text import SNIFF_BYTES, looks_binary

if TYPE_CHECKING:
    import httpx

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Resolves a host name and port to IP address strings (the system resolver by default)."""
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MaxBytes = Annotated[
    int, Field(ge=1, description="Most bytes of text to return (the tool's cap applies)")
]
MAX_DOWNLOAD_BYTES = 2_000_000
MAX_TEXT_BYTES = 100_000
TIMEOUT_S = 20.0
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/x-ndjson"}
)
_ACCEPT = "text/html,application/xhtml+xml,text/*;q=0.9,application/json;q=0.8,*/*;q=0.1"


class FetchRefused(Exception):
    """A fetch the policy does not allow; `rule` names the check that refused it."""

    def __init__(self, rule: str, detail: str) -> None:
        self.rule = rule
        """scheme, private-address, redirects, redirect-denied, redirect-needs-approval or
        binary."""
        super().__init__(f"web_fetch refused ({rule}): {detail}")


def web_fetch_tool(
    *,
    allow_private: bool = False,
    allow_networks: Iterable[str] = (),
    max_download_bytes: int = MAX_DOWNLOAD_BYTES,
    max_text_bytes: int = MAX_TEXT_BYTES,
    timeout_s: float = TIMEOUT_S,
    max_redirects: int = MAX_REDIRECTS,
    resolver: Resolver | None = None,
    ssl_context: ssl.SSLContext | None = None,
    redirects: RedirectCheck | None = None,
) -> FunctionTool:
    """The `web_fetch` tool.

    Args:
        allow_private: Also fetch from non-global addresses (localhost, the LAN, cloud
            metadata endpoints...). Off by default: a model should not reach them unasked.
        allow_networks: Networks (CIDR, e.g. "10.1.2.0/24") allowed even though not global.
        max_download_bytes: Stop reading a response body after this many (decoded) bytes.
        max_text_bytes: The most text the model gets back: the default and the ceiling of
            its `max_bytes`.
        timeout_s: The whole fetch, redirects included, must finish within this.
        max_redirects: Redirects followed before giving up.
        resolver: Looks host names up; the system resolver when None.
        ssl_context: Whom to trust over TLS; httpx's default (the certifi bundle) when None.
        redirects: Settles a redirect to another host by the session's rules; None follows
            any redirect the address checks let through (a tool used without a policy).
    """
    fetcher = _Fetcher(
        _AddressPolicy(
            allow_private, [ipaddress.ip_network(n, strict=False) for n in allow_networks]
        ),
        resolver or _system_resolve,
        max_download_bytes=max_download_bytes,
        timeout_s=timeout_s,
        max_redirects=max_redirects,
        ssl_context=ssl_context,
        redirects=redirects,
    )

    @tool(
        name="web_fetch",
        side_effect=SideEffect.NETWORK,
        description=(
            "Fetch an http(s) URL and return its content as text (HTML is converted to "
            "readable text). Public addresses only."
        ),
    )
    async def web_fetch(
        url: str, max_bytes: MaxBytes = max_text_bytes, ctx: ToolContext = OUTSIDE_A_RUN
    ) -> ToolResult:
        # Clamped, not refused: asking for more than the cap still gets the cap's worth.
        max_bytes = min(max_bytes, max_text_bytes)
        try:
            return await fetcher.fetch(url, max_bytes, ctx)
        except FetchRefused as exc:
            return ToolResult.error(str(exc))
        except TimeoutError:
            return ToolResult.error(
                f"web_fetch failed (timeout): {url} did not answer in full within {timeout_s:g} s"
            )
        except _FetchFailed as exc:
            return ToolResult.error(f"web_fetch failed: {exc}")

    return web_fetch


class _FetchFailed(Exception):
    """The network or the server failed (not a refusal); the message says how."""


async def _system_resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _AddressPolicy:
    def __init__(
        self, allow_private: bool, networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network]
    ) -> None:
        self.allow_private = allow_private
        self.networks = networks

    def check(self, host: str, address: IPAddress) -> None:
        if self.allow_private or any(address in net for net in self.networks):
            return
        why = _not_global(address)
        if why:
            named = host if _ip_or_none(host) is not None else f"{host} ({address})"
            raise FetchRefused(
                "private-address",
                f"{named} is {why}; web_fetch only fetches public internet addresses",
            )


def _not_global(address: IPAddress) -> str | None:
    """Why `address` is not a public internet address, or None when it is one."""
    forms: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv6 form of an IPv4 address reaches that IPv4 host; judge the host.
        if address.ipv4_mapped:
            forms.append(address.ipv4_mapped)
        if address.sixtofour:
            forms.append(address.sixtofour)
        if address in _NAT64:
            forms.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    for form in forms:
        for kind, test in (
            ("a loopback address", form.is_loopback),
            ("an unspecified address", form.is_unspecified),
            ("a link-local address", form.is_link_local),
            ("a multicast address", form.is_multicast),
            ("a private address", form.is_private),
            ("a reserved address", form.is_reserved),
            ("not a globally routable address", not form.is_global),
        ):
            if test:
                return kind
    return None


class _Fetcher:
    def __init__(
        self,
        policy: _AddressPolicy,
        resolver: Resolver,
        *,
        max_download_bytes: int,
        timeout_s: float,
        max_redirects: int,
        ssl_context: ssl.SSLContext | None,
        redirects: RedirectCheck | None = None,
    ) -> None:
        self.policy = policy
        self.redirects = redirects
        self.resolver = resolver
        self.max_download_bytes = max_download_bytes
        self.timeout_s = timeout_s
        self.max_redirects = max_redirects
        self.verify: ssl.SSLContext | bool = ssl_context or True

    async def fetch(
        self, url_text: str, max_text_bytes: int, ctx: ToolContext = OUTSIDE_A_RUN
    ) -> ToolResult:
        # httpx is imported on first use: building the tool list must not pay for it.
        import httpx

        try:
            url = httpx.URL(url_text.strip())
        except (httpx.InvalidURL, TypeError) as exc:
            raise FetchRefused("scheme", f"not a valid URL: {exc}") from None
        headers = {"User-Agent": f"moot/{__version__} (web_fetch)", "Accept": _ACCEPT}
        # trust_env=False: an environment proxy would resolve names itself, past the check.
        async with (
            asyncio.timeout(self.timeout_s),
            httpx.AsyncClient(
                trust_env=False, verify=self.verify, timeout=self.timeout_s, headers=headers
            ) as client,
        ):
            for _ in range(self.max_redirects + 1):
                response = await self._open(client, url)
                location = response.headers.get("location")
                if response.status_code not in _REDIRECT_STATUSES or location is None:
                    try:
                        return await self._read(response, url, max_text_bytes)
                    finally:
                        await response.aclose()
                await response.aclose()
                try:
                    hop = url.join(location)
                except httpx.InvalidURL as exc:
                    raise _FetchFailed(f"{url} redirects to an invalid URL: {exc}") from None
                self._check_hop(url, hop, ctx)
                url = hop
        raise FetchRefused("redirects", f"more than {self.max_redirects} redirects")

    def _check_hop(self, url: httpx.URL, hop: httpx.URL, ctx: ToolContext) -> None:
        """Put a redirect to another host to the session's rules, as its first URL was."""
        if self.redirects is None or _host_of(hop) == _host_of(url):
            return  # the host's rules were settled for `url`, which led here
        verdict = self.redirects.check(str(hop), ctx)
        if verdict.decision == "deny":
            raise FetchRefused(
                "redirect-denied", f"{url} redirects to {hop}, which is refused: {verdict.reason}"
            )
        if verdict.decision == "ask":
            raise FetchRefused(
                "redirect-needs-approval",
                f"{url} redirects to {hop}, on another host, and fetching that needs the user's"
                f" approval ({verdict.reason}); it was not followed. To ask, call web_fetch"
                " with that URL.",
            )

    async def _open(self, client: httpx.AsyncClient, url: httpx.URL) -> httpx.Response:
        """Send a GET for `url` to one of its checked addresses; the response is streamed."""
        import httpx

        if url.scheme not in ("http", "https"):
            raise FetchRefused("scheme", f"only http and https URLs can be fetched, not {url}")
        host = url.raw_host.decode("ascii")
        if not host:
            raise FetchRefused("scheme", f"{url} names no host")
        port = url.port or (443 if url.scheme == "https" else 80)
        literal = _ip_or_none(host)
        addresses = [literal] if literal is not None else await self._resolve(host, port)
        for address in addresses:
            self.policy.check(host, address)
        # TLS names the host, not the address we connect to: SNI and the certificate check.
        named = url.scheme == "https" and literal is None
        extensions = {"sni_hostname": host} if named else {}
        failure: Exception | None = None
        for address in addresses:
            request = client.build_request(
                "GET",
                url.copy_with(host=str(address)),
                # Connection: close, so a connection made for one name never carries a request
                # for another name that happens to share its address (it was verified for one).
                headers={"Host": url.netloc.decode("ascii"), "Connection": "close"},
                extensions=extensions,
            )
            try:
                return await client.send(request, stream=True)
            except httpx.ConnectError as exc:
                failure = exc  # try the next checked address
            except httpx.TimeoutException:
                raise TimeoutError from None
            except httpx.HTTPError as exc:
                raise _FetchFailed(f"{url}: {exc or type(exc).__name__}") from None
        raise _FetchFailed(f"could not connect to {host}: {failure}")

    async def _resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            found = await self.resolver(host, port)
        except OSError as exc:
            raise _FetchFailed(f"cannot resolve {host}: {exc}") from None
        addresses = [a for a in (_ip_or_none(text) for text in found) if a is not None]
        if not addresses:
            raise _FetchFailed(f"cannot resolve {host}: no addresses")
        return addresses

    async def _read(
        self, response: httpx.Response, url: httpx.URL, max_text_bytes: int
    ) -> ToolResult:
        import httpx

        mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if mime and not _is_text(mime):
            raise FetchRefused("binary", f"{url} is {mime}, not text; web_fetch returns text only")
        body = bytearray()
        cut = False
        try:
            async for chunk in response.aiter_bytes():
                room = self.max_download_bytes - len(body)
                body += chunk[:room]
                if len(chunk) > room:
                    cut = True
                    break
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.HTTPError as exc:
            raise _FetchFailed(f"{url}: the response broke off ({exc})") from None
        if not mime and looks_binary(bytes(body[:SNIFF_BYTES])):
            raise FetchRefused("binary", f"{url} looks like binary content; web_fetch returns text")
        html = mime in _HTML_TYPES or (not mime and _looks_like_html(body))
        text = _decode(bytes(body), response.charset_encoding, html)
        head = f"{url} ({response.status_code}, {mime or 'no content type'})"
        if html:
            title, text = html_to_text(text, base_url=str(url))
            head += f"\nTitle: {title}" if title else ""
        notes = [f"download stopped at {self.max_download_bytes} bytes"] if cut else []
        encoded = text.encode()
        if len(encoded) > max_text_bytes:
            text = encoded[:max_text_bytes].decode("utf-8", "ignore")
            notes.append(f"text cut to {max_text_bytes} of {len(encoded)} bytes")
        parts = [head, text.strip()]
        if notes:
            parts.append(f"[Truncated: {'; '.join(notes)}.]")
        status = response.status_code
        display = {
            "url": str(url),
            "status": status,
            "content_type": mime,
            "truncated": bool(notes),
        }
        if status >= 400:
            parts[0] = f"HTTP error: {parts[0]}"
        return ToolResult("\n\n".join(parts), is_error=status >= 400, display=display)


def _host_of(url: httpx.URL) -> str:
    """The host as `WebFetch(domain:...)` rules read it: lower-case, no trailing dot."""
    return url.host.lower().rstrip(".")


def _ip_or_none(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _is_text(mime: str) -> bool:
    return (
        mime.startswith("text/")
        or mime in _HTML_TYPES
        or mime in _TEXT_TYPES
        or mime.endswith(("+json", "+xml"))
    )


def _looks_like_html(body: bytes | bytearray) -> bool:
    head = bytes(body[:1024]).lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def _decode(body: bytes, charset: str | None, html: bool) -> str:
    """Text from `body`: a BOM, the header's charset, an HTML meta charset, else UTF-8."""
    if body.startswith(codecs.BOM_UTF8):
        return body[3:].decode("utf-8", "replace")
    if not charset and html:
        found = _META_CHARSET.search(body[:2048])
        charset = found.group(1).decode("ascii") if found else None
    try:
        return body.decode(charset or "utf-8", "replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", "replace")


# ---- HTML to text ------------------------------------------------------------------------------
