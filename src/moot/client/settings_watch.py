"""Noticing that the settings files changed while a session runs, so its permission rules
follow (a rule added by hand, a `.moot/settings.local.json` deleted) without a restart."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


class SettingsWatch:
    """Whether the settings files changed since it last said so: each file's identity, size
    and modification time, so one that appears, goes or is rewritten counts (a few `stat`s a
    tool call: the rules follow an edit, or a deleted `.moot/settings.local.json`, at once)."""

    def __init__(self, files: Sequence[Path]) -> None:
        self._files = tuple(files)
        self._seen = self._stamps()

    def _stamps(self) -> tuple[tuple[int, int, int, int] | None, ...]:
        stamps: list[tuple[int, int, int, int] | None] = []
        for path in self._files:
            try:
                st = os.stat(path)
            except OSError:
                stamps.append(None)
            else:
                stamps.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(stamps)

    def changed(self) -> bool:
        now = self._stamps()
        if now == self._seen:
            return False
        self._seen = now
        return True
