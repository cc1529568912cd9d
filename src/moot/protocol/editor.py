"""What a front end inside an editor lends the session: the editor's view of the files.

An editor (over ACP) may hold changes the person has not saved; a model reading a file should
see what the person sees. A front end that can ask its editor passes `EditorBuffers` when it
opens the session (`SessionOptions.editor_buffers`); the `read` tool then shows a text file as
the editor holds it, after moot's own path policy allowed the read. When the editor takes
writes too (`writes`), `edit`, `multi_edit` and `write` change its buffer instead of the disk,
so an edit applies to the text the model read; the path checks and approvals are moot's as
ever, and the rewind snapshot keeps the text the editor held before.
Likewise `EditorTerminal` lends the editor's terminal, which the person may choose over moot's
sandbox for shell commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import msgspec


class EditorBuffers(Protocol):
    """The editor's text of a file, saved or not."""

    def read_text(self, path: str) -> str | None:
        """The text the editor holds for `path` (absolute), or None to read the file on disk.

        Called from a worker thread (the `read` tool runs in one); it may block briefly on
        the editor, never on the thread that runs the session's event loop.
        """
        ...

    writes: bool
    """The editor takes writes (`write_text`); False: moot writes the disk itself."""

    def write_text(self, path: str, text: str) -> None:
        """Make `text` the editor's text of `path` (absolute), creating the file if need be.

        Called from a worker thread, after moot's checks allowed the write; the editor saves
        it as it saves its own edits.

        Raises:
            OSError: The editor did not take it (refused, or did not answer in time).
        """
        ...


class TerminalRun(msgspec.Struct, frozen=True):
    """How a command run in the editor's terminal ended."""

    exit_code: int | None
    """None: killed (a timeout, a signal)."""
    output: str
    truncated: bool = False
    timed_out: bool = False


class EditorTerminal(Protocol):
    """The editor's terminal, for shell commands when the person chooses it over moot's sandbox.

    A command run there runs on the host, uncontained, as the person: choosing it is deliberate
    (`chosen`), never a fallback, and the approval rules still decide what runs.
    """

    chosen: bool
    """The person chose the editor's terminal for this session's commands (off by default)."""

    async def run(
        self, command: str, *, cwd: str, env: Mapping[str, str], timeout: float
    ) -> TerminalRun:
        """Run `command` (a shell line) to its end or `timeout` seconds, then release it.

        Raises:
            OSError: The editor could not run it.
        """
        ...
