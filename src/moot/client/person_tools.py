"""The tools only the person runs (`RunTool`), never offered to a model.

They are the session commands that are not model tools: take back moot's last commit, the
doctor's report, the sandbox's status, a file's outline, the background shells, and adding or
removing a permission rule. Each is a small `Tool` whose arguments are checked with msgspec
(no pydantic model to build) and whose work runs in a thread (git, the file system); their
modules load at the first call, so a session that never runs one pays nothing.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from moot.tools.base import SideEffect, ToolContext, ToolResult

if TYPE_CHECKING:
    from moot.client.session_rules import SessionRules
    from moot.sandbox.background import BackgroundShells
    from moot.sandbox.base import SandboxPolicy
    from moot.sandbox.select import SandboxChoice
    from moot.workspace.paths import Workspace


class _NoArguments(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _Outline(msgspec.Struct, forbid_unknown_fields=True):
    path: str


class _Rule(msgspec.Struct, forbid_unknown_fields=True):
    action: Literal["add", "remove"]
    kind: Literal["allow", "ask", "deny"]
    rule: str


class _Trust(msgspec.Struct, forbid_unknown_fields=True):
    action: Literal["show", "approve"]
    files: list[tuple[str, str]] = msgspec.field(default_factory=list)
    """To approve: (settings file, sha256 of the content shown)."""


class PersonTool:
    """A `Tool` for the person: arguments checked against a msgspec Struct, work in a thread."""

    def __init__(
        self,
        name: str,
        description: str,
        arguments: type[msgspec.Struct],
        work: Callable[[Any], ToolResult],
        side_effect: SideEffect = SideEffect.READ_ONLY,
    ) -> None:
        self.name = name
        self.description = description
        self.side_effect = side_effect
        self._arguments = arguments
        self._work = work

    @property
    def parameters(self) -> dict[str, Any]:
        """The arguments' JSON schema (made when asked: no model ever reads it)."""
        return msgspec.json.schema(self._arguments)

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            checked = msgspec.convert(arguments, self._arguments)
        except msgspec.ValidationError as exc:
            return ToolResult.error(f"Invalid arguments for {self.name}: {exc}")
        try:
            return await asyncio.to_thread(self._work, checked)
        except Exception as exc:
            return ToolResult.error(f"{self.name} failed: {type(exc).__name__}: {exc}")


class SessionParts(msgspec.Struct, frozen=True):
    """What the person's tools of one session work on."""

    workspace: Workspace
    shell: SandboxChoice
    sandbox_policy: SandboxPolicy
    sandbox_source: Callable[[], str]
    """Where the sandbox setting came from (`MOOT_SANDBOX`, a settings file, auto)."""
    shells: BackgroundShells
    rules: Callable[[], SessionRules] | None
    """The session's rules, made at the first change (None: it has none to change)."""
    environ: Mapping[str, str]


def person_tools(
    workspace: Workspace,
    shell: SandboxChoice,
    sandbox_policy: SandboxPolicy,
    sandbox_source: Callable[[], str],
    shells: BackgroundShells,
    rules: Callable[[], SessionRules] | None,
    environ: Mapping[str, str],
) -> dict[str, PersonTool]:
    """The person's tools of one session, by name (`TOOLS`, bound to the session's parts)."""
    parts = SessionParts(workspace, shell, sandbox_policy, sandbox_source, shells, rules, environ)
    return {
        name: PersonTool(name, description, arguments, functools.partial(work, parts), effect)
        for name, description, arguments, work, effect in TOOLS
    }


def _undo(parts: SessionParts, _: _NoArguments) -> ToolResult:
    from moot.workspace.agent_commits import UndoRefused, undo_last_agent_commit
    from moot.workspace.git import GIT_ERRORS

    try:
        undone = undo_last_agent_commit(parts.workspace.root)
    except UndoRefused as exc:
        return ToolResult.error(str(exc))
    except GIT_ERRORS as exc:
        return ToolResult.error(f"git: {exc}")
    files = ", ".join(undone.files)
    return ToolResult(
        f"took back {undone.sha[:10]} {undone.subject} ({files})",
        display={"sha": undone.sha, "files": list(undone.files)},
    )


def _doctor(parts: SessionParts, _: _NoArguments) -> ToolResult:
    from moot.providers.report import report_lines

    return ToolResult("\n".join(report_lines(parts.environ)))


