"""`@path` in a message: the workspace files a prompt names, read for the model.

The runtime calls a session's `PromptFiles` as a turn begins and records what it read in the
turn's `turn_started` (`files`), so every front end gets the same expansion and a resumed run
folds the same text. A name is read the way the `read` tool reads it: inside the workspace
(symlinks followed only while they stay inside, no symlink opened on the way), never what a
deny rule keeps from `read` (`refused`), text only, capped. A word after `@` that names nothing
is left as it is (`@bob` in prose); one that looks like a path (a `/` or a `.` in it) and
cannot be attached says why, to the person and the model alike.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable

from moot.protocol.messages import AttachedFile
from moot.workspace.no_follow import PathRefused, read_file_bytes
from moot.workspace.paths import Workspace
from moot.workspace.text import SNIFF_BYTES, decode_for_display, looks_binary, sniff_encoding

MAX_FILES = 10
"""Files attached from one message at most; the rest are named in a note."""
MAX_LINES = 2_000
MAX_CHARS = 100_000
"""What one file gives the model at most (the first lines); the note says how much is left."""
MAX_BYTES = 8 * 1024 * 1024
"""Larger files are not read at all."""
MAX_TOTAL_CHARS = 250_000
"""What all the files of one message give the model at most (the turn's event holds them)."""

_MENTION = re.compile(r"(?<![\w@/])@([^\s`'\"<>()\[\]{}]+)")
_TRAILING = ".,;:!?"

Refusal = Callable[[str], "str | None"]
"""Given a path, why a deny rule keeps it from being read ("" or None: none does)."""


def mentions(prompt: str) -> list[str]:
    """The `@path` words of a prompt, in order, each once, trailing punctuation dropped."""
    found: list[str] = []
    for match in _MENTION.finditer(prompt):
        word = match.group(1).rstrip(_TRAILING)
        if word and word not in found:
            found.append(word)
    return found


class PromptFiles:
    """The session's `AttachFiles` (see `moot.core.runtime`): reads `@path` files."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def __call__(self, prompt: str, refused: Refusal) -> list[AttachedFile]:
        """Args:
        prompt: The person's message.
        refused: Given a path, why a deny rule keeps it from being read ("" or None: none).
        """
        files: list[AttachedFile] = []
        total = 0
        for word in mentions(prompt):
            attached = self._one(word, refused)
            if attached is None:
                continue
            if len(files) == MAX_FILES:
                files.append(AttachedFile(path=word, note=f"more than {MAX_FILES} files named"))
                break
            if total + len(attached.text) > MAX_TOTAL_CHARS:
                note = f"not attached: the message's files pass {MAX_TOTAL_CHARS:,} characters"
                attached = AttachedFile(path=attached.path, note=note)
            total += len(attached.text)
            files.append(attached)
        return files

    def _one(self, word: str, refused: Refusal) -> AttachedFile | None:
        workspace = self.workspace
        looks_like_path = "/" in word or "." in word
        try:
            target = workspace.resolve_read(word)
        except PathRefused:
            return (
                AttachedFile(path=word, note="outside the workspace") if looks_like_path else None
            )
        rel = workspace.relative(target)
        # Deny rules are asked before the file is looked at, so that a hidden path says the
        # same whether or not it exists.
        why = refused(word) or (refused(rel) if rel != word else "")
        if why:
            return AttachedFile(path=word, note=f"not attached: {why}")
        try:
            st = os.stat(target)
        except OSError:
            return AttachedFile(path=word, note="no such file") if looks_like_path else None
        if stat.S_ISDIR(st.st_mode):
            return AttachedFile(path=rel, note="a directory; name a file in it")
        if st.st_size > MAX_BYTES:
            return AttachedFile(path=rel, note=f"too large to attach ({st.st_size:,} bytes)")
        try:
            data, info = read_file_bytes(workspace.root_of(target), target)
            workspace.refuse_linked(info, word)
        except PathRefused as exc:
            if exc.rule == "read-denied":
                return AttachedFile(path=word, note=f"not attached: {exc}")
            return AttachedFile(path=rel, note=f"cannot be read: {exc}")
        except OSError as exc:
            return AttachedFile(path=rel, note=f"cannot be read: {exc}")
        if looks_binary(data[:SNIFF_BYTES]):
            return AttachedFile(path=rel, note="a binary file; not attached")
        text, lossy = decode_for_display(data, sniff_encoding(data[:4]))
        return _capped(rel, text, lossy)


def _capped(rel: str, text: str, lossy: bool) -> AttachedFile:
    if not text:
        return AttachedFile(path=rel, note="an empty file")
    lines = text.splitlines()
    kept = lines[:MAX_LINES]
    body = "\n".join(kept)
    if len(body) > MAX_CHARS:
        body = body[:MAX_CHARS]
        kept = body.splitlines()
    notes = []
    if len(kept) < len(lines) or len(body) < len("\n".join(lines)):
        notes.append(f"the first {len(kept):,} of {len(lines):,} lines")
    if lossy:
        notes.append("invalid bytes shown as U+FFFD")
    return AttachedFile(path=rel, text=body, note="; ".join(notes))
