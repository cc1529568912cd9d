"""The `git_commit` tool: commit the named paths, or the files the agent changed, and nothing else.

Whatever else is staged stays staged and out of the commit, so the agent never sweeps the
person's own work into its commits. Commits carry the `Moot-Session` trailer, which is what lets
`undo_last_agent_commit` recognise them.
"""

from __future__ import annotations

from moot.tools.base import FunctionTool, SideEffect, ToolContext, ToolResult, tool
from moot.workspace.agent_commits import ChangedFiles, changed_specs, commit_specs, with_trailer
from moot.workspace.git import GIT_ERRORS, GitError, GitRepo, workspace_repo
from moot.workspace.paths import Workspace

_DESCRIBED = "Git commit only the given paths (default: the files you changed this session)."
_DESCRIBED_NAMED_ONLY = "Git commit only the given paths."


def git_commit_tool(
    workspace: Workspace, changed_files: ChangedFiles | None = None
) -> FunctionTool:
    """The `git_commit` tool, for the repository `workspace` is in.

    Args:
        workspace: Only paths inside it are committed.
        changed_files: What the agent changed this session, committed when no paths are named;
            without it the model must name the paths.
    """

    @tool(
        name="git_commit",
        side_effect=SideEffect.WRITES_WORKSPACE,
        description=_DESCRIBED if changed_files is not None else _DESCRIBED_NAMED_ONLY,
    )
    def git_commit(message: str, ctx: ToolContext, paths: list[str] | None = None) -> ToolResult:
        try:
            with workspace_repo(workspace) as repo:
                return commit(repo, workspace, message, paths, changed_files, ctx.session_id)
        except GIT_ERRORS as exc:
            return ToolResult.error(str(exc))

    return git_commit


def commit(
    repo: GitRepo,
    workspace: Workspace,
    message: str,
    paths: list[str] | None,
    changed_files: ChangedFiles | None,
    session_id: str,
) -> ToolResult:
    """What `git_commit` answers; raises the `GIT_ERRORS` it meets."""
    if not message.strip():
        raise GitError("give a commit message")
    if paths is not None:
        if not paths:
            raise GitError("paths is empty: name at least one path, or leave it out")
        specs = sorted({repo.model_spec(workspace, path) for path in paths})
    elif changed_files is None:
        raise GitError("name the paths to commit")
    else:
        specs = changed_specs(repo, workspace, changed_files)
        if not specs:
            raise GitError("nothing to commit: you have changed no files in this session")
    made = commit_specs(repo, specs, with_trailer(message, session_id))
    files = [repo.shown(path) for path in made.files]
    on = f"on {made.branch}" if made.branch else "(detached HEAD)"
    listed = ", ".join(files[:50]) + (f" (+{len(files) - 50} more)" if len(files) > 50 else "")
    said = f"Committed {made.short} {on}: {made.subject} ({len(files)} files: {listed})"
    return ToolResult(
        f"{said}\nNote: {made.note}." if made.note else said,
        display={"sha": made.sha, "branch": made.branch, "files": files},
    )
