"""The `git_log` tool: recent commits, one line each."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.git import GIT_ERRORS, GitError, GitRepo, workspace_repo
from moot.workspace.paths import Workspace

_FORMAT = "%h%x1f%ad%x1f%an%x1f%s"
_FIELDS = ("sha", "date", "author", "subject")


def git_log_tool(workspace: Workspace) -> FunctionTool:
    """The `git_log` tool, for the repository `workspace` is in."""

    @tool(
        name="git_log",
        side_effect=SideEffect.READ_ONLY,
        description="Recent git commits: hash, date, author, subject.",
    )
    def git_log(
        limit: Annotated[int, Field(ge=1, le=200)] = 10, path: str | None = None
    ) -> ToolResult:
        try:
            with workspace_repo(workspace) as repo:
                return log(repo, workspace, limit, path)
        except GIT_ERRORS as exc:
            return ToolResult.error(str(exc))

    return git_log


def log(repo: GitRepo, workspace: Workspace, limit: int, path: str | None) -> ToolResult:
    """What `git_log` answers; raises the `GIT_ERRORS` it meets."""
    specs = [repo.model_spec(workspace, path)] if path else []
    if not repo.repo.head.is_valid():
        raise GitError("no commits yet")
    out = repo.git("log", f"-n{limit}", f"--format={_FORMAT}", "--date=short", "--", *specs)
    rows = [[*line.split("\x1f", 3), "", "", ""][:4] for line in out.splitlines()]
    commits = [dict(zip(_FIELDS, row, strict=True)) for row in rows]
    if not commits:
        return ToolResult(f"No commits touch {path}." if path else "No commits.")
    lines = [f"{c['sha']} {c['date']} {c['author']}: {c['subject']}" for c in commits]
    return ToolResult("\n".join(lines), display={"commits": commits})
