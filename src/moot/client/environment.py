"""What a session works with from its settings, besides its rules: its environment variables,
its hooks, and which sandbox shell commands run in, touching what.

`moot sandbox`, `moot doctor` and the model list read these as a session does, so each is one
function here (`client/assemble.py::open_session` uses them all).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from moot.client.rules import masks_for
from moot.permissions.rules import RuleSet
from moot.sandbox.base import DEFAULT_PROTECTED, SandboxPolicy
from moot.sandbox.select import SETTING_VARIABLE
from moot.settings import Settings, sandbox_backend

if TYPE_CHECKING:
    from moot.hooks import HookConfig, Hooks
    from moot.protocol.hook_callbacks import HookCallbacks
    from moot.workspace.absent import AbsentPaths


def session_environ(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a session works with: the settings' `env` under the process's own, so
    a variable set in the shell wins over one in a settings file (an empty one does not: moot
    reads empty as unset). Model keys and base URLs are read from it, and shell commands get
    what of it the sandbox passes (`moot.sandbox.env.scrub_env`: named variables, no secret).
    """
    merged = dict(os.environ if environ is None else environ)
    for name, value in settings.env.items():
        if not merged.get(name):
            merged[name] = value
    return merged


def hook_config(settings: Settings, cwd: Path) -> HookConfig | None:
    """The settings' hooks, checked; None when none are set.

    Raises:
        HookConfigError: A settings file's `hooks` do not fit (a `SettingsError`).
    """
    if not settings.hooks:
        return None
    from moot.hooks import hooks_from_settings  # lazy: no hooks set, moot.hooks is never imported

    return hooks_from_settings(settings.hooks, cwd)


def hook_runner(
    config: HookConfig | None,
    root: Path,
    *,
    can_ask: bool,
    callbacks: HookCallbacks | None = None,
) -> Hooks | None:
    """The session's hook runner (`can_ask`: someone answers a hook's `ask`; `callbacks`: the
    front end's own hooks); None (no cost, no hook events) when no command is set and the front
    end brings no callbacks."""
    if not config and callbacks is None:
        return None
    from moot.hooks import HookConfig as Config
    from moot.hooks import Hooks  # lazy, as in hook_config

    return Hooks(config or Config(events={}), root, can_ask=can_ask, callbacks=callbacks)


def hook_scripts(hooks: HookConfig | None, root: Path) -> tuple[str, ...]:
    """The workspace files hook commands name: hooks run on the host, so these are protected
    like `.moot/` (see `moot.hooks.scripts`)."""
    return hooks.scripts(root) if hooks else ()


def sandbox_setting(settings: Settings, environ: Mapping[str, str] | None = None) -> str:
    """Which sandbox to use: `MOOT_SANDBOX`, else the settings' `sandbox`, else auto."""
    env = os.environ if environ is None else environ
    return env.get(SETTING_VARIABLE) or sandbox_backend(settings) or "auto"


def sandbox_source(settings: Settings, environ: Mapping[str, str]) -> Callable[[], str]:
    """Says where the sandbox setting comes from (`moot.sandbox.status.setting_source`),
    worked out when asked (`moot sandbox`, `/sandbox`)."""
    setting = sandbox_setting(settings, environ)

    def source() -> str:
        from moot.sandbox.status import setting_source

        return setting_source(setting, bool(sandbox_backend(settings)), environ)

    return source


def sandbox_policy(
    root: Path,
    rules: RuleSet,
    scripts: Sequence[str] = (),
    *,
    output_dir: Path | None = None,
    absent: AbsentPaths | None = None,
    env_names: Iterable[str] = (),
    added: Sequence[Path] = (),
) -> SandboxPolicy:
    """What shell commands may touch: the workspace and the `added` directories
    (`--add-dir`), less what deny rules mask in them, with the hooks' `scripts` protected
    besides `.git` and `.moot`, and `absent` kept from being made; and the variables they get
    besides the usual ones: `env_names`, those the settings' `env` names."""
    return SandboxPolicy(
        root,
        output_dir=output_dir,
        masks=masks_for(rules, root, added),  # what shell commands cannot see or edit
        added=tuple(added),
        protected=(*DEFAULT_PROTECTED, *scripts),
        absent=absent,
        env_names=tuple(env_names),
    )
