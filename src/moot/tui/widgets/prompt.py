"""The prompt: a multi-line input where Enter sends.

Its keys are the key table's `prompt` and `completion` rows (`moot.tui.keys`), looked up as
each key arrives; the keys below are the table's as shipped.

- Enter sends; `shift+enter` (where the terminal reports it) and `ctrl+j` add a line.
- A paste arrives as one bracketed-paste event, so a multi-line paste is never sent line by
  line; a large one becomes a chip (`[pasted 120 lines #1]`) that the sent message expands, or
  that `ctrl+o` on it opens into its text, to read or edit before sending.
- Up on the first line and down on the last walk the history (per workspace, shared with the
  REPL); `ctrl+r` lists earlier messages that contain what is typed.
- Images and PDFs become chips (`[image 1: shot.png 1280x720]`): an `@path` of one, a
  pasted path, `ctrl+v` (the clipboard's image); backspace after a chip removes it
  (`moot.tui.widgets.prompt_images`).
- `/` completes commands (with their descriptions), `@` paths (fuzzy, over every file of the
  workspace, listed off the UI thread and again each time an `@` word begins, so files a turn
  made are offered); Tab or Enter takes the highlighted completion.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from textual import events, on, work
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from moot.frontend.fuzzy import PathIndex
from moot.frontend.history import PromptHistory
from moot.tui.keys import action_of
from moot.tui.messages import PromptSubmitted
from moot.tui.widgets.prompt_images import PromptImages

BIG_PASTE_LINES = 12
BIG_PASTE_CHARS = 1500
MAX_COMPLETIONS = 12
BLINK_IDLE_S = 10.0
"""The cursor stops blinking this long after the last key (as GTK's does): an idle app repaints
nothing and runs no timer."""
_CHIP = re.compile(r"\[(?:pasted \d+ lines|output of [^\[\]\n]*?) #(\d+)\]")
"""A chip in the prompt: a paste, or output offered for the message (`!command`)."""

PROMPT_ACTIONS = frozenset(
    (
        "submit",
        "newline",
        "history_back",
        "history_forward",
        "history_search",
        "open_chip",
        "paste_image",
        "remove_chip",
    )
)
"""What the key table's `prompt` keys may do (`PromptInput._act`)."""
COMPLETION_ACTIONS = frozenset(("take", "take_or_send", "next", "previous", "close"))
"""What its `completion` keys may do (`PromptArea._completion_key`)."""

CommandCompletions = Callable[[str], Sequence[tuple[str, str]]]
"""What is typed after `/` -> (completion, description) pairs."""
PathSource = Callable[[], Awaitable[PathIndex]]
"""The workspace's files (gitignore-aware, every one), awaited on the UI loop: the source waits
for the session and lists in a thread of its own, never one the session's tools share."""
LISTING = "listing the workspace's files…"
"""What the completion list shows while the files are being listed the first time."""


HISTORY_SEARCH_LIMIT = 200
"""Messages `ctrl+r` lists at most (the picker filters them further)."""


def _one_line(message: str, width: int = 100) -> str:
    """A message as one line of a list: its lines joined, cut at `width`."""
    line = " ⏎ ".join(part.strip() for part in message.splitlines() if part.strip())
    return line if len(line) <= width else line[: width - 1] + "…"


class PromptInput(TextArea):
    """The text area itself; the key handling that makes it a prompt."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 12; border: round $primary; }
    PromptInput:focus { border: round $accent; }
    """

    class Typed(Message):
        """The person typed a key here (approvals wait until they pause)."""

    def __init__(
        self, history: PromptHistory, root: Callable[[], Path] = Path.cwd, **kw: object
    ) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, **kw)  # type: ignore[arg-type]
        self.prompt_history = history
        self.pastes: dict[int, str] = {}
        self.images = PromptImages(self, root)
        """The images and PDFs of the message (its `[image n: ...]` chips)."""
        self.completing: Callable[[str | None], bool] | None = None
        """Set by the prompt area: does a `completion` action of the key table while the
        completions show (True: done)."""
        self._blinks = False
        self._blink_idle: Timer | None = None

    def on_mount(self) -> None:
        # Tests and pictures: a blinking cursor is not deterministic.
        self._blinks = not self.app.is_headless
        self.cursor_blink = self._blinks
        self._blink_until_idle()

    def _blink_until_idle(self) -> None:
        if not self._blinks:
            return
        self.cursor_blink = True
        if self._blink_idle is not None:
            self._blink_idle.stop()
        self._blink_idle = self.set_timer(BLINK_IDLE_S, self.stop_blinking)

    def stop_blinking(self) -> None:
        """The person paused: a steady cursor (the blink timer pauses with it)."""
        if self._blink_idle is not None:
            self._blink_idle.stop()
            self._blink_idle = None
        self.cursor_blink = False

    async def _on_key(self, event: events.Key) -> None:
        self.post_message(self.Typed())
        self._blink_until_idle()
        # The key table says what each key does here (`moot.tui.keys`); what it leaves unbound,
        # and what an action declines (up below the first line), TextArea's own handler takes.
        names = event.aliases
        completing = self.completing is not None and self.completing(
            action_of("completion", *names)
        )
        if completing or self._act(action_of("prompt", *names)):
            event.stop()
            event.prevent_default()
        # Otherwise TextArea's own handler runs next (each class's handler runs in turn).

    def _act(self, action: str | None) -> bool:
        """Do one of the prompt's actions (`PROMPT_ACTIONS`); False leaves the key be."""
        row, _ = self.cursor_location
        if action == "submit":
            self.send()
        elif action == "newline":
            self.insert("\n")
        elif action == "history_search":
            self.run_worker(self._search_history(), group="history", exclusive=True)
        elif action == "history_back" and row == 0:
            earlier = self.prompt_history.back(self.text)
            if earlier is not None:
                self.load_text(earlier)
                self.move_cursor((0, 0))
        elif action == "history_forward" and row == self.document.line_count - 1:
            later = self.prompt_history.forward()
            if later is not None:
                self.load_text(later)
                self.move_cursor(self.document.end)
        elif action == "open_chip":
            self.open_chip()
        elif action == "paste_image":
            self.run_worker(self.images.paste_clipboard(), group="clipboard")
        elif action == "remove_chip":
            return self.images.remove_chip()
        else:
            return False
        return True

    async def _search_history(self) -> None:
        """`ctrl+r`: earlier messages containing what is typed, newest first, in a picker
        that filters as you type; the one chosen replaces the prompt's text."""
        from moot.tui.screens.picker import PickerScreen

        found = self.prompt_history.search(self.text.strip(), limit=HISTORY_SEARCH_LIMIT)
        if not found:
            self.notify("no earlier message contains that", severity="warning")
            return
        choices = [(f"m{i}", _one_line(message)) for i, message in enumerate(found)]
        picked = await self.app.push_screen_wait(PickerScreen("earlier messages", choices))
        if picked is not None:
            self.load_text(found[int(picked[1:])])
            self.move_cursor(self.document.end)
        self.focus()

    async def _on_paste(self, event: events.Paste) -> None:
        # Terminals (and tmux) paste line ends as CR; a message's lines end in LF.
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        event.text = text
        if self.images.paste(text):  # a dragged image's path: its chip
            event.stop()
            event.prevent_default()
            return
        lines = len(text.splitlines())  # a last line's end starts no line of its own
        if lines >= BIG_PASTE_LINES or len(text) >= BIG_PASTE_CHARS:
            event.stop()
            event.prevent_default()
            number = len(self.pastes) + 1
            self.pastes[number] = text
            self.insert(f"[pasted {lines} lines #{number}]")
        # Otherwise TextArea's own handler runs next (Textual calls each class's handler in
        # turn): calling it here too would paste twice.

    def add_chip(self, text: str, label: str) -> None:
        """Put `text` in the message as a chip named `label` (an `output of ...` label), at
        the cursor; sending expands it, deleting the chip leaves it out."""
        number = len(self.pastes) + 1
        self.pastes[number] = text
        shown = re.sub(r"[\[\]#\n]", " ", label).strip()
        if not shown.startswith("output of "):
            shown = f"output of {shown}"
        self.insert(f"[{shown} #{number}]\n")

    def open_chip(self) -> bool:
        """Replace the chip the cursor is on (or just after) by its text, so the person sees
        and edits what goes; False when the cursor is on no chip of this message."""
        row, column = self.cursor_location
        for chip in _CHIP.finditer(self.document.get_line(row)):
            text = self.pastes.get(int(chip.group(1)))
            if text is not None and chip.start() <= column <= chip.end():
                self.replace(text, (row, chip.start()), (row, chip.end()))
                return True
        self.notify("the cursor is on no paste chip", severity="warning")
        return False

    def expanded(self) -> str:
        """The text with every paste chip replaced by what was pasted."""
        return _CHIP.sub(lambda m: self.pastes.get(int(m.group(1)), m.group(0)), self.text)

    def send(self) -> None:
        text = self.expanded()
        if not text.strip() or (outgoing := self.images.outgoing(text)) is None:
            return
        text, attachments = outgoing
        self.prompt_history.add(text)
        self.load_text("")
        self.pastes.clear()
        self.post_message(PromptSubmitted(text, attachments))


