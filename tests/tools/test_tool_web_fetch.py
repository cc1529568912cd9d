"""The `web_fetch` tool against a real HTTP server on 127.0.0.1: address policy, caps, HTML."""

from __future__ import annotations

import asyncio
import ipaddress
import shutil
import ssl
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from model_server import ModelServer, Reply
from moot.tools.base import SideEffect, ToolContext
from moot.tools.html_text import html_to_text
from moot.tools.web_fetch import _not_global, web_fetch_tool

CTX = ToolContext("ses_1", "run_1", "call_1", "main", "tc_1")
LOOPBACK = ["127.0.0.1/32"]
"""Lets the test server's own address through, so redirects elsewhere are judged alone."""

PAGE = b"""<!doctype html>
<html><head><title>The  Guide</title>
<style>body { color: red }</style>
<script>document.write("<p>tracking</p>")</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Getting   started</h1>
<p>Install it with   <code>pip</code>, then read the
   <a href="/docs/usage.html">usage notes</a> &amp; the FAQ.</p>
<ul><li>fast</li><li>small <b>and</b> tidy</li></ul>
<pre>def main():
    return 0</pre>
<footer>Copyright 2025</footer>
</body></html>"""


async def test_a_loopback_server_is_refused_by_default(server: ModelServer) -> None:
    server.reply(Reply(content_type="text/plain", body=b"secret"))

    result = await web_fetch_tool().invoke({"url": server.url + "/admin"}, CTX)

    assert result.is_error
    assert "(private-address)" in result.content and "127.0.0.1 is a loopback address" in (
        result.content
    )
    assert server.requests == [], "nothing is sent to a refused address"


async def test_a_name_is_refused_when_it_resolves_to_a_private_address(
    server: ModelServer,
) -> None:
    result = await web_fetch_tool().invoke({"url": f"http://localhost:{server.port}/"}, CTX)
    assert result.is_error and "(private-address)" in result.content
    assert "localhost (" in result.content
    assert server.requests == []


async def test_every_resolved_address_must_be_public() -> None:
    async def resolver(host: str, port: int) -> Sequence[str]:
        return ["93.184.216.34", "10.0.0.7"]

    result = await web_fetch_tool(resolver=resolver).invoke({"url": "https://mixed.test/"}, CTX)

    assert result.is_error and "mixed.test (10.0.0.7) is a private address" in result.content


async def test_private_addresses_can_be_allowed(server: ModelServer) -> None:
    server.reply(Reply(content_type="text/plain; charset=utf-8", body="héllo\n".encode()))

    result = await web_fetch_tool(allow_private=True).invoke({"url": server.url + "/x"}, CTX)

    assert not result.is_error
    assert result.content == f"{server.url}/x (200, text/plain)\n\nhéllo"
    assert result.display == {
        "url": f"{server.url}/x",
        "status": 200,
        "content_type": "text/plain",
        "truncated": False,
    }
    assert server.requests[0].method == "GET"
    assert server.requests[0].headers["user-agent"].startswith("moot/")


async def test_the_connection_goes_to_the_checked_address_under_the_name(
    server: ModelServer,
) -> None:
    looked_up: list[tuple[str, int]] = []

    async def resolver(host: str, port: int) -> Sequence[str]:
        looked_up.append((host, port))
        return ["127.0.0.1"]

    server.reply(Reply(content_type="text/plain", body=b"virtual host"))
    tool = web_fetch_tool(allow_networks=LOOPBACK, resolver=resolver)

    result = await tool.invoke({"url": f"http://docs.test:{server.port}/p?q=1"}, CTX)

    assert not result.is_error and result.content.endswith("virtual host")
    assert looked_up == [("docs.test", server.port)], "one lookup: no second, unchecked one"
    assert server.requests[0].headers["host"] == f"docs.test:{server.port}"
    assert server.requests[0].path == "/p?q=1"


async def test_html_becomes_readable_text(server: ModelServer) -> None:
    server.reply(Reply(content_type="text/html; charset=utf-8", body=PAGE))

    result = await web_fetch_tool(allow_private=True).invoke({"url": server.url + "/guide"}, CTX)

    assert not result.is_error
    assert result.content == (
        f"{server.url}/guide (200, text/html)\n"
        "Title: The Guide\n\n"
        "# Getting started\n\n"
        f"Install it with pip, then read the usage notes ({server.url}/docs/usage.html) "
        "& the FAQ.\n\n"
        "- fast\n"
        "- small and tidy\n\n"
        "def main():\n"
        "    return 0"
    )


