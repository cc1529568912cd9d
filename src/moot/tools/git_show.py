"""The `git_show` tool: one commit's header, message and diff, capped in size."""

from __future__ import annotations

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.git import GIT_ERRORS, NO_DRIVERS, GitRepo, workspace_repo
from moot.workspace.paths import Workspace


def git_show_tool(workspace: Workspace) -> FunctionTool:
    """The `git_show` tool, for the repository `workspace` is in."""

    @tool(
        name="git_show",
        side_effect=SideEffect.READ_ONLY,
        description="A git commit's message and diff.",
    )
    def git_show(rev: str = "HEAD") -> ToolResult:
        try:
            with workspace_repo(workspace) as repo:
                return show(repo, workspace, rev)
        except GIT_ERRORS as exc:
            return ToolResult.error(str(exc))

    return git_show


def show(repo: GitRepo, workspace: Workspace, rev: str) -> ToolResult:
    """What `git_show` answers; raises the `GIT_ERRORS` it meets.

    Files that `Read(...)` deny rules hide are left out of the patch and its stat.
    """
    sha = repo.commit_sha(rev)  # checked first: `rev` never reaches git as an option
    args = ["show", "--no-color", *NO_DRIVERS, "--patch-with-stat", "--format=medium"]
    if repo.prefix:
        args.append(f"--relative={repo.prefix}")
    hidden = repo.hidden_excludes(workspace, ["show", sha])
    if hidden:
        args.append("--no-renames")  # a rename away from a hidden file would show its lines
    out = repo.git_capped(*args, sha, "--", *hidden)
    hint = "git_diff or read show single files"
    return ToolResult(out.note(hint), display={"sha": sha, "show": out.text})
