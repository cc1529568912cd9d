"""The `git_diff` tool: uncommitted changes, in the work tree or staged, capped in size."""

from __future__ import annotations

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.git import GIT_ERRORS, IGNORE_SUBMODULES, NO_DRIVERS, GitRepo, workspace_repo
from moot.workspace.paths import Workspace


def git_diff_tool(workspace: Workspace) -> FunctionTool:
    """The `git_diff` tool, for the repository `workspace` is in."""

    @tool(
        name="git_diff",
        side_effect=SideEffect.READ_ONLY,
        description="Git diff of unstaged changes, or staged ones; optionally of one path.",
    )
    def git_diff(path: str | None = None, staged: bool = False) -> ToolResult:
        try:
            with workspace_repo(workspace) as repo:
                return diff(repo, workspace, path, staged=staged)
        except GIT_ERRORS as exc:
            return ToolResult.error(str(exc))

    return git_diff


def diff(repo: GitRepo, workspace: Workspace, path: str | None, *, staged: bool) -> ToolResult:
    """What `git_diff` answers; raises the `GIT_ERRORS` it meets."""
    specs = [repo.model_spec(workspace, path)] if path else []
    args = ["diff", "--no-color", *NO_DRIVERS, IGNORE_SUBMODULES]
    if staged:
        args.append("--cached")
    if repo.prefix:  # paths as the model knows them, and only the workspace's
        args.append(f"--relative={repo.prefix}")
    listing = ["diff", IGNORE_SUBMODULES, *(["--cached"] if staged else [])]
    if hidden := repo.hidden_excludes(workspace, listing, specs):
        args.append("--no-renames")  # a rename away from a hidden file would show its lines
        specs = specs or [repo.workspace_spec()]
    out = repo.git_capped(*args, "--", *specs, *hidden)
    where = f" in {path}" if path else ""
    if not out.text:
        if staged:
            return ToolResult(f"No staged changes{where}.")
        return ToolResult(f"No unstaged changes{where} (staged=true shows staged ones).")
    hint = "name a path to see one file" if not path else "read the file instead"
    return ToolResult(out.note(hint), display={"diff": out.text, "staged": staged})
