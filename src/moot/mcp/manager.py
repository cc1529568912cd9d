"""A session's MCP servers, from moot's side: which may start, their state, their tools.

`McpManager` never imports the SDK: the connections live in a host process
(`moot.mcp.host`, see `moot.mcp.wire` for why), started in the background the first time the
session is used, so no server ever delays the prompt or the first model request. What a server
offers is cached per definition (`<cache dir>/mcp-tools/`), so a session's first request
already carries the tools the server had last time; when the server is up, its live list
replaces them (a model call in the same run sees the change).

A failure anywhere (a server that does not start, hangs, crashes or answers nonsense; the host
process dying) becomes a tool error the model reads, and the session goes on; the next use
restarts what failed, after a back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

import msgspec

from moot.mcp import wire
from moot.mcp.approvals import Approvals
from moot.mcp.config import LoadedServers
from moot.mcp.names import qualified
from moot.mcp.tools import McpTool, ToolSearch, plan_deferral
from moot.protocol.mcp import (
    McpPromptInfo,
    McpResourceText,
    McpServerConfig,
    McpServerStatus,
    McpToolInfo,
    ServerState,
)
from moot.protocol.messages import Attachment
from moot.tools.base import Tool, ToolResult

HOST_READ_LIMIT = 64 << 20
"""The longest line the host may send (a capped result is far below it)."""
ANSWER_SLACK_S = 15.0
"""How much longer than a server's own timeouts moot waits for the host's answer."""
CLOSE_TIMEOUT_S = 10.0
MAX_HOST_BACKOFF_S = 30.0


class _Cached(msgspec.Struct):
    tools: tuple[wire.ToolDef, ...] = ()
    prompts: tuple[McpPromptInfo, ...] = ()
    resources: tuple[str, ...] = ()


class _Server:
    """What moot knows about one server."""

    def __init__(self, config: McpServerConfig, state: ServerState, error: str = "") -> None:
        self.config = config
        self.state: ServerState = state
        self.error = error
        self.tools: tuple[wire.ToolDef, ...] = ()
        self.prompts: tuple[McpPromptInfo, ...] = ()
        self.resources: tuple[str, ...] = ()
        self.auth_url = ""
        self.restarts = 0
        self.pid: int | None = None
        self.ready = asyncio.Event()
        """Set once a start ends, ready or failed (an `asyncio.Event` binds its loop lazily)."""


class McpManager:
    """The MCP servers of one session.

    Args:
        loaded: The servers the files define (`moot.mcp.config.load_servers`).
        approvals: The workspace's approvals of repository servers.
        workspace: The workspace root (stdio servers run there unless they name a `cwd`).
        outputs_dir: The session's outputs directory (capped results are saved there).
        environ: The session's environment (the host and its servers start from it).
        tool_search: `auto`, `always` or `never` (see `moot.mcp.tools`).
        hidden: Whether a bare deny rule removes a tool (`mcp__github__*`).
        data_dir: Where logs go (`<data dir>/logs/mcp/`); the user data dir when None.
        cache_dir: Where tool lists are cached; the user cache dir when None.
        auth_file: Where OAuth tokens are kept; `<config dir>/mcp-auth.json` when None.
        max_output_chars: What the model sees of a result, at most.
    """

    def __init__(
        self,
        loaded: LoadedServers,
        approvals: Approvals,
        *,
        workspace: Path,
        outputs_dir: Path,
        environ: dict[str, str] | None = None,
        tool_search: str = "auto",
        hidden: Callable[[str], bool] = lambda name: False,
        data_dir: Path | None = None,
        cache_dir: Path | None = None,
        auth_file: Path | None = None,
        max_output_chars: int = 30_000,
    ) -> None:
        from moot import paths

        self.workspace = workspace
        self.outputs_dir = outputs_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.tool_search = tool_search
        self.hidden = hidden
        self.log_dir = (data_dir or paths.data_dir()) / "logs" / "mcp"
        self.cache_dir = (cache_dir or paths.cache_dir()) / "mcp-tools"
        self.auth_file = auth_file or paths.config_dir() / "mcp-auth.json"
        self.max_output_chars = max_output_chars
        self.approvals = approvals
        self.problems = list(loaded.problems)
        self._servers: dict[str, _Server] = {}
        for name in sorted(loaded.servers):
            config = loaded.servers[name]
            self._servers[name] = self._initial(config, loaded)
        self._target: MutableMapping[str, Tool] | None = None
        self._published: set[str] = set()
        self._loaded: set[str] = set()
        self._tools: dict[str, McpTool] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._spawning: asyncio.Task[bool] | None = None
        self._pending: dict[int, asyncio.Future[wire.Report]] = {}
        self._next_id = 0
        self._started = False
        self._closed = False
        self._host_failures = 0
        self._host_retry_at = 0.0
        self._rebuild_tools()

    def _initial(self, config: McpServerConfig, loaded: LoadedServers) -> _Server:
        if config.name in loaded.disabled:
            return _Server(config, "disabled", "turned off by disabledMcpjsonServers")
        if config.problem:
            return _Server(config, "failed", config.problem)
        approved = (
            self.approvals.approved(config)
            or loaded.enable_all_project
            or config.name in loaded.enabled
        )
        if not approved:
            return _Server(config, "needs_approval")
        server = _Server(config, "starting")
        cached = self._read_cache(config)
        if cached is not None:
            server.tools, server.prompts, server.resources = (
                cached.tools,
                cached.prompts,
                cached.resources,
            )
        return server

    # ---- the tools the model sees ------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """The MCP tools to give the runtime now (cached or live), with `mcp_tool_search` when
        some are deferred."""
        tools: list[Tool] = list(self._tools.values())
        deferred = [t for t in self._tools.values() if t.deferred]
        if deferred:
            tools.append(ToolSearch(deferred, on_load=self._loaded.update))
        return tools

    def attach(self, target: MutableMapping[str, Tool]) -> None:
        """Keep the runtime's tools (`Runtime.tools`) up to date from now on."""
        self._target = target
        self._published = {t.name for t in self.tools()}

    def _rebuild_tools(self) -> None:
        by_server: dict[str, list[McpTool]] = {}
        tools: dict[str, McpTool] = {}
        for name, server in self._servers.items():
            if server.state in ("needs_approval", "disabled") or not server.tools:
                continue
            made = []
            for definition in server.tools:
                qualified_name = qualified(name, definition.name)
                if qualified_name in tools or self.hidden(qualified_name):
                    continue
                tool = McpTool(qualified_name, name, definition, self._call)
                tools[qualified_name] = tool
                made.append(tool)
            by_server[name] = made
        for name in plan_deferral(by_server, self.tool_search):
            for tool in by_server[name]:
                tool.deferred = tool.name not in self._loaded
        self._tools = tools
        self._publish()

    def _publish(self) -> None:
        if self._target is None:
            return
        fresh = {t.name: t for t in self.tools()}
        for name in self._published - fresh.keys():
            self._target.pop(name, None)
        self._target.update(fresh)
        self._published = set(fresh)

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the servers that may start, in the background (needs a running event loop);
        a second call does nothing."""
        if self._started or self._closed:
            return
        self._started = True
        if any(s.state == "starting" for s in self._servers.values()):
            self._spawn_host()

    def _spawn_host(self) -> asyncio.Task[bool]:
        if self._spawning is None or self._spawning.done():
            self._spawning = asyncio.get_running_loop().create_task(self._run_host())
        return self._spawning

    async def _run_host(self) -> bool:
        """Start the host process and the servers that may start; False when it cannot."""
        wait = self._host_retry_at - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            with open(self.log_dir / "host.stderr", "ab") as stderr:  # noqa: ASYNC230 - once
                self._proc = await asyncio.create_subprocess_exec(
                    # -I: the workspace must not shadow moot's own modules (`python -m` would
                    # put the working directory first on sys.path).
                    sys.executable,
                    "-I",
                    "-m",
                    "moot.mcp.host",
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=stderr,
                    start_new_session=True,  # the terminal's Ctrl-C is moot's to handle
                    limit=HOST_READ_LIMIT,
                    env=self.environ,
                )
        except OSError as exc:
            self._host_failed(f"the MCP host could not start: {exc}")
            return False
        self._reader = asyncio.get_running_loop().create_task(self._read(self._proc))
        setup = wire.Setup(
            workspace=str(self.workspace),
            outputs_dir=str(self.outputs_dir),
            log_dir=str(self.log_dir),
            auth_file=str(self.auth_file),
            max_output_chars=self.max_output_chars,
        )
        self._send(setup)
        for server in self._servers.values():
            if server.state in ("starting", "failed", "ready", "auth_required") and (
                not server.config.problem
            ):
                self._start_server(server)
        return True

    def _start_server(self, server: _Server) -> None:
        server.state = "starting"
        server.ready.clear()
        self._send(wire.StartServer(server=server.config))

    def _send(self, message: wire.Request) -> bool:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            return False
        try:
            proc.stdin.write(wire.encode(message))
        except (OSError, RuntimeError):
            return False
        return True

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while line := await proc.stdout.readline():
                try:
                    report = wire.decode_report(line)
                except (msgspec.ValidationError, msgspec.DecodeError):
                    continue
                self._take(report)
        except (ValueError, OSError):
            pass  # a line past the limit: the host is broken
        finally:
            await self._host_gone(proc)

    def _take(self, report: wire.Report) -> None:
        if isinstance(report, wire.ServerUpdate):
            self._update(report)
            return
        future = self._pending.pop(report.id, None)
        if future is not None and not future.done():
            future.set_result(report)

    def _update(self, update: wire.ServerUpdate) -> None:
        server = self._servers.get(update.server)
        if server is None or server.state in ("needs_approval", "disabled"):
            return
        server.state, server.error, server.auth_url = update.state, update.error, update.auth_url
        server.restarts, server.pid = update.restarts, update.pid or server.pid
        if update.state == "ready":
            changed = (update.tools, update.prompts, update.resources) != (
                server.tools,
                server.prompts,
                server.resources,
            )
            server.tools, server.prompts, server.resources = (
                update.tools,
                update.prompts,
                update.resources,
            )
            if changed:
                self._write_cache(server)
                self._rebuild_tools()
        if update.state in ("ready", "failed"):
            server.ready.set()

    async def _host_gone(self, proc: asyncio.subprocess.Process) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)
        if self._proc is proc:
            self._proc = None
        why = f"the MCP host process exited (code {proc.returncode})"
        for future in self._pending.values():
            if not future.done():
                future.set_result(wire.Failure(id=0, message=why))
        self._pending.clear()
        self._end_servers()
        if not self._closed:
            self._host_failed(why)

    def _host_failed(self, why: str) -> None:
        self._host_failures += 1
        delay = min(2.0 ** (self._host_failures - 1), MAX_HOST_BACKOFF_S)
        self._host_retry_at = time.monotonic() + delay
        for server in self._servers.values():
            if server.state in ("starting", "ready", "auth_required"):
                server.state, server.error = "failed", why
                server.ready.set()

    def _end_servers(self) -> None:
        """Kill what a dead host may have left (each stdio server leads its own group)."""
        for server in self._servers.values():
            if server.pid is not None:
                with contextlib.suppress(OSError):
                    os.killpg(server.pid, signal.SIGKILL)
                server.pid = None

    async def close(self) -> None:
        """Stop every server and the host (bounded: a host that lingers is killed)."""
        self._closed = True
        if self._spawning is not None and not self._spawning.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._spawning, CLOSE_TIMEOUT_S)
        proc = self._proc
        if proc is not None and proc.returncode is None:
            self._send(wire.Stop())
            with contextlib.suppress(Exception):
                if proc.stdin is not None:
                    proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), CLOSE_TIMEOUT_S)
            except TimeoutError:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                self._end_servers()
                await proc.wait()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
        for server in self._servers.values():
            if server.state in ("starting", "ready", "auth_required"):
                server.state = "stopped"

    # ---- asking the host ---------------------------------------------------------------------

    async def _ask(self, server: _Server, make: Callable[[int], wire.Request]) -> wire.Report:
        """Send a request about `server` and wait for its answer (bounded)."""
        refused = self._refusal(server)
        if refused:
            return wire.Failure(id=0, message=refused)
        if self._proc is None or self._proc.returncode is not None:
            if self._closed:
                return wire.Failure(id=0, message="the session is closing")
            if not await self._spawn_host():
                return wire.Failure(id=0, message=server.error or "the MCP host did not start")
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[wire.Report] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if not self._send(make(request_id)):
            self._pending.pop(request_id, None)
            return wire.Failure(id=0, message="the MCP host is not running")
        config = server.config
        limit = config.timeout_s + config.startup_timeout_s + ANSWER_SLACK_S
        try:
            return await asyncio.wait_for(future, limit)
        except TimeoutError:
            return wire.Failure(
                id=0, message=f"MCP server {config.name} did not answer in {limit:g} s"
            )
        finally:
            self._pending.pop(request_id, None)

    def _refusal(self, server: _Server) -> str:
        name = server.config.name
        if server.state == "needs_approval":
            return (
                f"MCP server {name} ({server.config.source}) has not been approved to run: the "
                f"person can approve it with `/mcp approve {name}` (or --allow-project-mcp {name})"
            )
        if server.state == "disabled":
            return f"MCP server {name} is turned off ({server.error})"
        if server.config.problem:
            return f"MCP server {name} cannot start: {server.config.problem}"
        return ""

    async def _call(self, tool: McpTool, arguments: dict[str, Any]) -> ToolResult:
        server = self._servers[tool.server]
        answer = await self._ask(
            server,
            lambda i: wire.CallTool(id=i, server=tool.server, tool=tool.tool, arguments=arguments),
        )
        if isinstance(answer, wire.ToolAnswer):
            images = tuple(Attachment(mime_type=m, data=d) for m, d in answer.images)
            text = answer.text or ("" if images else "(no output)")
            return ToolResult(text, is_error=answer.is_error, attachments=images)
        message = answer.message if isinstance(answer, wire.Failure) else "unexpected answer"
        if tool.deferred:
            message += f"\nIts argument schema: {msgspec.json.encode(tool.parameters).decode()}"
        return ToolResult.error(message)

    async def prompt(self, server_name: str, prompt: str, arguments: dict[str, str]) -> str:
        """A prompt's text (see `McpControl.mcp_prompt`)."""
        server = self._find(server_name)
        answer = await self._ask(
            server,
            lambda i: wire.GetPrompt(id=i, server=server_name, prompt=prompt, arguments=arguments),
        )
        if isinstance(answer, wire.PromptAnswer):
            return answer.text
        raise LookupError(answer.message if isinstance(answer, wire.Failure) else "no answer")

    async def resource(self, server_name: str, uri: str) -> McpResourceText:
        """A resource's contents (see `McpControl.mcp_resource`)."""
        server = self._find(server_name)
        answer = await self._ask(
            server, lambda i: wire.ReadResource(id=i, server=server_name, uri=uri)
        )
        if isinstance(answer, wire.ResourceAnswer):
            return answer.resource
        raise LookupError(answer.message if isinstance(answer, wire.Failure) else "no answer")

    def _find(self, name: str) -> _Server:
        server = self._servers.get(name)
        if server is None:
            known = ", ".join(self._servers) or "none"
            raise LookupError(f"no MCP server {name!r} (servers: {known})")
        return server

    # ---- the person's controls ---------------------------------------------------------------

    def approve(self, name: str) -> str:
        """Approve a repository's server here (remembered) and start it.

        Raises:
            KeyError: No such server.
        """
        server = self._servers[name]
        if server.state != "needs_approval":
            return f"{name} needs no approval (it is {server.state})"
        from moot.mcp.files import ConfigFileError

        try:
            self.approvals.approve(server.config)
            kept = "; remembered for this workspace"
        except ConfigFileError as exc:
            kept = f"; for this session only ({exc})"
        server.state = "starting"
        cached = self._read_cache(server.config)
        if cached is not None:
            server.tools, server.prompts, server.resources = (
                cached.tools,
                cached.prompts,
                cached.resources,
            )
            self._rebuild_tools()
        if self._started:
            if self._proc is not None and self._proc.returncode is None:
                self._start_server(server)
            else:
                self._spawn_host()
        return f"approved {name} ({server.config.shown()}){kept}"

    def restart(self, name: str) -> str:
        """Restart a server now.

        Raises:
            KeyError: No such server.
        """
        server = self._servers[name]
        if refused := self._refusal(server):
            return refused
        if self._proc is not None and self._proc.returncode is None:
            self._start_server(server)
        elif self._started:
            server.state = "starting"
            self._spawn_host()
        return f"restarting {name}"

    def statuses(self) -> list[McpServerStatus]:
        """Every server, in name order."""
        return [self._status(server) for server in self._servers.values()]

    def _status(self, server: _Server) -> McpServerStatus:
        config = server.config
        tools = tuple(
            McpToolInfo(
                t.name, t.description, t.spec_bytes if not t.deferred else _brief(t), t.deferred
            )
            for t in self._tools.values()
            if t.server == config.name
        )
        return McpServerStatus(
            name=config.name,
            transport=config.transport,
            origin=config.origin,
            source=config.source,
            target=config.shown(),
            state=server.state,
            tools=tools,
            prompts=server.prompts if server.state != "needs_approval" else (),
            resources=server.resources if server.state != "needs_approval" else (),
            error=server.error,
            auth_url=server.auth_url,
            restarts=server.restarts,
        )

    def notices(self) -> list[str]:
        """What the person should be told: servers waiting for approval, files not read."""
        waiting = [s.config for s in self._servers.values() if s.state == "needs_approval"]
        told = [f"MCP: {problem}" for problem in self.problems]
        for config in waiting:
            told.append(
                f"MCP server {config.name} from {config.source} runs `{config.shown()}`: it "
                f"starts only once you approve it (`/mcp approve {config.name}`)"
            )
        return told

    async def wait_ready(self, name: str, timeout: float) -> None:
        """Wait until a server is ready or failed (for a resource mention in a first prompt)."""
        server = self._servers.get(name)
        if server is None or server.state != "starting":
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.ready.wait(), timeout)

    # ---- the tool cache ----------------------------------------------------------------------

    def _cache_path(self, config: McpServerConfig) -> Path:
        return self.cache_dir / f"{config.fingerprint or config.name}.json"

    def _read_cache(self, config: McpServerConfig) -> _Cached | None:
        try:
            return msgspec.json.decode(self._cache_path(config).read_bytes(), type=_Cached)
        except (OSError, msgspec.ValidationError, msgspec.DecodeError):
            return None

    def _write_cache(self, server: _Server) -> None:
        cached = _Cached(server.tools, server.prompts, server.resources)
        path = self._cache_path(server.config)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".{path.name}.{os.getpid()}")
            temp.write_bytes(msgspec.json.encode(cached))
            os.replace(temp, path)


def _brief(tool: McpTool) -> int:
    """What a deferred tool costs: its line in `mcp_tool_search`'s description."""
    from moot.mcp.tools import one_line

    return len(tool.name) + len(one_line(tool.description)) + 4
