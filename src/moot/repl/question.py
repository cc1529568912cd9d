"""Approvals at the prompt: the choices, the one key that answers, and the op it sends.

Keys typed before the question appeared never answer it: before asking, everything typed
ahead is dropped (the terminal's input queue, what prompt_toolkit had read but not handled,
and its saved type-ahead). And a key counts only after a pause, as in the app's approval pane:
an answer key answers only when no key came within `GRACE_S` before it, the question's
appearing included. So a key already on its way when the question printed answers nothing,
and neither does a letter in the middle of a word typed on (`because` holds an `a`, which
would save a rule for good). The question line says so. It reads one key with its own small
application that draws nothing (the question is a printed line), so it works the same on a
dumb terminal and reads well with a screen reader.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import Literal

import msgspec
from prompt_toolkit.application import Application
from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import DummyOutput

from moot.frontend.network import NETWORK, network_answer
from moot.protocol import events as ev
from moot.protocol import ops

GRACE_S = 0.5
"""An answer key counts only when no key came within this long before it, nor the question
(as the app's approval pane: `moot.tui.widgets.approval.GRACE_S`)."""
EXIT_PLAN_MODE = "exit_plan_mode"
INTERRUPT = "interrupt"
"""What `ask_key` returns for ctrl+c: the person wants the turn stopped."""

Clock = Callable[[], float]


class Choice(msgspec.Struct, frozen=True):
    """One answer: its key and what it does."""

    key: str
    label: str


def choices_for(request: ev.ApprovalRequested) -> list[Choice]:
    """The answers to `request`, as the app offers them: a plan is approved asking before each
    edit or accepting edits, or sent back to be revised; a tool call is allowed once, for the
    session or always (when a rule is suggested), or refused."""
    if request.tool == EXIT_PLAN_MODE:
        return [
            Choice("y", "approve, ask before each edit"),
            Choice("a", "approve, accept edits"),
            Choice("n", "revise: say what to change"),
        ]
    rule = request.suggested_rules[0] if request.suggested_rules else ""
    if request.tool == NETWORK:
        return [
            Choice("y", "yes, once"),
            Choice("s", f"yes, {rule} for this session"),
            Choice("a", f"always: saves {rule} in .moot/settings.local.json"),
            Choice("n", "no"),
        ]
    choices = [Choice("y", "yes, once")]
    if rule:
        choices += [
            Choice("s", f"yes, this session ({rule})"),
            Choice("a", f"always: saves {rule}"),
        ]
    return [*choices, Choice("n", "no (then say why, or Enter)")]


def answer_op(request: ev.ApprovalRequested, key: str, feedback: str = "") -> ops.Op | None:
    """The op that answers `request` as `key` says (`n` with `feedback`); None for a key that
    is not one of its choices."""
    if request.tool == NETWORK:
        return network_answer(request, key)
    plan = request.tool == EXIT_PLAN_MODE
    tool_call, call = request.tool_call_id, request.call_id
    rule = request.suggested_rules[0] if request.suggested_rules else None
    if key == "y":
        return ops.Approve(tool_call_id=tool_call, call_id=call, mode="default" if plan else None)
    if key == "a" and plan:
        return ops.Approve(tool_call_id=tool_call, call_id=call, mode="acceptEdits")
    if key in ("s", "a") and rule and not plan:
        scope: Literal["session", "always"] = "session" if key == "s" else "always"
        return ops.Approve(tool_call_id=tool_call, call_id=call, scope=scope, rule=rule)
    if key == "n":
        return ops.Deny(tool_call_id=tool_call, call_id=call, feedback=feedback)
    return None


def drop_typeahead(keyboard: Input) -> None:
    """Forget every key typed so far and not yet handled."""
    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        fd = keyboard.fileno()
        if os.isatty(fd):
            import termios  # POSIX only, like the rest of the REPL's terminal handling

            termios.tcflush(fd, termios.TCIFLUSH)
    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        # Bounded: a pipe that never runs dry (a test feeding keys) must not hold us here.
        for _ in range(64):
            if not keyboard.read_keys():
                break
        keyboard.flush_keys()
    clear_typeahead(keyboard)


def question_line(keys: str) -> str:
    """The line that asks, saying how to answer: one key, after a pause in typing."""
    return f"pause, then answer [{'/'.join(keys)}]: "


class KeyQuestion:
    """Waits for one of `keys` typed after a pause; ignores every other key, and an answer key
    that comes within `GRACE_S` of the key before it (or of the question).

    Args:
        keys: The answer keys (lower case; upper case counts too).
        clock: Monotonic seconds.
        on_ignored: Called (once) at the first key that answered nothing: an answer key in a
            burst of typing, or a key that is no answer.
    """

    def __init__(
        self,
        keys: str,
        *,
        clock: Clock = time.monotonic,
        on_ignored: Callable[[], None] = lambda: None,
    ) -> None:
        self._keys = keys
        self._clock = clock
        self._on_ignored = on_ignored
        self._warned = False
        self._cancelled = False
        self._last_key = 0.0
        """When the question appeared, then when the latest key came."""
        self._app: Application[str | None] | None = None

    def _ignore(self) -> None:
        if not self._warned:
            self._warned = True
            self._on_ignored()

    def _bindings(self) -> KeyBindings:
        bindings = KeyBindings()

        def answer(event: KeyPressEvent) -> None:
            now, before = self._clock(), self._last_key
            self._last_key = now
            if now - before < GRACE_S:  # still typing (or the question just appeared)
                self._ignore()
                return
            if event.app.key_processor.input_queue:
                # Keys read together with it ("sure, go ahead" at once): typing, not an answer.
                self._ignore()
                return
            event.app.exit(result=event.data.lower())

        def other(event: KeyPressEvent) -> None:
            self._last_key = self._clock()  # typing on: the next answer key waits for a pause
            self._ignore()

        for key in self._keys:
            bindings.add(key)(answer)
            bindings.add(key.upper())(answer)
        bindings.add("c-c")(lambda event: event.app.exit(result=INTERRUPT))
        bindings.add("<any>")(other)  # anything else answers nothing
        return bindings

    async def ask(self) -> str | None:
        """The key pressed (lower case), `INTERRUPT` for ctrl+c, or None when `cancel` was
        called first."""
        if self._cancelled:
            return None
        self._last_key = self._clock()
        self._app = Application(
            layout=Layout(Window(FormattedTextControl(""), height=0)),
            key_bindings=self._bindings(),
            output=DummyOutput(),  # the question is a printed line: nothing is drawn
            erase_when_done=True,
        )
        app = self._app

        def settled_meanwhile() -> None:
            if self._cancelled:
                app.exit(result=None)

        try:
            return await app.run_async(pre_run=settled_meanwhile)
        finally:
            self._app = None

    def cancel(self) -> None:
        """Stop waiting (the request was settled elsewhere, or the turn ended)."""
        self._cancelled = True
        app = self._app
        if app is not None and app.is_running and not app.is_done:
            app.exit(result=None)
