"""One ACP session: a moot session's client, and one pump of its events to the editor.

The pump runs for the session's life: it turns every event into session updates (streamed
message and thought chunks, tool calls with kind, locations and diffs, the task list as a plan,
mode changes) and puts each approval to the editor as a permission request, in its own task so
that a cancelled turn is never stuck behind an unanswered question. A prompt submits a turn and
waits for the `turn_finished` that answers it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from moot.acp import updates
from moot.acp.commands import EditorCommandContext, available
from moot.acp.permissions import answer, options
from moot.commands.builtin import builtin_commands
from moot.commands.files import use_session_commands
from moot.commands.mentions import expand_mentions
from moot.commands.registry import is_command
from moot.frontend.display import HISTORY_KINDS
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import Client
from moot.protocol.mcp import McpControl
from moot.protocol.messages import Attachment

MODES = ("default", "acceptEdits", "plan")
MODE_NAMES = {
    "default": ("Default", "Reads run; edits and commands ask first"),
    "acceptEdits": ("Accept edits", "Edits in the workspace run; commands ask first"),
    "plan": ("Plan", "Explore read-only, then present a plan to approve"),
    "dontAsk": ("Don't ask", "What would ask is refused"),
    "bypassPermissions": ("Bypass permissions", "Everything runs"),
}


class Busy(Exception):
    """A prompt arrived while a turn runs."""


class AcpSession:
    """A moot session driven by an editor.

    Args:
        conn: The ACP connection to the editor (`session_update`, `request_permission`).
        client: The moot session's client.
        root: The workspace root (tool call locations are absolute).
        terminal: The editor's terminal (`moot.acp.editor.EditorShell`), when it offers one.
    """

    def __init__(
        self,
        conn: Any,
        client: Client,
        root: str,
        terminal: Any = None,
        late: list[str] | None = None,
    ) -> None:
        from acp.schema import SessionNotification, ToolCallUpdate  # loaded with the agent

        self._notification = SessionNotification
        self._tool_call = ToolCallUpdate
        self.conn = conn
        self.client = client
        self.id = client.session_id
        self.root = root
        self.registry = builtin_commands()
        # The session's skills, custom commands and `/init`, as in the app and the REPL (a
        # file's command that one of moot's own already names stays hidden, as there).
        use_session_commands(self.registry, client)
        self._arguments: dict[str, dict[str, Any]] = {}
        self._asking: set[asyncio.Task[None]] = set()
        self._waiting: asyncio.Future[ev.TurnFinished | ev.OpRefused] | None = None
        self._submission = ""
        """The op the prompt waits on: its `op_refused` ends the wait as its end would."""
        self._pump: asyncio.Task[None] | None = None
        self._said: list[str] = []
        self._subscription: Any = None
        self._forwarding = False
        self._idle = asyncio.Event()
        """Set when the pump has forwarded everything published so far."""
        self.terminal = terminal
        self._shell_call: str | None = None
        self._advertised: list[Any] | None = None
        """The commands the editor was last told (`advertise`)."""
        self._late = late if late is not None else []
        """What the session had to say of MCP servers not up before its first request."""
        """The running `bash` call's ACP id (its terminal is shown in it)."""
        if terminal is not None:
            terminal.session_id = self.id
            terminal.show = self._show_terminal

    # ---- the editor's side ---------------------------------------------------------------

    def start(self) -> None:
        """Start pumping the session's events to the editor."""
        self._subscription = subscription = self.client.subscribe()
        self._pump = asyncio.get_running_loop().create_task(self._run(subscription))

    async def send(self, update: dict[str, Any]) -> None:
        """One session update, checked against ACP's schema before it goes."""
        typed = self._notification.model_validate({"sessionId": self.id, "update": update})
        await self.conn.session_update(session_id=self.id, update=typed.update)

    def modes(self) -> dict[str, Any]:
        """ACP's mode state: the session's mode and the modes offered."""
        current = self.client.status().mode or "default"
        offered = [*MODES, *([current] if current not in MODES else [])]
        return {
            "currentModeId": current,
            "availableModes": [
                {"id": m, "name": MODE_NAMES[m][0], "description": MODE_NAMES[m][1]}
                for m in offered
            ],
        }

    def options(self) -> list[dict[str, Any]]:
        """The session's config options: where shell commands run, when the editor has a
        terminal to offer."""
        if self.terminal is None:
            return []
        return [
            {
                "id": "shell",
                "name": "Shell commands",
                "description": "moot's sandbox, or the editor's terminal (on this machine, "
                "uncontained; the approval rules still apply)",
                "type": "select",
                "currentValue": "terminal" if self.terminal.chosen else "sandbox",
                "options": [
                    {"value": "sandbox", "name": "moot's sandbox"},
                    {"value": "terminal", "name": "The editor's terminal (no sandbox)"},
                ],
            }
        ]

    def set_option(self, option: str, value: object) -> None:
        """Change a config option.

        Raises:
            ValueError: No such option or value.
        """
        if option != "shell" or self.terminal is None:
            raise ValueError(f"no option {option!r}")
        if value not in ("sandbox", "terminal"):
            raise ValueError(f"shell is `sandbox` or `terminal`, not {value!r}")
        self.terminal.chosen = value == "terminal"

    async def _show_terminal(self, terminal_id: str) -> None:
        await self._drain(1.0)  # the call's `tool_started` may still be on its way
        if self._shell_call is not None:
            await self.send(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": self._shell_call,
                    "content": [{"type": "terminal", "terminalId": terminal_id}],
                }
            )

    async def advertise(self) -> None:
        """Tell the editor the slash commands (moot's, and the MCP servers' prompts) when they
        are not what it was last told."""
        context = EditorCommandContext(self.client, self.registry, self._said.append)
        commands = available(self.registry, context)
        if commands == self._advertised:
            return
        self._advertised = commands
        await self.send(
            {"sessionUpdate": "available_commands_update", "availableCommands": commands}
        )

    async def _end_pending(self, finished: ev.TurnFinished) -> None:
        """A turn ended (a cancel, a limit) with tool calls the editor was shown and never
        told the end of: each gets its final update."""
        why = "cancelled" if finished.stop_reason == "user_cancelled" else str(finished.stop_reason)
        for key in list(self._arguments):
            del self._arguments[key]
            await self.send(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": key,
                    "status": "failed",
                    "content": [updates.text_content(f"not run: the turn ended ({why})")],
                }
            )

    async def replay(self) -> None:
        """Send the stored conversation, for `session/load`: what the person said, what moot
        answered and the tool calls in between: the events a history shows (no deltas, which
        a replay skips)."""
        for event in self.client.query.events(self.id, kinds=HISTORY_KINDS):
            await self._forward(event, live=False)

    async def prompt(self, blocks: list[Any]) -> str:
        """Run one prompt to its end; ACP's stop reason.

        Raises:
            Busy: A turn is already running in this session.
        """
        if self._waiting is not None and not self._waiting.done():
            raise Busy("a turn is already running in this session")
        from moot.client.attachments import AttachmentError  # lazily: Pillow, pypdf behind it

        try:
            text, attachments = prompt_text(blocks)
        except AttachmentError as exc:  # said once, and nothing is sent
            await self.send(_message(f"moot: {exc}\n"))
            return "refusal"
        self._waiting = asyncio.get_running_loop().create_future()
        status = self.client.status()
        if status.open_run is not None and not status.running:
            # moot ended in the middle of a turn (killed, a crash): that turn is finished first,
            # as `moot --resume` and the app do; then this prompt goes.
            resumed = await self._answer(ops.ResumeRun())
            if not isinstance(resumed, ev.TurnFinished) or resumed.stop_reason == "user_cancelled":
                return await self._ended(resumed)
            self._waiting = asyncio.get_running_loop().create_future()
        if is_command(text):
            return await self._command(text)
        text, found = await expand_mentions(self.client, text)
        finished = await self._answer(ops.UserTurn(text=text, attachments=(*attachments, *found)))
        while self._late:
            await self.send(_message(f"\nmoot: {self._late.pop(0)}\n"))
        await self.advertise()  # servers that came up meanwhile bring prompts
        return await self._ended(finished)

    async def _answer(self, op: ops.Op) -> ev.TurnFinished | ev.OpRefused:
        """Submit `op` and wait for its turn's end, or for the session's refusal of it."""
        assert self._waiting is not None
        self._submission = self.client.submit(op)
        return await self._waiting

    async def _ended(self, answer: ev.TurnFinished | ev.OpRefused) -> str:
        """ACP's stop reason for a turn's end; a refusal is said in the chat first."""
        if isinstance(answer, ev.OpRefused):
            await self.send(_message(f"moot: {answer.reason}\n"))
            return "refusal"
        return updates.stop_reason(answer)

    async def _command(self, line: str) -> str:
        self._said.clear()
        if line.lstrip().startswith("/mcp__") and isinstance(self.client, McpControl):
            await self.client.mcp_ready()  # a server's prompt, on a fresh machine too
        context = EditorCommandContext(self.client, self.registry, self._said.append)
        await self.registry.run(context, line)
        for said in self._said:
            await self.send(_message(said + "\n"))
        await self._drain()  # what the command caused (a mode change) reaches the editor first
        assert self._waiting is not None
        if self.client.status().running or self._waiting.done():
            return await self._ended(await self._waiting)  # a prompt command started a turn
        self._waiting.cancel()
        return "end_turn"

    async def _drain(self, limit: float = 2.0) -> None:
        """Wait (bounded) until the pump has forwarded every event published so far."""
        self._idle.clear()
        if not (self._forwarding or (self._subscription and self._subscription.pending)):
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), limit)

    def cancel(self) -> None:
        """Interrupt the running turn (`session/cancel`)."""
        if self.client.status().running:
            self.client.submit(ops.Interrupt())

    def set_mode(self, mode: str) -> None:
        self.client.submit(ops.SetMode(mode=mode))  # type: ignore[arg-type]

    async def close(self) -> None:
        for task in self._asking:
            task.cancel()
        await self.client.close()
        if self._pump is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pump, 5)

    # ---- events to updates -----------------------------------------------------------------

    async def _run(self, subscription: Any) -> None:
        async for event in subscription:
            self._forwarding = True
            try:
                await self._forward(event, live=True)
            except Exception:  # an update the editor refused must not stop the session
                continue
            finally:
                self._forwarding = False
                if not subscription.pending:
                    self._idle.set()
            waiting = self._waiting
            ended = isinstance(event, ev.TurnFinished) and event.parent_call_id is None
            refused = isinstance(event, ev.OpRefused) and event.submission_id == self._submission
            if (ended or refused) and waiting is not None and not waiting.done():
                waiting.set_result(event)

    async def _forward(self, event: ev.Event, *, live: bool) -> None:
        top = event.parent_call_id is None
        match event:
            case ev.TurnStarted() if not live:
                await self.send(_message(event.prompt, who="user_message_chunk"))
            case ev.TextDelta() if live and top:
                await self.send(_message(event.text))
            case ev.ThinkingDelta() if live and top:
                await self.send(_message(event.text, who="agent_thought_chunk"))
            case ev.ModelResponded():
                if not live and top:
                    for block in event.thinking:
                        await self.send(_message(block.text, who="agent_thought_chunk"))
                    if event.text:
                        await self.send(_message(event.text))
                for call in event.tool_calls:
                    if call.name in ("finish",):
                        continue
                    started = updates.tool_started(event, call, self.root)
                    self._arguments[started["toolCallId"]] = started["rawInput"]
                    await self.send(started)
            case ev.ApprovalRequested() if live:
                task = asyncio.get_running_loop().create_task(self._ask(event))
                self._asking.add(task)
                task.add_done_callback(self._asking.discard)
            case ev.ToolStarted() if live:
                if event.tool == "bash":
                    self._shell_call = updates.acp_id(event, event.tool_call_id)
                await self.send(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": updates.acp_id(event, event.tool_call_id),
                        "status": "in_progress",
                    }
                )
            case ev.ToolOutput() if live:
                await self.send(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": updates.acp_id(event, event.tool_call_id),
                        "content": [updates.text_content(event.text)],
                    }
                )
            case ev.ToolFinished():
                key = updates.acp_id(event, event.tool_call_id)
                if key == self._shell_call:
                    self._shell_call = None
                await self.send(
                    updates.tool_finished(event, self._arguments.pop(key, {}), self.root)
                )
                if event.tool == "todo" and (plan := updates.plan(event.display)) is not None:
                    await self.send(plan)
            case ev.ApprovalDecided() if not event.approved:
                key = updates.acp_id(event, event.tool_call_id)
                self._arguments.pop(key, None)
                refused = event.feedback or "refused"
                await self.send(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": key,
                        "status": "failed",
                        "content": [updates.text_content(refused)],
                    }
                )
            case ev.TurnFinished() if live and top:
                await self._end_pending(event)
            case ev.ModeChanged() if live:
                await self.send(
                    {"sessionUpdate": "current_mode_update", "currentModeId": event.mode}
                )
            case ev.Error() if live and top and event.source in ("provider", "internal"):
                await self.send(_message(f"\n\nmoot: {event.message}\n"))
            case ev.LimitHit() if live and top:
                await self.send(_message(f"\n\nmoot: stopped: {event.detail}\n"))

    async def _ask(self, event: ev.ApprovalRequested) -> None:
        key = updates.acp_id(event, event.tool_call_id)
        arguments = event.arguments if isinstance(event.arguments, dict) else {}
        content = updates.diffs(event.tool, arguments, self.root) or (
            [updates.text_content(event.preview)] if event.preview else []
        )
        tool_call = self._tool_call.model_validate(
            {
                "toolCallId": key,
                "title": updates.title(event.tool, arguments),
                "kind": updates.kind(event.tool),
                "status": "pending",
                "content": content,
                "locations": updates.locations(arguments, self.root),
                "rawInput": arguments,
            }
        )
        chosen: str | None = None
        try:
            response = await self.conn.request_permission(
                session_id=self.id, tool_call=tool_call, options=_options(event)
            )
            outcome = response.outcome
            chosen = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
        except asyncio.CancelledError:
            raise
        except Exception:
            chosen = None  # the editor could not ask: refused, never allowed
        self.client.submit(answer(event, chosen))


