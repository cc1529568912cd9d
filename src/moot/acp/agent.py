"""The ACP agent: `initialize`, sessions (new, load, list), prompts, modes, cancel.

An ACP session is a moot session (same id), opened through the client surface
(`moot.client.local.open_client`); `session/load` opens a stored one and replays its
conversation before it answers. The editor's MCP servers join the session's own (origin
`client`: the person configured them in the editor). When the editor can read files, moot's
`read` shows files as the editor holds them, unsaved changes included; when it can write them
too, `edit`, `multi_edit` and `write` change its buffers rather than the disk.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec

from moot._version import __version__
from moot.acp.editor import EditorFiles, EditorShell
from moot.acp.session import AcpSession, Busy
from moot.client.errors import SetupError
from moot.client.local import SessionOptions, open_client, open_queries
from moot.protocol.mcp import McpServerConfig


class MootAgent:
    """moot as an ACP agent (the SDK's `Agent` protocol).

    Args:
        defaults: The options every session starts from (`moot acp`'s flags); the editor
            names the workspace, the session and its MCP servers.
    """

    def __init__(self, defaults: SessionOptions) -> None:
        self.defaults = defaults
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Any = None
        self.reads_files = False
        self.writes_files = False
        self.has_terminal = False

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> Any:
        from acp import PROTOCOL_VERSION
        from acp.schema import InitializeResponse

        fs = getattr(client_capabilities, "fs", None)
        self.reads_files = bool(fs is not None and fs.read_text_file)
        # Writes go through the editor only where it reads too: an edit applies to its text.
        self.writes_files = bool(self.reads_files and getattr(fs, "write_text_file", False))
        self.has_terminal = bool(getattr(client_capabilities, "terminal", False))
        return InitializeResponse.model_validate(
            {
                "protocolVersion": min(protocol_version, PROTOCOL_VERSION),
                "agentCapabilities": {
                    "loadSession": True,
                    "promptCapabilities": {"image": True, "embeddedContext": True},
                    "mcpCapabilities": {"http": True, "sse": True},
                    "sessionCapabilities": {"list": {}},
                },
                "agentInfo": {"name": "moot", "title": "moot", "version": __version__},
                "authMethods": [],
            }
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    def _open(self, cwd: str, mcp_servers: Any, session_id: str | None) -> AcpSession:
        from acp import RequestError

        loop = asyncio.get_running_loop()
        files = EditorFiles(self.conn, loop, writes=self.writes_files) if self.reads_files else None
        terminal = EditorShell(self.conn) if self.has_terminal else None
        late: list[str] = []  # MCP servers not up before the first request, said in the chat
        options = msgspec.structs.replace(
            self.defaults,
            cwd=Path(cwd),
            session_id=session_id,
            mcp_servers=(*self.defaults.mcp_servers, *editor_servers(mcp_servers or [])),
            editor_buffers=files,
            editor_terminal=terminal,
            mcp_late=late.append,
        )
        try:
            client = open_client(options)
        except SetupError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if files is not None:
            files.session_id = client.session_id
        session = AcpSession(self.conn, client, str(Path(cwd).resolve()), terminal, late)
        self.sessions[session.id] = session
        return session

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> Any:
        from acp.schema import NewSessionResponse

        session = self._open(cwd, mcp_servers, None)
        session.start()
        asyncio.get_running_loop().create_task(session.advertise())  # after the answer
        return NewSessionResponse.model_validate(
            {"sessionId": session.id, "modes": session.modes(), "configOptions": session.options()}
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> Any:
        from acp.schema import LoadSessionResponse

        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = self._open(cwd, mcp_servers, session_id)
        await session.replay()
        session.start()
        asyncio.get_running_loop().create_task(session.advertise())
        return LoadSessionResponse.model_validate(
            {"modes": session.modes(), "configOptions": session.options()}
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> Any:
        from acp.schema import ListSessionsResponse

        queries = open_queries()
        try:
            found = queries.sessions(workspace=cwd, limit=100)
        finally:
            queries.close()
        return ListSessionsResponse.model_validate(
            {
                "sessions": [
                    {
                        "sessionId": s.id,
                        "cwd": s.workspace,
                        "title": s.title or None,
                        "updatedAt": s.updated_at.isoformat(),
                    }
                    for s in found
                ]
            }
        )

    def _session(self, session_id: str) -> AcpSession:
        from acp import RequestError

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r} here"})
        return session

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> Any:
        from acp import RequestError
        from acp.schema import SetSessionModeResponse

        if mode_id not in ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"):
            raise RequestError.invalid_params({"message": f"no mode {mode_id!r}"})
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> Any:
        from acp import RequestError
        from acp.schema import SetSessionConfigOptionResponse

        session = self._session(session_id)
        try:
            session.set_option(config_id, value)
        except ValueError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        return SetSessionConfigOptionResponse.model_validate({"configOptions": session.options()})

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        from acp import RequestError
        from acp.schema import PromptResponse

        session = self._session(session_id)
        try:
            stop = await session.prompt(prompt)
        except Busy as exc:
            raise RequestError.invalid_request({"message": str(exc)}) from None
        return PromptResponse.model_validate({"stopReason": stop})

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.sessions.values()), return_exceptions=True)
        self.sessions.clear()


def editor_servers(servers: list[Any]) -> list[McpServerConfig]:
    """The editor's MCP servers as moot's (origin `client`: they start without asking)."""
    configs: list[McpServerConfig] = []
    for server in servers:
        name = str(getattr(server, "name", "")).replace(" ", "_")
        url = getattr(server, "url", None)
        base: dict[str, Any] = {"name": name, "origin": "client", "source": "the editor"}
        if url is not None:
            kind = getattr(server, "type", "http")
            headers = {h.name: h.value for h in getattr(server, "headers", []) or []}
            configs.append(
                McpServerConfig(
                    **base, transport="sse" if kind == "sse" else "http", url=url, headers=headers
                )
            )
        elif getattr(server, "command", None):
            env = {e.name: e.value for e in getattr(server, "env", []) or []}
            configs.append(
                McpServerConfig(
                    **base,
                    transport="stdio",
                    command=server.command,
                    args=tuple(server.args or ()),
                    env=env,
                )
            )
    return configs
