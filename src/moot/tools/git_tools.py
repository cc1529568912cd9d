"""The git tools, all for the repository one `Workspace` is in."""

from __future__ import annotations

from moot.tools.base import Tool
from moot.tools.git_branch import git_branch_tool
from moot.tools.git_commit import git_commit_tool
from moot.tools.git_diff import git_diff_tool
from moot.tools.git_log import git_log_tool
from moot.tools.git_show import git_show_tool
from moot.tools.git_status import git_status_tool
from moot.workspace.agent_commits import ChangedFiles
from moot.workspace.paths import Workspace


def git_tools(workspace: Workspace, changed_files: ChangedFiles | None = None) -> list[Tool]:
    """git_status, git_diff, git_log, git_show, git_commit and git_branch for `workspace`.

    Args:
        workspace: Paths the model gives go through its path policy.
        changed_files: The files the agent wrote this session; `git_commit` commits these when
            the model names no paths (without it, the model must name them).

    Returns:
        The tools, read-only ones first.
    """
    return [
        git_status_tool(workspace),
        git_diff_tool(workspace),
        git_log_tool(workspace),
        git_show_tool(workspace),
        git_commit_tool(workspace, changed_files),
        git_branch_tool(workspace),
    ]
