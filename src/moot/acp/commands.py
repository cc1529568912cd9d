"""moot's slash commands in an editor: which are advertised, and the context they run in.

The editor sends `/name args` as a prompt; the shared registry (`moot.commands`) runs it, and
what it says comes back as the agent's message. Commands that only make sense in moot's own
terminal front ends (themes, quitting, a new session: the editor has its own) are not offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from moot.commands.registry import Command, CommandContext, CommandError, Panes, Registry
from moot.protocol.client import Client
from moot.protocol.events import Event

OFFERED = (
    "mode",
    "plan",
    "status",
    "cost",
    "compact",
    "mcp",
    "skills",
    "memory",
    "agents",
    "help",
)


def available(registry: Registry, context: CommandContext) -> list[dict[str, Any]]:
    """The commands to advertise (`available_commands_update`): moot's own that fit an
    editor, the session's skills, custom commands and `/init`, and the MCP servers' prompts."""
    commands: list[Command] = [
        c for c in registry if c.name in OFFERED or registry.from_session(c.name)
    ]
    commands += registry.session_commands(context)
    listed = []
    for command in commands:
        entry: dict[str, Any] = {"name": command.name, "description": command.description}
        if command.arguments:
            entry["input"] = {"hint": command.arguments}
        listed.append(entry)
    return listed


class EditorCommandContext:
    """A `CommandContext` whose words go to the editor as the agent's message."""

    def __init__(self, client: Client, registry: Registry, say: Callable[[str], None]) -> None:
        self._client = client
        self._registry = registry
        self._say = say

    @property
    def client(self) -> Client:
        return self._client

    @property
    def shows_refusals(self) -> bool:
        return False  # the editor is sent no op_refused: the command says it

    columns = 100
    """An editor's panel wraps what it is sent; no table is laid out narrower."""

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        self._say(text)

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        return None  # an editor prompt cannot offer a list: a command then asks for an argument

    async def ask_secret(self, question: str) -> str | None:
        raise CommandError("an editor's prompt would keep a key in its history")

    def theme_names(self) -> Sequence[str]:
        return ()

    def set_theme(self, name: str) -> None:
        raise CommandError("the editor has its own themes")

    theme = ""

    def exit(self) -> None:
        self._say("close the agent panel to end the session")

    async def new_session(self) -> None:
        raise CommandError("start a new thread in the editor for a new session")

    async def open_session(self, session_id: str) -> None:
        raise CommandError("load a session from the editor's own session list")

    def show_help(self) -> None:
        lines = [
            f"/{c['name']} {c.get('input', {}).get('hint', '')}".rstrip() + f" — {c['description']}"
            for c in available(self._registry, self)
        ]
        self._say("\n".join(lines))

    async def copy(self, text: str) -> str:
        raise CommandError("copy from the editor's own panel")

    def offer(self, text: str, label: str) -> None:
        self._say(f"{label}:\n{text}")  # the editor shows it; the person may quote it

    def search(self, text: str) -> int:
        raise CommandError("search with the editor's own find")

    def inspect(self, title: str, events: Sequence[Event], *, note: str = "") -> None:
        from moot.protocol.events import event_to_json

        shown = "\n".join(event_to_json(e)[:500] for e in events[-50:])
        also = f"; {note}" if note else ""
        self._say(f"{title} ({len(events)} events; the last 50{also}):\n{shown}")

    def panes(self) -> Panes:
        raise CommandError("the editor lays out its own panels")
