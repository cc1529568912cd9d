"""The approval pane: what waits for the person, with its preview, answered with one key.

Requests queue (parallel peers may ask at once), each naming its agent. The first is shown:
the diff, the command with where it runs, the URL, or a plan rendered as markdown. Keys (the
key table's `approval` rows, looked up as each key arrives): `y` once, `s` for the session, `a`
always (the exact rule that will be saved is shown), `n` refuse, with an optional reason typed
after it.

Keystrokes must never answer by accident (the most reported bug of a leading agent): the pane
takes focus only once the person has stopped typing for `GRACE_S`, and ignores keys for
`GRACE_S` after it appears or takes focus. A character that answers nothing goes back to the
prompt, with the focus, as if the pane had not taken it; the pane takes the focus again once
the person pauses. When the terminal is not focused, a request rings the
bell and sends a terminal notification (OSC 9 and OSC 777; see `moot.tui.notify`). The
`Notification` hook is the runtime's to run, for every request; the pane never runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text
from textual import events
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Static

from moot.frontend.network import NETWORK, network_answer
from moot.protocol import events as ev
from moot.protocol import ops
from moot.tui.keys import action_of, key_of
from moot.tui.messages import Answered
from moot.tui.notify import Notifier
from moot.tui.widgets.diff_view import diff_text

GRACE_S = 0.5
"""Keys within this long of the pane appearing, or of the last key typed in the prompt, are
ignored; the pane takes focus only after the person has paused this long."""
EDITING_KEYS = {
    "backspace": "delete_left",
    "delete": "delete_right",
    "left": "cursor_left",
    "right": "cursor_right",
    "home": "cursor_line_start",
    "end": "cursor_line_end",
}
"""Keys that edit the prompt, with the prompt's (TextArea's) action for each: at a focused
approval they go back to the prompt, as a character typed on does, so a draft can be corrected
after a pause."""
EXIT_PLAN_MODE = "exit_plan_mode"
ANSWERS = frozenset(("approve_once", "approve_session", "approve_always", "deny"))
"""The key table's `approval` actions that answer."""
ACTIONS = ANSWERS | {"back"}
"""Every `approval` action the pane does (`back`: from the reason field to the choices)."""

Clock = Callable[[], float]


def _looks_like_diff(text: str) -> bool:
    return text.startswith("--- ") or "\n@@ " in text


def preview_of(request: ev.ApprovalRequested) -> RenderableType:
    """What the person looks at before answering."""
    preview = request.preview or str(request.arguments)
    if request.tool == EXIT_PLAN_MODE:
        from rich.markdown import Markdown  # markdown_it: not before the app's first paint

        return Markdown(preview)
    if _looks_like_diff(preview):
        return diff_text(preview, None)
    return Text(preview)


