"""How the REPL looks, decided once at start: styled (colour, markdown, a live area, the
toolbar) or plain (whole lines only, nothing redrawn), and why.

Nothing here imports prompt_toolkit: `moot.cli` asks `app_unfit` whether the Textual app can run
before it chooses a front end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

DUMB_TERMS = frozenset({"", "dumb", "unknown"})
"""`TERM` values that promise no cursor movement or colour (Emacs' shell buffer says `dumb`)."""


class _Stream(Protocol):
    def isatty(self) -> bool: ...


class Look(msgspec.Struct, frozen=True):
    """What the REPL may do with the terminal."""

    plain: bool
    """Whole lines only: no colour, no markdown styling, no live area, no redrawn prompt while a
    turn runs (a screen reader reads each line once), ASCII marks; on a terminal the prompt
    sends only the cursor moves and erasures editing its line needs (`line_output.py`)."""
    toolbar: bool
    """The status toolbar under the prompt (never in the plain look)."""
    dumb: bool = False
    """Nothing may be drawn (`TERM` promises nothing, or the output is not a terminal):
    prompt_toolkit's own dumb prompt reads the lines, writing only the text typed."""
    why: str = ""
    """Why the look is plain (told once at start), empty when it is not."""


def app_unfit(environ: Mapping[str, str], stdin: _Stream, stdout: _Stream) -> str | None:
    """Why the full-screen app cannot run here (so `moot` starts the plain REPL), or None.

    Args:
        environ: The process environment.
        stdin: Where keys come from.
        stdout: Where the app would draw.
    """
    term = environ.get("TERM", "")
    if term.lower() in DUMB_TERMS:
        return f"TERM={term or '(unset)'}"
    if stdin.isatty() and not stdout.isatty():
        return "the output is not a terminal"
    return None


def choose_look(
    environ: Mapping[str, str],
    stdout: _Stream,
    settings: Mapping[str, Any],
    *,
    toolbar_flag: bool = True,
) -> Look:
    """The look for this terminal, environment and the settings' `repl` object.

    Plain when `TERM` is dumb (or unset), `NO_COLOR` is set (https://no-color.org: any
    non-empty value), the output is not a terminal, or `repl.plainOutput` is true. The toolbar
    shows unless the look is plain, `repl.toolbar` is false or `--no-toolbar` was given.

    Args:
        environ: The process environment.
        stdout: Where the transcript goes.
        settings: The merged settings in their JSON form (`SessionStatus.settings`).
        toolbar_flag: False when `--no-toolbar` was given.
    """
    repl = settings.get("repl") or {}
    term = environ.get("TERM", "")
    dumb = term.lower() in DUMB_TERMS
    why = ""
    if dumb:
        why = f"TERM={term or '(unset)'}"
    elif environ.get("NO_COLOR"):
        why = "NO_COLOR is set"
    elif not stdout.isatty():
        why = "the output is not a terminal"
    elif repl.get("plainOutput"):
        why = "repl.plainOutput is set"
    plain = bool(why)
    dumb = dumb or not stdout.isatty()
    toolbar = not plain and toolbar_flag and repl.get("toolbar", True) is not False
    return Look(plain=plain, toolbar=toolbar, dumb=dumb, why=why)
