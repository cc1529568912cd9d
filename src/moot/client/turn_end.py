"""What a session does as each of the person's turns ends (`core.run.TurnEnd`): moot's
auto-commit (`AutoCommitter`), and the end of what a skill or command granted for the turn;
`turn_end` makes them one."""

from __future__ import annotations

from collections.abc import Sequence

from moot.core.run import TurnEnd
from moot.protocol import events as ev
from moot.workspace.paths import Workspace


def turn_end(ends: Sequence[TurnEnd]) -> TurnEnd | None:
    """One `TurnEnd` that runs each of `ends` in order (None for none)."""
    if not ends:
        return None
    if len(ends) == 1:
        return ends[0]

    def each(prompt: str) -> list[ev.Event]:
        return [event for end in ends for event in end(prompt)]

    return each


class AutoCommitter:
    """The session's `TurnEnd` under auto-commit: the files a turn changed become moot's own
    commit as it ends (`moot undo` takes it back), recorded as `auto_committed`."""

    def __init__(self, workspace: Workspace, session_id: str) -> None:
        self.workspace = workspace
        self.session_id = session_id

    def __call__(self, prompt: str) -> list[ev.Event]:
        # Lazy: gitpython loads only for sessions that commit.
        from moot.workspace.agent_commits import AutoCommit
        from moot.workspace.git import GIT_ERRORS

        changed = AutoCommit(self.workspace, self.session_id, lambda: set(self.workspace.changed))
        try:
            made = changed.commit_turn(prompt)
        except GIT_ERRORS as exc:
            return [ev.Error(source="session", message=f"auto-commit skipped: {exc}")]
        if made is None:
            return []
        return [
            ev.AutoCommitted(
                sha=made.sha, subject=made.subject, files=tuple(made.files), note=made.note
            )
        ]
