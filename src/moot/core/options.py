"""`RuntimeOptions`: what a `Runtime` is made with, besides its agents and its store.

    Runtime(agents, store=store, options=RuntimeOptions(tools=[...], limits=Limits(...)))

The settings every run reads (the gate, the hooks, the turn end and how the agents work
together) are `RunSettings` (`core/run.py`), which `RuntimeOptions` extends, so a run reads the
runtime's options as they are. Each field says its default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.run import RunSettings
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import AttachedFile
from moot.protocol.modes import ModeName
from moot.providers.base import Provider
from moot.providers.registry import resolve_model
from moot.tools.base import Tool

Refusal = Callable[[str], "str | None"]
"""Given a path, why the person may not read it (a deny rule), or None."""


class AttachFiles(Protocol):
    """Reads the files a prompt names as `@path` (the session's workspace, its bounds and
    caps); `refused` says which a deny rule keeps from being read."""

    def __call__(self, prompt: str, refused: Refusal) -> Sequence[AttachedFile]: ...


class RuntimeOptions(RunSettings, frozen=True, kw_only=True):
    """How a session's runtime works: its tools, limits and policies, and (from
    `RunSettings`) its gate, hooks, turn end and peers. Every field has a default, so
    `RuntimeOptions()` is a runtime with no tools, the default limits, everything allowed."""

    tools: Sequence[Tool] = ()
    """Tools every agent has; none by default."""
    limits: Limits | None = None
    """Bounds for each new run; None (the default): `Limits()`."""
    approval: ApprovalPolicy | None = None
    """Settles tool approvals; None (the default): `AllowAll`, until permission rules exist."""
    mode: ModeName | None = None
    """The permission mode of a session that never switched (`mode_changed`); a resumed
    session keeps its own. None (the default): the approval policy's `default_mode`
    (`HasModes`), or no modes at all (`SetMode` is refused)."""
    person_tools: Mapping[str, Tool] | None = None
    """Tools only the person runs (`RunTool`), besides `tools`; never offered to a model.
    None (the default): none."""
    attach: AttachFiles | None = None
    """Reads the files a turn's prompt names as `@path` into its `turn_started`; None (the
    default) attaches nothing."""
    resolve: Callable[[str], Provider] = resolve_model
    """Makes an agent's model name (`provider/model`) a provider; by default `resolve_model`
    with the process environment (keys, base URLs)."""
    title: str = ""
    """The title of a session the runtime creates (no `session_id`); none by default."""
    workspace: str = ""
    """The workspace a session the runtime creates belongs to; none by default."""
    model_titles: bool = False
    """After the session's first turn, ask its first agent's model once for a title
    (`moot.core.titling`), recorded as `session_renamed`; off (the default): no model call
    names a session."""


def check(agents: Sequence[Agent], options: RuntimeOptions) -> None:
    """Refuse a runtime that could not work, before it touches the store.

    Raises:
        ValueError: No agents, two of one name, `finish` disabled, an unknown `extra_scope`,
            or a person tool named like a tool of the model's.
    """
    if not agents:
        raise ValueError("a runtime needs at least one agent")
    if "finish" in options.disabled_tools:
        raise ValueError("finish cannot be disabled; give a tool named finish to replace it")
    if options.extra_scope not in ("entry", "all"):
        raise ValueError(f"extra_scope must be 'entry' or 'all', not {options.extra_scope!r}")
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names must be unique: {names}")
    tools = {t.name for t in options.tools}
    if both := set(options.person_tools or {}) & tools:
        raise ValueError(f"person tools named like the model's tools: {sorted(both)}")
