"""A `CommandContext` that records what the commands ask of the front end, for the tests of
commands in every package."""

from __future__ import annotations

from collections.abc import Sequence

from moot.commands.registry import (
    CommandError,
    PaneName,
    Panes,
)
from moot.protocol import events as ev
from moot.testing import FakeClient


class PanesRecorder:
    """`Panes` that record what `/panes` asks of them."""

    def __init__(self) -> None:
        self.asked: list[tuple[object, ...]] = []

    def show(self, pane: PaneName, shown: bool | None = None) -> None:
        self.asked.append(("show", pane, shown))

    def widen(self, steps: int) -> None:
        self.asked.append(("widen", steps))

    def set_width(self, columns: int) -> None:
        self.asked.append(("width", columns))

    def set_split(self, tools_percent: int) -> None:
        self.asked.append(("split", tools_percent))

    def reset(self) -> None:
        self.asked.append(("reset",))

    def describe(self) -> str:
        return "as they stand"


class Recorder:
    """A `CommandContext` that records what the commands ask of the front end."""

    def __init__(
        self,
        client: FakeClient,
        picks: Sequence[str | None] = (),
        secrets: Sequence[str | None] = (),
    ) -> None:
        self.client = client
        self.said: list[tuple[str, bool]] = []
        self.picks = list(picks)
        self.secrets = list(secrets)
        self.asked_secrets: list[str] = []
        self.offered: list[tuple[str, str]] = []
        self.copied: list[str] = []
        self.searched: list[str] = []
        self.inspected: list[tuple[str, list[ev.Event]]] = []
        self.notes: list[str] = []
        self.choices: list[Sequence[tuple[str, str]]] = []
        self.matches = 0
        self.opened: list[str] = []
        self.layout: PanesRecorder | None = None

    shows_refusals = False  # says what the session refused
    columns = 120
    theme = "dark"

    def say(self, text: str, *, markdown: bool = False, warning: bool = False) -> None:
        self.said.append((str(text), warning))

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        self.choices.append(choices)
        return self.picks.pop(0) if self.picks else None

    async def ask_secret(self, question: str) -> str | None:
        self.asked_secrets.append(question)
        return self.secrets.pop(0) if self.secrets else None

    def theme_names(self) -> Sequence[str]:
        return ["dark"]

    def set_theme(self, name: str) -> None:
        raise CommandError("no themes here")

    def exit(self) -> None:
        pass

    async def new_session(self) -> None:
        pass

    async def open_session(self, session_id: str) -> None:
        self.opened.append(session_id)

    def show_help(self) -> None:
        pass

    async def copy(self, text: str) -> str:
        self.copied.append(text)
        return "the test's clipboard"

    def offer(self, text: str, label: str) -> None:
        self.offered.append((text, label))

    def search(self, text: str) -> int:
        self.searched.append(text)
        return self.matches

    def inspect(self, title: str, events: Sequence[ev.Event], *, note: str = "") -> None:
        self.inspected.append((title, list(events)))
        self.notes.append(note)

    def panes(self) -> Panes:
        if self.layout is None:
            raise CommandError("no panes here")
        return self.layout

    @property
    def last(self) -> str:
        return self.said[-1][0]

    @property
    def warned(self) -> bool:
        return self.said[-1][1]