def _sandbox(parts: SessionParts, _: _NoArguments) -> ToolResult:
    from moot.sandbox.status import status_lines

    lines = [
        f"setting: {parts.sandbox_source()}",
        *status_lines(parts.shell, parts.sandbox_policy),
    ]
    return ToolResult("\n".join(lines), display={"backend": parts.shell.backend})


def _outline(parts: SessionParts, args: _Outline) -> ToolResult:
    from moot.repomap import index_workspace
    from moot.workspace.no_follow import PathRefused

    workspace = parts.workspace
    try:
        rel = workspace.relative(workspace.resolve_read(args.path))
    except PathRefused as exc:
        return ToolResult.error(str(exc))
    index = index_workspace(workspace.root, hidden=workspace.hidden, inodes=workspace.inode_check())
    tags = index.files.get(rel)
    if tags is None:
        return ToolResult.error(
            f"{args.path}: not a source file the repo map reads "
            "(Python, JavaScript, TypeScript, Go, Rust), or hidden, or missing"
        )
    lines = [f"{d.line:>5}  {d.signature.rstrip()}" for d in tags.definitions]
    return ToolResult("\n".join(lines) or f"{rel} defines nothing", display={"path": rel})


def _jobs(parts: SessionParts, _: _NoArguments) -> ToolResult:
    shells = parts.shells
    rows = []
    for shell_id in shells.ids():
        code = shells.get(shell_id).exit_code
        state = "running" if code is None else f"exit {code}"
        rows.append(f"{shell_id}  {state:<10}  {shells.command(shell_id)}")
    return ToolResult("\n".join(rows) or "no background shells", display={"ids": shells.ids()})


def _permission_rule(parts: SessionParts, args: _Rule) -> ToolResult:
    if parts.rules is None:
        return ToolResult.error("this session has no permission rules to change")
    try:
        return ToolResult(parts.rules().change(args.action, args.kind, args.rule))
    except ValueError as exc:
        return ToolResult.error(str(exc))


def _trust_settings(parts: SessionParts, args: _Trust) -> ToolResult:
    from moot.client.trust import held_files
    from moot.settings import SettingsError
    from moot.settings.review import SettingsApprovals

    root = parts.workspace.root
    try:
        held = held_files(root, parts.environ)
    except SettingsError as exc:
        return ToolResult.error(str(exc))
    if args.action == "approve":
        # Only what waits for approval here: a file shown, never another path.
        waiting = {one.file for one in held}
        if stray := [file for file, _ in args.files if file not in waiting]:
            return ToolResult.error(f"nothing of this workspace's waits in {stray[0]}")
        approvals = SettingsApprovals(parts.environ)
        for path, digest in args.files:
            approvals.approve(root, (path, digest))
        return ToolResult(
            "approved: sessions opened from now on use it; this one goes on without it "
            "(quit and `moot -c` to go on with it)"
        )
    if not held:
        return ToolResult("nothing waits for approval: the settings files here are in force")
    lines: list[str] = []
    for one in held:
        lines += [f"{one.file} asks to turn on:", *(f"  - {g}" for g in one.grants)]
    rows = [[one.file, one.digest, list(one.grants)] for one in held]
    return ToolResult("\n".join(lines), display={"held": rows})


Work = Callable[[SessionParts, Any], ToolResult]

TOOLS: tuple[tuple[str, str, type[msgspec.Struct], Work, SideEffect], ...] = (
    (
        "undo",
        "Take back moot's last commit (an auto-commit), if nothing can be lost",
        _NoArguments,
        _undo,
        SideEffect.WRITES_WORKSPACE,
    ),
    (
        "doctor",
        "Providers, keys and endpoints (`moot doctor`)",
        _NoArguments,
        _doctor,
        SideEffect.READ_ONLY,
    ),
    (
        "sandbox",
        "Where shell commands run, and what is hidden",
        _NoArguments,
        _sandbox,
        SideEffect.READ_ONLY,
    ),
    (
        "outline",
        "The definitions of a source file, by line",
        _Outline,
        _outline,
        SideEffect.READ_ONLY,
    ),
    ("jobs", "The session's background shells", _NoArguments, _jobs, SideEffect.READ_ONLY),
    (
        "trust_settings",
        "Show, or approve, what the project's settings files turn on",
        _Trust,
        _trust_settings,
        SideEffect.WRITES_WORKSPACE,
    ),
    (
        "permission_rule",
        "Add or remove a permission rule in .moot/settings.local.json",
        _Rule,
        _permission_rule,
        SideEffect.WRITES_WORKSPACE,
    ),
)
"""The person's tools: name, description, arguments, work (given the session's parts) and
side effect."""
