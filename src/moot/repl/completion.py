"""Completion at the prompt: `/commands` (with their descriptions and arguments) and `@paths`.

Paths come from `Client.files()` (every file, gitignore-aware, without what deny rules hide),
read and sorted for ranking (`PathIndex`) in prompt_toolkit's completion thread
(`ThreadedCompleter`), never on the input thread, and read again after each turn
(`forget_paths`), since a turn may add files. While they are read the list says so; what the
listing left out is said under the suggestions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from moot.commands.registry import CommandContext, Registry
from moot.frontend.fuzzy import PathIndex
from moot.protocol.client import WorkspaceFiles

MAX_PATHS = 30
"""Path completions shown at most."""
LISTING = "listing the workspace's files…"
"""What the list shows while another key's completion reads them."""


class PromptCompleter(Completer):
    """Completes the command on the first word (`/` first), its argument after it, and an
    `@path` anywhere.

    Args:
        registry: The slash commands.
        context: What the commands' own completers are given.
        files: The workspace's files (`Client.files`); called in the completion thread.
    """

    def __init__(
        self,
        registry: Registry,
        context: Callable[[], CommandContext],
        files: Callable[[], WorkspaceFiles],
    ) -> None:
        self._registry = registry
        self._context = context
        self._files = files
        self._paths: PathIndex | None = None
        self._lock = threading.Lock()

    def forget_paths(self) -> None:
        """The next `@` reads the workspace's files again."""
        self._paths = None

    def _all_paths(self) -> PathIndex | None:
        """The files ready to rank; None while another thread reads them."""
        if self._paths is not None:
            return self._paths
        # One thread lists; the others do not wait for it (each would hold a thread of the
        # executor the session's tools use, key after key): they say it is listing.
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._paths is None:
                listed = self._files()
                self._paths = PathIndex(listed.paths, listed.notes)
        except Exception:  # not open yet, or not walkable: nothing now, ask again later
            return PathIndex(())
        finally:
            self._lock.release()
        return self._paths

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        before = document.text_before_cursor
        word = before.rsplit(maxsplit=1)[-1] if before and not before[-1].isspace() else ""
        if before.startswith("/") and "\n" not in before:
            yield from self._commands(before)
        elif word.startswith("@"):
            paths = self._all_paths()
            if paths is None:  # the word itself again: taking it changes nothing
                yield Completion(word, start_position=-len(word), display=LISTING)
                return
            for path in paths.rank(word[1:], MAX_PATHS):
                yield Completion(f"@{path}", start_position=-len(word), display=path)
            for note in paths.notes:  # what the listing left out: never silently
                yield Completion(word, start_position=-len(word), display=f"[{note}]")

    def _commands(self, typed: str) -> Iterable[Completion]:
        name, space, rest = typed[1:].partition(" ")
        if not space:
            for command in self._registry.completions(name, self._context()):
                label = f"/{command.name}" + (f" {command.arguments}" if command.arguments else "")
                yield Completion(
                    f"/{command.name}",
                    start_position=-len(typed),
                    display=label,
                    display_meta=command.description,
                )
            return
        named = self._registry.get(name)
        if named is None or named.complete is None:
            return
        for choice in named.complete(self._context(), rest):
            yield Completion(choice, start_position=-len(rest))
