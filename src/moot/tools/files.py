"""The workspace file tools, all bound to one `Workspace` and its read ledger."""

from __future__ import annotations

from moot.tools.base import Tool
from moot.tools.edit import edit_tool
from moot.tools.glob import glob_tool
from moot.tools.grep import grep_tool
from moot.tools.ls import ls_tool
from moot.tools.multi_edit import multi_edit_tool
from moot.tools.read import read_tool
from moot.tools.write import write_tool
from moot.workspace.paths import Workspace


def file_tools(workspace: Workspace) -> list[Tool]:
    """read, write, edit, multi_edit, glob, grep and ls for `workspace`.

    Args:
        workspace: The directory they are confined to; its ledger is the session's memory of
            what was read, so make one `Workspace` per session. Give it
            `snapshots=FileSnapshots(...)` and write, edit and multi_edit keep what each file
            held before a run first changed it, for a rewind.

    Returns:
        The tools, read-only ones first.
    """
    return [
        read_tool(workspace),
        glob_tool(workspace),
        grep_tool(workspace),
        ls_tool(workspace),
        write_tool(workspace),
        edit_tool(workspace),
        multi_edit_tool(workspace),
    ]
