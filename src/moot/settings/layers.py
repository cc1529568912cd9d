"""Which settings layers a session reads: Claude Code's `--setting-sources` (a subset of the
user's, the project's and the local file) and `--settings` (one more layer, over them all).

The `--settings` layer comes from whoever started moot (a person, a script, an Agent SDK's
caller), not from the repository: it is checked against the schema as every file is, but
never held for the person's approval as a project file's grants are (`moot.settings.review`).
"""

from __future__ import annotations

from typing import Any

import msgspec

SOURCES = ("user", "project", "local")
"""The settings files by the name `--setting-sources` gives them, in `settings_files` order."""


class SettingsLayers(msgspec.Struct, frozen=True, kw_only=True):
    """The layers a session's settings are merged from."""

    sources: frozenset[str] = frozenset(SOURCES)
    """The files read, by `SOURCES` name; the others are skipped as if absent."""
    given: dict[str, Any] | None = None
    """`--settings`' layer (already parsed and checked), over the files."""
    given_name: str = "--settings"
    """Where `given` came from, for messages and origins (the file, or `--settings`)."""


ALL = SettingsLayers()
"""Every file, nothing given: what a session reads unless told otherwise."""
