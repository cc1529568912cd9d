"""moot's events as Claude Code's `assistant`, `user` and `stream_event` messages.

Shapes as the Python SDK's `message_parser.py` reads them: an `assistant` message carries the
model's content blocks (`thinking`, `text`, `tool_use`), a `user` message a tool's result
(`tool_result`), and, under `--include-partial-messages`, the model's answer streams as
Anthropic's raw stream events inside `stream_event` lines. A peer's messages carry the
`tool_use_id` of the `call_agent` call that asked it (`parent_tool_use_id`), as a subagent's do.
"""

from __future__ import annotations

import uuid
from typing import Any

from moot.protocol import events as ev
from moot.protocol.states import RunState

Message = dict[str, Any]

TASK_STATES = {RunState.COMPLETED: "completed", RunState.CANCELLED: "stopped"}
"""A peer call's end as a task's `status`; any other end is `failed`."""


class ModelUsage:
    """The tokens and cost of a turn's model calls by model (the result's `modelUsage`), its
    peers' included, as moot's `usage` events recorded them."""

    def __init__(self) -> None:
        self.models: dict[str, dict[str, Any]] = {}

    def take(self, event: ev.Event) -> None:
        if not isinstance(event, ev.UsageRecorded):
            return
        zero: dict[str, Any] = {"inputTokens": 0, "outputTokens": 0, "cacheReadInputTokens": 0}
        zero |= {"cacheCreationInputTokens": 0, "webSearchRequests": 0, "costUSD": 0.0}
        model = self.models.setdefault(event.model, zero)
        usage = event.usage
        model["inputTokens"] += usage.input_tokens
        model["outputTokens"] += usage.output_tokens
        model["cacheReadInputTokens"] += usage.cache_read_tokens
        model["cacheCreationInputTokens"] += usage.cache_write_tokens
        model["costUSD"] += event.cost_usd


