"""Hooks: the person's own shell commands, run on session events from their settings.

Settings files hold them under `hooks` (see `moot.hooks.config` for the shape). moot runs the
matching commands with `/bin/sh -c` in the workspace, with the event as JSON on stdin, and reads
their exit code and output: a hook can refuse or change a tool call, add context for the model,
refuse a prompt, or send the model back to work when it wants to stop.

Trust model, plainly:

- Hooks are commands, not suggestions. They run **outside the sandbox, with the user's full
  rights** and the full environment moot was started with, on the host; moot does not review,
  confine or scrub them.
- Hooks from user settings (`<config dir>/settings.json`) are the user's own.
- Hooks from a project's `.moot/settings.json` or `.moot/settings.local.json` may come **from
  the repository** (either file can be committed). They are held, and never run, until the
  person approves that file's exact content in that workspace (the app and the REPL ask before
  the session opens; `/trust`, `moot trust`); a change to the file holds them again
  (`moot.settings.review`).
- A hook is never asked about: the approval seam and permission rules govern the model's tool
  calls, not the commands the settings name.

Events: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, Notification and
PreCompact (before a compaction: `CallHooks.pre_compact` inside a run, recorded as `hook_ran`;
`Hooks.run_pre_compact` for `/compact` between runs; the matcher sees `auto`, `overflow` or
`manual`).
"""

from moot.hooks.config import (
    DEFAULT_TIMEOUT,
    CommandHook,
    HookConfig,
    HookConfigError,
    hooks_from_settings,
    parse_hooks,
)
from moot.hooks.outcome import HookOutcome
from moot.hooks.runner import Hooks

__all__ = [
    "DEFAULT_TIMEOUT",
    "CommandHook",
    "HookConfig",
    "HookConfigError",
    "HookOutcome",
    "Hooks",
    "hooks_from_settings",
    "parse_hooks",
]
