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
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from moot.mcp import wire
from moot.mcp.approvals import Approvals
from moot.mcp.cache import Offered, ToolCache
from moot.mcp.config import LoadedServers
from moot.mcp.host_process import HostProcess
from moot.mcp.names import qualified
from moot.mcp.questions import Elicitor, PersonAsks, Questions
from moot.mcp.readiness import late, log_size, stderr_tail
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

ANSWER_SLACK_S = 15.0
"""How much longer than a server's own timeouts moot waits for the host's answer."""


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
        self.log_from = 0
        """Where this session's part of the server's stderr log begins."""
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
        roots: Directories the session works in besides the workspace (the servers' roots).
        elicit: Answers servers' questions (`elicitation/create`); None: nobody can, and the
            servers are not told they may ask.
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
        roots: Sequence[Path] = (),
        elicit: Elicitor | None = None,
    ) -> None:
        from moot import paths

        self.workspace = workspace
        self.outputs_dir = outputs_dir
        self.environ = dict(os.environ if environ is None else environ)
        self.tool_search = tool_search
        self.hidden = hidden
        self.cache = ToolCache((cache_dir or paths.cache_dir()) / "mcp-tools")
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
        self._started = False
        setup = wire.Setup(
            workspace=str(workspace),
            outputs_dir=str(outputs_dir),
            log_dir=str((data_dir or paths.data_dir()) / "logs" / "mcp"),
            auth_file=str(auth_file or paths.config_dir() / "mcp-auth.json"),
            max_output_chars=max_output_chars,
            roots=tuple(str(p) for p in (workspace, *roots)),
            elicitation=elicit is not None,
            sampling=isinstance(elicit, PersonAsks),  # the person approves each request
            sampling_allowed=tuple(sorted(loaded.sampling_allowed)),
        )
        self.questions = Questions(elicit, sampling_allowed=loaded.sampling_allowed)
        self.host = HostProcess(
            setup,
            self.environ,
            on_report=self._update,
            on_start=self._start_servers,
            on_exit=self._host_failed,
            on_elicit=self.questions.asked,
        )
        self.questions.send = self.host.send
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
        cached = self.cache.read(config)
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
        if self._started or self.host.closed:
            return
        self._started = True
        for server in self._servers.values():  # what a server says from now on is this session's
            server.log_from = log_size(self._log(server))
        if any(s.state == "starting" for s in self._servers.values()):
            # From the loop's next round: a turn submitted with this start runs first, up to
            # its first wait (its model request on the wire), before the host is forked.
            asyncio.get_running_loop().call_soon(self._spawn_if_open)

    def _spawn_if_open(self) -> None:
        if not self.host.closed:
            self.host.spawn()

    def _start_servers(self) -> None:
        """A host runs (again): start every server that may run."""
        for server in self._servers.values():
            if server.state in ("starting", "failed", "ready", "auth_required") and (
                not server.config.problem
            ):
                self._start_server(server)

    def _start_server(self, server: _Server) -> None:
        server.state = "starting"
        server.ready.clear()
        self.host.send(wire.StartServer(server=server.config))

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
                offered = Offered(server.tools, server.prompts, server.resources)
                self.cache.write(server.config, offered)
                self._rebuild_tools()
        if update.state in ("ready", "failed", "auth_required"):
            server.ready.set()

    def _host_failed(self, why: str) -> None:
        self._end_servers()
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
        await self.host.close(self._end_servers)
        for server in self._servers.values():
            if server.state in ("starting", "ready", "auth_required"):
                server.state = "stopped"

    # ---- asking the host ---------------------------------------------------------------------

    async def _ask(
        self,
        server: _Server,
        make: Callable[[int], wire.Request],
        progress: Callable[[str], None] | None = None,
    ) -> wire.Report:
        """Send a request about `server` and wait for its answer (bounded)."""
        refused = self._refusal(server)
        if refused:
            return wire.Failure(id=0, message=refused)
        config = server.config
        return await self.host.ask(
            make, config.timeout_s + config.startup_timeout_s + ANSWER_SLACK_S, progress
        )

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

    async def _call(
        self, tool: McpTool, arguments: dict[str, Any], progress: Callable[[str], None]
    ) -> ToolResult:
        server = self._servers[tool.server]
        answer = await self._ask(
            server,
            lambda i: wire.CallTool(id=i, server=tool.server, tool=tool.tool, arguments=arguments),
            progress,  # shown on the tool's block as it runs
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
        """Approve a repository's server here (remembered) and start it; what was done
        (`moot.core.options.McpServers`, for `ApproveMcpServer`).

        Raises:
            KeyError: No such server.
            ValueError: It needs no approval (the message says what it is).
        """
        server = self._servers[name]
        if server.state != "needs_approval":
            raise ValueError(f"{name} needs no approval (it is {server.state})")
        from moot.mcp.files import ConfigFileError

        try:
            self.approvals.approve(server.config)
            kept = "; remembered for this workspace"
        except ConfigFileError as exc:
            kept = f"; for this session only ({exc})"
        server.state = "starting"
        cached = self.cache.read(server.config)
        if cached is not None:
            server.tools, server.prompts, server.resources = (
                cached.tools,
                cached.prompts,
                cached.resources,
            )
            self._rebuild_tools()
        if self._started:
            if self.host.running:
                self._start_server(server)
            else:
                self.host.spawn()
        return f"approved {name} ({server.config.shown()}){kept}"

    def restart(self, name: str) -> str:
        """Restart a server now; what was done (for `RestartMcpServer`).

        Raises:
            KeyError: No such server.
            ValueError: It may not start: not approved, turned off, defined wrong (the message
                says which).
        """
        server = self._servers[name]
        if refused := self._refusal(server):
            raise ValueError(refused)
        if self.host.running:
            self._start_server(server)
        elif self._started:
            server.state = "starting"
            self.host.spawn()
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

    async def until_ready(self, timeout: float) -> list[str]:
        """Start the servers and wait, `timeout` seconds at most, for those starting; what the
        person should be told of those not ready then (each named, with why or the tail of
        its stderr)."""
        self.start()
        starting = [s for s in self._servers.values() if s.state == "starting"]
        waits = [asyncio.ensure_future(s.ready.wait()) for s in starting]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=timeout)
            for wait in pending:
                wait.cancel()
        return [
            late(server.config, server.state, server.error, timeout, self._tail(server))
            for server in self._servers.values()
            if server.state in ("starting", "failed", "auth_required")
        ]

    def _log(self, server: _Server) -> Path:
        return Path(self.host.setup.log_dir) / f"{server.config.name}.log"

    def _tail(self, server: _Server) -> str:
        return stderr_tail(self._log(server), server.log_from)

    async def wait_ready(self, name: str, timeout: float) -> None:
        """Wait until a server is ready or failed (for a resource mention in a first prompt)."""
        server = self._servers.get(name)
        if server is None or server.state != "starting":
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.ready.wait(), timeout)


def _brief(tool: McpTool) -> int:
    """What a deferred tool costs: its line in `mcp_tool_search`'s description."""
    from moot.mcp.tools import one_line

    return len(tool.name) + len(one_line(tool.description)) + 4
