"""Exact-match text replacement, as `edit` and `multi_edit` apply it, on text in memory.

`old` is matched exactly, with one allowance: a model writes line breaks as "\\n", so in a
CRLF file an `old` with bare "\\n" matches the CRLF text, and `new` is written with CRLF. When
`old` is not found, the error shows the closest lines of the file, so the model can fix its
`old` rather than read the file again.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from moot.workspace.text import dominant_newline, to_newline

_CANDIDATES = 3
_CUTOFF = 0.5
_MAX_SHOWN_LINES = 12
_MAX_SHOWN_CHARS = 200
_MAX_LOCATIONS = 10
_NUMBERED = re.compile(r"\s*\d+\t")
_WORD = re.compile(r"\w+")
_SCAN_ALL_LINES = 3000
_PREFILTERED = 200


class EditFailed(Exception):
    """An edit that cannot be applied; the message tells the model why and what to do."""


class EditLike(Protocol):
    """One replacement: `old` becomes `new`, once or everywhere."""

    @property
    def old(self) -> str: ...
    @property
    def new(self) -> str: ...
    @property
    def replace_all(self) -> bool: ...


def apply_edits(text: str, edits: Sequence[EditLike]) -> tuple[str, list[tuple[int, int]]]:
    """Apply `edits` in order, each to the result of the ones before.

    Args:
        text: The file's text.
        edits: The replacements.

    Returns:
        The new text, and for each edit the line number of its first replacement and how
        many places it replaced.

    Raises:
        EditFailed: An edit is empty, a no-op, not found, or ambiguous; for several edits the
            message names which one. Nothing is applied then: the caller writes nothing.
    """
    newline = dominant_newline(text)
    done: list[tuple[int, int]] = []
    for index, edit in enumerate(edits):
        try:
            text, where = _apply_one(text, edit, newline)
        except EditFailed as exc:
            if len(edits) == 1:
                raise
            raise EditFailed(f"edit {index + 1} of {len(edits)}: {exc}") from None
        done.append(where)
    return text, done


def _apply_one(text: str, edit: EditLike, newline: str) -> tuple[str, tuple[int, int]]:
    if edit.old == "":
        raise EditFailed("old is empty; give the exact text to replace (use write for new files)")
    if edit.old == edit.new:
        raise EditFailed("old and new are the same; nothing to change")
    old, new = edit.old, to_newline(edit.new, newline)
    count = text.count(old)
    if count == 0 and newline == "\r\n":
        old = to_newline(old, newline)
        count = text.count(old)
    if count == 0:
        raise EditFailed(_not_found(text, edit.old))
    first = text.index(old)
    if count > 1 and not edit.replace_all:
        raise EditFailed(
            f"old matches {count} places (lines {_locations(text, old)}); include more"
            " surrounding lines to make it unique, or set replace_all"
        )
    replaced = text.replace(old, new) if edit.replace_all else text.replace(old, new, 1)
    return replaced, (text.count("\n", 0, first) + 1, count if edit.replace_all else 1)


def _locations(text: str, old: str) -> str:
    found: list[str] = []
    start = text.find(old)
    while start != -1 and len(found) < _MAX_LOCATIONS:
        found.append(str(text.count("\n", 0, start) + 1))
        start = text.find(old, start + len(old))
    return ", ".join(found)


def _not_found(text: str, old: str) -> str:
    message = "old was not found in the file"
    old_lines = old.replace("\r\n", "\n").split("\n")
    written = [line for line in old_lines if line.strip()]
    if written and all(_NUMBERED.match(line) for line in written):
        message += " (old seems to include the line numbers read shows; leave them out)"
    block = closest_block(text.replace("\r\n", "\n").split("\n"), old_lines)
    if block is None:
        return message + "; no similar lines either. Read the file to see its current text."
    start, shown = block
    listing = "\n".join(
        f"{start + offset:5}\t{_cut(line)}" for offset, line in enumerate(shown[:_MAX_SHOWN_LINES])
    )
    return f"{message}. Closest match (lines {start}-{start + len(shown) - 1}):\n{listing}"


def closest_block(lines: list[str], old_lines: list[str]) -> tuple[int, list[str]] | None:
    """Where in `lines` the text most like `old_lines` is.

    Lines like the first non-blank line of `old` are candidates (quick ratio filters first,
    so this stays fast on large files); the block of `len(old_lines)` lines at each candidate
    is scored against all of `old`, and the best wins.

    Returns:
        The 1-based first line number and the lines of the best block, or None when nothing
        is at least half alike.
    """
    anchor_at = next((i for i, line in enumerate(old_lines) if line.strip()), None)
    if anchor_at is None:
        return None
    anchor = old_lines[anchor_at].strip()
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)
    scored: list[tuple[float, int]] = []
    for number in _prefilter(lines, anchor):
        matcher.set_seq1(lines[number].strip())
        if matcher.real_quick_ratio() < _CUTOFF or matcher.quick_ratio() < _CUTOFF:
            continue
        ratio = matcher.ratio()
        if ratio >= _CUTOFF:
            scored.append((ratio, number))
    scored.sort(key=lambda item: (-item[0], item[1]))
    old_block = "\n".join(old_lines)
    best: tuple[float, int] | None = None
    for _, number in scored[:_CANDIDATES]:
        start = max(0, number - anchor_at)
        block = lines[start : start + len(old_lines)]
        ratio = difflib.SequenceMatcher(None, "\n".join(block), old_block, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, start)
    if best is None:
        return None
    start = best[1]
    return start + 1, lines[start : start + len(old_lines)]


def _prefilter(lines: list[str], anchor: str) -> Iterable[int]:
    """Line indexes worth scoring: all of a small file; in a large one, those sharing words.

    difflib is pure Python; scoring every line of a 50,000-line file would take seconds.
    """
    if len(lines) <= _SCAN_ALL_LINES:
        return range(len(lines))
    words = set(_WORD.findall(anchor.lower()))
    shared = [
        (len(words.intersection(_WORD.findall(line.lower()))), number)
        for number, line in enumerate(lines)
    ]
    shared.sort(key=lambda item: (-item[0], item[1]))
    return [number for count, number in shared[:_PREFILTERED] if count]


def _cut(line: str) -> str:
    return line if len(line) <= _MAX_SHOWN_CHARS else line[:_MAX_SHOWN_CHARS] + "…"