class PromptArea(Vertical):
    """The prompt with its completion list above it."""

    DEFAULT_CSS = """
    PromptArea { height: auto; }
    PromptArea > OptionList { height: auto; max-height: 12; display: none; border: none; }
    PromptArea.-completing > OptionList { display: block; }
    """

    def __init__(
        self,
        history: PromptHistory,
        *,
        commands: CommandCompletions,
        paths: PathSource | None = None,
        root: Callable[[], Path] = Path.cwd,
        **kw: object,
    ) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.input = PromptInput(history, root, id="prompt")
        self.input.completing = self._completion_key
        self.options = OptionList()
        self._commands = commands
        self._paths_source = paths
        self._paths: PathIndex | None = None
        self._listing = False
        """The files are being listed (once at a time: keys typed meanwhile start nothing)."""
        self._picked = False
        """The person moved through the list with the arrows: Enter takes what they picked."""
        self._token: tuple[int, int, str] | None = None

    def compose(self):
        yield self.options
        yield self.input

    def focus(self, scroll_visible: bool = True) -> PromptArea:
        self.input.focus(scroll_visible)
        return self

    # ---- completion --------------------------------------------------------------------------

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        self.input.images.typed()
        self._refresh_completions()

    def _current_token(self) -> tuple[int, int, str]:
        """(row, start column, text) of the word the cursor is in."""
        row, column = self.input.cursor_location
        line = self.input.document.get_line(row)
        start = column
        while start > 0 and not line[start - 1].isspace():
            start -= 1
        return row, start, line[start:column]

    def _refresh_completions(self) -> None:
        row, start, token = self._current_token()
        before, self._token = self._token, (row, start, token)
        options: list[Option] = []
        if row == 0 and start == 0 and token.startswith("/"):
            for name, description in self._commands(token[1:])[:MAX_COMPLETIONS]:
                options.append(Option(f"/{name}  [dim]{description}[/dim]", id=f"/{name}"))
        elif token.startswith("@"):
            begun = before is None or before[:2] != (row, start) or not before[2].startswith("@")
            if (self._paths is None or begun) and not self._listing and self._paths_source:
                self._listing = True  # list again: a turn may have made or removed files
                self._load_paths()
            if self._paths is None:
                options.append(Option(f"[dim]{LISTING}[/dim]", id="", disabled=True))
            else:
                for path in self._paths.rank(token[1:], MAX_COMPLETIONS):
                    options.append(Option(path, id=f"@{path}"))
                for note in self._paths.notes:  # what the listing left out: never silently
                    options.append(Option(f"[dim]{note}[/dim]", id="", disabled=True))
        self._show(options)

    def _show(self, options: list[Option]) -> None:
        self._picked = False  # a new list: nothing picked in it yet
        self.options.clear_options()
        if options:
            self.options.add_options(options)
            self.options.highlighted = None if options[0].disabled else 0
        self.set_class(bool(options), "-completing")

    @work(group="paths", exclusive=True)
    async def _load_paths(self) -> None:
        """Read the workspace's files (the source lists them off the UI thread), then show the
        matches if they changed. An async worker: while the session opens it waits without
        holding a thread."""
        assert self._paths_source is not None
        try:
            listed = await self._paths_source()
        finally:
            self._listing = False
        if listed is not self._paths:
            self._paths = listed
            self._refresh_completions()

    def _completion_key(self, action: str | None) -> bool:
        """Do one of the completion list's actions (`COMPLETION_ACTIONS`) while it shows."""
        if not self.has_class("-completing") or action is None:
            return False
        if action == "previous":
            self.options.action_cursor_up()
            self._picked = True
        elif action == "next":
            self.options.action_cursor_down()
            self._picked = True
        elif action in ("take", "take_or_send") and not self._chosen():
            return False  # only a note shows (the files are being listed): keys do as usual
        elif action == "take_or_send" and self._chosen().startswith("/"):
            return self._enter_on_commands()
        elif action == "take_or_send" and self._typed_in_full():
            self._show([])  # `/copy` typed whole: Enter sends it, as it would without the list
            return False
        elif action in ("take", "take_or_send"):
            self._take_completion()
        elif action == "close":
            self._show([])
        else:
            return False
        return True

    def _enter_on_commands(self) -> bool:
        """Enter while commands are listed runs the one meant, never another: the one picked
        with the arrows, the one typed in full, or the only one that begins so (`/stat` runs
        `/status`); a beginning several share (`/mod`: `/mode`, `/model`) runs nothing and says
        so. True when the key is used up here, False when it goes on to send."""
        count = self.options.option_count
        names = [self.options.get_option_at_index(i).id or "" for i in range(count)]
        assert self._token is not None
        if not self._picked and self._token[2] in names:  # typed in full: that one
            self._show([])
            return False
        if self._picked or count == 1:
            self._take_completion()
            return False
        listed = ", ".join(names)
        self.app.notify(f"{self._token[2]} begins several commands: {listed}; type on or pick one")
        return True

    def _chosen(self) -> str:
        """The highlighted completion ('' when none is, or only a note shows)."""
        index = self.options.highlighted
        return "" if index is None else self.options.get_option_at_index(index).id or ""

    def _typed_in_full(self) -> bool:
        """The highlighted completion is exactly the word typed (and it is the prompt's last)."""
        index = self.options.highlighted
        if index is None or self._token is None:
            return False
        row, start, token = self._token
        chosen = self.options.get_option_at_index(index).id or ""
        at_end = (row, start + len(token)) == self.input.document.end
        return chosen == token and at_end

    def _take_completion(self) -> None:
        index = self.options.highlighted
        if index is None or self._token is None:
            return
        chosen = self.options.get_option_at_index(index).id or ""
        row, start, token = self._token
        end = (row, start + len(token))
        self.input.replace(chosen + " ", (row, start), end)
        self._show([])

    def add_chip(self, text: str, label: str) -> None:
        """See `PromptInput.add_chip`."""
        self.input.add_chip(text, label)
