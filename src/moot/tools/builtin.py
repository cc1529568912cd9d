"""The built-in tools of one session, built around its workspace (no globals).

Every front end (headless, the TUI, ACP) asks here for the same set, so an agent has the same
tools wherever the person talks to it.

The tools are `LazyTool`s: the model gets each one's spec from `builtin_specs.json` (generated
from the tools; a test fails when it is stale), and a tool's module is imported and its
argument model built at its first call, so the first model request waits for neither.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from moot.tools.base import RedirectCheck, SideEffect, Tool
from moot.tools.builtin_specs import load_specs
from moot.tools.lazy import LazyCommandTool, LazyTool
from moot.workspace.paths import Workspace
from moot.workspace.snapshots import DEFAULT_MAX_BYTES, FileSnapshots

if TYPE_CHECKING:
    from moot.lsp.session import LanguageServers
    from moot.sandbox.background import BackgroundShells
    from moot.sandbox.base import Sandbox
    from moot.sandbox.select import SandboxChoice
    from moot.store.base import Store

Builder = Callable[[ModuleType], Tool]
"""Makes one tool from its module (`moot.tools.<name>`)."""
COMMAND_TOOLS = frozenset({"lint", "test"})
"""Tools decided as the `bash` command they run (`moot.tools.verify_tool`)."""


def outputs_dir(session_id: str) -> Path:
    """Where a session's long command outputs are saved: the user data dir, not the project."""
    from moot.paths import data_dir

    return data_dir() / "outputs" / session_id


def session_workspace(
    store: Store,
    session_id: str,
    root: Path,
    *,
    snapshot_max_bytes: int | None = None,
    added_roots: Sequence[Path] = (),
) -> Workspace:
    """The workspace of a session.

    Files a tool changes are snapshotted before their first change in each run, so a rewind
    can restore them, up to `snapshot_max_bytes` (the `snapshotMaxBytes` setting; 10 MiB when
    None); the session's saved command outputs may be read (never written), the
    `added_roots` (`--add-dir`) read and written.
    """
    cap = DEFAULT_MAX_BYTES if snapshot_max_bytes is None else snapshot_max_bytes
    return Workspace(
        root,
        snapshots=FileSnapshots(store, session_id, root, max_bytes=cap),
        read_roots=(outputs_dir(session_id),),
        added_roots=added_roots,
    )


def builtin_tools(
    store: Store,
    session_id: str,
    workspace: Workspace,
    shell: SandboxChoice,
    shells: BackgroundShells,
    *,
    allow_private_web: bool = False,
    env: Mapping[str, str] | None = None,
    redirects: RedirectCheck | None = None,
    verify: Mapping[str, Sequence[str]] | None = None,
    servers: Callable[[], LanguageServers] | None = None,
) -> list[Tool]:
    """Files, search, git, the shell, lint and tests, the repo map, the task list and web
    fetch of a session.

    Shell commands run in `shell.sandbox`; with none, `bash` refuses and says how to enable
    one. The task list continues from the session's log. `web_fetch` puts a redirect to
    another host to `redirects` (the session's approval policy) as its first URL was.
    `verify` holds the `verify.lint` and `verify.test` command lines (approved settings).
    """
    specs = load_specs()
    variant = bash_variant(shell.sandbox)
    tools: list[Tool] = []
    for name, build in tool_builders(
        store,
        session_id,
        workspace,
        shell,
        shells,
        allow_private_web=allow_private_web,
        env=env,
        redirects=redirects,
        known={name: spec["parameters"] for name, spec in specs.items()},
        verify=verify,
        servers=servers,
    ).items():
        spec = specs[name]
        description = spec["description"]
        if isinstance(description, dict):
            description = description[variant]
        side_effect = SideEffect(spec["side_effect"])
        lazy = LazyCommandTool if name in COMMAND_TOOLS else LazyTool
        tools.append(lazy(name, description, spec["parameters"], side_effect, build))
    return tools


def bash_variant(sandbox: Sandbox | None) -> str:
    """Which of `bash`'s descriptions applies: where its commands run (see `tools/bash.py`)."""
    if sandbox is None:
        return "none"
    return "host" if sandbox.name == "host" else "sandboxed"


