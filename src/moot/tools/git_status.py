"""The `git_status` tool: the branch, how far it is from its upstream, and what changed."""

from __future__ import annotations

from typing import Any

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.git import (
    GIT_ERRORS,
    IGNORE_SUBMODULES,
    GitRepo,
    StatusEntry,
    hides,
    parse_status,
    workspace_repo,
)
from moot.workspace.paths import Workspace

MAX_LISTED = 200
"""Paths listed per group; the rest are counted."""


def git_status_tool(workspace: Workspace) -> FunctionTool:
    """The `git_status` tool, for the repository `workspace` is in."""

    @tool(
        name="git_status",
        side_effect=SideEffect.READ_ONLY,
        description="Git branch and changed files: staged, unstaged, untracked.",
    )
    def git_status() -> ToolResult:
        try:
            with workspace_repo(workspace) as repo:
                return status(repo, workspace)
        except GIT_ERRORS as exc:
            return ToolResult.error(str(exc))

    return git_status


def status(repo: GitRepo, workspace: Workspace) -> ToolResult:
    """What `git_status` answers, for the part of the work tree the workspace covers; paths
    that `Read(...)` deny rules hide are left out."""
    output = repo.git(
        "status", "--porcelain=v2", "-z", "--branch", IGNORE_SUBMODULES, "--", repo.workspace_spec()
    )
    headers, entries = parse_status(output)
    if workspace.hidden is not None:
        entries = [e for e in entries if not hides(workspace, repo.shown(e.path))]
    groups = _groups(repo, entries)
    branch = _branch(headers)
    lines = [_branch_line(branch)]
    lines += [f"{name}: {_listed(paths)}" for name, paths in groups.items() if paths]
    if not any(groups.values()):
        lines.append("clean")
    display = {**branch, **groups}
    return ToolResult("\n".join(lines), display=display)


def _branch(headers: dict[str, str]) -> dict[str, Any]:
    ahead, _, behind = headers.get("branch.ab", "+0 -0").partition(" ")
    oid = headers.get("branch.oid", "")
    head = headers.get("branch.head")
    return {
        "branch": None if head == "(detached)" else head,
        "commit": None if oid == "(initial)" else oid,
        "upstream": headers.get("branch.upstream"),
        "ahead": int(ahead[1:] or 0),
        "behind": int(behind[1:] or 0),
    }


def _branch_line(info: dict[str, Any]) -> str:
    if info["branch"] is None:
        line = f"HEAD detached at {(info['commit'] or '')[:7]}"
    else:
        line = f"on {info['branch']}" + ("" if info["commit"] else " (no commits yet)")
    upstream = info["upstream"]
    if upstream:
        pairs = (("ahead", info["ahead"]), ("behind", info["behind"]))
        counts = ", ".join(f"{word} {count}" for word, count in pairs if count)
        line += f", {counts} of {upstream}" if counts else f", up to date with {upstream}"
    return line


def _groups(repo: GitRepo, entries: list[StatusEntry]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {"staged": [], "unstaged": [], "untracked": [], "conflicts": []}
    for entry in entries:
        path = repo.shown(entry.path)
        if entry.kind == "untracked":
            groups["untracked"].append(path)
        elif entry.kind == "conflict":
            groups["conflicts"].append(path)
        else:
            staged, unstaged = entry.xy[0], entry.xy[1]
            if staged != ".":
                was = f"{repo.shown(entry.orig)} -> " if entry.orig else ""
                groups["staged"].append(f"{staged} {was}{path}")
            if unstaged != ".":
                groups["unstaged"].append(f"{unstaged} {path}")
    return groups


def _listed(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_LISTED])
    more = len(paths) - MAX_LISTED
    return f"{shown} (+{more} more)" if more > 0 else shown
