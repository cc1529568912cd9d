"""Signing in to remote MCP servers: the SDK's OAuth flow, with moot's storage and callback.

The SDK's `OAuthClientProvider` does the protocol (discovery, registration, PKCE, the `state`
and `iss` checks, refresh). moot supplies the three things only a host can: where tokens live
(`<config dir>/mcp-auth.json`, 0600, one entry per server URL), how the person reaches the sign-in
page (the URL becomes the server's `auth_url`, which `/mcp` and the front ends show), and the
redirect's landing place: a one-shot HTTP listener on 127.0.0.1, on a port kept per server so
the registration's redirect URI stays valid across sessions.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from moot.mcp.files import ConfigFileError, read_object, write_object

if TYPE_CHECKING:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

SIGN_IN_TIMEOUT_S = 600.0
"""How long the listener waits for the person to sign in."""
_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"moot: signed in. You can close this window.\n"
)


class FileTokenStorage:
    """The SDK's `TokenStorage` over one entry of the auth file (keyed by the server's URL)."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url

    def _entry(self) -> dict[str, Any]:
        try:
            data = read_object(self.path) or {}
        except ConfigFileError:
            data = {}
        entry = data.get(self.url)
        return entry if isinstance(entry, dict) else {}

    def _update(self, **values: Any) -> None:
        try:
            data = read_object(self.path) or {}
        except ConfigFileError:
            data = {}
        entry = data.get(self.url)
        data[self.url] = {**(entry if isinstance(entry, dict) else {}), **values}
        write_object(self.path, data, private=True)

    def port(self) -> int:
        """The callback port kept for this server, chosen (a free one) the first time."""
        port = self._entry().get("port")
        if isinstance(port, int) and 0 < port < 65536:
            return port
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self._update(port=port)
        return port

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        raw = self._entry().get("tokens")
        return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._update(tokens=tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self._entry().get("client")
        return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update(client=client_info.model_dump(mode="json", exclude_none=True))


async def wait_for_redirect(
    port: int, timeout: float = SIGN_IN_TIMEOUT_S
) -> AuthorizationCodeResult:
    """Listen on 127.0.0.1:`port` for the authorization server's redirect; its query's `code`,
    `state` and `iss`, passed on exactly as they came (the SDK checks them).

    Raises:
        TimeoutError: Nobody signed in within `timeout` seconds.
    """
    from mcp.shared.auth import AuthorizationCodeResult

    arrived: asyncio.Future[dict[str, list[str]]] = asyncio.get_running_loop().create_future()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            target = line.decode("latin-1").split(" ")[1] if line.count(b" ") >= 2 else ""
            query = parse_qs(urlsplit(target).query)
            if "code" in query and not arrived.done():
                arrived.set_result(query)
            writer.write(_PAGE)
            await writer.drain()
        except (OSError, TimeoutError, IndexError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", port)
    try:
        async with server, asyncio.timeout(timeout):
            query = await arrived
    finally:
        server.close()
    first = {key: values[0] for key, values in query.items() if values}
    return AuthorizationCodeResult(
        code=first["code"], state=first.get("state"), iss=first.get("iss")
    )


def oauth_provider(
    url: str, auth_file: Path, on_sign_in: Callable[[str], None]
) -> OAuthClientProvider:
    """The SDK's OAuth provider for the server at `url`.

    Args:
        url: The MCP endpoint.
        auth_file: Where tokens and the client registration are kept.
        on_sign_in: Told the authorization URL the person must open.
    """
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    storage = FileTokenStorage(auth_file, url)
    port = storage.port()

    async def redirect(authorization_url: str) -> None:
        on_sign_in(authorization_url)

    async def callback() -> AuthorizationCodeResult:
        return await wait_for_redirect(port)

    metadata = OAuthClientMetadata.model_validate(
        {
            "client_name": "moot",
            "redirect_uris": [f"http://127.0.0.1:{port}/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )
