"""Every key binding of the app, in one table: the app's bindings, the footer and `f1` read it.

Keys that belong to one widget while it has focus (the prompt's Enter, an approval's y/s/a/n)
are here too, with the place that owns them: a screen or pane binds them (`bindings_for`), and
the widgets that must see a key before Textual's own bindings do (the prompt, its completion
list, the approval pane) look the key's action up here (`action_of`) as it arrives, so the
table is what the keys do, not a description of them.
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
    """`app` (anywhere); `prompt`, `completion`, `approval`, `tool`, `thinking`, `trace` (while
    that has focus); or a screen of its own: `picker`, `help`, `inspector` (see `PLACES`)."""
    show: bool = False
    """Shown in the footer."""
    priority: bool = False
    """Taken before the focused widget sees the key."""


KEYS: tuple[Key, ...] = (
    Key("escape", "interrupt", "Interrupt the running turn", show=True),
    Key("ctrl+c", "quit", "Quit (press twice)", show=True, priority=True),
    # Taken before the prompt, whose own ctrl+d deletes to the right, as a shell's does: it
    # quits while the field with the focus is empty (`WORD_KEYS`, `MootApp.check_action`).
    Key("ctrl+d", "quit_now", "Quit (the prompt empty)", priority=True),
    Key("ctrl+p", "command_palette", "Commands", show=True),
    Key("f1", "help", "Every key", show=True),
    Key("shift+tab", "cycle_mode", "Mode: default, acceptEdits, plan", show=True, priority=True),
    # The side panes (`tui/layout.py`): below 110 columns f2/f3 bring one up over the chat.
    # ctrl+left/right are taken before the prompt, which keeps them for words while it holds
    # text (`WORD_KEYS`, `MootApp.check_action`).
    Key("f2", "toggle_tools", "Show or hide the tools pane"),
    Key("f3", "toggle_trace", "Show or hide the run-trace pane"),
    Key("ctrl+left", "narrow_side", "Narrow the side panes", priority=True),
    Key("ctrl+right", "widen_side", "Widen the side panes", priority=True),
    Key("ctrl+up", "grow_tools", "Tools pane taller, run-trace pane shorter"),
    Key("ctrl+down", "grow_trace", "Run-trace pane taller, tools pane shorter"),
    Key("f4", "toggle_mouse", "Mouse capture on or off (off: the terminal selects text)"),
    Key("end", "follow", "Follow the answer again (scroll to the bottom)", priority=True),
    # From the prompt (a line or three, where they would do little): the chat's pages.
    Key("pageup", "chat_page_up", "Scroll the chat up a page", priority=True),
    Key("pagedown", "chat_page_down", "Scroll the chat down a page", priority=True),
    Key("ctrl+home", "load_earlier", "Load earlier messages of the session (from the store)"),
    Key("enter", "submit", "Send the message", where="prompt"),
    Key("shift+enter", "newline", "New line (where the terminal reports it)", where="prompt"),
    Key("ctrl+j", "newline", "New line", where="prompt"),
    Key("up", "history_back", "Earlier message (on the first line)", where="prompt"),
    Key("down", "history_forward", "Later message (on the last line)", where="prompt"),
    Key("ctrl+r", "history_search", "Search earlier messages", where="prompt"),
    Key("ctrl+o", "open_chip", "Open the paste chip at the cursor into its text", where="prompt"),
    Key(
        "ctrl+v",
        "paste_image",
        "Paste the clipboard's image as a chip (its text when it holds no image)",
        where="prompt",
    ),
    Key(
        "backspace",
        "remove_chip",
        "Right after an [image n: ...] or [pdf n: ...] chip: remove it whole",
        where="prompt",
    ),
    Key("tab", "take", "Take the highlighted completion", where="completion"),
    Key("enter", "take_or_send", "Take it (a /command typed whole is sent)", where="completion"),
    Key("down", "next", "Next completion", where="completion"),
    Key("up", "previous", "Previous completion", where="completion"),
    Key("escape", "close", "Close the list", where="completion"),
    Key("y", "approve_once", "Allow this once", where="approval"),
    Key("s", "approve_session", "Allow for this session", where="approval"),
    Key("a", "approve_always", "Always allow (saves the rule shown)", where="approval"),
    Key("n", "deny", "Refuse (optionally say why)", where="approval"),
    Key("escape", "back", "From the reason back to the choices", where="approval"),
    Key("enter", "fold", "Expand or fold it (a click too)", where="tool"),
    Key("f", "show_all", "Show all of a long diff (a click on its note too)", where="tool"),
    Key("enter", "fold", "Unfold or fold it (a click too)", where="thinking"),
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
    "completion": "in the list of / and @ completions (it shows as you type)",
    "approval": "on an approval (other typing goes back to the prompt)",
    "tool": "on a tool call",
    "thinking": "on the model's thinking",
    "trace": "in the run-trace pane (enter opens a node's events)",
    "picker": "in a list to choose from",
    "help": "on this screen",
    "inspector": "in the inspector",
}
"""Where keys work, as the help screen names the places (in this order)."""


def app_bindings() -> list[Binding]:
    """The app-wide keys as Textual `Binding`s."""
    return bindings_for("app")


PANE_ACTIONS = frozenset(
    {"toggle_tools", "toggle_trace", "narrow_side", "widen_side", "grow_tools", "grow_trace"}
)
"""The keys that lay out the side panes: only while the panes' screen shows (not under a
picker or the help, whose own fields take `ctrl+left`)."""
WORD_KEYS = frozenset({"narrow_side", "widen_side", "follow", "quit_now"})
"""On `ctrl+left`/`ctrl+right`, `end` and `ctrl+d`, priority keys: the prompt has the focus
nearly always, and as a text field it would take them to move by word, to the line's end or to
delete to the right (so `ctrl+d` never quit). They act on the app unless the field with the
focus holds text, which keeps them for its cursor."""
SESSION_ACTIONS = PANE_ACTIONS | frozenset(
    {
        "interrupt",
        "cycle_mode",
        "follow",
        "focus_prompt",
        "command_palette",
        "load_earlier",
        "chat_page_up",
        "chat_page_down",
    }
)
"""The app's keys that act on a session: off while the first-run screen shows (no session yet)."""


def bindings_for(where: str) -> list[Binding]:
    """The keys of one place as Textual `Binding`s (the app's, or a screen's own)."""
    from textual.binding import Binding

    return [
        Binding(k.key, k.action, k.description, show=k.show, priority=k.priority)
        for k in KEYS
        if k.where == where
    ]


TERMINAL_NAMES = {"shift+\r": "shift+enter"}
"""Keys Textual names after the byte a terminal sent: xterm's `modifyOtherKeys` sends
shift+enter as `CSI 27;2;13~`, which Textual names `shift+\r` (the kitty protocol's
`CSI 13;2u` is `shift+enter` already)."""


def action_of(where: str, *names: str) -> str | None:
    """The action a key does in one place, or None where the table binds it to nothing.

    Args:
        where: The place (see `PLACES`).
        names: The key's names, Textual's first (a `Key` event's `aliases`: `tab` is also
            `ctrl+i`).
    """
    # Read on each key, not indexed once: the table is small, and a test that swaps a row
    # sees the widgets follow it.
    names = tuple(TERMINAL_NAMES.get(name, name) for name in names)
    for key in KEYS:
        if key.where == where and any(name in key.key.split(",") for name in names):
            return key.action
    return None


def key_of(where: str, action: str) -> str:
    """The key that does `action` in one place, as a label shows it ("" when none does)."""
    for key in KEYS:
        if key.where == where and key.action == action:
            return key.key.split(",")[0]
    return ""
