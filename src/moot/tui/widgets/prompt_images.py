"""Images and PDFs in the app's prompt: chips in the message, as in the REPL
(`moot.frontend.attach` says what the person types, pastes and deletes, and what is sent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.widgets import TextArea

from moot.frontend.attach import Chips, mentioned_files, pasted_paths
from moot.protocol.messages import Attachment


class PromptImages:
    """The chips of the message being typed in `area`.

    Args:
        area: The prompt's text area.
        root: The workspace `@path` names files in.
    """

    def __init__(self, area: TextArea, root: Callable[[], Path]) -> None:
        self.chips = Chips(_attach_file)
        self.root = root
        self._area = area
        self._converting = False
        self._checking = False
        self._warned: set[str] = set()

    def _warn(self, text: str) -> None:
        self._area.notify(text, severity="warning", timeout=8)

    def outgoing(self, text: str) -> tuple[str, tuple[Attachment, ...]] | None:
        """The message to send and its attachments; None (and why, told) when an `@path`
        image in it cannot be attached, so nothing is sent."""
        return self.chips.outgoing(text, self.root(), self._warn)

    def typed(self) -> None:
        """The text changed: each finished `@path` of an image or PDF becomes its chip once
        the runtime's check of it is done, in a thread (decoding and fitting a photo takes a
        few hundred ms; the prompt takes keys meanwhile)."""
        text = self._area.text
        if self._converting or self._checking or "@" not in text:
            return
        found = mentioned_files(text, self.root(), finished_only=True)
        if found:
            self._checking = True
            self._area.run_worker(self._check(found), group="attach")

    async def _check(self, found: list[tuple[str, Path]]) -> None:
        try:
            checked = await asyncio.to_thread(self.chips.check, found)
        except ValueError as exc:  # `AttachmentError`: the runtime's check said why
            if str(exc) not in self._warned:  # once, not at every key after it
                self._warned.add(str(exc))
                self._warn(str(exc))
            return
        finally:
            self._checking = False
        area = self._area
        text = area.text
        # Only the words still there, finished, as they were: the person typed on meanwhile.
        still = {word for word, _ in mentioned_files(text, self.root(), finished_only=True)}
        changed = self.chips.place(text, [(w, a) for w, a in checked if w in still])
        if changed == text:
            return
        cursor = _index(area, area.cursor_location)
        self._converting = True
        try:
            area.load_text(changed)
        finally:
            self._converting = False
        at = max(0, min(len(changed), cursor + len(changed) - len(text)))
        area.move_cursor(_location(area, at))
        self.typed()  # a word finished while this one was checked

    def paste(self, text: str) -> bool:
        """A pasted path of images or PDFs becomes their chips; False: it is text."""
        paths = pasted_paths(text, Path.cwd())
        if not paths:
            return False
        for path in paths:
            try:
                self._insert(self.chips.add_file(path, path.name, self._area.text))
            except ValueError as exc:  # `AttachmentError`: the runtime's check said why
                self._warn(str(exc))
        return True

    def remove_chip(self) -> bool:
        """Backspace right after a chip: the chip goes whole; False: no chip is there."""
        area = self._area
        cursor = _index(area, area.cursor_location)
        span = self.chips.chip_before(area.text, cursor)
        if span is None:
            return False
        start = _location(area, span[0])
        area.delete(start, area.cursor_location)
        return True

    def _insert(self, chip: str) -> None:
        area = self._area
        row, column = area.cursor_location
        before = area.document.get_line(row)[:column]
        area.insert(("" if not before or before[-1].isspace() else " ") + chip + " ")

    async def paste_clipboard(self) -> None:
        """ctrl+v: the clipboard's image as a chip, else its text, else why not."""
        from moot.frontend import clipboard  # the subprocesses only when asked

        pasted = await clipboard.paste(self._warn)
        if isinstance(pasted, str):
            if not self.paste(pasted):  # a copied file's path becomes its chip
                self._area.insert(pasted)
        elif pasted is not None:
            try:
                attached = _pasted_image(pasted)
            except ValueError as exc:  # `AttachmentError`: the runtime's check said why
                self._warn(str(exc))
                return
            self._insert(self.chips.add(attached, self._area.text))


def _index(area: TextArea, location: tuple[int, int]) -> int:
    """A location's offset in the text (TextArea's document is a `Document`)."""
    row, column = location
    lines = area.text.split("\n")
    return sum(len(line) + 1 for line in lines[:row]) + column


def _location(area: TextArea, index: int) -> tuple[int, int]:
    before = area.text[:index]
    return before.count("\n"), len(before) - (before.rfind("\n") + 1)


def _attach_file(path: Path, name: str) -> Attachment:
    """The runtime's one check of a file (`moot.client.attachments`), imported when a file
    is first attached: it brings the workspace and, for an image or a PDF, Pillow or pypdf."""
    from moot.client.attachments import attach_file

    return attach_file(path, name)


def _pasted_image(raw: bytes) -> Attachment:
    from moot.client.attachments import pasted_image

    return pasted_image(raw)
