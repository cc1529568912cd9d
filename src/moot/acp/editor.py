"""The editor's files, through ACP's `fs/read_text_file`: `EditorBuffers` for the `read` tool."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

READ_TIMEOUT_S = 5.0


class EditorFiles:
    """Reads a file as the editor holds it (`moot.protocol.editor.EditorBuffers`).

    `read` runs in a worker thread; the request goes to the editor on the session's event
    loop, and the thread waits for it (bounded). On that loop's own thread it never waits.
    """

    def __init__(self, conn: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.loop = loop
        self.session_id = ""
        self._loop_thread = threading.get_ident()

    def read_text(self, path: str) -> str | None:
        if not self.session_id or threading.get_ident() == self._loop_thread:
            return None
        request = self.conn.read_text_file(session_id=self.session_id, path=path)
        future = asyncio.run_coroutine_threadsafe(request, self.loop)
        try:
            response = future.result(READ_TIMEOUT_S)
        except Exception:  # the editor did not answer: moot reads the disk
            future.cancel()
            return None
        content = getattr(response, "content", None)
        return content if isinstance(content, str) else None
