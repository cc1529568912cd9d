"""What waits for the person's approval in a workspace: its settings files' grants
(`settings.load_settings`) and the `allowed-tools` its own skills and commands pre-approve
(`skills.guidance.Guidance.repository_grants`), each as a `HeldSettings` that `/trust` and
`moot trust` show and approve by the file's content."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from moot.settings.review import HeldSettings, file_approved, held_file

if TYPE_CHECKING:
    from moot.skills.guidance import Guidance


def held_files(
    workspace: Path, environ: Mapping[str, str] | None = None, guidance: Guidance | None = None
) -> tuple[HeldSettings, ...]:
    """Everything in `workspace` that asks for more than it may without the person's approval.

    Raises:
        SettingsError: A settings file cannot be read.
    """
    from moot.settings import load_settings

    held = list(load_settings(workspace, environ).held)
    return (*held, *held_commands(workspace, environ, guidance))


def held_commands(
    workspace: Path, environ: Mapping[str, str] | None = None, guidance: Guidance | None = None
) -> tuple[HeldSettings, ...]:
    """The repository's skills and commands whose `allowed-tools` wait for approval."""
    if guidance is None:
        from moot.paths import config_dir
        from moot.skills.guidance import load_guidance

        guidance = load_guidance(workspace, config_dir(environ), shipped=False)
    found = []
    for name, path, tools in guidance.repository_grants():
        if file_approved(workspace, path, environ):
            continue
        grant = f"allowed-tools {', '.join(tools)} run without asking while {name} runs"
        if (held := held_file(path, (grant,))) is not None:
            found.append(held)
    return tuple(found)
