"""moot's events as ACP session updates: messages, thoughts, tool calls, plans, modes.

Pure functions of events (and the workspace root, to make paths absolute), so a live turn and a
session replayed for `session/load` look the same to the editor. A tool call's ACP id joins the
agent call and the tool call (`call_id:tool_call_id`): peers may reuse a tool call id.
"""

from __future__ import annotations

import os
from typing import Any

from moot.protocol import events as ev

KINDS: dict[str, str] = {
    "read": "read",
    "ls": "read",
    "git_status": "read",
    "git_diff": "read",
    "git_log": "read",
    "git_show": "read",
    "repo_map": "read",
    "symbols": "search",
    "grep": "search",
    "glob": "search",
    "edit": "edit",
    "multi_edit": "edit",
    "write": "edit",
    "bash": "execute",
    "kill_shell": "execute",
    "shell_output": "read",
    "diagnostics": "read",
    "git_commit": "execute",
    "git_branch": "execute",
    "web_fetch": "fetch",
    "todo": "think",
    "call_agent": "think",
    "exit_plan_mode": "switch_mode",
    "mcp_tool_search": "search",
}
"""ACP's kind of each moot tool; others (MCP tools) are `other`."""

MAX_SHOWN = 8000
"""What a tool call's content shows of its result, at most (the model saw all of it)."""


def acp_id(event: ev.Event, tool_call_id: str) -> str:
    return f"{event.call_id}:{tool_call_id}"


def kind(tool: str) -> str:
    return KINDS.get(tool, "other")


def _path(arguments: dict[str, Any], root: str) -> str | None:
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(root, path))


def title(tool: str, arguments: dict[str, Any]) -> str:
    """A tool call as a line: `Read notes.txt`, `$ npm test`, `grep TODO`."""
    path = arguments.get("path")
    if tool == "bash" and isinstance(arguments.get("command"), str):
        return f"$ {arguments['command'].splitlines()[0][:120]}"
    if tool in ("grep", "glob") and isinstance(arguments.get("pattern"), str):
        return f"{tool} {arguments['pattern'][:80]}"
    if tool == "web_fetch" and isinstance(arguments.get("url"), str):
        return f"Fetch {arguments['url'][:120]}"
    if isinstance(path, str) and path:
        verb = {"read": "Read", "edit": "Edit", "multi_edit": "Edit", "write": "Write"}
        return f"{verb.get(tool, tool)} {path}"
    return tool


def locations(arguments: dict[str, Any], root: str) -> list[dict[str, Any]]:
    """The files a call touches, absolute, with the first line when it names one."""
    path = _path(arguments, root)
    if path is None:
        return []
    location: dict[str, Any] = {"path": path}
    offset = arguments.get("offset")
    if isinstance(offset, int) and offset > 0:
        location["line"] = offset
    return [location]


def diffs(tool: str, arguments: dict[str, Any], root: str) -> list[dict[str, Any]]:
    """What an edit changes, as ACP diff content (the replaced text and its replacement)."""
    path = _path(arguments, root)
    if path is None:
        return []
    if tool == "edit":
        old, new = arguments.get("old"), arguments.get("new")
        if isinstance(old, str) and isinstance(new, str):
            return [{"type": "diff", "path": path, "oldText": old, "newText": new}]
    if tool == "multi_edit" and isinstance(arguments.get("edits"), list):
        return [
            {"type": "diff", "path": path, "oldText": e.get("old"), "newText": e.get("new")}
            for e in arguments["edits"]
            if isinstance(e, dict) and isinstance(e.get("new"), str)
        ]
    if tool == "write" and isinstance(arguments.get("content"), str):
        return [{"type": "diff", "path": path, "oldText": None, "newText": arguments["content"]}]
    return []


def text_content(text: str) -> dict[str, Any]:
    shown = text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "\n[...]"
    return {"type": "content", "content": {"type": "text", "text": shown}}


def tool_started(event: ev.Event, call: Any, root: str) -> dict[str, Any]:
    """The `tool_call` update for a tool call the model made (`call` is a `ToolCall`)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": acp_id(event, call.id),
        "title": title(call.name, arguments),
        "kind": kind(call.name),
        "status": "pending",
        "locations": locations(arguments, root),
        "content": diffs(call.name, arguments, root),
        "rawInput": arguments,
    }


def tool_finished(event: ev.ToolFinished, arguments: dict[str, Any], root: str) -> dict[str, Any]:
    """The `tool_call_update` that ends a tool call."""
    content = diffs(event.tool, arguments, root) if not event.is_error else []
    if event.content:
        content.append(text_content(event.content))
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": acp_id(event, event.tool_call_id),
        "status": "failed" if event.is_error else "completed",
        "content": content,
        "rawOutput": {"content": event.content[:MAX_SHOWN], "is_error": event.is_error},
    }


def plan(display: dict[str, Any]) -> dict[str, Any] | None:
    """The `plan` update for the task list a `todo` call left (`display["todos"]`)."""
    todos = display.get("todos")
    if not isinstance(todos, list):
        return None
    status = {"pending": "pending", "in_progress": "in_progress", "done": "completed"}
    entries = [
        {
            "content": t["text"],
            "status": status.get(str(t.get("status")), "pending"),
            "priority": "medium",
        }
        for t in todos
        if isinstance(t, dict) and isinstance(t.get("text"), str)
    ]
    return {"sessionUpdate": "plan", "entries": entries}


def stop_reason(finished: ev.TurnFinished) -> str:
    """ACP's stop reason for how a run ended."""
    reason = str(finished.stop_reason)
    if reason == "user_cancelled":
        return "cancelled"
    if reason == "max_turns":
        return "max_turn_requests"
    if reason in ("max_output_tokens", "max_total_tokens", "max_input_tokens", "context_window"):
        return "max_tokens"
    return "end_turn"
