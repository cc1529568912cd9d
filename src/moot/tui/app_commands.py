"""`AppCommands`: what a slash command may ask of the app (`commands.registry.CommandContext`).

The registry runs the app's commands against this object, not against the app: the ~25 things a
command may do (say, pick, ask for a secret, switch the theme, offer output for the next
message, search, inspect, the side panes, open another session...) are its own module, and the
app stays the shell (layout, keys, messages). It reaches the app only as a Textual `App` and
through the parts it is given, so neither module imports the other's. The palette's choices go
through it too: a command and a palette entry that do the same thing are one method.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from textual.app import App

from moot.commands.files import use_session_commands
from moot.commands.registry import CommandError, Panes, Registry
from moot.frontend.app_prefs import THEME, save_prefs
from moot.paths import host_program
from moot.protocol import events as ev
from moot.protocol.client import Client
from moot.settings import SettingsError
from moot.tui.layout import SidePanes
from moot.tui.options import AppOptions
from moot.tui.outbox import Outbox
from moot.tui.pane_lookup import PaneLookup
from moot.tui.search import TranscriptSearch
from moot.tui.session_view import SessionView
from moot.tui.themes import DEFAULT_THEME, load_themes
from moot.tui.widgets.prompt import PromptArea


class AppCommands:
    """The app as its commands (and its palette) see it.

    Args:
        app: The app (its screens, theme, clipboard, notices and workers).
        panes: The app's panes.
        view: The session shown.
        outbox: What the person sends.
        side: The side panes' layout (`/panes`).
        prefs: The app's prefs (`tui.json`), where the theme is kept.
        options: How the app started (its registry, and what it may open).
    """

    def __init__(
        self,
        app: App[Any],
        panes: PaneLookup,
        view: SessionView,
        outbox: Outbox,
        side: SidePanes,
        prefs: dict[str, Any],
        options: AppOptions,
    ) -> None:
        self._app = app
        self._panes = panes
        self.view = view
        self.outbox = outbox
        self._side = side
        self._prefs = prefs
        self._options = options
        self._registry = options.registry
        self._search = TranscriptSearch()
        self.chosen_theme = DEFAULT_THEME
        """The theme asked for; the app's `theme` may be its 16-colour stand-in
        (`tui/terminal.py`)."""
        self.theme_warnings: list[str] = []
        """What was wrong with the theme files (said once the chat shows)."""

    @property
    def registry(self) -> Registry:
        """The slash commands: the built-in ones, made when first asked for (their modules are
        not on the way to the first paint)."""
        if self._registry is None:
            from moot.commands.builtin import builtin_commands

            self._registry = builtin_commands()
        return self._registry

    def completions(self, typed: str) -> list[tuple[str, str]]:
        """What `/` completes to: commands with their descriptions, or a command's arguments."""
        name, _, rest = typed.partition(" ")
        if rest or typed.endswith(" "):
            command = self.registry.get(name)
            if command is None or command.complete is None:
                return []
            return [(f"{name} {c}", "") for c in command.complete(self, rest)]
        return [(c.name, c.description) for c in self.registry.completions(name, self)]

    # ---- the session ---------------------------------------------------------------------

    @property
    def client(self) -> Client:
        return self.view.client

    @property
    def shows_refusals(self) -> bool:
        return True  # the chat shows the session's refused ops

    def exit(self) -> None:
        self._app.exit()

    async def new_session(self) -> None:
        if self._options.open_client is None:
            raise CommandError("this app cannot open another session")
        if self.outbox.turn_running:
            raise CommandError("a turn is running: interrupt it first (Esc)")
        from moot.client import SetupError

        try:
            client = await self.view.open_another(self._options.open_client)
        except SetupError as exc:  # the settings or the model's key changed since the start
            raise CommandError(f"cannot start a new session: {exc}") from None
        await self.view.switch_client(client, show_history=False)
        chat = self._panes.chat
        await chat.say(f"new session {self.client.session_id}")
        for warning in use_session_commands(self.registry, self.client):
            await chat.say(warning, warning=True)

    async def open_session(self, session_id: str) -> None:
        """Show a stored session (its history, then live) instead of this one."""
        from moot.client import SetupError

        opener = self._options.open_session
        if opener is None:
            self.say("this app cannot open another session", warning=True)
            return
        if self.outbox.turn_running:
            self.say("a turn is running: interrupt it first (Esc)", warning=True)
            return
        from moot.client.errors import SessionBusy

        try:
            client = await self.view.open_another(lambda: opener(session_id))
        except (SetupError, SessionBusy) as exc:
            self.say(f"cannot open {session_id}: {exc}", warning=True)
            return
        await self.view.switch_client(client, show_history=True)

    async def choose_model(self, name: str) -> None:
        """A model picked in the palette: `/model` when there is one, else the default for new
        sessions (remembered in the user settings)."""
        if self.registry.get("model") is not None:
            await self.registry.run(self, f"/model {name}")
            return
        from moot.client.setup_detect import remember_model

        try:
            remember_model(name)
        except SettingsError as exc:
            self.say(str(exc), warning=True)
            return
        self.say(f"new sessions use {name} (/new starts one); this one goes on with its own")

    # ---- the chat and the prompt -------------------------------------------------------------

    @property
    def columns(self) -> int:
        # A notice's text inside the chat: its padding and the scrollbar take a few columns.
        return max(20, self._panes.chat.content_size.width - 4)

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        chat = self._panes.chat
        if markdown:
            from rich.markdown import Markdown

            self._app.run_worker(chat.say(Markdown(text), warning=warning), group="say")  # type: ignore[arg-type]
        else:
            self._app.run_worker(chat.say(text, warning=warning), group="say")

    def offer(self, text: str, label: str) -> None:
        self._app.query_one(PromptArea).add_chip(text, label)
        self._app.notify(
            "it goes with your next message (Enter sends it now); delete the chip to leave it out"
        )

    def ask_for_arguments(self, name: str) -> None:
        """Put `/name ` in the prompt for the person to type its arguments (a palette entry
        whose command needs some)."""
        prompt = self._panes.prompt
        prompt.load_text(f"/{name} ")
        prompt.focus()

    def search(self, text: str) -> int:
        return self._search.run(self._panes.chat, text)

    async def copy(self, text: str) -> str:
        self._app.copy_to_clipboard(text)  # OSC 52: the terminal's clipboard, over SSH too
        from moot.commands.clipboard import copy_with_command

        used = await asyncio.to_thread(copy_with_command, text)
        return f"OSC 52 and {used}" if used else "OSC 52, if the terminal allows it"

    def edit_file(self, path: str) -> None:
        """Open `path` in `$VISUAL`/`$EDITOR` with the app suspended (`/memory edit`); blocks
        until the editor exits, which is the point: the terminal is the editor's meanwhile."""
        import shlex
        import subprocess

        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        if self._app.is_headless:
            raise CommandError(f"no terminal to run {editor} in; open {path} yourself")
        with self._app.suspend():
            argv = shlex.split(editor)
            # The person's editor, never one a relative or workspace PATH entry names.
            program = host_program(argv[0], (os.getcwd(),)) if argv else None
            subprocess.run([program or argv[0], *argv[1:], path], check=False)

    # ---- screens -----------------------------------------------------------------------------

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        from moot.tui.screens.picker import PickerScreen  # loads when first shown

        return await self._app.push_screen_wait(PickerScreen(title, choices))

    async def ask_secret(self, question: str) -> str | None:
        from moot.tui.screens.secret import SecretScreen  # loads when first shown

        return await self._app.push_screen_wait(SecretScreen(question))

    def show_help(self) -> None:
        from moot.tui.screens.help import HelpScreen  # loads when first shown

        self._app.push_screen(HelpScreen(self.registry))

    def inspect(self, title: str, events: Sequence[ev.Event], *, note: str = "") -> None:
        from moot.tui.screens.inspector import InspectorScreen  # loads when first shown

        self._app.push_screen(InspectorScreen(title, events, note=note))

    def inspect_node(self, title: str, events: Sequence[ev.Event]) -> None:
        """A trace node's events with its subtree's, read from the store (bounded): a turn's
        run, an agent call's events and its callees', a tool call's output too."""
        from moot.commands.run_events import read, scope_of  # with the inspector, when asked

        scope = scope_of(events)
        if scope is None:  # a message, a hook, an error: its own events are all there is
            self.inspect(title, events)
            return
        shown = read(self.client.query, self.client.session_id, scope)
        self.inspect(title, shown.events, note=shown.note)

    def panes(self) -> Panes:
        return self._side

    # ---- themes ------------------------------------------------------------------------------

    def load_themes(self) -> None:
        """Register the theme files' themes and choose the one the prefs keep."""
        themes, self.theme_warnings = load_themes()
        for theme in themes:
            self._app.register_theme(theme)
        wanted = self._prefs.get(THEME)
        names = self.theme_names()
        self.chosen_theme = wanted if isinstance(wanted, str) and wanted in names else DEFAULT_THEME

    @property
    def theme(self) -> str:
        return self._app.theme

    def theme_names(self) -> Sequence[str]:
        return sorted(self._app.available_themes)

    def set_theme(self, name: str) -> None:
        if name not in self._app.available_themes:
            raise CommandError(f"no theme {name!r}; one of: {', '.join(self.theme_names())}")
        self.chosen_theme = name
        self._app.theme = name
        self._prefs[THEME] = name
        save_prefs(self._prefs)