def tool_builders(
    store: Store,
    session_id: str,
    workspace: Workspace,
    shell: SandboxChoice,
    shells: BackgroundShells,
    *,
    allow_private_web: bool = False,
    env: Mapping[str, str] | None = None,
    redirects: RedirectCheck | None = None,
    known: Mapping[str, dict[str, Any]] | None = None,
    verify: Mapping[str, Sequence[str]] | None = None,
    servers: Callable[[], LanguageServers] | None = None,
) -> dict[str, Callable[[], Tool]]:
    """How to build each built-in tool, by name, in the order the model sees them.

    Each builder imports the tool's module (`moot.tools.<name>`) when called. Shell commands
    start from `env` (`os.environ` when None). `known` holds the tools' schemas as generated
    (`builtin_specs.json`): the file tools given theirs run a plain call without pydantic
    (`moot.tools.quick_args`); without it (generating the specs) every tool builds its own.
    With `servers` (gives the session's language servers, made at its first call), `write`,
    `edit` and `multi_edit` end their results with the errors a change brought
    (`moot.tools.diagnosed`).
    """
    schemas = known or {}
    unavailable = shell.describe()
    configured = verify or {}

    def changed() -> set[Path]:
        return set(workspace.changed)

    def todo(m: ModuleType) -> Tool:
        # The task list continues from the log. Read at the first todo call, it holds what it
        # held at start-up: only this tool records todo results, and it has not run yet.
        todos = m.TodoList.from_events(store.events(session_id, kinds=("tool_finished",)))
        tool: Tool = m.todo_tool(todos)
        return tool

    def diagnosed(tool: Tool) -> Tool:
        if servers is None:
            return tool
        from moot.tools.diagnosed import Diagnosed

        return Diagnosed(tool, workspace, servers())

    made: dict[str, Builder] = {
        "read": lambda m: m.read_tool(workspace, schemas.get("read")),
        "glob": lambda m: m.glob_tool(workspace),
        "grep": lambda m: m.grep_tool(workspace),
        "ls": lambda m: m.ls_tool(workspace),
        "write": lambda m: diagnosed(m.write_tool(workspace, schemas.get("write"))),
        "edit": lambda m: diagnosed(m.edit_tool(workspace, schemas.get("edit"))),
        "multi_edit": lambda m: diagnosed(m.multi_edit_tool(workspace)),
        "diagnostics": lambda m: m.diagnostics_tool(workspace, servers() if servers else None),
        "git_status": lambda m: m.git_status_tool(workspace),
        "git_diff": lambda m: m.git_diff_tool(workspace),
        "git_log": lambda m: m.git_log_tool(workspace),
        "git_show": lambda m: m.git_show_tool(workspace),
        "git_commit": lambda m: m.git_commit_tool(workspace, changed),
        "git_branch": lambda m: m.git_branch_tool(workspace),
        "shell_output": lambda m: m.shell_output_tool(shells),
        "bash": lambda m: m.bash_tool(
            shell.sandbox, workspace, shells, unavailable=unavailable, env=env
        ),
        "kill_shell": lambda m: m.kill_shell_tool(shells),
        "lint": lambda m: m.lint_tool(
            shell.sandbox, workspace, configured=configured.get("lint", ()), env=env
        ),
        "test": lambda m: m.run_tests_tool(
            shell.sandbox, workspace, configured=configured.get("test", ()), env=env
        ),
        "repo_map": lambda m: m.repo_map_tool(workspace),
        "symbols": lambda m: m.symbols_tool(workspace),
        "todo": todo,
        "web_fetch": lambda m: m.web_fetch_tool(
            allow_private=allow_private_web, redirects=redirects
        ),
    }
    return {name: _builder(name, make) for name, make in made.items()}


def _builder(name: str, make: Builder) -> Callable[[], Tool]:
    def build() -> Tool:
        # Imported at the tool's first call, not at start-up: together the tools' modules and
        # argument models cost tens of milliseconds before the first model request.
        return make(importlib.import_module(f"moot.tools.{name}"))

    return build
