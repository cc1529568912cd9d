"""How every front end shows a session: which stored events a history reads (`HISTORY_KINDS`),
and a tool call in one line: the argument that says most about it (a command, a path, a
pattern), paths inside the workspace relative to it, cut to a width. The words of the notices
a transcript shows are in `commands/notices.py`."""

from __future__ import annotations

import os
from typing import Any

HISTORY_KINDS = (
    "turn_started",
    "agent_called",
    "agent_returned",
    "model_responded",
    "tool_started",
    "tool_finished",
    "approval_decided",
    "error",
    "limit_hit",
    "turn_finished",
    "mode_changed",
    "auto_committed",
    "run_resumed",
    "hook_ran",
    "message_sent",
    "op_refused",
    "session_resumed",
    "session_forked",
)
"""The events a front end reads from the store to show a session's history (the app's chat and
its "load earlier", the REPL's resumed session, an editor's `session/load`): deltas are left out
(`model_responded` holds the whole text), so are state changes and usage. `agent_returned` is
one: the REPL prints a peer's return; the app's chat draws nothing for it."""

KEY_ARGUMENTS = ("command", "path", "file_path", "pattern", "url", "agent_name", "query")
"""The arguments that say most about a call, in the order they are looked for."""
PATH_ARGUMENTS = frozenset({"path", "file_path"})


def key_argument(arguments: dict[str, Any], workspace: str = "") -> str:
    """The argument that says most about a call; a path inside `workspace` relative to it."""
    for name in KEY_ARGUMENTS:
        value = arguments.get(name)
        if isinstance(value, str) and value:
            return shown_path(value, workspace) if name in PATH_ARGUMENTS else value
    return next((v for v in arguments.values() if isinstance(v, str) and v), "")


def shown_path(path: str, workspace: str) -> str:
    """`path` as the person reads it: relative to the workspace when inside it (a model may
    name files by their absolute path), else as given."""
    if not os.path.isabs(path):
        return os.path.normpath(path) if path.startswith("./") else path
    if not workspace:
        return path
    root = workspace.rstrip(os.sep) or os.sep
    normal = os.path.normpath(path)
    if normal == root:
        return "."
    if normal.startswith(root + os.sep):
        return normal[len(root) + 1 :]
    return path


def one_line(text: str, width: int = 80) -> str:
    """`text` on one line, cut to `width` characters."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def result_summary(content: str, width: int = 60) -> str:
    """A few words on a tool's result: its first line (cut to `width`), and how many more
    there are (`ok (+3 lines)`); a newline that ends the result starts no line."""
    lines = content.strip("\n").splitlines()
    if not lines:
        return ""
    first = one_line(lines[0], width)
    return first if len(lines) == 1 else f"{first} (+{len(lines) - 1} lines)"
