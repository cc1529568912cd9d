"""An answer's text as it streams, cut into what can be printed for good.

Scrollback cannot be redrawn, so only finished pieces are printed: each whole line as it
completes, except inside a code fence or a table, which are held until they close (a fence is
highlighted, a table laid out, as one block). What is not finished yet (the line being written,
an open block) is the live part, shown in the REPL's live area until it is printed.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

_FENCES = ("```", "~~~")


class Piece(msgspec.Struct, frozen=True):
    """Finished text: one line, or a whole fenced code block or table (`block`)."""

    text: str
    block: bool = False


class AnswerStream:
    """One agent call's answer, fed as deltas arrive."""

    def __init__(self) -> None:
        self.partial = ""
        """The line being written (no newline yet)."""
        self.held: list[str] = []
        """Lines of an open fence or table."""
        self._fence = ""
        self.fed = 0
        """Characters fed so far."""

    def feed(self, text: str) -> list[Piece]:
        """Take a delta; returns the pieces it finished."""
        self.fed += len(text)
        self.partial += text
        if "\n" not in text:  # not the whole partial: a long line would be scanned per delta
            return []
        *lines, self.partial = self.partial.split("\n")
        return list(self._lines(lines))

    def finish(self) -> list[Piece]:
        """The answer ended: everything left, an unclosed block as a block."""
        lines = [self.partial] if self.partial else []
        self.partial = ""
        pieces = list(self._lines(lines))
        if self.held:
            pieces.append(Piece("\n".join(self.held), block=True))
            self.held, self._fence = [], ""
        return pieces

    @property
    def live(self) -> list[str]:
        """What is not printed yet: the open block's lines and the line being written."""
        return [*self.held, self.partial] if self.partial else list(self.held)

    def _lines(self, lines: list[str]) -> Iterator[Piece]:
        for line in lines:
            stripped = line.lstrip()
            if self._fence:
                self.held.append(line)
                if stripped.startswith(self._fence) and not stripped[len(self._fence) :].strip():
                    yield self._release()
                continue
            if self.held and not stripped.startswith("|"):
                yield self._release()  # a table ends at the first line that is not a row
            fence = next((f for f in _FENCES if stripped.startswith(f)), "")
            if fence:
                self._fence = stripped[: len(stripped) - len(stripped.lstrip(fence[0]))]
                self.held.append(line)
            elif stripped.startswith("|"):
                self.held.append(line)
            else:
                yield Piece(line)

    def _release(self) -> Piece:
        block = Piece("\n".join(self.held), block=True)
        self.held, self._fence = [], ""
        return block
