"""The question the app asks before it opens a session whose repository settings wait for the
person's approval (`moot.settings.review`): what each file asks to turn on, then keep it off
(the first choice, so an Enter typed ahead approves nothing) or approve it for the workspace."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from textual.app import App

from moot.settings.review import HeldSettings, SettingsApprovals

CHOICES = (
    ("keep", "Keep it off: this session runs without it (/trust asks again)"),
    ("approve", "Approve it for this workspace"),
)


def trust_title(held: Sequence[HeldSettings]) -> str:
    """What the files ask to turn on, file by file, as markup that shows every character the
    files wrote (`[black on black]` in a hook command would hide it)."""
    from textual.markup import escape

    lines = ["This repository's settings ask to turn on what could run code or act unasked:"]
    for file in held:
        lines += [f"{escape(file.file)}:", *(f"  - {escape(grant)}" for grant in file.grants)]
    return "\n".join(lines)


def ask_trust(
    app: App[Any],
    workspace: Path,
    held: Sequence[HeldSettings],
    then: Callable[[], None],
    environ: Mapping[str, str] | None = None,
) -> None:
    """Ask, remember an approval, then go on (`then`) whatever the answer."""
    from moot.tui.screens.picker import PickerScreen

    def answered(choice: str | None) -> None:
        if choice == "approve":
            approvals = SettingsApprovals(environ)
            try:
                for file in held:  # the content shown, not what the files hold by now
                    approvals.approve(workspace, file)
            except OSError as exc:
                app.notify(f"cannot remember the approval: {exc}", severity="warning")
        then()

    app.push_screen(PickerScreen(trust_title(held), CHOICES), answered)
