"""The prompt: a multi-line prompt_toolkit session where Enter sends.

- Enter sends (or takes the highlighted completion, and runs a command taken so); Tab takes
  the highlighted completion (or the first) and closes the list; `alt+enter` and `ctrl+j` add
  a line.
- A bracketed paste is inserted whole (prompt_toolkit turns its CRs into newlines), so a pasted
  block is one message, never sent line by line.
- History is the app's own file, read in a thread; `ctrl+r` searches it, up and down on the
  first and last line walk it.
- `/` and `@` complete while typing in the styled look, on Tab in the plain one (a menu that
  pops up unasked is noise to a screen reader).
- The message above the input carries the live area: the unfinished lines of what streams.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, ThreadedCompleter
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import has_completions, has_focus
from prompt_toolkit.formatted_text import AnyFormattedText
from prompt_toolkit.history import ThreadedHistory
from prompt_toolkit.key_binding import KeyBindings, KeyBindingsBase, KeyPressEvent
from prompt_toolkit.output import ColorDepth

from moot.repl.history import SharedHistory
from moot.repl.look import Look

MARK = "> "
"""What the prompt starts with (ASCII: a screen reader reads it as it is)."""
Handler = Callable[[KeyPressEvent], None]


def prompt_bindings(
    *, accept: Handler, ctrl_c: Handler, shift_tab: Handler, ctrl_d: Handler
) -> KeyBindings:
    """The prompt's own keys, on top of prompt_toolkit's Emacs bindings.

    Args:
        accept: Enter with no completion highlighted: the REPL sends the text.
        ctrl_c: Stop the turn, clear the line, or (twice) quit.
        shift_tab: Cycle the permission mode.
        ctrl_d: At an empty prompt: quit.
    """
    bindings = KeyBindings()
    in_prompt = has_focus(DEFAULT_BUFFER)

    @bindings.add("enter", filter=in_prompt)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.apply_completion(state.current_completion)
            if _unfinished_command(buffer.text):
                accept(event)  # a command picked from the list runs, as in the app
            return
        # Nothing picked: what was typed goes as it is. A beginning only one command has runs
        # it (`/stat`: `/status`); one several share runs none and says so (`/mod`), as in
        # the app (`Registry.resolve`).
        accept(event)

    @bindings.add("tab", filter=in_prompt & has_completions)
    def _take(event: KeyPressEvent) -> None:
        # As in the app: Tab takes the highlighted completion (else the first) and closes the
        # list, so the Enter after it sends. prompt_toolkit's Tab only highlighted the next
        # one and left the list open, and that Enter only closed it.
        # `apply_completion` would insert firing the text event, which starts completing the
        # new text at once: the list opened again, by a thread, after Tab had closed it.
        buffer = event.current_buffer
        state = buffer.complete_state
        assert state is not None  # has_completions
        taken = state.current_completion or state.completions[0]
        buffer.complete_state = None
        buffer.delete_before_cursor(-taken.start_position)
        buffer.insert_text(taken.text, fire_event=False)

    @bindings.add("escape", "enter", filter=in_prompt)
    @bindings.add("c-j", filter=in_prompt)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    bindings.add("c-c")(ctrl_c)
    bindings.add("s-tab")(shift_tab)

    @bindings.add("c-d", filter=in_prompt)
    def _ctrl_d(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.delete()  # Emacs' ctrl+d: the character under the cursor
        else:
            ctrl_d(event)

    return bindings


def _unfinished_command(text: str) -> bool:
    """`/sta`: a command name being typed (no argument yet)."""
    return text.startswith("/") and not any(c.isspace() for c in text)


def build_session(
    look: Look,
    *,
    message: Callable[[], AnyFormattedText],
    bindings: KeyBindingsBase,
    completer: Completer,
    toolbar: Callable[[], AnyFormattedText],
    history_path: Path | None,
) -> PromptSession[str]:
    """The REPL's prompt session."""
    return PromptSession(
        message=message,
        multiline=True,
        prompt_continuation=lambda width, line, wrap: " " * (width - 2) + ". ",
        key_bindings=bindings,
        history=ThreadedHistory(SharedHistory(history_path)),
        completer=ThreadedCompleter(completer),
        complete_while_typing=not look.plain,
        reserve_space_for_menu=0 if look.plain else 6,
        bottom_toolbar=toolbar if look.toolbar else None,
        color_depth=ColorDepth.DEPTH_1_BIT if look.plain else None,
        mouse_support=False,
        enable_suspend=True,
        include_default_pygments_style=False,
    )