def _options(event: ev.ApprovalRequested) -> list[Any]:
    from acp.schema import PermissionOption

    return [PermissionOption.model_validate(o) for o in options(event)]


def _message(text: str, who: str = "agent_message_chunk") -> dict[str, Any]:
    return {"sessionUpdate": who, "content": {"type": "text", "text": text}}


def prompt_text(blocks: list[Any]) -> tuple[str, tuple[Attachment, ...]]:
    """A prompt's content blocks as moot's message: text as it is, a file the person attached
    (embedded) after it, a linked file named by its path, images and embedded images and PDFs
    (blob resources) as attachments named by their URI's file name, checked and fitted as any
    attachment is; another binary resource is named as not sent.

    Raises:
        AttachmentError: An image or PDF that cannot be attached (damaged, too large, locked).
    """
    parts: list[str] = []
    attached: list[str] = []
    images: list[Attachment] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            name = _file_name(getattr(block, "uri", None)) or f"image {len(images) + 1}"
            images.append(_attached(block.data, name, block.mime_type))
        elif kind == "resource_link":
            parts.append(_path_of(block.uri))
        elif kind == "resource":
            resource = block.resource
            body = getattr(resource, "text", None)
            blob = getattr(resource, "blob", None)
            if isinstance(body, str):
                attached.append(f'<file path="{_path_of(resource.uri)}">\n{body}\n</file>')
            elif isinstance(blob, str) and _attachable(resource.mime_type):
                name = _file_name(resource.uri) or _path_of(resource.uri)
                images.append(_attached(blob, name, resource.mime_type))
            elif isinstance(blob, str):
                kind_of = resource.mime_type or "of an unknown type"
                attached.append(f"[{_path_of(resource.uri)}: a binary file ({kind_of}), not sent]")
    text = " ".join(p for p in parts if p).strip()
    if attached:
        text += "\n\n" + "\n\n".join(attached)
    return text, tuple(images)


def _attachable(mime: str | None) -> bool:
    return mime is not None and (mime.startswith("image/") or mime == "application/pdf")


def _file_name(uri: str | None) -> str | None:
    """The file name an editor's image or document goes by (the chat shows it)."""
    return (_path_of(uri).rsplit("/", 1)[-1] or None) if uri else None


def _attached(data: str, name: str, mime: str | None) -> Attachment:
    """An editor's base64 image or PDF as an attachment, checked and fitted."""
    import base64
    import binascii

    from moot.client.attachments import AttachmentError, attachment_from_bytes

    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise AttachmentError(f"{name} is not valid base64") from None
    known = mime if mime in {"image/png", "image/jpeg", "image/gif", "image/webp",
                             "application/pdf"} else None  # fmt: skip
    return attachment_from_bytes(raw, name, claimed=known)


def _path_of(uri: str) -> str:
    """A `file://` URI as a path (the model reads paths); other URIs as they are."""
    from urllib.parse import unquote, urlsplit

    if uri.startswith("file://"):
        return unquote(urlsplit(uri).path)
    return uri