async def test_a_redirect_is_followed_and_checked(server: ModelServer) -> None:
    server.reply(
        Reply(status=301, headers={"location": "/moved"}, content_type="text/plain"),
        Reply(content_type="text/plain", body=b"arrived"),
    )

    result = await web_fetch_tool(allow_networks=LOOPBACK).invoke({"url": server.url}, CTX)

    assert result.content == f"{server.url}/moved (200, text/plain)\n\narrived"
    assert [r.path for r in server.requests] == ["/", "/moved"]


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://127.0.0.2/", "127.0.0.2 is a loopback address"),
        ("http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1 is a private address"),
        ("file:///etc/passwd", "(scheme)"),
    ],
)
async def test_a_redirect_to_a_private_address_or_other_scheme_is_refused(
    server: ModelServer, location: str, why: str
) -> None:
    server.reply(Reply(status=302, headers={"location": location}, content_type="text/plain"))

    result = await web_fetch_tool(allow_networks=LOOPBACK).invoke({"url": server.url}, CTX)

    assert result.is_error and why in result.content
    assert len(server.requests) == 1


async def test_redirects_are_followed_a_bounded_number_of_times(server: ModelServer) -> None:
    for hop in range(3):
        server.reply(Reply(status=302, headers={"location": f"/{hop}"}, content_type="text/plain"))
    tool = web_fetch_tool(allow_networks=LOOPBACK, max_redirects=2)

    result = await tool.invoke({"url": server.url}, CTX)

    assert result.is_error and "(redirects)" in result.content
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "example.com"]
)
async def test_other_schemes_are_refused(url: str) -> None:
    result = await web_fetch_tool(allow_private=True).invoke({"url": url}, CTX)
    assert result.is_error and "(scheme)" in result.content


async def test_the_download_and_the_text_are_capped(server: ModelServer) -> None:
    server.reply(Reply(content_type="text/plain", body=b"x" * 5000, chunk_size=256))
    tool = web_fetch_tool(allow_private=True, max_download_bytes=1000, max_text_bytes=400)

    result = await tool.invoke({"url": server.url, "max_bytes": 300}, CTX)

    assert not result.is_error
    body = result.content.split("\n\n")[1]
    assert body == "x" * 300
    assert result.content.endswith(
        "[Truncated: download stopped at 1000 bytes; text cut to 300 of 1000 bytes.]"
    )
    assert result.display["truncated"] is True


async def test_max_bytes_cannot_raise_the_tools_own_cap(server: ModelServer) -> None:
    server.reply(Reply(content_type="text/plain", body=b"y" * 1000))
    tool = web_fetch_tool(allow_private=True, max_text_bytes=400)

    result = await tool.invoke({"url": server.url, "max_bytes": 10_000}, CTX)

    assert result.content.split("\n\n")[1] == "y" * 400
    assert result.content.endswith("[Truncated: text cut to 400 of 1000 bytes.]")


async def test_a_slow_server_times_out(server: ModelServer) -> None:
    server.reply(Reply(content_type="text/plain", body=b"late", fault="slow", delay=5.0))
    tool = web_fetch_tool(allow_private=True, timeout_s=0.3)

    result = await tool.invoke({"url": server.url}, CTX)

    assert result.is_error and "(timeout)" in result.content and "0.3 s" in result.content


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("image/png", b"\x89PNG\r\n\x1a\n"), ("application/octet-stream", b"\x00\x01"), ("", b"\0\0")],
)
async def test_binary_content_is_refused(
    server: ModelServer, content_type: str, body: bytes
) -> None:
    server.reply(Reply(content_type=content_type, body=body))
    result = await web_fetch_tool(allow_private=True).invoke({"url": server.url}, CTX)
    assert result.is_error and "(binary)" in result.content