def claude_usage(usage: Any) -> dict[str, int]:
    """Claude's usage keys for a moot `Usage`, moot's own kept beside them."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


class ClaudeMessages:
    """Translates one session's events, in order, into Claude Code's messages.

    Args:
        session_id: The session every message names.
        partial: Emit `stream_event` lines for the deltas (`--include-partial-messages`).
    """

    def __init__(self, session_id: str, *, partial: bool = False) -> None:
        self.session_id = session_id
        self.partial = partial
        self._parents: dict[str, str] = {}
        """A peer call's id -> the `call_agent` tool call that made it."""
        self._streaming: dict[str, str] = {}
        """A call whose answer is streaming -> the kind of its open block (`text`, `thinking`)."""
        self._blocks: dict[str, int] = {}
        """A streaming call -> the index of its open content block."""
        self._held: dict[str, Message] = {}
        """A call's `assistant` message, held for its `usage`, the event after it."""

    def take(self, event: ev.Event) -> list[Message]:
        """The messages `event` makes (most make none)."""
        held = self._held.pop(event.call_id, None)
        if isinstance(event, ev.TurnFinished):  # the turn's last: nothing more will come
            return [*([held] if held else []), *self._held.values(), *self._take(event)]
        if held is None:
            return self._take(event)
        if isinstance(event, ev.UsageRecorded):
            held["message"]["usage"] = claude_usage(event.usage)
            return [held]
        return [held, *self._take(event)]

    def _take(self, event: ev.Event) -> list[Message]:
        if isinstance(event, ev.AgentCalled):
            if event.tool_call_id:
                self._parents[event.call_id] = event.tool_call_id
            return [self._task(event, "task_started", description=event.message[:200])]
        if isinstance(event, ev.AgentReturned):
            status = TASK_STATES.get(event.state, "failed")
            return [self._task(event, "task_notification", status=status, summary=event.output)]
        if isinstance(event, ev.TextDelta | ev.ThinkingDelta):
            return self._delta(event) if self.partial else []
        elif isinstance(event, ev.ModelResponded):
            self._held[event.call_id] = self._assistant(event)
            return self._stream_end(event)
        elif isinstance(event, ev.ToolFinished):
            return [self._tool_result(event, event.content, is_error=event.is_error)]
        elif isinstance(event, ev.ApprovalDecided) and not event.approved:
            # A refused call never runs, so no tool_finished: its result is the refusal.
            refusal = event.feedback or f"refused by {event.by}"
            return [self._tool_result(event, refusal, is_error=True)]
        return []

    def _task(self, event: ev.AgentCalled | ev.AgentReturned, subtype: str, **more: str) -> Message:
        """A peer call as Claude Code's task (`task_started`, `task_notification`): its id is
        the call's, which `stop_task` takes."""
        message = {"type": "system", "subtype": subtype, "task_id": event.call_id}
        message |= {"uuid": str(uuid.uuid4()), "session_id": self.session_id, **more}
        if subtype == "task_started":
            message["task_type"] = "local_agent"
        else:
            message["output_file"] = ""
        return message | {"tool_use_id": self._parents.get(event.call_id)}

    def _base(self, kind: str, event: ev.EventBase) -> Message:
        return {
            "type": kind,
            "session_id": self.session_id,
            "parent_tool_use_id": self._parents.get(event.call_id),
            "uuid": str(uuid.uuid4()),
        }

    def _assistant(self, event: ev.ModelResponded) -> Message:
        content: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": t.text, "signature": t.signature or ""}
            for t in event.thinking
        ]
        if event.text:
            content.append({"type": "text", "text": event.text})
        content.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.arguments)}
            for c in event.tool_calls
        )
        message = self._base("assistant", event)
        message["message"] = {
            "id": f"msg_{event.seq}",
            "type": "message",
            "role": "assistant",
            "model": event.model,
            "content": content,
            "stop_reason": event.finish_reason,
            "stop_sequence": None,
        }
        return message

    def _tool_result(
        self, event: ev.ToolFinished | ev.ApprovalDecided, content: str, *, is_error: bool
    ) -> Message:
        message = self._base("user", event)
        block = {
            "type": "tool_result",
            "tool_use_id": event.tool_call_id,
            "content": content,
            "is_error": is_error,
        }
        message["message"] = {"role": "user", "content": [block]}
        message["tool_use_result"] = content
        return message

    def _stream_event(self, source: ev.EventBase, body: dict[str, Any]) -> Message:
        message = self._base("stream_event", source)
        message["event"] = body
        return message

    def _delta(self, event: ev.TextDelta | ev.ThinkingDelta) -> list[Message]:
        kind = "text" if isinstance(event, ev.TextDelta) else "thinking"
        out: list[Message] = []
        call = event.call_id
        if call not in self._streaming:
            self._blocks[call] = -1
            start: dict[str, Any] = {"id": f"msg_{event.seq}", "type": "message"}
            start |= {"role": "assistant", "content": [], "model": "", "stop_reason": None}
            out.append(self._stream_event(event, {"type": "message_start", "message": start}))
        if self._streaming.get(call) != kind:
            if self._streaming.get(call):
                stop = {"type": "content_block_stop", "index": self._blocks[call]}
                out.append(self._stream_event(event, stop))
            self._streaming[call] = kind
            self._blocks[call] += 1
            empty = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking"}
            if kind == "thinking":
                empty |= {"thinking": "", "signature": ""}
            block = {"type": "content_block_start", "index": self._blocks[call]}
            out.append(self._stream_event(event, block | {"content_block": empty}))
        delta = (
            {"type": "text_delta", "text": event.text}
            if kind == "text"
            else {"type": "thinking_delta", "thinking": event.text}
        )
        body = {"type": "content_block_delta", "index": self._blocks[call], "delta": delta}
        out.append(self._stream_event(event, body))
        return out

    def _stream_end(self, event: ev.ModelResponded) -> list[Message]:
        """Close the call's streamed message, if one was open."""
        kind = self._streaming.pop(event.call_id, None)
        if not self.partial or kind is None:
            return []
        index = self._blocks.pop(event.call_id)
        delta = {"stop_reason": event.finish_reason, "stop_sequence": None}
        return [
            self._stream_event(event, {"type": "content_block_stop", "index": index}),
            self._stream_event(event, {"type": "message_delta", "delta": delta, "usage": {}}),
            self._stream_event(event, {"type": "message_stop"}),
        ]
