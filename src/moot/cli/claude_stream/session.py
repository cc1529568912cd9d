"""`--input-format stream-json`: a session driven over stdin and stdout as Claude Code's
headless mode is, by the Agent SDKs (`ClaudeSDKClient`, `query`) and scripts.

stdin carries `user` messages, one turn each, taken in order (one waits while a turn runs), and
the SDK's `control_request`s and `control_response`s; stdout carries each turn's `system`/`init`
line, its messages and its `result`, and moot's own control requests (`can_use_tool`, with
`--permission-prompt-tool stdio`). moot ends when stdin closes and the turns it brought are done.
A `user` message `/mcp__server__prompt args` is that MCP server's prompt, as with `moot -p`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from argparse import Namespace
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

from moot.cli.claude_stream.context_usage import context_usage
from moot.cli.claude_stream.control import ControlChannel, ControlError, Line, dumps
from moot.cli.claude_stream.control import failure as control_failure
from moot.cli.claude_stream.control import success as control_success
from moot.cli.claude_stream.hooks import SdkHooks
from moot.cli.claude_stream.opening import unhonoured
from moot.cli.claude_stream.output import TurnOutput
from moot.cli.claude_stream.permissions import kept_rule, suggestions
from moot.cli.claude_stream.replay import UserTurns
from moot.cli.claude_stream.result import MCP_STATES
from moot.cli.claude_stream.sdk_tools import SdkTools
from moot.client.local import LocalClient
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Attachment
from moot.protocol.states import StopReason

EXPANDING = "expanding an MCP prompt"
"""`StreamSession.submission` while the turn's MCP prompt is fetched (no op is out yet)."""
LINE_LIMIT = 1 << 26
"""The longest stdin line read (a message with large attachments)."""


def user_text(message: Line) -> str:
    """The text of a `user` message: a string, or its `text` blocks joined."""
    content = (message.get("message") or {}).get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def user_attachments(message: Line) -> tuple[Attachment, ...]:
    """The images and PDFs of a `user` message: its `image` and `document` blocks with base64
    sources, as the Anthropic API spells them (the Agent SDKs send those)."""
    content = (message.get("message") or {}).get("content", "")
    if isinstance(content, str):
        return ()
    found = []
    for block in content:
        source = block.get("source") or {}
        if block.get("type") in ("image", "document") and source.get("type") == "base64":
            mime, data = source.get("media_type"), source.get("data")
            if isinstance(mime, str) and isinstance(data, str):
                found.append(Attachment(mime_type=mime, data=data, name=block.get("title")))
    return tuple(found)


