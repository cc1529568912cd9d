"""A session's tools: the built-in ones every front end gives it, less those a bare deny rule
takes away (`model_tools`), and the ones only the person runs (`person_tools_of`: named at once,
built at the first look-up, so a session that never runs one pays nothing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from moot.core.options import AttachFiles, Refusal
from moot.permissions.rules import RuleSet, tool_hidden
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import AttachedFile
from moot.sandbox.background import BackgroundShells
from moot.sandbox.select import SandboxChoice
from moot.store.base import Store
from moot.tools.base import Tool
from moot.tools.builtin import builtin_tools
from moot.tools.exit_plan_mode import exit_plan_mode_tool
from moot.tools.redirects import PolicyRedirects
from moot.workspace.paths import Workspace

if TYPE_CHECKING:
    from moot.client.session_rules import SessionRules
    from moot.lsp.session import LanguageServers
    from moot.sandbox.base import Sandbox, SandboxPolicy
    from moot.settings.schema import LanguageServerSetting

PERSON_TOOLS = ("undo", "doctor", "sandbox", "outline", "jobs", "permission_rule", "trust_settings")
"""The tools only the person runs (`moot.client.person_tools`), named here so that listing them
loads nothing."""


def model_tools(
    store: Store,
    session_id: str,
    workspace: Workspace,
    shell: SandboxChoice,
    shells: BackgroundShells,
    *,
    environ: Mapping[str, str],
    policy: ApprovalPolicy,
    rules: RuleSet,
    verify: Mapping[str, Sequence[str]] | None = None,
    servers: ServersOnDemand | None = None,
) -> list[Tool]:
    """The built-in tools and plan mode's `exit_plan_mode`, less those `rules` hide; a web
    redirect is settled by `policy` as its first URL was; `lint` and `test` run the `verify`
    settings' commands when they name some; edits report what `servers` (the session's
    language servers) find."""
    tools = [
        *builtin_tools(
            store,
            session_id,
            workspace,
            shell,
            shells,
            env=environ,
            redirects=PolicyRedirects(policy),
            verify=verify,
            servers=servers,
        ),
        exit_plan_mode_tool(),
    ]
    return [t for t in tools if not tool_hidden(t.name, rules)]


def person_tools_of(
    workspace: Workspace,
    shell: SandboxChoice,
    shell_policy: SandboxPolicy,
    sandbox_source: Callable[[], str],
    shells: BackgroundShells,
    rules: Callable[[], SessionRules],
    environ: Mapping[str, str],
) -> LazyTools:
    """The person's tools (`PERSON_TOOLS`) over the session's parts, built at the first
    look-up of one."""

    def build() -> Mapping[str, Tool]:
        from moot.client.person_tools import person_tools  # the first `RunTool` of one of them

        tools: Mapping[str, Tool] = person_tools(  # type: ignore[assignment]  # `parameters` is a property there
            workspace, shell, shell_policy, sandbox_source, shells, rules, environ
        )
        return tools

    return LazyTools(PERSON_TOOLS, build)


class LazyTools:
    """Tools known by name, built all at once when the first is looked up (a read-only
    mapping; not a `Mapping` subclass, whose ABC machinery costs start-up time)."""

    def __init__(self, names: Sequence[str], build: Callable[[], Mapping[str, Tool]]) -> None:
        self._names, self._build = tuple(names), build
        self._tools: Mapping[str, Tool] | None = None

    def __getitem__(self, name: str) -> Tool:
        if name not in self._names:
            raise KeyError(name)
        if self._tools is None:
            self._tools = self._build()
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def get(self, name: str, default: Tool | None = None) -> Tool | None:
        return self[name] if name in self._names else default


class ServersOnDemand:
    """The session's language servers (`moot.lsp.session.LanguageServers`), made at the first
    call: a session that edits no file imports none of `moot.lsp`.

    Args:
        root: The workspace.
        settings: The `lsp` setting.
        environ: The session's environment.
        sandbox: Where servers run (`moot.lsp.session.spawner`).
    """

    def __init__(
        self,
        root: Path,
        settings: Mapping[str, LanguageServerSetting],
        environ: Mapping[str, str],
        sandbox: Sandbox | None,
    ) -> None:
        self._given = (root, settings, environ, sandbox)
        self._closed = False
        self.made: LanguageServers | None = None

    def __call__(self) -> LanguageServers:
        if self.made is None:
            if self._closed:
                raise RuntimeError("the session has ended; no more language servers")
            from moot.lsp.session import LanguageServers

            self.made = LanguageServers(*self._given)
        return self.made

    async def close(self) -> None:
        """Stop the servers that were started; none can start after."""
        self._closed = True
        if self.made is not None:
            await self.made.close()


def prompt_attach(workspace: Workspace) -> AttachFiles:
    """Reads the `@path` files of a prompt (`moot.client.prompt_files`, loaded at the first `@`)."""

    def attach(prompt: str, refused: Refusal) -> Sequence[AttachedFile]:
        from moot.client.prompt_files import PromptFiles

        return PromptFiles(workspace)(prompt, refused)

    return attach
