"""The conversation printed to the terminal's scrollback when the app exits, so that a run
without the alternate screen (or any run, when asked) leaves it behind like any command's output.

Textual captures stdout while the app runs, so this prints after `App.run` returns. It reads the
sessions the app showed from the store (the app's client is closed by then): for each, the
events from where the app took it up, as the transcript `moot sessions show` prints, either as
plain markdown text or rendered by Rich (which honours `NO_COLOR` and a 16-colour `TERM`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Literal, TextIO

import msgspec

from moot.frontend.transcript import markdown
from moot.protocol.client import Queries

Format = Literal["off", "text", "markdown"]


class Visit(msgspec.Struct, frozen=True):
    """A session the app showed, and the seq it took it up after (0: from its start)."""

    session_id: str
    after_seq: int = 0


def scrollback_format(setting: str, *, inline: bool, flag: str | None = None) -> Format:
    """What to print on exit: the flag, else the setting; `auto` is markdown inline, else off."""
    chosen = flag or setting
    if chosen == "auto":
        return "markdown" if inline else "off"
    return chosen if chosen in ("off", "text", "markdown") else "off"  # type: ignore[return-value]


def conversation(queries: Queries, visits: Sequence[Visit]) -> str:
    """The markdown of what the app showed, session by session (empty when nothing happened)."""
    parts: list[str] = []
    for visit in visits:
        try:
            events = queries.events(visit.session_id, after_seq=visit.after_seq)
        except KeyError:
            continue
        blocks = list(markdown(events))
        if not blocks:
            continue
        head = f"## moot session {visit.session_id}"
        if visit.after_seq:
            head += f"\n\n*(earlier turns: `moot sessions show {visit.session_id}`)*"
        parts.append("\n\n".join([head, *blocks]))
    return "\n\n".join(parts)


def print_conversation(
    queries: Queries, visits: Sequence[Visit], how: Format, file: TextIO | None = None
) -> bool:
    """Print the conversation as `how` says; False when there was nothing to print."""
    if how == "off":
        return False
    from moot.frontend.inert import inert_lines

    # What the session read and said, printed to the terminal: no sequence of it may run there.
    text = inert_lines(conversation(queries, visits))
    if not text:
        return False
    out = sys.stdout if file is None else file
    if how == "text":
        print(text, file=out)
        return True
    from rich.console import Console  # after the app: its cost is no one's start-up
    from rich.markdown import Markdown

    Console(file=out, soft_wrap=False).print(Markdown(text))
    return True
