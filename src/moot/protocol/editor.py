"""What a front end inside an editor lends the session: the editor's view of the files.

An editor (over ACP) may hold changes the person has not saved; a model reading a file should
see what the person sees. A front end that can ask its editor passes `EditorBuffers` when it
opens the session (`SessionOptions.editor_buffers`); the `read` tool then shows a text file as
the editor holds it, after moot's own path policy allowed the read. Writes stay moot's own.
"""

from __future__ import annotations

from typing import Protocol


class EditorBuffers(Protocol):
    """The editor's text of a file, saved or not."""

    def read_text(self, path: str) -> str | None:
        """The text the editor holds for `path` (absolute), or None to read the file on disk.

        Called from a worker thread (the `read` tool runs in one); it may block briefly on
        the editor, never on the thread that runs the session's event loop.
        """
        ...
