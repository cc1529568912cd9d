"""What a new session's chat says first: where moot works, with which model and mode, and the
few keys and signs a newcomer needs (the keys named from the one table, `tui/keys.py`)."""

from __future__ import annotations

import os

from moot.protocol.client import SessionStatus
from moot.tui.keys import key_of
from moot.tui.widgets.status_line import shown_model


def welcome(status: SessionStatus) -> str:
    """Three short lines (each fits a 72-column chat): the session's facts, how to talk to
    it, and the keys."""
    home = os.path.expanduser("~")
    where = status.workspace
    if where == home or where.startswith(home + os.sep):
        where = "~" + where[len(home) :]
    facts = [f"moot in {where}", shown_model(status.model) or "no model"]
    if status.mode:
        facts.append(f"mode {status.mode}")
    signs = ["type a task and press enter", "/ commands", "@ files", "! a shell command"]
    keys = [
        f"{key_of('app', 'cycle_mode')} mode",
        f"{key_of('app', 'help')} every key",
        f"{key_of('app', 'quit')} twice quits",
    ]
    return "\n".join(" · ".join(line) for line in (facts, signs, keys))
