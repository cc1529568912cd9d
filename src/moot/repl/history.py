"""The prompt history, shared with the app: prompt_toolkit's `History` over moot's own file
(`moot.frontend.history`, one JSON string per line per workspace), not prompt_toolkit's file
format."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import History

from moot.frontend.history import PromptHistory


class SharedHistory(History):
    """Earlier messages of this workspace, newest first, as `ctrl+r` and up/down walk them.

    The file is read by `load_history_strings`, which the REPL runs in a thread
    (`ThreadedHistory`), so the prompt shows before it is read.
    """

    def __init__(self, path: Path | None) -> None:
        super().__init__()
        self._path = path
        self._history: PromptHistory | None = None
        self._lock = threading.Lock()

    def _file(self) -> PromptHistory:
        with self._lock:
            if self._history is None:
                self._history = PromptHistory(self._path)
            return self._history

    def load_history_strings(self) -> Iterable[str]:
        return list(reversed(self._file().entries))

    def store_string(self, string: str) -> None:
        self._file().add(string)