async def test_an_error_status_is_an_error_result_with_the_page(server: ModelServer) -> None:
    server.reply(Reply(status=404, content_type="text/html", body=b"<p>No such page</p>"))
    result = await web_fetch_tool(allow_private=True).invoke({"url": server.url}, CTX)
    assert result.is_error
    assert result.content == f"HTTP error: {server.url} (404, text/html)\n\nNo such page"


async def test_json_is_returned_as_is(server: ModelServer) -> None:
    server.reply(Reply(content_type="application/json", body=b'{"a": [1,  2]}'))
    result = await web_fetch_tool(allow_private=True).invoke({"url": server.url}, CTX)
    assert result.content.endswith('\n\n{"a": [1,  2]}')


def test_it_is_a_network_tool_with_a_small_schema() -> None:
    tool = web_fetch_tool(max_text_bytes=5000)
    assert tool.side_effect is SideEffect.NETWORK
    assert set(tool.parameters["properties"]) == {"url", "max_bytes"}
    assert tool.parameters["properties"]["max_bytes"]["default"] == 5000
    assert tool.parameters["required"] == ["url"]


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("233.252.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("2002:7f00:1::", False),
        ("64:ff9b::a00:1", False),
    ],
)
def test_which_addresses_count_as_public(address: str, public: bool) -> None:
    assert (_not_global(ipaddress.ip_address(address)) is None) is public


def test_html_text_keeps_tables_and_drops_hidden_parts() -> None:
    title, text = html_to_text(
        "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
        "<div hidden>secret</div><p aria-hidden=true>also</p><input hidden><p>after</p>"
        "<a href='https://x.test/'>https://x.test/</a> <a href='#top'>top</a>"
    )
    assert title == ""
    assert text == "a b\n1 2\n\nafter\n\nhttps://x.test/ top"


# ---- TLS: the connection goes to the checked address, the name still decides the certificate --


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for docs.test (the openssl command line makes it)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", key, "-out", cert, "-subj", "/CN=docs.test",
         "-addext", "subjectAltName=DNS:docs.test"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def _tls_server(cert: Path, key: Path, seen: dict[str, str]) -> asyncio.Server:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def sni(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        seen["sni"] = name or ""

    context.sni_callback = sni  # type: ignore[assignment]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        seen["host"] = next(
            line.split(":", 1)[1].strip()
            for line in head.split("\r\n")
            if line.lower().startswith("host:")
        )
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 6\r\n\r\nsecure"
        )
        await writer.drain()
        writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)


