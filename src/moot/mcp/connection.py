"""One MCP server, connected through the SDK's `Client`, inside the host process.

A connection lives in its own task (the SDK's task groups must be entered and left by the same
task) and is used from others. Whatever goes wrong becomes a `ServerUnavailable` whose message
the model or the person can read: a server that does not start (with the end of what it wrote
to stderr), one that does not answer within its timeout (hangs and lines that are not JSON-RPC
look alike from here, so the message says how many such lines came), one that crashed. A failed
server is restarted at its next use, but not sooner than its back-off allows (1 s, doubling up
to `MAX_BACKOFF_S` while failures repeat); a use inside a short back-off waits it out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot._version import __version__
from moot.mcp import wire
from moot.mcp.names import qualified
from moot.mcp.transport import (
    Streams,
    WatchedStream,
    exited,
    http_transport,
    open_stderr_log,
    open_stdio,
    start_time,
)
from moot.protocol.mcp import McpPromptInfo, McpServerConfig, ServerState

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger("moot.mcp")

MAX_BACKOFF_S = 60.0
WAIT_OUT_BACKOFF_S = 10.0
"""A use during a back-off shorter than this waits for it; a longer one fails at once."""
MAX_PAGES = 20
"""List pages read per kind (a paginator that never ends cannot hang a start)."""
STDERR_TAIL = 600


class ServerUnavailable(Exception):
    """The server cannot answer now; the message says why (and when it will be tried again)."""


class Connection:
    """One server: its state, its SDK client while connected, and what it offers.

    Args:
        config: The server's definition.
        setup: Where logs, tokens and saved outputs go.
        report: Told every change of state (the host sends it on to moot).
    """

    def __init__(
        self,
        config: McpServerConfig,
        setup: wire.Setup,
        report: Callable[[wire.ServerUpdate], None],
        ask: Callable[..., Awaitable[wire.ElicitAnswer]] | None = None,
    ) -> None:
        self.config = config
        self._ask = ask
        self.setup = setup
        self._report = report
        self.state: ServerState = "starting"
        self.error = ""
        self.auth_url = ""
        self.tools: tuple[wire.ToolDef, ...] = ()
        self.prompts: tuple[McpPromptInfo, ...] = ()
        self.resources: tuple[str, ...] = ()
        self.pid: int | None = None
        self.started: int | None = None
        """When the stdio server `pid` started (`transport.start_time`): that pid is still it."""
        self.failures = 0
        self.restarts = 0
        self.retry_at = 0.0
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._stream: WatchedStream | None = None
        self._log_path = Path(setup.log_dir) / f"{config.name}.log"
        self._log_offset = 0

    @property
    def name(self) -> str:
        return self.config.name

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background (nothing happens when already connected or connecting)."""
        if self._task is not None and not self._task.done():
            return
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._set("starting", error="")
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    @property
    def live(self) -> bool:
        """Connected or connecting: its task runs."""
        return self._task is not None and not self._task.done()

    async def restart(self) -> None:
        """Disconnect, then connect again (the person's `/mcp restart` of a live server)."""
        await self.close()
        self.restarts += 1
        self.start()

    async def close(self) -> None:
        """Disconnect; the SDK ends a stdio server's process (stdin closed, then signals)."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            if self._client is None:
                task.cancel()  # still connecting: no reason to wait for it to finish
            try:
                await asyncio.wait_for(asyncio.shield(task), 8)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        self._set("stopped")

    async def _run(self) -> None:
        try:
            # The SDK takes a second or more to import; in a thread, the host still reads
            # moot's requests meanwhile (a `stop` while servers start is answered at once).
            await asyncio.to_thread(_import_sdk)
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(self.config.startup_timeout_s):
                    client = await self._connect(stack)
                    await self._list(client)
                self._client = client
                self.failures = 0
                self._set("ready", error="", auth_url="")
                self._settled.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            if not self._stop.is_set():
                self._failed("the connection was cancelled")
            raise
        except BaseException as exc:  # the SDK raises exception groups and anyio errors alike
            self._failed(self._describe_start_failure(exc))
        finally:
            self._client = None
            if self.state == "ready":  # closed on purpose
                self._set("stopped")
            self._settled.set()

    async def _connect(self, stack: AsyncExitStack) -> Client:
        from mcp import Client
        from mcp_types import Implementation

        transport = await self._transport(stack)
        elicit = self._elicit if self.setup.elicitation and self._ask else None
        sample = self._sample if self._samples and self._ask else None
        client = Client(
            transport,
            client_info=Implementation(name="moot", version=__version__),
            message_handler=self._on_message,
            list_roots_callback=self._roots,
            elicitation_callback=elicit,
            sampling_callback=sample,
            # Where moot answers a server's questions or lends it the model, the handshake
            # protocol: at the version `server/discover` finds, the SDK refuses a server's own
            # requests ("no back-channel"), so a Python SDK server could not ask at all.
            mode="legacy" if elicit or sample else "auto",
        )
        await stack.enter_async_context(client)
        return client

    async def _roots(self, context: Any) -> Any:
        """`roots/list`: the session's directories, the workspace first."""
        from mcp_types import ListRootsResult, Root

        places = self.setup.roots or (self.setup.workspace,)
        roots = [Root.model_validate({"uri": Path(p).as_uri(), "name": p}) for p in places]
        return ListRootsResult(roots=roots)

    async def _elicit(self, context: Any, params: Any) -> Any:
        """`elicitation/create`: the server's question, put to the person through moot."""
        from mcp_types import ElicitResult

        schema = getattr(params, "requested_schema", None)
        if self._ask is None or schema is None:  # a URL elicitation: moot opens no browser
            return ElicitResult(action="decline")
        answer = await self._ask(self.name, params.message, dict(schema))
        content = answer.content if answer.action == "accept" else None
        return ElicitResult(action=answer.action, content=content)  # type: ignore[arg-type]

    @property
    def _samples(self) -> bool:
        return self.setup.sampling or self.name in self.setup.sampling_allowed

    async def _sample(self, context: Any, params: Any) -> Any:
        """`sampling/createMessage`: the session's model answers, once the person approves."""
        from mcp_types import INVALID_REQUEST, CreateMessageResult, ErrorData, TextContent

        assert self._ask is not None
        messages = [[m.role, _text(m.content)] for m in params.messages]
        request = {
            "system": params.system_prompt or "",
            "messages": messages,
            "max_tokens": params.max_tokens,
        }
        answer = await self._ask(self.name, "", {}, request)
        if answer.action != "accept" or not answer.content:
            reason = (answer.content or {}).get("error") or f"the person chose {answer.action}"
            return ErrorData(code=INVALID_REQUEST, message=f"sampling refused: {reason}")
        text = TextContent(type="text", text=str(answer.content.get("text", "")))
        model = str(answer.content.get("model", ""))
        return CreateMessageResult(role="assistant", content=text, model=model)

    async def _transport(self, stack: AsyncExitStack) -> Any:
        config = self.config
        if config.transport == "stdio":
            errlog = open_stderr_log(self._log_path, stack)
            self._log_offset = errlog.tell()
            cwd = config.cwd or _start_dir(config, self.setup.workspace)
            read, write, self.pid = await open_stdio(config, cwd, errlog, stack)
            self.started = start_time(self.pid) if self.pid is not None else None
        else:
            auth_file = Path(self.setup.auth_file)
            transport = http_transport(config, auth_file, stack, self._sign_in)
            read, write = await stack.enter_async_context(transport)
        self._stream = WatchedStream(read)
        return Streams(self._stream, write)

    def _sign_in(self, url: str) -> None:
        self._set("auth_required", auth_url=url, error=f"sign in at {url}")

    async def _list(self, client: Client) -> None:
        tools: list[wire.ToolDef] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += [_tool_def(t) for t in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        self.tools = tuple(tools)
        capabilities = client.server_capabilities
        if capabilities.prompts is not None:
            with contextlib.suppress(Exception):  # a server's prompts are a nicety; tools count
                listed = await client.list_prompts()
                self.prompts = tuple(_prompt_info(self.name, p) for p in listed.prompts)
        if capabilities.resources is not None:
            with contextlib.suppress(Exception):
                resources = await client.list_resources()
                self.resources = tuple(str(r.uri) for r in resources.resources)

    async def _on_message(self, message: Any) -> None:
        """A server's notification: a changed tool list is listed again."""
        root = getattr(message, "root", message)
        method = getattr(root, "method", "")
        if method == "notifications/tools/list_changed" and self._client is not None:
            with contextlib.suppress(Exception):
                await self._list(self._client)
                self._set("ready")

    # ---- use ---------------------------------------------------------------------------------

    async def client(self) -> Client:
        """The connected client, connecting (or restarting after its back-off) first.

        Raises:
            ServerUnavailable: It cannot be reached now; the message says why.
        """
        if self._task is None or self._task.done():
            wait = self.retry_at - time.monotonic()
            if wait > WAIT_OUT_BACKOFF_S:
                raise ServerUnavailable(
                    f"MCP server {self.name} failed ({self.error}); moot restarts it at its "
                    f"next use in {wait:.0f} s"
                )
            if wait > 0:
                await asyncio.sleep(wait)
            self.restarts += 1
            self.start()
        try:
            async with asyncio.timeout(self.config.startup_timeout_s + 1):
                await self._settled.wait()
        except TimeoutError:
            raise ServerUnavailable(
                f"MCP server {self.name} is still starting"
                + (f" ({self.error})" if self.error else "")
            ) from None
        if self._client is None:
            raise ServerUnavailable(f"MCP server {self.name} did not start: {self.error}")
        return self._client

    async def call(self, what: str, send: Callable[[Client], Any]) -> Any:
        """Send one request within the server's timeout; a hang or a crash fails the connection.

        Raises:
            ServerUnavailable: The server could not answer; the message says why.
            Exception: An error the server answered with (an MCP error): the connection is fine.
        """
        client = await self.client()
        try:
            async with asyncio.timeout(self.config.timeout_s):
                result = await send(client)
        except TimeoutError:
            why = f"did not answer {what} within {self.config.timeout_s:g} s"
            if self._stream is not None and self._stream.malformed:
                why += (
                    f"; it wrote {self._stream.malformed} line(s) that are not JSON-RPC "
                    f"messages, the first: {self._stream.first_malformed}"
                )
            await self._fail_now(why)
            raise ServerUnavailable(f"MCP server {self.name} {why}") from None
        except Exception as exc:
            if self._alive() and not _connection_closed(exc):
                raise  # the server answered with an error; the connection is fine
            await self._settle_exit()
            why = self._crash_description(exc)
            await self._fail_now(why)
            raise ServerUnavailable(f"MCP server {self.name} {why}") from None
        self.failures = 0
        return result

    def _alive(self) -> bool:
        if self._task is None or self._task.done():
            return False
        return self.pid is None or not exited(self.pid)

    async def _settle_exit(self, limit: float = 1.0) -> None:
        """Give a server whose connection just closed a moment to finish exiting, so what it
        wrote last to stderr, and that it exited, can be told (bounded polling of a process)."""
        if self.pid is None:
            return
        deadline = time.monotonic() + limit
        while not exited(self.pid) and time.monotonic() < deadline:  # noqa: ASYNC110 - a process
            await asyncio.sleep(0.01)

    async def _fail_now(self, why: str) -> None:
        """Tear the connection down (the SDK ends a hung server's process) and record why."""
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
        self._failed(why)

    # ---- state -------------------------------------------------------------------------------

    def _failed(self, why: str) -> None:
        self.failures += 1
        self.retry_at = time.monotonic() + min(2.0 ** (self.failures - 1), MAX_BACKOFF_S)
        self._client = None
        self._set("failed", error=why)

    def _set(
        self, state: ServerState, *, error: str | None = None, auth_url: str | None = None
    ) -> None:
        self.state = state
        if error is not None:
            self.error = error
        if auth_url is not None:
            self.auth_url = auth_url
        self._report(self.update())

    def update(self) -> wire.ServerUpdate:
        ready = self.state == "ready"
        return wire.ServerUpdate(
            server=self.name,
            state=self.state,
            tools=self.tools if ready else (),
            prompts=self.prompts if ready else (),
            resources=self.resources if ready else (),
            error=self.error,
            auth_url=self.auth_url,
            pid=self.pid,
            restarts=self.restarts,
        )

    def _stderr_tail(self) -> str:
        try:
            with open(self._log_path, "rb") as file:
                file.seek(self._log_offset)
                text = file.read()[-STDERR_TAIL:].decode("utf-8", "replace").strip()
        except OSError:
            return ""
        return text.splitlines()[-1] if text else ""

    def _describe_start_failure(self, exc: BaseException) -> str:
        if _first(exc, TimeoutError) is not None:  # the SDK's task groups wrap it in groups
            why = (
                f"did not finish starting (the MCP handshake and listing what it offers) within "
                f"{self.config.startup_timeout_s:g} s (its startupTimeout, or MCP_TIMEOUT)"
            )
        else:
            why = _plain(exc)
        tail = self._stderr_tail()
        return f"{why} (stderr: {tail})" if tail else why

    def _crash_description(self, exc: BaseException) -> str:
        tail = self._stderr_tail()
        why = f"stopped answering: {_plain(exc)}"
        if self.pid is not None and not self._alive():
            why = "exited"
        return f"{why} (stderr: {tail})" if tail else why


def _connection_closed(exc: BaseException) -> bool:
    """The SDK's own error for a connection that ended under a request (the server went away),
    not an error the server answered with."""
    from mcp_types import CONNECTION_CLOSED

    message = str(getattr(exc, "message", "")).lower()
    return getattr(exc, "code", None) == CONNECTION_CLOSED and "connection closed" in message


def _import_sdk() -> None:
    import mcp.client.client
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


def _tool_def(tool: Any) -> wire.ToolDef:
    annotations = tool.annotations
    return wire.ToolDef(
        name=tool.name,
        description=tool.description or tool.title or "",
        input_schema=dict(tool.input_schema or {"type": "object"}),
        read_only=bool(annotations is not None and annotations.read_only_hint),
    )


def _prompt_info(server: str, prompt: Any) -> McpPromptInfo:
    arguments = tuple(a.name if a.required else f"{a.name}?" for a in (prompt.arguments or ()))
    return McpPromptInfo(
        name=prompt.name,
        command=qualified(server, prompt.name),
        description=prompt.description or "",
        arguments=arguments,
    )


def _first(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """`exc` if it is a `kind`, else the first `kind` in its groups, however deep."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _first(inner, kind)) is not None:
                return found
    return None


def _plain(exc: BaseException) -> str:
    """An exception (or the first of a group) as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"cannot run {exc.filename!r}: no such program"
    return f"{name}: {text}" if text else name


def _text(content: Any) -> str:
    """A sampling message's text (its text blocks; an image or audio is named, not sent)."""
    blocks = content if isinstance(content, list) else [content]
    kinds = [getattr(b, "type", "?") for b in blocks]
    return "\n".join(
        getattr(b, "text", "") if kind == "text" else f"[{kind}]"
        for b, kind in zip(blocks, kinds, strict=True)
    )


def _start_dir(config: McpServerConfig, workspace: str) -> str:
    """Where a stdio server starts when its definition names no `cwd`: the home directory for
    one of the person's own settings, else the workspace. A user definition holds for every
    repository, and what a launcher finds where it starts would stand in for what it names:
    `npx -y pkg` runs a `node_modules/pkg` of that directory, `python -m mod` its `mod.py`,
    `yarn` the `yarnPath` of its `.yarnrc.yml`. Such a server learns the workspace from
    `roots/list`. (A repository's own server is approved for it; one from the command line or
    an editor was given for this run, relative paths and all.)"""
    if config.origin != "user":
        return workspace
    home = Path.home()
    return str(home) if home.is_dir() else "/"
