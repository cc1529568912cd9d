"""`ReplCommands`: what a slash command may ask of the plain REPL (`CommandContext`).

The registry runs the REPL's commands against this object, not against the REPL: printing,
numbered picks, a secret read unseen, the app's theme (which the REPL sets for the app's next
start), another session, the clipboard, output offered for the next message, a search of the
stored transcript. It reaches the prompt only through `Asking`, so the shell's module imports
this one and not the other way round.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from typing import Protocol

from prompt_toolkit.completion import WordCompleter

from moot.commands.registry import CommandError, Panes, Registry
from moot.frontend.app_prefs import remember_theme, theme_file_names
from moot.protocol import events as ev
from moot.protocol.client import Client
from moot.repl.listing import chosen, help_text, matching, numbered
from moot.repl.session import OpenClient, OpenSession, ReplSession
from moot.repl.transcript import Transcript


class Asking(Protocol):
    """What the commands ask of the REPL's prompt (`Repl`)."""

    async def ask_line(
        self, message: str, completer: WordCompleter | None = None, *, secret: bool = False
    ) -> str:
        """One line typed at a question of the REPL's own; empty when cancelled."""
        ...

    def quit_now(self) -> None: ...


class ReplCommands:
    """The REPL as its commands see it.

    Args:
        prompt: Where questions are asked, and how the REPL quits.
        session: The session worked in.
        transcript: Where what commands say is printed.
        registry: The slash commands (`/help` lists them).
        plain: The plain look (no OSC 52 clipboard: nothing but text is written).
        open_client: Opens a new session, for `/new`.
        open_session: Opens a stored session by id, for `/resume` and `/fork`.
    """

    def __init__(
        self,
        prompt: Asking,
        session: ReplSession,
        transcript: Transcript,
        registry: Registry,
        *,
        plain: bool,
        open_client: OpenClient | None = None,
        open_session: OpenSession | None = None,
    ) -> None:
        self._prompt = prompt
        self._session = session
        self._transcript = transcript
        self._registry = registry
        self._plain = plain
        self._open_client = open_client
        self._open_session = open_session

    @property
    def client(self) -> Client:
        return self._session.client

    @property
    def shows_refusals(self) -> bool:
        return True  # the transcript prints the session's refused ops

    @property
    def columns(self) -> int:
        return terminal_width()

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        self._transcript.say(text, markdown=markdown, warning=warning)

    async def ask_secret(self, question: str) -> str | None:
        self.say(question)
        return await self._prompt.ask_line("key (not shown; Enter cancels): ", secret=True) or None

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        """A numbered list; a number, a value or a label picks, other words search (the list is
        shown again, narrowed to what matches them), Enter cancels."""
        if not choices:
            self.say(f"no {title} to choose from", warning=True)
            return None
        shown = list(choices)
        paint = self._transcript.paint
        self._transcript.emit(numbered(title, shown, paint))
        names = [value for value, _ in choices]
        while True:
            typed = await self._prompt.ask_line(
                f"{title} (a number, a name or words to search; Enter cancels): ",
                WordCompleter(names, sentence=True),
            )
            if not typed:
                return None
            if typed.isdigit():  # a number is the list's as shown
                if (value := chosen(typed, shown)) is not None:
                    return value
                self.say(f"no number {typed} in the list: 1 to {len(shown)}", warning=True)
                continue
            if (value := chosen(typed, shown) or chosen(typed, choices)) is not None:
                return value
            found = matching(typed, choices)
            if found:
                shown = found
                self._transcript.emit(numbered(f"{title}, matching {typed!r}", shown, paint))
            else:
                self.say(f"nothing in the list matches {typed!r}", warning=True)

    def theme_names(self) -> Sequence[str]:
        """The app's themes from files (moot's and the person's): the REPL shows none itself,
        but `/theme` sets the one the app starts with."""
        return theme_file_names()

    @property
    def theme(self) -> str:
        from moot.frontend.app_prefs import THEME, load_prefs

        chosen = load_prefs().get(THEME)
        return chosen if isinstance(chosen, str) else ""

    def set_theme(self, name: str) -> None:
        names = self.theme_names()
        if name not in names:
            raise CommandError(f"no theme {name!r}; one of: {', '.join(names)}")
        remember_theme(name)
        self.say(
            f"theme: {name}, for the app (moot starts with it); the plain REPL keeps the "
            "terminal's own colours"
        )

    def exit(self) -> None:
        self._prompt.quit_now()

    async def new_session(self) -> None:
        if self._open_client is None:
            raise CommandError("this REPL cannot open another session")
        await self._session.switch(self._open_client, show_history=False)

    async def open_session(self, session_id: str) -> None:
        if self._open_session is None:
            raise CommandError("this REPL cannot open another session")
        opener = self._open_session
        await self._session.switch(lambda: opener(session_id), show_history=True)

    def show_help(self) -> None:
        self._transcript.emit(help_text(self._registry, self._transcript.paint))

    async def copy(self, text: str) -> str:
        from moot.commands.clipboard import copy_with_command

        how = await asyncio.to_thread(copy_with_command, text)
        if how is not None:
            return how
        if self._plain:
            raise CommandError("no clipboard command here (wl-copy, xclip, xsel or pbcopy)")
        import base64

        # OSC 52: the terminal's own clipboard, through whatever prints above the prompt.
        self._transcript.emit(f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\x07")
        return "the terminal's clipboard (OSC 52)"

    def offer(self, text: str, label: str) -> None:
        self._session.offered.append(text)
        self._transcript.say(
            f"[{label}] goes with your next message (Enter alone sends it; /new or ctrl+c drops it)"
        )

    def search(self, text: str) -> int:
        if not text:
            return 0
        needle = text.lower()
        found = 0
        client = self.client
        for event in client.query.events(
            client.session_id, kinds=("model_responded", "turn_started", "tool_finished")
        ):
            said = (
                getattr(event, "text", "")
                or getattr(event, "prompt", "")
                or getattr(event, "content", "")
            )
            for line in said.splitlines():
                if needle in line.lower():
                    found += 1
                    self._transcript.say(f"seq {event.seq}: {line.strip()[:200]}")
        return found

    def inspect(self, title: str, events: Sequence[ev.Event], *, note: str = "") -> None:
        self._transcript.say(f"{title} ({len(events)} events{'; ' + note if note else ''})")
        for event in events:
            self._transcript.say(ev.event_to_json(event)[:2000])

    def panes(self) -> Panes:
        raise CommandError("the plain REPL has no side panes: /panes is for the app (moot)")


def terminal_width() -> int:
    return shutil.get_terminal_size().columns
