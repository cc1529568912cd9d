"""The tools only the person runs (`RunTool`), never offered to a model.

They are the session commands that are not model tools: take back moot's last commit, the
doctor's report, the sandbox's status, a file's outline, the background shells, and adding or
removing a permission rule. Each is a small `Tool` whose arguments are checked with msgspec
(no pydantic model to build) and whose work runs in a thread (git, the file system); their
modules load at the first call, so a session that never runs one pays nothing.
"""

from __future__ import annotations

import asyncio
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


def person_tools(
    workspace: Workspace,
    shell: SandboxChoice,
    sandbox_policy: SandboxPolicy,
    sandbox_source: Callable[[], str],
    shells: BackgroundShells,
    rules: Callable[[], SessionRules] | None,
    environ: Mapping[str, str],
) -> dict[str, PersonTool]:
    """The person's tools of one session, by name."""

    def undo(_: _NoArguments) -> ToolResult:
        from moot.workspace.agent_commits import UndoRefused, undo_last_agent_commit
        from moot.workspace.git import GIT_ERRORS

        try:
            undone = undo_last_agent_commit(workspace.root)
        except UndoRefused as exc:
            return ToolResult.error(str(exc))
        except GIT_ERRORS as exc:
            return ToolResult.error(f"git: {exc}")
        files = ", ".join(undone.files)
        return ToolResult(
            f"took back {undone.sha[:10]} {undone.subject} ({files})",
            display={"sha": undone.sha, "files": list(undone.files)},
        )

    def doctor(_: _NoArguments) -> ToolResult:
        from moot.providers.report import report_lines

        return ToolResult("\n".join(report_lines(environ)))

    def sandbox(_: _NoArguments) -> ToolResult:
        from moot.sandbox.status import status_lines

        lines = [f"setting: {sandbox_source()}", *status_lines(shell, sandbox_policy)]
        return ToolResult("\n".join(lines), display={"backend": shell.backend})

    def outline(args: _Outline) -> ToolResult:
        from moot.repomap import index_workspace
        from moot.workspace.no_follow import PathRefused

        try:
            rel = workspace.relative(workspace.resolve_read(args.path))
        except PathRefused as exc:
            return ToolResult.error(str(exc))
        index = index_workspace(
            workspace.root, hidden=workspace.hidden, inodes=workspace.inode_check()
        )
        tags = index.files.get(rel)
        if tags is None:
            return ToolResult.error(
                f"{args.path}: not a source file the repo map reads "
                "(Python, JavaScript, TypeScript, Go, Rust), or hidden, or missing"
            )
        lines = [f"{d.line:>5}  {d.signature.rstrip()}" for d in tags.definitions]
        return ToolResult("\n".join(lines) or f"{rel} defines nothing", display={"path": rel})

    def jobs(_: _NoArguments) -> ToolResult:
        rows = []
        for shell_id in shells.ids():
            code = shells.get(shell_id).exit_code
            state = "running" if code is None else f"exit {code}"
            rows.append(f"{shell_id}  {state:<10}  {shells.command(shell_id)}")
        return ToolResult("\n".join(rows) or "no background shells", display={"ids": shells.ids()})

    def permission_rule(args: _Rule) -> ToolResult:
        if rules is None:
            return ToolResult.error("this session has no permission rules to change")
        try:
            return ToolResult(rules().change(args.action, args.kind, args.rule))
        except ValueError as exc:
            return ToolResult.error(str(exc))

    def trust_settings(args: _Trust) -> ToolResult:
        from moot.client.trust import held_files
        from moot.settings import SettingsError
        from moot.settings_review import SettingsApprovals

        try:
            held = held_files(workspace.root, environ)
        except SettingsError as exc:
            return ToolResult.error(str(exc))
        if args.action == "approve":
            # Only what waits for approval here: a file shown, never another path.
            waiting = {one.file for one in held}
            if stray := [file for file, _ in args.files if file not in waiting]:
                return ToolResult.error(f"nothing of this workspace's waits in {stray[0]}")
            approvals = SettingsApprovals(environ)
            for path, digest in args.files:
                approvals.approve(workspace.root, (path, digest))
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

    made = [
        PersonTool(
            "undo",
            "Take back moot's last commit (an auto-commit), if nothing can be lost",
            _NoArguments,
            undo,
            SideEffect.WRITES_WORKSPACE,
        ),
        PersonTool("doctor", "Providers, keys and endpoints (`moot doctor`)", _NoArguments, doctor),
        PersonTool(
            "sandbox", "Where shell commands run, and what is hidden", _NoArguments, sandbox
        ),
        PersonTool("outline", "The definitions of a source file, by line", _Outline, outline),
        PersonTool("jobs", "The session's background shells", _NoArguments, jobs),
        PersonTool(
            "trust_settings",
            "Show, or approve, what the project's settings files turn on",
            _Trust,
            trust_settings,
            SideEffect.WRITES_WORKSPACE,
        ),
        PersonTool(
            "permission_rule",
            "Add or remove a permission rule in .moot/settings.local.json",
            _Rule,
            permission_rule,
            SideEffect.WRITES_WORKSPACE,
        ),
    ]
    return {tool.name: tool for tool in made}
