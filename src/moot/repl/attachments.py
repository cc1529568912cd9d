"""Images and PDFs in the REPL's prompt: chips in the message, as in the app
(`moot.frontend.attach` says what the person types, pastes and deletes, and what is sent).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, has_focus
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys

from moot.frontend.attach import Chips, pasted_paths
from moot.protocol.messages import Attachment

Say = Callable[[str], None]
"""Tells the person something went otherwise (a warning line)."""


class PromptAttachments:
    """The chips of the message being typed and the keys that make and remove them.

    Args:
        root: The workspace `@path` names files in.
        say: Says why something could not be attached.
    """

    def __init__(self, root: Callable[[], Path], say: Say) -> None:
        self.chips = Chips(_attach_file)
        self._root = root
        self._say = say
        self._converting = False
        self._warned: set[str] = set()

    # ---- sending --------------------------------------------------------------------------

    def outgoing(self, text: str) -> tuple[str, tuple[Attachment, ...]] | None:
        """The message to send and its attachments; None (and why, said) when an `@path`
        image in it cannot be attached, so nothing is sent."""
        return self.chips.outgoing(text, self._root(), self._say)

    def given_back(self, text: str, attachments: tuple[Attachment, ...]) -> None:
        """A message that was not sent comes back: its chips hold their attachments again."""
        self.chips.restore(text, attachments)

    # ---- typing -----------------------------------------------------------------------------

    def watch(self, buffer: Buffer) -> None:
        """Turn each finished `@path` of an image or PDF into its chip as it is typed."""
        buffer.on_text_changed += self._typed

    def _typed(self, buffer: Buffer) -> None:
        text = buffer.text
        if self._converting or "@" not in text:
            return
        try:
            changed = self.chips.mentions(text, self._root(), finished_only=True)
        except ValueError as exc:  # `AttachmentError`: the runtime's check said why
            if str(exc) not in self._warned:  # once, not at every key after it
                self._warned.add(str(exc))
                self._say(str(exc))
            return
        if changed != text:
            self._converting = True
            try:
                grown = len(changed) - len(text)
                buffer.document = Document(changed, max(0, buffer.cursor_position + grown))
            finally:
                self._converting = False

    def insert(self, buffer: Buffer, chip: str) -> None:
        before = buffer.document.char_before_cursor
        buffer.insert_text(("" if not before or before.isspace() else " ") + chip + " ")

    def bindings(self) -> KeyBindings:
        """ctrl+v, a paste and backspace after a chip."""
        bindings = KeyBindings()
        in_prompt = has_focus(DEFAULT_BUFFER)

        @Condition
        def after_chip() -> bool:
            from prompt_toolkit.application.current import get_app

            document = get_app().current_buffer.document
            return self.chips.chip_before(document.text, document.cursor_position) is not None

        @bindings.add("backspace", filter=in_prompt & after_chip)
        def _remove(event: KeyPressEvent) -> None:
            document = event.current_buffer.document
            span = self.chips.chip_before(document.text, document.cursor_position)
            assert span is not None  # after_chip
            event.current_buffer.delete_before_cursor(span[1] - span[0])

        @bindings.add(Keys.BracketedPaste, filter=in_prompt)
        def _paste(event: KeyPressEvent) -> None:
            data = event.data.replace("\r\n", "\n").replace("\r", "\n")
            buffer = event.current_buffer
            paths = pasted_paths(data, Path.cwd())
            if not paths:
                buffer.insert_text(data)
                return
            for path in paths:
                try:
                    self.insert(buffer, self.chips.add_file(path, path.name, buffer.text))
                except ValueError as exc:  # `AttachmentError`: the runtime's check said why
                    self._say(str(exc))

        @bindings.add("c-v", filter=in_prompt)
        def _ctrl_v(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            event.app.create_background_task(self._paste_clipboard(buffer))

        return bindings

    async def _paste_clipboard(self, buffer: Buffer) -> None:
        from moot.frontend import clipboard  # the subprocesses only when asked

        pasted = await clipboard.paste(self._say)
        if isinstance(pasted, str):
            buffer.insert_text(pasted)
        elif pasted is not None:
            try:
                attached = _pasted_image(pasted)
            except ValueError as exc:  # `AttachmentError`: the runtime's check said why
                self._say(str(exc))
                return
            self.insert(buffer, self.chips.add(attached, buffer.text))


def _attach_file(path: Path, name: str) -> Attachment:
    """The runtime's one check of a file (`moot.client.attachments`), imported when a file
    is first attached: it brings the workspace and, for an image or a PDF, Pillow or pypdf."""
    from moot.client.attachments import attach_file

    return attach_file(path, name)


def _pasted_image(raw: bytes) -> Attachment:
    from moot.client.attachments import pasted_image

    return pasted_image(raw)
