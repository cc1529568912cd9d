"""The edit tools through an editor's buffers, when a front end in an editor lends them
(`moot.protocol.editor.EditorBuffers` with `writes`, over ACP's `fs/write_text_file`).

The path is resolved and checked as for a disk write (workspace containment, protected and
hidden paths, the approval before the call); only where the text comes from and goes to
changes: the editor's text of the file, saved or not, is what an edit applies to, and the
result goes back into the editor's buffer. The read ledger compares the editor's text with
what the session last saw of it, and the rewind snapshot keeps the text the editor held.
"""

from __future__ import annotations

import os
from pathlib import Path

from moot.workspace.paths import Workspace


def held_text(workspace: Workspace, target: Path, path: str) -> str | None:
    """The editor's text of `target` when the edit tools write through the editor; None when
    they work on the disk (no editor takes writes, or it has no text for the file).

    Args:
        workspace: Where `target` is.
        target: From `Workspace.resolve_write`, with `refuse_hidden` passed.
        path: The path as the model gave it, for messages.

    Raises:
        PathRefused: The file on disk is another name of one a `Read(...)` deny rule hides.
    """
    if workspace.editor_write is None or workspace.editor_text is None:
        return None
    try:
        text = workspace.editor_text(str(target))
    except Exception:  # the editor did not answer: the disk, as without an editor
        return None
    if text is not None and os.path.lexists(target):
        workspace.refuse_linked(os.stat(target, follow_symlinks=False), path)
    return text
