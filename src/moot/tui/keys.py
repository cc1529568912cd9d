"""Every key binding of the app, in one table: the app's bindings, the footer and `f1` read it.

Keys that belong to one widget while it has focus (the prompt's Enter, an approval's y/s/a/n)
are listed too, with the widget that owns them, so the help screen shows every key there is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from textual.binding import Binding


class Key(msgspec.Struct, frozen=True):
    """One binding: the key, what it does, and where it works."""

    key: str
    action: str
    description: str
    where: str = "app"
    """`app` (anywhere), `prompt` or `approval` (while that has focus), or a screen of its
    own: `picker`, `help`, `inspector` (see `PLACES`)."""
    show: bool = False
    """Shown in the footer."""
    priority: bool = False
    """Taken before the focused widget sees the key."""


KEYS: tuple[Key, ...] = (
    Key("escape", "interrupt", "Interrupt the running turn", show=True),
    Key("ctrl+c", "quit", "Quit (press twice)", show=True, priority=True),
    Key("ctrl+d", "quit_now", "Quit"),
    Key("ctrl+p", "command_palette", "Commands", show=True),
    Key("f1", "help", "Every key", show=True),
    Key("shift+tab", "cycle_mode", "Mode: default, acceptEdits, plan", show=True, priority=True),
    # The side panes (`tui/layout.py`): below 110 columns f2/f3 bring one up over the chat.
    # ctrl+left/right are taken before the prompt, which keeps them for words while it holds
    # text (`MootApp.check_action`).
    Key("f2", "toggle_tools", "Show or hide the tools pane"),
    Key("f3", "toggle_trace", "Show or hide the run-trace pane"),
    Key("ctrl+left", "narrow_side", "Narrow the side panes", priority=True),
    Key("ctrl+right", "widen_side", "Widen the side panes", priority=True),
    Key("ctrl+up", "grow_tools", "Tools pane taller, run-trace pane shorter"),
    Key("ctrl+down", "grow_trace", "Run-trace pane taller, tools pane shorter"),
    Key("f4", "toggle_mouse", "Mouse capture on or off (off: the terminal selects text)"),
    Key("end", "follow", "Follow the answer again (scroll to the bottom)"),
    Key("ctrl+home", "load_earlier", "Load earlier messages of the session (from the store)"),
    Key("enter", "submit", "Send the message", where="prompt"),
    Key("shift+enter", "newline", "New line (where the terminal reports it)", where="prompt"),
    Key("ctrl+j", "newline", "New line", where="prompt"),
    Key("up", "history_back", "Earlier message (on the first line)", where="prompt"),
    Key("down", "history_forward", "Later message (on the last line)", where="prompt"),
    Key("ctrl+r", "history_search", "Search earlier messages", where="prompt"),
    Key("tab", "complete", "Complete a /command or @path", where="prompt"),
    Key("y", "approve_once", "Allow this once", where="approval"),
    Key("s", "approve_session", "Allow for this session", where="approval"),
    Key("a", "approve_always", "Always allow (saves the rule shown)", where="approval"),
    Key("n", "deny", "Refuse (optionally say why)", where="approval"),
    Key("enter", "toggle", "Expand or fold it (a click too)", where="tool"),
    Key(
        "m",
        "message_agent",
        "Message the highlighted agent (its next step reads it)",
        where="trace",
    ),
    Key("x", "cancel_agent", "Cancel the highlighted agent and what it started", "trace"),
    Key("escape", "cancel", "Cancel", where="picker"),
    Key("down", "move(1)", "Next choice (the filter keeps the focus)", where="picker"),
    Key("up", "move(-1)", "Previous choice", where="picker"),
    Key("escape,q,f1", "dismiss", "Close", where="help"),
    Key("escape,q", "dismiss", "Close", where="inspector"),
)

PLACES = {
    "app": "anywhere",
    "prompt": "in the prompt",
    "approval": "on an approval",
    "tool": "on a tool call",
    "trace": "in the run-trace pane (enter opens a node's events)",
    "picker": "in a list to choose from",
    "help": "on this screen",
    "inspector": "in the inspector",
}
"""Where keys work, as the help screen names the places (in this order)."""


def app_bindings() -> list[Binding]:
    """The app-wide keys as Textual `Binding`s."""
    return bindings_for("app")


def bindings_for(where: str) -> list[Binding]:
    """The keys of one place as Textual `Binding`s (the app's, or a screen's own)."""
    from textual.binding import Binding

    return [
        Binding(k.key, k.action, k.description, show=k.show, priority=k.priority)
        for k in KEYS
        if k.where == where
    ]


def keys_for(where: str) -> tuple[Key, ...]:
    """The keys of one place (`app`, `prompt`, `approval`)."""
    return tuple(k for k in KEYS if k.where == where)
