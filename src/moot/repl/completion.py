"""Completion at the prompt: `/commands` (with their descriptions and arguments) and `@paths`.

Paths come from `Client.files()` (gitignore-aware, without what deny rules hide, capped),
read in prompt_toolkit's completion thread (`ThreadedCompleter`), never on the input thread,
and read again after each turn (`forget_paths`), since a turn may add files.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from moot.commands.registry import CommandContext, Registry
from moot.frontend.fuzzy import fuzzy_rank

MAX_PATHS = 30
"""Path completions shown at most."""


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
        files: Callable[[], Sequence[str]],
    ) -> None:
        self._registry = registry
        self._context = context
        self._files = files
        self._paths: list[str] | None = None
        self._lock = threading.Lock()

    def forget_paths(self) -> None:
        """The next `@` reads the workspace's files again."""
        self._paths = None

    def _all_paths(self) -> list[str]:
        if self._paths is not None:
            return self._paths
        # One thread lists; the others do not wait for it (each would hold a thread of the
        # executor the session's tools use, key after key): no paths for them this time.
        if not self._lock.acquire(blocking=False):
            return []
        try:
            if self._paths is None:
                self._paths = list(self._files())
        except Exception:  # not open yet, or not walkable: nothing now, ask again later
            return []
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
            for path in fuzzy_rank(word[1:], self._all_paths(), MAX_PATHS):
                yield Completion(f"@{path}", start_position=-len(word), display=path)

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
