"""Settings: defaults, then user settings, then the project's, then the command line.

Precedence, highest first: command-line flags, `.moot/settings.local.json` (personal,
git-ignored), `.moot/settings.json` (committed), `<config dir>/settings.json`, defaults. The
shape follows the one widely used coding agents share (`permissions.allow/ask/deny`,
`permissions.defaultMode`, `hooks`, `env`, `model`), so rules people already have carry over.
Permission rule lists add up across the files, and so do hooks (by event), `env` (by variable)
and `models` and `lsp` (by model or language, then field); every other value is overridden by
a higher one.

The schema is checked with msgspec, not pydantic: `moot -p` reads settings before anything
else, and pydantic alone costs several times what msgspec does to import.

Other agents' settings share these files, so a top-level key moot does not know is not an
error: `load_settings` returns a `SettingsWarning` for it (naming the file, the key and the
nearest key moot knows), and the front end shows it; nothing here prints. Inside `permissions`
and `models`, where a misspelt key would silently drop rules, an unknown key is an error.
A settings file is read only if it is a regular file of at most `MAX_FILE_BYTES` of UTF-8 JSON
(a repository could make it a FIFO, a device or a huge file).
"""

from __future__ import annotations

from moot.settings.check import print_warnings, unknown_keys
from moot.settings.load import (
    load_settings,
    local_settings_file,
    merge,
    rule_sources,
    settings_files,
)
from moot.settings.schema import (
    MAX_FILE_BYTES,
    LoadedSettings,
    NetworkSettings,
    Permissions,
    ReplSettings,
    RuleKind,
    SandboxName,
    SandboxSettings,
    ScrollbackFormat,
    Settings,
    SettingsError,
    SettingsWarning,
    TerminalOptions,
    network_settings,
    sandbox_backend,
)
from moot.settings.write import (
    approve_held,
    keep_out_of_git,
    remove_local_rule,
    save_allowed_domain,
    save_local_rule,
    save_user_setting,
)

__all__ = [
    "MAX_FILE_BYTES",
    "LoadedSettings",
    "NetworkSettings",
    "Permissions",
    "ReplSettings",
    "RuleKind",
    "SandboxName",
    "SandboxSettings",
    "ScrollbackFormat",
    "Settings",
    "SettingsError",
    "SettingsWarning",
    "TerminalOptions",
    "approve_held",
    "keep_out_of_git",
    "load_settings",
    "local_settings_file",
    "merge",
    "network_settings",
    "print_warnings",
    "remove_local_rule",
    "rule_sources",
    "sandbox_backend",
    "save_allowed_domain",
    "save_local_rule",
    "save_user_setting",
    "settings_files",
    "unknown_keys",
]
