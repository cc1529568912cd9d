"""The user messages of a streamed session as turns: echoed back with a uuid under
`--replay-user-messages`, as Claude Code does, so that `rewind_files` can name the turn to
undo by that uuid (moot's `RestoreFiles` names the run)."""

from __future__ import annotations

import uuid
from typing import Any

from moot.cli.claude_stream.control import ControlError
from moot.protocol import events as ev

Line = dict[str, Any]


class UserTurns:
    """Each user message's uuid and the run its turn became.

    Args:
        session_id: The session the echoed messages name.
        replay: Echo each message as its turn starts (`--replay-user-messages`).
    """

    def __init__(self, session_id: str, replay: bool) -> None:
        self.session_id = session_id
        self.replay = replay
        self._asked: dict[str, str] = {}
        """A turn's submission id -> its user message's uuid."""
        self._runs: dict[str, str] = {}
        """A user message's uuid -> the run its turn started."""

    def started(self, message: Line, submission: str) -> Line | None:
        """The message's turn was submitted: its echo, when replaying."""
        given = message.get("uuid")
        message_id = given if isinstance(given, str) and given else str(uuid.uuid4())
        self._asked[submission] = message_id
        if not self.replay:
            return None
        return {
            "type": "user",
            "message": message.get("message") or {},
            "session_id": self.session_id,
            "parent_tool_use_id": None,
            "uuid": message_id,
            "isReplay": True,
        }

    def take(self, event: ev.Event) -> None:
        if isinstance(event, ev.TurnStarted) and event.submission_id in self._asked:
            self._runs[self._asked.pop(event.submission_id)] = event.run_id

    def run_of(self, message_id: str) -> str:
        """The run the user message `message_id` started.

        Raises:
            ControlError: No message of this process has that uuid.
        """
        run = self._runs.get(message_id)
        if run is None:
            raise ControlError(
                f"no user message {message_id!r} started a turn here (moot knows the uuids "
                "it echoed with --replay-user-messages in this process)"
            )
        return run
