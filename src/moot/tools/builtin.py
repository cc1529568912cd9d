"""The built-in tools of one session, built around its workspace (no globals).

Every front end (headless, the TUI, ACP) asks here for the same set, so an agent has the same
tools wherever the person talks to it.
"""

from __future__ import annotations

from pathlib import Path

from moot.sandbox.background import BackgroundShells
from moot.sandbox.select import SandboxChoice
from moot.store.base import Store
from moot.tools.base import Tool
from moot.tools.files import file_tools
from moot.tools.git_tools import git_tools
from moot.tools.repo_map import repo_map_tool
from moot.tools.shell_tools import shell_tools
from moot.tools.symbols import symbols_tool
from moot.tools.todo import TodoList, todo_tool
from moot.tools.web_fetch import web_fetch_tool
from moot.workspace.paths import Workspace
from moot.workspace.snapshots import FileSnapshots


def outputs_dir(session_id: str) -> Path:
    """Where a session's long command outputs are saved: the user data dir, not the project."""
    from moot.paths import data_dir

    return data_dir() / "outputs" / session_id


def session_workspace(store: Store, session_id: str, root: Path) -> Workspace:
    """The workspace of a session.

    Files a tool changes are snapshotted before their first change in each run, so a rewind
    can restore them; the session's saved command outputs may be read (never written).
    """
    return Workspace(
        root,
        snapshots=FileSnapshots(store, session_id, root),
        read_roots=(outputs_dir(session_id),),
    )


def builtin_tools(
    store: Store,
    session_id: str,
    workspace: Workspace,
    shell: SandboxChoice,
    shells: BackgroundShells,
    *,
    allow_private_web: bool = False,
) -> list[Tool]:
    """Files, search, git, the shell, the repo map, the task list and web fetch of a session.

    Shell commands run in `shell.sandbox`; with none, `bash` refuses and says how to enable
    one. The task list continues from the session's log.
    """
    todos = TodoList.from_events(store.events(session_id, kinds=("tool_finished",)))
    return [
        *file_tools(workspace),
        *git_tools(workspace, changed_files=lambda: set(workspace.changed)),
        *shell_tools(shell.sandbox, workspace, shells, unavailable=shell.describe()),
        repo_map_tool(workspace),
        symbols_tool(workspace),
        todo_tool(todos),
        web_fetch_tool(allow_private=allow_private_web),
    ]