async def test_tls_uses_the_name_for_sni_and_the_certificate(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    seen: dict[str, str] = {}
    server = await _tls_server(cert, key, seen)
    port = server.sockets[0].getsockname()[1]

    async def resolver(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"]

    tool = web_fetch_tool(
        allow_networks=LOOPBACK,
        resolver=resolver,
        ssl_context=ssl.create_default_context(cafile=str(cert)),
    )
    async with server:
        good = await tool.invoke({"url": f"https://docs.test:{port}/"}, CTX)
        wrong = await tool.invoke({"url": f"https://other.test:{port}/"}, CTX)

    assert not good.is_error and good.content.endswith("secure")
    assert seen["host"] == f"docs.test:{port}"
    # The certificate names docs.test, not other.test, though both names led to one address.
    assert wrong.is_error and "certificate" in wrong.content.lower()
    assert seen["sni"] == "other.test"


async def test_an_html_meta_charset_decodes_the_page(server: ModelServer) -> None:
    body = b"<html><head><meta charset='iso-8859-1'></head><body><p>caf\xe9</p></body></html>"
    server.reply(Reply(content_type="text/html", body=body))
    result = await web_fetch_tool(allow_private=True).invoke({"url": server.url}, CTX)
    assert result.content.endswith("\n\ncaf\u00e9")


# ---- redirects and the session's rules (issue 11) -----------------------------------------------


def rules_check(mode: str = "default", *, headless: bool = False, **rules: list[str]):
    """The redirect check a session hands the tool: its real approval policy."""
    from moot.permissions.headless import NoAsking
    from moot.permissions.policy import RulesPolicy
    from moot.permissions.rules import RuleSet
    from moot.tools.redirects import PolicyRedirects

    policy = RulesPolicy(RuleSet(**rules), Path.cwd(), mode=mode)
    return PolicyRedirects(NoAsking(policy, Path.cwd()) if headless else policy)


async def local_names(host: str, port: int) -> Sequence[str]:
    return ["127.0.0.1"]


def redirect_to(server: ModelServer, host: str) -> None:
    server.reply(
        Reply(
            status=302,
            headers={"location": f"http://{host}:{server.port}/there"},
            content_type="text/plain",
        ),
        Reply(content_type="text/plain", body=b"arrived"),
    )


@pytest.mark.parametrize(
    ("check", "refusal"),
    [
        (rules_check(allow=["WebFetch(domain:docs.test)"], deny=["WebFetch(domain:evil.test)"]),
         "(redirect-denied)"),
        (rules_check(allow=["WebFetch(domain:docs.test)"]), "(redirect-needs-approval)"),
        (rules_check("acceptEdits", allow=["WebFetch(domain:docs.test)"]),
         "(redirect-needs-approval)"),
        (rules_check(headless=True, allow=["WebFetch(domain:docs.test)"]), "cannot ask"),
        (rules_check("bypassPermissions", deny=["WebFetch(domain:evil.test)"]),
         "(redirect-denied)"),
    ],
)  # fmt: skip
async def test_a_redirect_to_another_host_passes_the_rules_as_the_first_url_does(
    server: ModelServer, check: object, refusal: str
) -> None:
    redirect_to(server, "evil.test")
    tool = web_fetch_tool(allow_networks=LOOPBACK, resolver=local_names, redirects=check)

    result = await tool.invoke({"url": f"http://docs.test:{server.port}/"}, CTX)

    assert result.is_error and refusal in result.content, result.content
    assert f"http://evil.test:{server.port}/there" in result.content  # the model may ask for it
    assert len(server.requests) == 1, "nothing is sent to the refused host"


@pytest.mark.parametrize(
    "check",
    [
        rules_check(allow=["WebFetch(domain:docs.test)", "WebFetch(domain:evil.test)"]),
        rules_check("bypassPermissions"),
    ],
)
async def test_a_redirect_the_rules_allow_is_followed(server: ModelServer, check: object) -> None:
    redirect_to(server, "evil.test")
    tool = web_fetch_tool(allow_networks=LOOPBACK, resolver=local_names, redirects=check)

    result = await tool.invoke({"url": f"http://docs.test:{server.port}/"}, CTX)

    assert not result.is_error and result.content.endswith("arrived")
    assert len(server.requests) == 2


async def test_a_redirect_on_the_same_host_needs_no_second_decision(server: ModelServer) -> None:
    """The first URL was settled for its host (perhaps by the person); rules speak of hosts."""
    redirect_to(server, "DOCS.test.")
    tool = web_fetch_tool(allow_networks=LOOPBACK, resolver=local_names, redirects=rules_check())

    result = await tool.invoke({"url": f"http://docs.test:{server.port}/"}, CTX)

    assert not result.is_error and result.content.endswith("arrived")


async def test_a_sessions_web_fetch_puts_redirects_to_its_rules(
    server: ModelServer, tmp_path: Path
) -> None:
    """The built-in tool list hands `web_fetch` the check (the assembly passes the policy)."""
    from moot.sandbox.background import BackgroundShells
    from moot.sandbox.select import SandboxChoice
    from moot.store.memory import MemoryStore
    from moot.tools.builtin import builtin_tools
    from moot.workspace.paths import Workspace

    store = MemoryStore()
    session = store.create_session(title="", workspace=str(tmp_path)).id
    server.reply(
        Reply(status=302, headers={"location": "http://elsewhere.invalid/"}, content_type="x/y")
    )
    check = rules_check(headless=True, allow=["WebFetch(domain:127.0.0.1)"])
    tools = builtin_tools(store, session, Workspace(tmp_path), SandboxChoice("auto", None, ""),
                          BackgroundShells(), allow_private_web=True, redirects=check)  # fmt: skip
    (fetch,) = [t for t in tools if t.name == "web_fetch"]

    result = await fetch.invoke({"url": server.url + "/"}, CTX)

    assert result.is_error and "(redirect-denied)" in result.content
    assert "--allowedTools" in result.content and "elsewhere.invalid" in result.content
