"""What the person typed before, per workspace: the app's and the REPL's prompt history.

One JSON string per line in `<data dir>/history/<workspace hash>.jsonl`, appended as each message
is sent, so the app and the REPL share it and two windows never overwrite each other's lines.
The file is read once at start; the newest `MAX_ENTRIES` are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from moot.paths import data_dir, make_private_dir

MAX_ENTRIES = 1000


def history_file(workspace: Path) -> Path:
    digest = hashlib.sha256(str(workspace).encode()).hexdigest()[:16]
    return data_dir() / "history" / f"{digest}.jsonl"


class PromptHistory:
    """Earlier messages, oldest first, with a cursor for up/down."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = self._read() if path else []
        self._cursor = len(self.entries)
        self._draft = ""

    def _read(self) -> list[str]:
        assert self.path is not None
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        entries = []
        for line in lines[-MAX_ENTRIES:]:
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash: skip it
            if isinstance(value, str) and value:
                entries.append(value)
        return entries

    def add(self, text: str) -> None:
        """Remember a sent message (not twice in a row) and append it to the file."""
        self._cursor = len(self.entries)
        if not text.strip() or (self.entries and self.entries[-1] == text):
            self._cursor = len(self.entries)
            return
        self.entries.append(text)
        self._cursor = len(self.entries)
        if self.path is None:
            return
        try:
            make_private_dir(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                out.write(json.dumps(text, ensure_ascii=False) + "\n")
        except OSError:
            pass  # history is a convenience: a read-only disk must not stop a message

    def back(self, draft: str) -> str | None:
        """The message before the cursor (the draft is kept for coming forward again)."""
        if self._cursor == len(self.entries):
            self._draft = draft
        if self._cursor == 0:
            return None
        self._cursor -= 1
        return self.entries[self._cursor]

    def forward(self) -> str | None:
        """The message after the cursor, or the draft once past the newest."""
        if self._cursor >= len(self.entries):
            return None
        self._cursor += 1
        return self._draft if self._cursor == len(self.entries) else self.entries[self._cursor]

    def search(self, needle: str, limit: int = 20) -> list[str]:
        """The newest messages containing `needle` (case-insensitive), newest first."""
        needle = needle.lower()
        found: list[str] = []
        for entry in reversed(self.entries):
            if needle in entry.lower() and entry not in found:
                found.append(entry)
                if len(found) == limit:
                    break
        return found