class ApprovalPane(Vertical):
    """The queue of approvals that wait, the first one shown."""

    DEFAULT_CSS = """
    ApprovalPane {
        height: auto; max-height: 60%; display: none;
        border: round $warning; padding: 0 1; background: $surface;
    }
    ApprovalPane.-waiting { display: block; }
    ApprovalPane:focus-within { border: round $accent; }
    ApprovalPane > .title { text-style: bold; color: $warning; }
    ApprovalPane > VerticalScroll { height: auto; max-height: 24; }
    ApprovalPane > .choices { color: $text; }
    ApprovalPane > .hint { color: $text-muted; }
    ApprovalPane > Input { display: none; }
    ApprovalPane.-feedback > Input { display: block; }
    """
    can_focus = True

    def __init__(self, *, clock: Clock = time.monotonic, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.queue: list[ev.ApprovalRequested] = []
        self._clock = clock
        self._shown_at = 0.0
        self._focused_at = 0.0
        self.last_typed = 0.0
        """When the person last typed in the prompt (the app keeps it current)."""
        self.notifier: Notifier | None = None
        """Rings and notifies while the terminal is not focused (made at the first request)."""

    def compose(self):
        yield Static("", classes="title")
        with VerticalScroll():
            yield Static("", classes="preview")
        yield Static("", classes="choices")
        yield Static("", classes="hint")
        yield Input(placeholder="why not? (Enter sends, Esc goes back)")

    @property
    def current(self) -> ev.ApprovalRequested | None:
        return self.queue[0] if self.queue else None

    # ---- the queue -------------------------------------------------------------------------

    def add(self, request: ev.ApprovalRequested) -> None:
        self.queue.append(request)
        if len(self.queue) == 1:
            self._show()
        else:
            self._render_title()
        if not self.app.app_focus:
            self._notify_terminal(request)

    def settled(self, call_id: str, tool_call_id: str) -> None:
        """An approval was decided (here or elsewhere): drop it from the queue."""
        before = self.current
        self.queue = [
            r for r in self.queue if (r.call_id, r.tool_call_id) != (call_id, tool_call_id)
        ]
        if self.current is not before:
            self._show()

    def clear(self) -> None:
        self.queue.clear()
        self._show()

    def _show(self) -> None:
        request = self.current
        self.set_class(request is not None, "-waiting")
        self.remove_class("-feedback")
        if request is None:
            if self.has_focus_within:
                self.app.action_focus_prompt()  # type: ignore[attr-defined]
            return
        self._shown_at = self._clock()
        self._render_title()
        self.query_one(".preview", Static).update(preview_of(request))
        self.query_one(".choices", Static).update(self._choices(request))
        self.query_one(".hint", Static).update(request.reason)
        self.set_timer(GRACE_S, self._take_focus)

    def _render_title(self) -> None:
        request = self.current
        if request is None:
            return
        more = f"  (1 of {len(self.queue)})" if len(self.queue) > 1 else ""
        what = "run plan" if request.tool == EXIT_PLAN_MODE else f"run {request.tool}"
        if request.tool == NETWORK:
            what = f"reach {request.preview}"
        self.query_one(".title", Static).update(f"{request.agent} asks to {what}{more}")

    def _choices(self, request: ev.ApprovalRequested) -> Choices:
        host = request.suggested_rules[0] if request.suggested_rules else ""
        if request.tool == NETWORK:
            pairs = [
                ("approve_once", "yes, once"),
                ("approve_session", f"yes, {host} for this session"),
                ("approve_always", f"always: saves {host} in .moot/settings.local.json"),
                ("deny", "no"),
            ]
        elif request.tool == EXIT_PLAN_MODE:
            pairs = [
                ("approve_once", "approve, ask before each edit"),
                ("approve_always", "approve, accept edits"),
                ("deny", "revise: say what to change"),
            ]
        else:
            rule = request.suggested_rules[0] if request.suggested_rules else ""
            pairs = [("approve_once", "yes, once")]
            if rule:
                pairs += [
                    ("approve_session", f"yes, this session ({rule})"),
                    ("approve_always", f"always: saves {rule}"),
                ]
            pairs.append(("deny", "no (then say why, or Enter)"))
        return Choices([(key_of("approval", action), label) for action, label in pairs])

    def _take_focus(self) -> None:
        """Focus once the person has stopped typing; try again a moment later if not."""
        if self.current is None or self.has_focus_within:
            return
        idle = self._clock() - self.last_typed
        if idle < GRACE_S:
            self.set_timer(GRACE_S - idle + 0.01, self._take_focus)
            return
        self._focused_at = self._clock()
        self.focus()

    def _notify_terminal(self, request: ev.ApprovalRequested) -> None:
        if self.notifier is None:
            driver = self.app._driver  # Textual has no API for OSC notifications
            write = driver.write if driver is not None and not self.app.is_headless else None
            self.notifier = Notifier(write, self.app.bell, self._clock)
        self.notifier.notify(f"{request.agent} asks to run {request.tool}")

    # ---- answering ---------------------------------------------------------------------------

    def in_grace(self) -> bool:
        now = self._clock()
        return (
            now - self._shown_at < GRACE_S
            or now - self._focused_at < GRACE_S
            or now - self.last_typed < GRACE_S
        )

    def on_key(self, event: events.Key) -> None:
        request = self.current
        if request is None:
            return
        action = action_of("approval", *event.aliases)
        if self.has_class("-feedback"):
            if action == "back":  # the reason field's own key, not the app's interrupt
                event.stop()
                event.prevent_default()
                self.remove_class("-feedback")
                self.focus()
            return
        if action not in ANSWERS:
            if event.is_printable or event.key in EDITING_KEYS:
                self._back_to_prompt(event)
            return
        if event.is_printable and self._clock() - self.last_typed < GRACE_S:
            self._back_to_prompt(event)  # a letter of a word typed on: it is the prompt's
            return
        event.stop()
        event.prevent_default()
        if self.in_grace():
            self.query_one(".hint", Static).update(
                "(a moment: keys right after a question are ignored)"
            )
            return
        if self._keys_queued():
            self._back_to_prompt(event)  # a burst ("sure, go ahead" at once): typing
            return
        self.answer(action)

    def _keys_queued(self) -> bool:
        """Whether more keys already wait behind this one: keys that arrive together (typed
        during a stall, or faster than the app reads them) are typing, never an answer, and a
        key typed alone after a pause leaves nothing behind it. Textual has no API for what
        waits: this reads its message pumps' queues (`textual._queue.Queue.values`, a deque)
        without taking from them, and the message a pump has peeked at."""
        for pump in (self, self.app):
            waiting = [*getattr(pump._message_queue, "values", ()), pump._pending_message]
            if any(isinstance(message, events.Key) for message in waiting):
                return True
        return False

    def _back_to_prompt(self, event: events.Key) -> None:
        """The person typed on: the character goes to the prompt, and so does the focus. It
        counts as typing at once: in a burst of keys (`ok yes` arriving together after a
        stall) the `y` reaches the pane before the prompt has taken the keys before it."""
        event.stop()
        event.prevent_default()
        self.last_typed = self._clock()
        # It edits the prompt now, not from the app's queue: posted there, it would go behind
        # the keys of the same burst already waiting ("sure" came out "ures").
        self.app.type_into_prompt(event.key, event.character)  # type: ignore[attr-defined]
        self.set_timer(GRACE_S, self._take_focus)

    def answer(self, action: str) -> None:
        """Answer the shown request as `action` (one of `ANSWERS`) says."""
        if action not in ANSWERS:
            raise ValueError(f"{action!r} answers no approval; the answers are {sorted(ANSWERS)}")
        request = self.current
        if request is None:
            return
        if request.tool == NETWORK:  # a host needs no reason to be refused
            self.post_message(Answered(network_answer(request, _NETWORK_KEYS[action])))
            return
        plan = request.tool == EXIT_PLAN_MODE
        tool_call, call = request.tool_call_id, request.call_id
        rule = request.suggested_rules[0] if request.suggested_rules else None
        op: ops.Op | None = None
        if action == "approve_once":
            op = ops.Approve(tool_call_id=tool_call, call_id=call, mode="default" if plan else None)
        elif action == "approve_always" and plan:
            op = ops.Approve(tool_call_id=tool_call, call_id=call, mode="acceptEdits")
        elif action in ("approve_session", "approve_always") and rule:
            always = action == "approve_always"
            scope: Literal["session", "always"] = "always" if always else "session"
            op = ops.Approve(tool_call_id=tool_call, call_id=call, scope=scope, rule=rule)
        elif action == "deny":
            self.add_class("-feedback")
            self.query_one(Input).focus()
            return
        if op is not None:
            self.post_message(Answered(op))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        request = self.current
        if request is None:
            return
        feedback = event.value.strip()
        event.input.value = ""
        self.remove_class("-feedback")
        op = ops.Deny(tool_call_id=request.tool_call_id, call_id=request.call_id, feedback=feedback)
        self.post_message(Answered(op))


_NETWORK_KEYS = {"approve_once": "y", "approve_session": "s", "approve_always": "a", "deny": "n"}
"""Each answer as the key `frontend.network.network_answer` reads."""


class Choices:
    """An approval's choices (a key, then its words), as many to a line as fit: one that would
    not fit starts the next line, so a key is never left at a line's end with its words below
    it. A choice wider than the line wraps by itself."""

    GAP = "   "

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines: list[Text] = []
        line = Text()
        for key, label in self.pairs:
            choice = Text.assemble((f" {key} ", "bold reverse"), f" {label}")
            if line and line.cell_len + len(self.GAP) + choice.cell_len > options.max_width:
                lines.append(line)
                line = Text()
            if line:
                line.append(self.GAP)
            line.append_text(choice)
        lines.append(line)
        yield Text("\n").join(lines)

    def __str__(self) -> str:
        return self.GAP.join(f" {key}  {label}" for key, label in self.pairs)