class StreamSession:
    """One session served over the pipes.

    Args:
        client: The open session.
        options: The command line (`--include-partial-messages`, `--permission-prompt-tool`).
        out: stdout.
    """

    def __init__(self, client: LocalClient, options: Namespace, out: TextIO) -> None:
        self.client = client
        self.options = options
        self.out = out
        self.asks = options.permission_prompt_tool == "stdio"
        self.channel = ControlChannel(self.write)
        self.hooks: SdkHooks = options.sdk_hooks
        self.hooks.channel = self.channel
        self.tools: SdkTools = options.sdk_tools
        self.tools.channel = self.channel
        self.waiting: deque[Line] = deque()
        self.submission = ""
        """The running turn's submission id ("" while none runs; `EXPANDING` while an MCP
        prompt is fetched for it)."""
        self._wake: Callable[[], None] = lambda: None
        self.output = self._output()
        self.problem = ""
        self.denials: list[dict[str, object]] = []
        self.asked: dict[str, tuple[str, dict[str, Any]]] = {}
        self.initializing = False
        """The SDK's `initialize` is being answered: no turn starts before it is."""
        self.ended = False
        """stdin closed: no more turns will come."""
        self.tasks: set[asyncio.Task[None]] = set()
        self.turns = UserTurns(self.client.session_id, options.replay_user_messages)
        self.answers: dict[str, tuple[asyncio.Future[ev.Event], Callable[[ev.Event], bool]]] = {}
        """The ops a control request waits on, by submission id, with the test of the event
        that answers each."""

    def write(self, line: Line) -> None:
        self.out.write(dumps(line))
        self.out.flush()

    def _output(self) -> TurnOutput:
        partial = bool(self.options.include_partial_messages)
        schema = self.options.json_schema is not None
        session = self.client.session_id
        return TurnOutput("stream-json", self.out, session, partial=partial, schema=schema)

    async def serve(self) -> int:
        """Take stdin's messages and the session's events until both are done."""
        inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._wake = lambda: inbox.put_nowait(("wake", None))
        events = self.client.subscribe()
        if self.options.first_line is not None:  # read before the session opened
            await inbox.put(("line", self.options.first_line))
        reader = asyncio.create_task(_read_stdin(inbox))
        pump = asyncio.create_task(_pump(events, inbox))
        try:
            while not (self.ended and not self.submission and not self.waiting):
                kind, item = await inbox.get()
                if kind == "line":
                    self._line(item)
                elif kind == "eof":
                    self.ended = True
                    self.channel.close()
                elif kind != "wake":
                    self._event(item)
        finally:
            events.close()
            for task in (reader, pump, *self.tasks):
                task.cancel()
        return 0

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _line(self, message: Line) -> None:
        kind = message.get("type")
        if kind == "user":
            self.waiting.append(message)
            self._next()
        elif kind == "control_request":
            if (message.get("request") or {}).get("subtype") == "initialize":
                self.initializing = True  # turns wait for its hooks and tools
            self._spawn(self._answer(message))
        elif kind == "control_response":
            self.channel.answered(message.get("response") or {})
        elif kind != "control_cancel_request":
            print(f"moot: stdin: a message of type {kind!r} is not one moot takes", file=sys.stderr)

    def _next(self) -> None:
        """Start the next waiting turn, if none runs (and `initialize` is done)."""
        if self.submission or not self.waiting or self.initializing:
            return
        self.output = self._output()
        self.problem, self.denials = "", []
        sdk = {n: "failed" if n in self.tools.problems else "connected" for n in self.tools.servers}
        self.output.opened(self.client.status(), self.client.mcp_servers(), sdk_servers=sdk)
        message = self.waiting.popleft()
        text = user_text(message)
        if text.startswith("/mcp__"):
            self.submission = EXPANDING
            self._spawn(self._mcp_prompt(message, text))
            return
        self._submit(message, ops.UserTurn(text=text, attachments=user_attachments(message)))

    def _submit(self, message: Line, turn: ops.UserTurn) -> None:
        self.submission = self.client.submit(turn)
        if replay := self.turns.started(message, self.submission):
            self.write(replay)

    async def _mcp_prompt(self, message: Line, text: str) -> None:
        """Run the turn an MCP prompt makes (the servers waited for first), or refuse it."""
        from moot.cli.mcp_prompts import prompt_turn

        try:
            turn, problem = await prompt_turn(self.client, text)
        except Exception as exc:  # the prompt could not be fetched: the turn is refused
            turn, problem = None, f"{text.split()[0]}: {exc}"
        if turn is None:
            self.output.refused(problem)
            self.submission = ""
            self._next()
        else:
            self._submit(message, turn)
        self._wake()  # the serving loop looks again at whether it is done

    def _event(self, event: ev.Event) -> None:
        self.turns.take(event)
        waiting, answers = self.answers.get(event.submission_id, (None, _never))
        if waiting is not None and answers(event):
            del self.answers[event.submission_id]
            if not waiting.done():
                waiting.set_result(event)
        self.output.event(event)
        self._note(event)
        if isinstance(event, ev.ApprovalRequested) and self.asks:
            self._spawn(self._approval(event))
        elif isinstance(event, ev.OpRefused) and event.submission_id == self.submission:
            self.output.refused(event.reason)
            self.submission = ""
            self._next()
        elif isinstance(event, ev.TurnFinished) and self.submission:
            problem = "" if event.stop_reason is StopReason.USER_CANCELLED else self.problem
            self.output.finished(event, problem, self.denials)
            self.submission = ""
            self._next()

    def _note(self, event: ev.Event) -> None:
        """What the result tells: why the run ended, the calls refused."""
        if isinstance(event, ev.LimitHit):
            self.problem = event.detail
        elif isinstance(event, ev.Error) and event.parent_call_id is None:
            if event.source in ("provider", "internal"):
                self.problem = event.message
        elif isinstance(event, ev.ModelResponded):
            for call in event.tool_calls:
                self.asked[call.id] = (call.name, dict(call.arguments))
        elif isinstance(event, ev.ApprovalDecided) and not event.approved:
            tool, arguments = self.asked.get(event.tool_call_id, ("", {}))
            denial = {"tool_name": tool, "tool_use_id": event.tool_call_id}
            self.denials.append(denial | {"tool_input": arguments, "reason": event.feedback})

    async def _approval(self, event: ev.ApprovalRequested) -> None:
        """Ask the SDK's `can_use_tool` callback, and answer the session with what it says."""
        request: dict[str, Any] = {
            "subtype": "can_use_tool",
            "tool_name": event.tool,
            "input": event.arguments,
            "tool_use_id": event.tool_call_id,
            "permission_suggestions": suggestions(event.suggested_rules),
            "decision_reason": event.reason or None,
        }
        call, tool_call = event.call_id, event.tool_call_id
        try:
            answer = await self.channel.ask(request)
        except ControlError as exc:
            self.client.submit(ops.Deny(tool_call, call_id=call, feedback=f"not allowed: {exc}"))
            return
        if answer.get("behavior") == "allow":
            updated = answer.get("updatedInput")
            if not isinstance(updated, dict) or updated == event.arguments:
                updated = None  # the SDK sends the input back unchanged by default
            scope, rule, left = kept_rule(answer.get("updatedPermissions") or [])
            if left:  # told, never dropped in silence
                print(f"moot: permission updates not applied: {', '.join(left)}", file=sys.stderr)
            self.client.submit(
                ops.Approve(tool_call, call_id=call, scope=scope, rule=rule, updated_input=updated)
            )
            return
        feedback = str(answer.get("message") or "the permission callback refused it")
        if answer.get("interrupt"):
            # The interrupt first: it ends the run where it waits, before the model could
            # take the refusal and go on.
            self.client.submit(ops.Interrupt())
        self.client.submit(ops.Deny(tool_call, call_id=call, feedback=feedback))

    async def _answer(self, message: Line) -> None:
        """Answer one of the SDK's control requests."""
        request_id = str(message.get("request_id"))
        request = message.get("request") or {}
        initialize = request.get("subtype") == "initialize"
        try:
            if initialize and self.tools.servers:
                await self.tools.connect()  # the SDK serves these while it waits for us
            if request.get("subtype") == "mcp_reconnect":
                response = await self._restart(str(request.get("serverName") or ""))
            elif request.get("subtype") == "stop_task":
                task = str(request.get("task_id") or "")
                response = await self._done(ops.CancelAgent(task_id=task), _ends(task))
            elif request.get("subtype") == "rewind_files":
                run = self.turns.run_of(str(request.get("user_message_id") or ""))
                response = await self._done(ops.RestoreFiles(run_id=run))
            else:
                response = self._control(request)
        except ControlError as exc:
            self.write(control_failure(request_id, str(exc)))
            return
        finally:
            if initialize:
                self.initializing = False
                self._next()
        self.write(control_success(request_id, response))

    def _control(self, request: Line) -> dict[str, Any]:
        subtype = request.get("subtype")
        if subtype == "initialize":
            return self._initialize(request)
        if subtype == "interrupt":
            if self.submission:
                self.client.submit(ops.Interrupt())
            return {}
        if subtype == "set_permission_mode":
            self.client.submit(ops.SetMode(mode=request["mode"]))
            return {}
        if subtype == "set_model":
            if not request.get("model"):
                raise ControlError("set_model needs a model: moot has no default to go back to")
            self.client.submit(ops.SetModel(model=request["model"]))
            return {}
        if subtype == "get_context_usage":
            return context_usage(self.client)
        if subtype == "mcp_status":
            servers = self.client.mcp_servers()
            return {"mcpServers": [{"name": s.name, "status": MCP_STATES.get(s.state, "failed")}
                                   for s in servers]}  # fmt: skip
        raise ControlError(f"moot does not support the control request {subtype!r}")

    async def _restart(self, name: str) -> dict[str, Any]:
        """`mcp_reconnect`: restart one of the session's MCP servers (`RestartMcpServer`).

        Raises:
            ControlError: The session refused it (no such server, one that may not start).
        """
        if name in self.tools.servers:
            raise ControlError(f"{name!r} is the SDK's own server: the SDK connects it")
        return await self._done(ops.RestartMcpServer(name=name))

    async def _done(
        self, op: ops.Op, answers: Callable[[ev.Event], bool] | None = None
    ) -> dict[str, Any]:
        """Submit `op` and wait for the session's answer (`answers` tells it; by default
        `op_refused`, `mcp_server_restarted` or `files_restored`).

        Raises:
            ControlError: The session refused it (`op_refused`), or files could not be put
                back (`files_restored` with failures).
        """
        answer: asyncio.Future[ev.Event] = asyncio.get_running_loop().create_future()
        self.answers[self.client.submit(op)] = (answer, answers or _answered)
        event = await answer
        if isinstance(event, ev.OpRefused):
            raise ControlError(event.reason)
        if isinstance(event, ev.FilesRestored) and event.failures:
            raise ControlError(f"not put back: {'; '.join(event.failures)}")
        return {}

    def _initialize(self, request: Line) -> dict[str, Any]:
        """The SDK's first request (what it chooses about the session was read before the
        session opened, `opening.py`): refused when it brings what moot cannot honour."""
        if request.get("agents"):
            raise ControlError("moot's agents are its agent definitions (.moot/agents/)")
        if unknown := unhonoured(request):
            raise ControlError(f"moot does not support initialize's {', '.join(unknown)}")
        self.hooks.register(request.get("hooks") or {})
        status = self.client.status()
        commands = [
            {"name": c.name, "description": c.description, "argumentHint": c.argument_hint}
            for c in status.instructions.commands
        ]
        return {
            "commands": commands,
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [],
            "account": {},
            "pid": os.getpid(),
        }


def _answered(event: ev.Event) -> bool:
    return isinstance(event, (ev.OpRefused, ev.McpServerRestarted, ev.FilesRestored))


def _never(event: ev.Event) -> bool:
    return False


def _ends(task: str) -> Callable[[ev.Event], bool]:
    """What answers a `CancelAgent` of `task`: its refusal, or the task's own end."""
    return lambda e: (
        isinstance(e, ev.OpRefused) or (isinstance(e, ev.AgentReturned) and e.call_id == task)
    )


async def _read_stdin(inbox: asyncio.Queue[tuple[str, Any]]) -> None:
    """stdin's JSON lines into `inbox`, then `eof`."""
    import json

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
    )
    try:
        while line := await reader.readline():
            if not line.strip():
                continue
            try:
                await inbox.put(("line", json.loads(line)))
            except ValueError:
                print(f"moot: stdin: not a JSON line: {line[:80]!r}", file=sys.stderr)
    finally:
        transport.close()
        await inbox.put(("eof", None))


async def _pump(events: Any, inbox: asyncio.Queue[tuple[str, Any]]) -> None:
    with contextlib.suppress(asyncio.CancelledError):
        async for event in events:
            await inbox.put(("event", event))
