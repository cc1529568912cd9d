"""The `git_branch` tool: list branches, or switch to one (creating it first if asked)."""

from __future__ import annotations

import os

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.git import GIT_ERRORS, NO_DRIVERS, GitError, GitRepo, workspace_repo
from moot.workspace.paths import Workspace

MAX_LISTED = 200


def git_branch_tool(workspace: Workspace) -> FunctionTool:
    """The `git_branch` tool, for the repository `workspace` is in."""

    @tool(
        name="git_branch",
        side_effect=SideEffect.WRITES_WORKSPACE,
        description="List git branches, or switch to `name` (create=true makes it first).",
    )
    def git_branch(name: str | None = None, create: bool = False) -> ToolResult:
        try:
            with workspace_repo(workspace) as repo:
                if name is None:
                    if create:
                        raise GitError("give the name of the branch to create")
                    return list_branches(repo)
                return switch(repo, name, create=create)
        except GIT_ERRORS as exc:
            return ToolResult.error(str(exc))

    return git_branch


def list_branches(repo: GitRepo) -> ToolResult:
    """The local branches, the current one marked with `*`."""
    current = repo.branch()
    names = sorted(head.name for head in repo.repo.heads)
    lines = [f"{'*' if n == current else ' '} {n}" for n in names[:MAX_LISTED]]
    if len(names) > MAX_LISTED:
        lines.append(f"  (+{len(names) - MAX_LISTED} more)")
    if current is None:
        lines.insert(0, f"* (HEAD detached at {repo.repo.head.commit.hexsha[:7]})")
    elif current not in names:
        lines.insert(0, f"* {current} (no commits yet)")
    return ToolResult("\n".join(lines), display={"current": current, "branches": names})


def refuse_unsafe_checkout(repo: GitRepo, target: str) -> None:
    """Refuse a switch to `target` that would write what decides what runs on the host (moot's
    git writes on the host, where the sandbox's read-only paths do not hold), or a file that
    goes through a filter (moot's git runs none).

    Raises:
        GitError: The switch would write such a file.
    """
    if repo.repo.head.is_valid():
        listing = ["diff", "--name-only", "-z", "--no-renames", *NO_DRIVERS, "HEAD", target]
    else:
        listing = ["ls-tree", "-r", "--name-only", "-z", target]
    paths = [path for path in repo.git(*listing, "--").split("\0") if path]
    guarded = repo.host.guarded(repo.call.view, (str(repo.top / path) for path in paths))
    if guarded:
        shown = ", ".join(os.path.relpath(path, repo.top) for path in guarded[:5])
        raise GitError(
            f"switching would change {shown}, which moot protects (git hooks, git config or "
            "moot's settings decide what runs on the host); switch branches yourself"
        )
    repo.refuse_filtered(paths, "switch")


def switch(repo: GitRepo, name: str, *, create: bool) -> ToolResult:
    """Switch to branch `name`, making it at HEAD first when `create`."""
    if name.startswith("-") or not name.strip():
        raise GitError(f"not a valid branch name: {name!r}")
    try:
        repo.git("check-ref-format", "--branch", name)
    except GitError:
        raise GitError(f"not a valid branch name: {name!r}") from None
    # `switch`, not `checkout`: `git checkout x` restores a *file* named x when there is no
    # such branch, throwing away its changes. --no-guess: never invent one from a remote.
    if create:
        repo.git("switch", "--quiet", "-c", name, read_only=False)
        return ToolResult(f"Created and switched to branch {name}.")
    if name not in {head.name for head in repo.repo.heads}:
        raise GitError(f"no branch named {name!r}; pass create=true to make it")
    refuse_unsafe_checkout(repo, f"refs/heads/{name}")
    repo.git("switch", "--quiet", "--no-guess", name, read_only=False)
    return ToolResult(f"Switched to branch {name}.")
