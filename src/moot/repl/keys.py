"""The REPL's keys, in one table: the prompt's bindings and `/help` read it."""

from __future__ import annotations

import msgspec


class Key(msgspec.Struct, frozen=True):
    key: str
    description: str


KEYS: tuple[Key, ...] = (
    Key("enter", "Send the message (or take the highlighted completion; a command runs)"),
    Key("alt+enter, ctrl+j", "New line"),
    Key("up, down", "Earlier and later messages (on the first or last line)"),
    Key("ctrl+r", "Search earlier messages"),
    Key("tab", "Complete a /command or an @path (take the highlighted one)"),
    Key("shift+tab", "Mode: default, acceptEdits, plan"),
    Key("ctrl+v", "Paste the clipboard's image as a chip (its text when it holds no image)"),
    Key("backspace", "Right after an [image n: ...] or [pdf n: ...] chip: remove it whole"),
    Key("ctrl+c", "Stop the running turn; clear the line; twice at an empty prompt: quit"),
    Key("ctrl+d", "Quit (at an empty prompt)"),
    Key(
        "y s a n",
        "Answer an approval: once, this session, always, no (then say why); a key counts "
        "only after a pause in typing",
    ),
)
