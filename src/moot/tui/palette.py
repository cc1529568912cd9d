"""The command palette (`ctrl+p`): one provider per domain, models, modes, sessions, themes and
slash commands, over Textual's `Provider` API.

Each provider lists its entries once when the palette opens (`startup`), shows them all for an
empty query (`discover`) and fuzzy-matches them otherwise (`search`). Every entry starts with its
domain (`model: `, `mode: `, `session: `, `theme: `, `/`), so typing the domain narrows to it.
What an entry does goes through the app's command context (`tui/app_commands.py`), the same
methods slash commands use; this module reaches the app only through it, so the app's module
(which lists these providers) and this one do not import each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, cast

import msgspec
from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider

from moot.protocol import ops
from moot.tui.app_commands import AppCommands
from moot.tui.keys import KEYS, PANE_ACTIONS

Action = Callable[[], Awaitable[None] | None]

SESSIONS_LISTED = 30
"""Sessions offered: this workspace's newest first, then other workspaces'."""


class Entry(msgspec.Struct, frozen=True):
    """One palette entry: what it shows, its help line, and what choosing it does."""

    text: str
    help: str
    action: Action


class _CommandsHost(Protocol):
    """An app with a command context (`MootApp`)."""

    @property
    def commands(self) -> AppCommands: ...


class _Listed(Provider):
    """A provider over a list made once per opening of the palette."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entries: list[Entry] = []

    @property
    def moot(self) -> AppCommands:
        return cast(_CommandsHost, self.app).commands

    async def startup(self) -> None:
        if self.moot.view.has_session:
            self.entries = list(await self.list_entries())

    async def list_entries(self) -> Iterable[Entry]:
        raise NotImplementedError

    def _run(self, entry: Entry) -> Callable[[], None]:
        def run() -> None:
            result = entry.action()
            if asyncio.iscoroutine(result):
                # In a worker: a session switch awaits mounts the palette's callback must not hold.
                self.app.run_worker(result, group="palette")

        return run

    async def discover(self) -> Hits:
        for entry in self.entries:
            yield DiscoveryHit(entry.text, self._run(entry), help=entry.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self.entries:
            score = matcher.match(entry.text)
            if score > 0:
                yield Hit(score, matcher.highlight(entry.text), self._run(entry), help=entry.help)


class ModelsProvider(_Listed):
    """The catalog's models, and the local servers' (asked off the UI thread)."""

    async def list_entries(self) -> Iterable[Entry]:
        from moot.client import (
            setup_detect,  # the catalog and the probes load when the palette opens
        )

        detection = await asyncio.to_thread(
            lambda: setup_detect.Detection(
                setup_detect.detect_keys(), setup_detect.probe_local(timeout=0.3)
            )
        )
        current = self.moot.client.status().model
        entries = []
        for choice in setup_detect.model_choices(detection):
            mark = " (current)" if choice.name == current else ""
            ready = "" if choice.ready else "  · needs a key"
            entries.append(
                Entry(
                    f"model: {choice.name}{mark}",
                    f"{choice.detail}{ready}",
                    self._choose(choice.name),
                )
            )
        return entries

    def _choose(self, name: str) -> Action:
        return lambda: self.moot.choose_model(name)


class ModesProvider(_Listed):
    """The permission modes; choosing one switches the session to it."""

    async def list_entries(self) -> Iterable[Entry]:
        from moot.commands.builtin import MODES  # the built-in commands load when first used

        current = self.moot.client.status().mode
        if current is None:
            return []
        return [
            Entry(
                f"mode: {mode}" + (" (current)" if mode == current else ""),
                _MODE_HELP.get(mode, ""),
                self._switch(mode),
            )
            for mode in MODES
        ]

    def _switch(self, mode: str) -> Action:
        def switch() -> None:
            self.moot.outbox.submit(ops.SetMode(mode=mode))  # type: ignore[arg-type]

        return switch


_MODE_HELP = {
    "default": "reads run; everything else asks",
    "acceptEdits": "edits in the workspace run without asking",
    "plan": "read-only until you approve a plan",
    "dontAsk": "what would ask is refused",
    "bypassPermissions": "everything runs, unasked (careful)",
}


class SessionsProvider(_Listed):
    """Sessions to open in the app: this workspace's first, then the others'."""

    async def list_entries(self) -> Iterable[Entry]:
        client = self.moot.client
        here = client.status().workspace
        mine = client.query.sessions(workspace=here, limit=SESSIONS_LISTED)
        others = [s for s in client.query.sessions(limit=SESSIONS_LISTED) if s.workspace != here]
        entries = []
        for summary in [*mine, *others][:SESSIONS_LISTED]:
            if summary.id == client.session_id:
                continue
            title = summary.title or "(no message yet)"
            where = "" if summary.workspace == here else f"  · in {summary.workspace}"
            when = summary.updated_at.strftime("%Y-%m-%d %H:%M")
            entries.append(
                Entry(
                    f"session: {title}",
                    f"{summary.id} · {when} · {summary.turns} turns · "
                    f"${summary.cost_usd:.4f}{where}",
                    self._open(summary.id),
                )
            )
        return entries

    def _open(self, session_id: str) -> Action:
        return lambda: self.moot.open_session(session_id)


class ThemesProvider(_Listed):
    """The themes; choosing one switches to it and remembers it."""

    async def list_entries(self) -> Iterable[Entry]:
        current = self.moot.chosen_theme
        return [
            Entry(
                f"theme: {name}" + (" (current)" if name == current else ""),
                "switch the theme (remembered)",
                self._switch_theme(name),
            )
            for name in self.moot.theme_names()
        ]

    def _switch_theme(self, name: str) -> Action:
        return lambda: self.moot.set_theme(name)


class CommandsProvider(_Listed):
    """The slash commands of the registry; one that needs an argument goes to the prompt."""

    async def list_entries(self) -> Iterable[Entry]:
        entries = []
        for command in self.moot.registry:
            usage = f"/{command.name} {command.arguments}".strip()
            entries.append(Entry(usage, command.description, self._run_command(command.name)))
        return entries

    def _run_command(self, name: str) -> Action:
        def run() -> Awaitable[None] | None:
            command = self.moot.registry.get(name)
            if command is not None and command.arguments and not command.arguments.startswith("["):
                # Its argument is required (`PATTERN [path]`, `MESSAGE`, `<path>`; optional ones
                # are in brackets): let the person type it.
                self.moot.ask_for_arguments(name)
                return None
            return self.moot.registry.run(self.moot, f"/{name}")

        return run


def system_commands(
    commands: Iterable[SystemCommand],
    *,
    quit_now: Callable[[], None],
    action: Callable[[str], Callable[[], Any]],
) -> Iterable[SystemCommand]:
    """Textual's own palette commands, fitted to moot: its "Theme" goes (the themes provider
    switches and remembers), and "Quit" quits at once (`quit_now`: the key asks twice; a
    palette choice is deliberate already). `action` gives the app's action of a key table's
    name."""
    for command in commands:
        if command.title == "Theme":
            continue
        if command.title == "Quit":
            command = command._replace(callback=quit_now)
        yield command
    # The panes (and the mouse) by name as well as by key, from the one key table.
    for key in KEYS:
        if key.where == "app" and key.action in LAYOUT_ACTIONS:
            yield SystemCommand(key.description, f"{key.key} does it too", action(key.action))


LAYOUT_ACTIONS = PANE_ACTIONS | {"toggle_mouse"}
"""The key table's actions the palette offers as commands."""


PROVIDERS: frozenset[type[Provider]] = frozenset(
    {CommandsProvider, ModelsProvider, ModesProvider, SessionsProvider, ThemesProvider}
)
"""The app's own palette providers (Textual's system commands stay beside them)."""
